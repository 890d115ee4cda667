"""Figures that lessons 05-10 and their quizzes state in prose, checked against the calculators
and the registry that print them, so that a sentence cannot drift from the numbers above it
(issue 19)."""

from __future__ import annotations

import pytest

from course.calculators import communication, parallel
from course.facts import hardware
from course.facts.models import PRESETS, param_count


def test_pipeline_bubble_reaches_10_percent_at_27_microbatches_and_drops_below_at_28():
    # Quiz 06, Q4: p = 4. GPipe (Huang et al. 2019): (p - 1) / (m + p - 1); 3/30 is exactly 10 %.
    assert parallel.pipeline_bubble_fraction(4, 12) == pytest.approx(0.20)
    assert parallel.pipeline_bubble_fraction(4, 27) == pytest.approx(0.10)
    assert parallel.pipeline_bubble_fraction(4, 28) < 0.10


def test_tensor_parallel_traffic_is_a_sixth_of_the_compute_on_nvlink_and_more_on_infiniband():
    # Lesson 06, section 5 and quiz 06, Q5: Llama-2-70B, 4,096 tokens, TP 8, 40 % MFU on an H100.
    cfg, h100 = PRESETS["llama-2-70b"], hardware.gpu("h100-sxm")
    compute = 6 * param_count(cfg) / cfg.layers * 4096 / 8 / (0.4 * h100.peak_flop_per_s("bf16"))
    comm = {
        key: communication.tensor_parallel_layer_comm(
            cfg,
            seq_len=4096,
            tensor_parallel=8,
            bandwidth_bytes_per_s=hardware.INTERCONNECTS[key].bandwidth_bytes_per_s,
        ).seconds
        for key in ("nvlink4", "ib-ndr")
    }
    assert 0.1 < comm["nvlink4"] / compute < 0.2  # "about a sixth", not "about as long"
    assert 1.2 < comm["ib-ndr"] / compute < 1.6  # longer than the compute itself
    assert comm["ib-ndr"] / comm["nvlink4"] == pytest.approx(9, rel=0.1)  # "nine times"


def test_an_80gb_h100_shows_79_6_gib_in_nvidia_smi_and_79_2_gib_to_torch():
    # H100 SXM reference run 2026-11-22 (machine.json): nvidia-smi "81559MiB", torch total_memory
    # 85,017,493,504 B. The registry's 80 GiB is the HBM fitted (5 stacks x 16 GiB); a program sees
    # less.
    import re

    from course.facts.data import reference

    machine = reference.load(reference.H100, "machine")
    smi_mib = int(re.search(r"/\s*(\d+)MiB", machine["nvidia_smi"]).group(1))
    assert smi_mib == 81_559
    assert smi_mib / 1024 == pytest.approx(79.6, abs=0.05)
    torch_bytes = machine["device_properties"]["total_memory"]
    assert torch_bytes / 2**30 == pytest.approx(79.2, abs=0.05)
    assert torch_bytes < smi_mib * 2**20 < hardware.gpu("h100-sxm").memory_bytes


def test_a_4096_cubed_matmul_is_68_7_billion_multiply_adds_and_137_gflop():
    # Lesson 05's box on "137 billion multiply-add operations" (Computational Resources for ML).
    from course.calculators import compute

    assert pytest.approx(68.7e9, rel=0.001) == 4096**3
    assert compute.matmul_flops(4096, 4096, 4096) == pytest.approx(137.4e9, rel=0.001)


def test_datacenter_speed_up_over_an_rtx_3090_is_14x_compute_bound_and_3_6x_decoding():
    # Lesson 05's box on "5x more per hour but 4x+ throughput": the course's roofline estimates.
    from course.claims import gpu_infrastructure

    def ratio(workload):
        slow = gpu_infrastructure.course_estimate(workload, "rtx-3090").seconds
        return slow / gpu_infrastructure.course_estimate(workload, "h100-sxm").seconds

    assert 13 < ratio("prefill") < 15 and 13 < ratio("training") < 15
    assert 3.4 < ratio("generate") < 3.8


def test_h100_decodes_1_6x_faster_than_an_a100_80gb_and_2_2x_than_a_40gb():
    # Lesson 08's box on "Inference: 4-6x faster" (AI Infrastructure): bandwidth ratios.
    h100 = hardware.gpu("h100-sxm").memory_bandwidth_bytes_per_s
    assert h100 / hardware.gpu("a100-80gb-sxm").memory_bandwidth_bytes_per_s == pytest.approx(
        1.64, abs=0.01
    )
    assert h100 / hardware.gpu("a100-40gb-sxm").memory_bandwidth_bytes_per_s == pytest.approx(
        2.15, abs=0.01
    )
    bf16 = hardware.gpu("h100-sxm").peak_flop_per_s("bf16") / hardware.gpu(
        "a100-80gb-sxm"
    ).peak_flop_per_s("bf16")
    fp8 = hardware.gpu("h100-sxm").peak_flop_per_s("fp8") / hardware.gpu(
        "a100-80gb-sxm"
    ).peak_flop_per_s("bf16")
    assert bf16 == pytest.approx(3.2, abs=0.05) and fp8 == pytest.approx(6.3, abs=0.05)


def test_the_readings_7b_inference_example_is_228_gib_but_inference_needs_17_8_gb():
    # Lesson 04's box: the reading's calculator vs weights + KV cache (Llama-2-7B, fp16, 4 x 2,048).
    from course.calculators import memory
    from course.claims import gpu_infrastructure

    theirs = gpu_infrastructure.memory_requirements_as_written(
        7_000_000_000, 2, 4, 2048, training=False
    )
    assert theirs["total_gb"] == pytest.approx(228.2) and theirs["activations_gb"] == pytest.approx(
        208.62
    )
    ours = memory.inference_memory(PRESETS["llama-2-7b"], seq_len=2048, batch=4)
    assert ours.weights_bytes == pytest.approx(13.5e9, rel=0.01)
    assert ours.kv_cache_bytes == pytest.approx(4.3e9, rel=0.01)
    assert ours.total_bytes == pytest.approx(17.8e9, rel=0.01)
