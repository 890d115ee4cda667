"""course.facts.hardware.gpus: the GPU rows complete, internally consistent, and derivable where
physics allows.

Expected figures come from the datasheets named in each GPU's ``source``; derivations are clock x
units x FLOPs per clock.
"""

import pytest

from course.facts import hardware
from course.facts.hardware import GPUS, INTERCONNECTS
from course.facts.units import GB, GiB, KiB

NEW_GPUS = ["b200", "gh200-96gb", "gh200-144gb"]

REQUIRED_GPUS = [
    "v100-sxm2-32gb",
    "a100-40gb-sxm",
    "a100-80gb-sxm",
    "h100-sxm",
    "h100-pcie",
    "h200-sxm",
    "l40s",
    "rtx-3090",
    "rtx-4090",
]


def test_registry_has_every_gpu_the_course_uses():
    assert set(REQUIRED_GPUS) <= set(GPUS)


@pytest.mark.parametrize("key", REQUIRED_GPUS)
def test_every_gpu_is_complete_and_sourced(key):
    g = GPUS[key]
    assert g.source and g.memory_type and g.form_factor in ("SXM", "PCIe", "consumer")
    assert 2016 <= g.launch_year <= 2026
    assert g.memory_bytes > 0 and g.memory_bandwidth_bytes_per_s > 0 and g.tdp_watts > 0
    assert set(g.dense_flop_per_s) <= set(hardware.DTYPES) and "fp32" in g.dense_flop_per_s
    assert g.host_link in INTERCONNECTS


@pytest.mark.parametrize("key", REQUIRED_GPUS)
def test_sparse_peaks_are_twice_dense(key):
    # NVIDIA's 2:4 structured sparsity doubles the Tensor Core figure (every datasheet's footnote).
    # Within 1.5 %: datasheets round the two separately (L40S: 362.05 dense, 733 sparse).
    g = GPUS[key]
    for dtype, sparse in g.sparse_flop_per_s.items():
        assert sparse == pytest.approx(2 * g.dense_flop_per_s[dtype], rel=0.015), dtype


@pytest.mark.parametrize("key", REQUIRED_GPUS)
def test_fp32_peak_is_cores_times_two_flops_times_boost_clock(key):
    # One FMA per FP32 core per clock = 2 FLOPs (architecture whitepapers). Within 2 % because
    # datasheets round (e.g. H100 SXM: 16,896 x 2 x 1.98 GHz = 66.9, quoted as 67 TFLOP/s).
    g = GPUS[key]
    derived = g.cuda_cores * 2 * g.boost_clock_hz
    assert derived == pytest.approx(g.dense_flop_per_s["fp32"], rel=0.02)


@pytest.mark.parametrize(
    ("key", "fma_per_tensor_core_per_clock"),
    [("v100-sxm2-32gb", 64), ("a100-80gb-sxm", 256), ("a100-40gb-sxm", 256)],
)
def test_fp16_tensor_core_peak_derives_from_tensor_cores_and_clock(
    key, fma_per_tensor_core_per_clock
):
    # Volta whitepaper: 64 FP16 FMA per Tensor Core per clock; A100 whitepaper: 256.
    g = GPUS[key]
    derived = g.tensor_cores * fma_per_tensor_core_per_clock * 2 * g.boost_clock_hz
    assert derived == pytest.approx(g.dense_flop_per_s["fp16"], rel=0.01)


def test_h100_tensor_core_peak_matches_its_1830_mhz_tensor_clock():
    # H100 whitepaper: 512 FP16 FMA per Tensor Core per clock; 989.4 TFLOP/s dense corresponds to
    # 528 Tensor Cores at 1,830 MHz (the FP32 figure uses the 1,980 MHz boost clock).
    g = GPUS["h100-sxm"]
    assert g.tensor_cores * 512 * 2 * 1830e6 == pytest.approx(g.dense_flop_per_s["fp16"], rel=0.001)
    assert g.tensor_core_clock_hz == 1830e6


@pytest.mark.parametrize(
    ("key", "per_clock"),
    [
        ("v100-sxm2-32gb", 1024),
        ("a100-80gb-sxm", 2048),
        ("h100-sxm", 4096),
        ("h200-sxm", 4096),
    ],
)
def test_fp16_tensor_flops_per_sm_per_clock_double_each_generation(key, per_clock):
    # Whitepapers: 8 Tensor Cores x 64 FMA per SM (Volta), 4 x 256 (Ampere), 4 x 512 (Hopper), so
    # 1,024 / 2,048 / 4,096 FLOP per SM per clock. Hopper's at the 1,830 MHz Tensor Core clock its
    # dense peak is quoted at; dividing by the 1,980 MHz boost clock gives a wrong 3,786.
    assert GPUS[key].flops_per_clock_per_sm("fp16") == pytest.approx(per_clock, rel=0.003)
    fp32 = GPUS[key].flops_per_clock_per_sm("fp32")  # one FMA per FP32 lane, at the boost clock
    assert fp32 == pytest.approx(2 * GPUS[key].fp32_cores_per_sm, rel=0.02)


def test_seed_003_h100_figures_are_the_sparse_ones():
    # Seed 003 quotes H100 "TF32 989, FP16 1,979, FP8 3,958": the sparse peaks (H100 datasheet).
    g = GPUS["h100-sxm"]
    assert g.sparse_flop_per_s["tf32"] == pytest.approx(989e12, rel=0.001)
    assert g.sparse_flop_per_s["fp16"] == pytest.approx(1979e12, rel=0.001)
    assert g.sparse_flop_per_s["fp8"] == pytest.approx(3958e12, rel=0.001)
    assert g.dense_flop_per_s["tf32"] == pytest.approx(494.7e12)


def test_a100_has_64_fp32_cores_per_sm_not_128():
    # Seed 004 says "CUDA cores = SMs x 128"; true for H100 (132 x 128), not for A100 (108 x 64).
    assert GPUS["a100-80gb-sxm"].fp32_cores_per_sm == 64
    assert GPUS["h100-sxm"].fp32_cores_per_sm == 128


def test_memory_bandwidths_match_the_datasheets():
    expected = {
        "a100-40gb-sxm": 1555,
        "a100-80gb-sxm": 2039,
        "h100-sxm": 3350,
        "h200-sxm": 4800,
        "l40s": 864,
        "rtx-3090": 936,
        "v100-sxm2-32gb": 900,
    }
    for key, gb_per_s in expected.items():
        assert GPUS[key].memory_bandwidth_bytes_per_s == gb_per_s * GB


def test_unknown_dtype_and_gpu_raise_value_errors_that_name_the_choices():
    with pytest.raises(ValueError, match="fp8"):
        GPUS["a100-80gb-sxm"].peak_flop_per_s("fp8")
    with pytest.raises(ValueError, match="h100-sxm"):
        hardware.gpu("h1000")
    assert hardware.gpu("NVIDIA H100 SXM 80GB") is GPUS["h100-sxm"]


@pytest.mark.parametrize(
    ("key", "compute_capability"),
    [
        ("v100-sxm2-32gb", (7, 0)),
        ("a100-80gb-sxm", (8, 0)),
        ("h100-sxm", (9, 0)),
        ("rtx-3090", (8, 6)),
        ("rtx-4090", (8, 9)),
        ("l40s", (8, 9)),
    ],
)
def test_cuda_cores_from_sms_and_compute_capability_match_the_datasheets(key, compute_capability):
    g = GPUS[key]
    assert hardware.cuda_cores(g.sms, compute_capability) == g.cuda_cores


def test_gpu_memory_and_l2_are_binary_as_the_hardware_has_them():
    # nvidia-smi on the H100 80GB SXM of the reference run reports 81,559 MiB usable of 80 GiB;
    # the A100 whitepaper gives its L2 as 40,960 KB (= KiB): 41,943,040 bytes.
    assert GPUS["h100-sxm"].memory_bytes == 80 * GiB
    assert GPUS["h100-sxm"].memory_bytes >= 81_559 * 2**20
    assert GPUS["a100-40gb-sxm"].l2_bytes == 40_960 * KiB == 41_943_040
    assert GPUS["h100-sxm"].l2_bytes == 50 * 2**20
    for g in GPUS.values():  # the marketing name keeps NVIDIA's decimal-looking label
        # whole KiB, not MiB: a B200's L2 is 126.5 MiB (CUDA device query; hardware.SRC_B200)
        assert g.memory_bytes % GiB == 0 and g.l2_bytes % KiB == 0


@pytest.mark.parametrize("key", ["h200-sxm", "gh200-96gb", "gh200-144gb"])
def test_h200_and_gh200_carry_the_h100_sxm_silicon(key):
    """H200 datasheet: "the same Hopper GPU" with more and faster memory; the GH200 whitepaper: its
    GPU is the H100 (GH100, 132 SMs). So every field of the chip is the H100 SXM's, Tensor Core
    clock included (the GH200 rows once restated the H100's and left that clock out)."""
    h100, g = GPUS["h100-sxm"], GPUS[key]
    silicon = (
        "architecture",
        "sms",
        "cuda_cores",
        "tensor_cores",
        "boost_clock_hz",
        "tensor_clock_hz",
        "l2_bytes",
        "l1_per_sm_bytes",
        "dense_flop_per_s",
        "sparse_flop_per_s",
        "nvlink_bandwidth_bytes_per_s",
    )
    assert {f: getattr(g, f) for f in silicon} == {f: getattr(h100, f) for f in silicon}
    assert g.memory_bytes > h100.memory_bytes and g.memory_bandwidth_bytes_per_s > 3350e9


@pytest.mark.parametrize("key", NEW_GPUS)
def test_new_rows_are_sourced_binary_and_sparse_is_twice_dense(key):
    g = GPUS[key]
    assert g.source and g.memory_type.startswith("HBM") and g.host_link in INTERCONNECTS
    assert g.memory_bytes % GiB == 0  # binary sizes: nvidia-smi shows 81,559 MiB of an "80GB" H100
    for dtype, sparse in g.sparse_flop_per_s.items():
        assert sparse == pytest.approx(2 * g.dense_flop_per_s[dtype], rel=0.015)


def test_b200_matches_the_dgx_b200_datasheet_divided_by_eight():
    """DGX B200 datasheet: 8 GPUs, 1,440 GB, 64 TB/s, 72 PF FP8 (sparse), 14.4 TB/s NVLink."""
    b = GPUS["b200"]
    assert 8 * b.memory_bytes / GiB == 1440
    assert 8 * b.memory_bandwidth_bytes_per_s == 64e12
    assert 8 * b.peak_flop_per_s("fp8", sparse=True) == 72e15
    assert 8 * b.nvlink_bandwidth_bytes_per_s == 14.4e12
    assert b.peak_flop_per_s("bf16") == pytest.approx(2.25e15)  # HGX B200: 4.5 PF sparse
    assert (
        b.peak_flop_per_s("fp32") == 75e12 and b.peak_flop_per_s("fp64") == 37e12
    )  # HGX B200 spec
    with pytest.raises(ValueError, match="fp8"):
        b.peak_flop_per_s("fp4")  # FP4 is not among the registry's dtypes


def test_gh200_is_an_h100_with_more_memory_behind_nvlink_c2c():
    """GH200 datasheet: 96 GB HBM3 at 4 TB/s or 144 GB HBM3e at 4.9 TB/s; NVLink-C2C 900 GB/s;
    *AI Infrastructure* draws it with an 80 GB, 3.35 TB/s H100 (wrong)."""
    h100 = GPUS["h100-sxm"]
    for key, gib, tbps in (("gh200-96gb", 96, 4.0), ("gh200-144gb", 144, 4.9)):
        g = GPUS[key]
        assert g.memory_bytes == gib * GiB and g.memory_bandwidth_bytes_per_s == tbps * 1e12
        assert dict(g.dense_flop_per_s) == dict(h100.dense_flop_per_s) and g.sms == h100.sms
        assert g.host_link == "nvlink-c2c"
    c2c = INTERCONNECTS["nvlink-c2c"]
    assert c2c.bidirectional_bandwidth_bytes_per_s == 900 * GB
    assert c2c.bandwidth_bytes_per_s / INTERCONNECTS[
        "pcie5"
    ].bandwidth_bytes_per_s == pytest.approx(7.1, abs=0.05)
