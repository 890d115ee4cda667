"""course.calculators.gpu_systems (lesson 08): DGX from parts, the SuperPOD, MIG placement and
serving fit, the GPU chooser.

Expected figures come from the sources named in each test (datasheets, the DGX SuperPOD
reference architecture's table, NVIDIA's MIG user guide), never from the calculator itself.
"""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from course.calculators import gpu_systems
from course.facts.models import PRESETS
from course.facts.units import GB

FAST = settings(max_examples=40, deadline=None)


def test_dgx_h100_from_parts_matches_the_datasheet_and_facts():
    """DGX H100 datasheet: 32 PF FP8 (sparse), so 8 x 1,978.9 TF = 15.8 dense (H100 datasheet);
    TF32 7.9 sparse / 4.0 dense; FP16 16 PF is sparse (seed 003's "TF32 16 PF" is that). 8 x 400
    Gb/s compute NICs, 4 NVSwitch, 900 GB/s NVLink per GPU, 10.2 kW."""
    d = gpu_systems.dgx_from_parts("dgx-h100")
    assert d.sparse_fp8_flop_per_s == pytest.approx(32e15, rel=0.02)
    assert d.dense_fp8_flop_per_s == pytest.approx(15.8e15, rel=0.005)
    assert d.sparse_tf32_flop_per_s == pytest.approx(7.9e15, rel=0.005)
    assert d.dense_tf32_flop_per_s == pytest.approx(4.0e15, rel=0.02)
    assert d.sparse_bf16_flop_per_s == pytest.approx(16e15, rel=0.02)
    assert (d.nvswitches, d.compute_nics) == (4, 8)
    assert d.network_bytes_per_s == 8 * 400e9 / 8  # 8 x 400 Gb/s = 400 GB/s
    assert d.nvlink_per_gpu_bytes_per_s == 900 * GB and d.nvlink_total_bytes_per_s == 7.2e12
    assert d.max_power_watts == 10_200 and d.gpus == 8


def test_dgx_a100_has_no_fp8_and_seed_003s_5_pf_is_sparse():
    """DGX A100 datasheet: "FP16 5 PF / TF32 2.5 PF" are sparse; the A100 datasheet's dense
    312 / 156 TF x 8 give 2.5 PF FP16 and 1.25 TF32."""
    d = gpu_systems.dgx_from_parts("dgx-a100-640gb")
    assert d.dense_fp8_flop_per_s is None and d.sparse_fp8_flop_per_s is None
    assert d.sparse_bf16_flop_per_s == pytest.approx(5e15, rel=0.002)
    assert d.dense_bf16_flop_per_s == pytest.approx(2.5e15, rel=0.002)
    assert d.dense_tf32_flop_per_s == pytest.approx(1.25e15, rel=0.002)
    assert d.nvswitches == 6 and d.network_bytes_per_s == 8 * 200e9 / 8
    assert "None" in str(d)


# DGX SuperPOD reference architecture, "Larger DGX SuperPOD component counts" (B200 RA; the same
# 32-system SU, 8 rails and 64-port NDR switches as the H100 RA): SUs, nodes, GPUs, leaf, spine,
# core switches.
RA_TABLE = [
    (2, 64, 512, 16, 8, 0),
    (4, 128, 1024, 32, 16, 0),
    (8, 256, 2048, 64, 32, 0),
    (16, 512, 4096, 128, 128, 64),
    (32, 1024, 8192, 256, 256, 128),
    (64, 2048, 16384, 512, 512, 256),
]


@pytest.mark.parametrize(("sus", "nodes", "gpus", "leaf", "spine", "core"), RA_TABLE)
def test_superpod_switch_counts_reproduce_the_reference_architecture(
    sus, nodes, gpus, leaf, spine, core
):
    pod = gpu_systems.superpod(sus)
    assert (pod.systems, pod.gpus) == (nodes, gpus)
    assert (pod.leaf_switches, pod.spine_switches, pod.core_switches) == (leaf, spine, core)
    assert pod.node_leaf_cables == pod.leaf_spine_cables == gpus
    assert pod.spine_core_cables == (gpus if core else 0)


def test_seed_003s_exaflops_are_sparse_fp8():
    """Seed 003: "DGX H100 POD: 32 DGX, 1 exaFLOP FP8"; "SuperPOD 256 DGX: 8 exaFLOPS" (sparse
    arithmetic: the H100 datasheet's 3,958 TF FP8 is with 2:4 sparsity). 256 x 3,958 TF = 1.01 EF
    sparse, 0.51 dense; 2,048 GPUs: 8.1 / 4.05."""
    pod = gpu_systems.superpod(1)
    assert pod.sparse_fp8_flop_per_s == pytest.approx(1.0e18, rel=0.02)
    assert pod.dense_fp8_flop_per_s == pytest.approx(0.5e18, rel=0.02)
    assert pod.systems_power_watts == 326_400  # seed 003: "32x DGX H100: 326 kW"
    big = gpu_systems.superpod(8)
    assert big.systems == 256 and big.gpus == 2048
    assert big.sparse_fp8_flop_per_s == pytest.approx(8e18, rel=0.02)
    assert big.dense_fp8_flop_per_s == pytest.approx(4e18, rel=0.02)


def test_switch_power_is_counted_only_when_given():
    assert gpu_systems.superpod(1).switches_power_watts == 0
    pod = gpu_systems.superpod(1, watts_per_switch=1000)
    assert pod.switches_power_watts == 12 * 1000
    assert pod.it_power_watts == 326_400 + 12_000


@FAST
@given(a=st.integers(1, 256), b=st.integers(1, 256))
def test_more_sus_never_need_fewer_switches_or_less_power(a, b):
    small, big = sorted((a, b))
    x, y = gpu_systems.superpod(small), gpu_systems.superpod(big)
    assert x.leaf_switches <= y.leaf_switches and x.spine_switches <= y.spine_switches
    assert x.it_power_watts <= y.it_power_watts and x.gpus <= y.gpus


# --- MIG ------------------------------------------------------------------------------------


def test_seven_1g_slices_leave_20_of_132_sms_idle_on_an_h100():
    """The H100 reference run's ``nvidia-smi mig -lgip``: 7 x 16 = 112 of 132 SMs."""
    layout = gpu_systems.mig_layout("h100-sxm", ["1g.10gb"] * 7)
    assert (layout.sms_used, layout.sms_idle, layout.sms_total) == (112, 20, 132)
    assert layout.compute_slices_used == 7 and layout.memory_slices_used == 7


@pytest.mark.parametrize(
    "mix",
    [
        ["3g.40gb", "3g.40gb"],
        ["4g.40gb", "2g.20gb", "1g.10gb"],
        ["2g.20gb"] * 3 + ["1g.10gb"],
        ["7g.80gb"],
        ["4g.40gb", "3g.40gb"],
        ["1g.20gb"] * 4,
        ["3g.40gb", "2g.20gb", "1g.10gb", "1g.10gb"],
    ],
)
def test_valid_h100_mixes_from_the_mig_user_guide_are_placed(mix):
    layout = gpu_systems.mig_layout("h100-sxm", mix)
    assert layout.instances == len(mix) and layout.compute_slices_used <= 7
    spans = []
    for name, start in layout.starts:
        size = {"1g.10gb": 1, "1g.20gb": 2, "2g.20gb": 2, "3g.40gb": 4, "4g.40gb": 4, "7g.80gb": 8}[
            name
        ]
        spans.append(set(range(start, start + size)))
    assert all(not (a & b) for i, a in enumerate(spans) for b in spans[i + 1 :])


@pytest.mark.parametrize(
    ("mix", "match"),
    [
        (["4g.40gb", "4g.40gb"], "at most 1"),
        (["2g.20gb"] * 4, "at most 3"),
        (["1g.10gb"] * 8, "at most 7"),
        (["7g.80gb", "1g.10gb"], "compute slices"),
        (["4g.40gb", "3g.40gb", "1g.10gb"], "compute slices"),
        (["1g.20gb"] * 4 + ["2g.20gb"], "compute slices|no valid placement"),
        (["3g.40gb", "3g.40gb", "1g.10gb"], "no valid placement"),
        (["5g.50gb"], "must be one of"),
    ],
)
def test_invalid_mixes_are_refused_with_the_reason(mix, match):
    with pytest.raises(ValueError, match=match):
        gpu_systems.mig_layout("h100-sxm", mix)


def test_a100_seven_slices_use_98_of_108_sms():
    layout = gpu_systems.mig_layout("a100-40gb-sxm", ["1g.5gb"] * 7)
    assert (layout.sms_used, layout.sms_idle) == (98, 10)


def test_which_serving_workloads_fit_a_slice():
    """Llama-2-7B bf16 weights are 13.5 GB: more than a 1g.10gb (9.75 GiB), fits 1g.20gb
    (19.62 GiB), of which an H100 holds 4. Llama-2-70B (140 GB) fits no slice of one H100."""
    fit = gpu_systems.mig_serving_fit(PRESETS["llama-2-7b"], overhead_fraction=0)
    assert fit.smallest_profile == "1g.20gb" and fit.instances_per_gpu == 4
    assert "1g.10gb" not in fit.fits_on
    assert gpu_systems.mig_serving_fit(PRESETS["llama-2-70b"]).smallest_profile == "none"
    small = gpu_systems.mig_serving_fit(PRESETS["gpt2"], seq_len=1024, batch=8)
    assert small.smallest_profile == "1g.10gb" and small.instances_per_gpu == 7


# --- Power, PUE, question 10 -------------------------------------------------------------------


# --- Question 4: the chooser -------------------------------------------------------------------


def test_training_speedup_is_the_dense_peak_ratio_and_fp8_falls_back_on_a100():
    """H100 SXM / A100: 989.4 / 312 = 3.17 in bf16; in fp8 the A100 computes in bf16:
    1,978.9 / 312 = 6.34 (the H100 and A100 datasheets' dense peaks)."""
    cfg = PRESETS["llama-2-7b"]
    bf16 = gpu_systems.choose_gpu(cfg, usd_per_gpu_hour_a=2.0, usd_per_gpu_hour_b=4.0)
    assert bf16.speedup == pytest.approx(989.4 / 312) and bf16.bound == "compute"
    fp8 = gpu_systems.choose_gpu(cfg, dtype="fp8", usd_per_gpu_hour_a=2.0, usd_per_gpu_hour_b=4.0)
    assert (fp8.dtype_a, fp8.dtype_b) == ("bf16", "fp8")
    assert fp8.speedup == pytest.approx(6.34, abs=0.01)
    assert fp8.pick == "NVIDIA H100 SXM 80GB"  # 6.3x the speed at 2x the price


def test_serving_at_batch_1_is_the_bandwidth_ratio_and_price_decides():
    """Decoding at batch 1 is memory-bound: 3,350 / 2,039 = 1.64x. At 3x the price per hour
    the A100 is cheaper per token; at 1.5x the H100 is."""
    cfg = PRESETS["llama-2-7b"]
    pricey = gpu_systems.choose_gpu(
        cfg, workload="serving", usd_per_gpu_hour_a=1, usd_per_gpu_hour_b=3
    )
    assert pricey.speedup == pytest.approx(3350 / 2039) and pricey.bound == "memory"
    assert pricey.pick == "NVIDIA A100 80GB SXM" and "1.64x" in pricey.reason
    cheap = gpu_systems.choose_gpu(
        cfg, workload="serving", usd_per_gpu_hour_a=1, usd_per_gpu_hour_b=1.5
    )
    assert cheap.pick == "NVIDIA H100 SXM 80GB"
    big_batch = gpu_systems.choose_gpu(
        cfg, workload="serving", batch=1024, usd_per_gpu_hour_a=1, usd_per_gpu_hour_b=3
    )
    assert big_batch.bound == "compute" and big_batch.speedup == pytest.approx(989.4 / 312)


def test_budget_buys_tokens_at_the_cost_per_token():
    c = gpu_systems.choose_gpu(
        PRESETS["llama-2-7b"], usd_per_gpu_hour_a=2, usd_per_gpu_hour_b=4, budget_usd=1000
    )
    assert c.million_tokens_for_budget_a == pytest.approx(1000 / c.usd_per_million_tokens_a)
    tokens_per_hour = 0.4 * 312e12 / (6 * PRESETS["llama-2-7b"].params) * 3600
    assert c.usd_per_million_tokens_a == pytest.approx(2 / tokens_per_hour * 1e6)


# --- Question 7: Grace Hopper ------------------------------------------------------------------


# --- Question 8: the design --------------------------------------------------------------------


@FAST
@given(
    names=st.lists(
        st.sampled_from(["1g.10gb", "1g.20gb", "2g.20gb", "3g.40gb", "4g.40gb"]),
        min_size=1,
        max_size=7,
    )
)
def test_any_accepted_mix_fits_the_slices_and_never_idles_negative_sms(names):
    try:
        layout = gpu_systems.mig_layout("h100-sxm", names)
    except ValueError:
        return
    assert 0 <= layout.sms_idle < 132 and layout.compute_slices_used <= 7
    assert layout.memory_slices_used <= 8


def test_a_100_gpu_job_reproduces_llama_2_7bs_gpu_hours_on_a100s():
    """Touvron et al. 2023 (Llama 2), Table 2: 7B on 2T tokens took 184,320 A100-80GB GPU-hours.
    6 x 6.74e9 x 2e12 FLOPs at 40 % of 312 TFLOP/s: about 180,000 (2 % under)."""
    job = gpu_systems.gpu_job(
        PRESETS["llama-2-7b"],
        tokens=2e12,
        gpus=64,
        usd_per_gpu_hour_a=1.0,
        usd_per_gpu_hour_b=2.0,
    )
    gpu_hours = job.gpus_a * job.seconds_a / 3600
    assert gpu_hours == pytest.approx(184_320, rel=0.05)
    assert job.cost_a_usd == pytest.approx(gpu_hours * 1.0)
    # energy: 64 x 400 W (A100 SXM TDP) for the run's time
    assert job.energy_a_joules == pytest.approx(64 * 400 * job.seconds_a)
    assert job.speedup == pytest.approx(989.4 / 312, rel=1e-3)  # dense bf16 peaks
    assert job.seconds_a / job.seconds_b == pytest.approx(job.speedup)


def test_each_gpu_wins_on_its_side_of_the_break_even_price_ratio():
    """Per token, b costs price_b / speed-up: at a price ratio equal to the speed-up both cost the
    same; below it b wins, above it a wins."""
    base = dict(tokens=1e11, gpus=8, usd_per_gpu_hour_a=2.0)
    even = gpu_systems.gpu_job(PRESETS["llama-2-7b"], usd_per_gpu_hour_b=2.0, **base)
    ratio = even.breakeven_price_ratio
    at = gpu_systems.gpu_job(PRESETS["llama-2-7b"], usd_per_gpu_hour_b=2.0 * ratio, **base)
    assert at.cost_a_usd == pytest.approx(at.cost_b_usd)
    below = gpu_systems.gpu_job(PRESETS["llama-2-7b"], usd_per_gpu_hour_b=1.9 * ratio, **base)
    above = gpu_systems.gpu_job(PRESETS["llama-2-7b"], usd_per_gpu_hour_b=2.1 * ratio, **base)
    assert below.pick == below.gpu_b and below.cost_b_usd < below.cost_a_usd
    assert above.pick == above.gpu_a and above.cost_a_usd < above.cost_b_usd


def test_a_gpu_job_uses_as_many_gpus_as_hold_the_model_and_a_v100_computes_in_fp16():
    job = gpu_systems.gpu_job(
        PRESETS["llama-2-70b"],
        tokens=1e9,
        gpus=1,
        gpu_a="v100-sxm2-32gb",
        usd_per_gpu_hour_a=1.0,
        usd_per_gpu_hour_b=3.0,
    )
    assert job.gpus_a > job.gpus_b > 1  # 70B training states do not fit one GPU
    # V100 datasheet: 125 TFLOP/s fp16 Tensor Core (no bf16)
    assert job.speedup == pytest.approx(989.4 / 125, rel=1e-3)
    with pytest.raises(ValueError, match="tokens is too many"):
        gpu_systems.gpu_job(
            PRESETS["llama-2-70b"],
            tokens=1e18,
            gpus=1,
            usd_per_gpu_hour_a=1.0,
            usd_per_gpu_hour_b=3.0,
        )
