"""course.claims.gpu_infrastructure: the source document's memory, runtime and multi-GPU
calculators run as written, beside :mod:`course.calculators.communication`,
:mod:`course.calculators.parallel` and the course's own runtime estimate."""

from __future__ import annotations

import math

import pytest

from course.calculators import communication as C
from course.calculators import parallel as P
from course.claims import gpu_infrastructure
from course.claims.gpu_infrastructure import memory_requirements_as_written


def test_seed000_calculator_reproduces_its_own_heuristics():
    """Seed 000's calculate_memory_requirements, 7B fp16, batch 4, seq 2048 (its first example):
    weights 7e9 x 2 / 2**30 = 13.04 'GB' (GiB), activations 4 x that x 4 x 2048 / 2048,
    8 log10(7e9) = 78.8 'layers' and hidden 2,722 (Llama-2-7B has 32 and 4,096)."""
    r = memory_requirements_as_written(7_000_000_000, 2, 4, 2048)
    weights = 7e9 * 2 / 2**30
    assert r["model_weights_gb"] == round(weights, 2) == 13.04
    assert r["activations_gb"] == round(weights * 4 * 4, 2)
    layers = 8 * math.log10(7e9)
    hidden = (7e9 / (layers * 12)) ** 0.5
    assert round(layers) == 79 and hidden == pytest.approx(2720, abs=5)
    assert r["kv_cache_gb"] == round(2 * layers * hidden * 2048 * 4 * 2 / 2**30, 2)
    assert r["gradients_gb"] == 0 and r["optimizer_states_gb"] == 0
    assert r["recommended_gpu_memory_gb"] == pytest.approx(1.2 * r["total_gb"], abs=0.01)
    trained = memory_requirements_as_written(7_000_000_000, 4, 2, 2048, training=True)
    assert trained["optimizer_states_gb"] == pytest.approx(2 * trained["model_weights_gb"], 0.01)


def test_seed_estimate_runtime_reproduces_what_its_code_prints():
    """*GPU Infrastructure & Computational Requirements*: its example, run as written."""
    rows = {(r["workload"], r["gpu"]): r for r in gpu_infrastructure.table_as_written()}
    assert rows["inference", "Consumer 24GB"]["compute_time_sec"] == 0.33
    assert rows["inference", "Datacenter 80GB"]["actual_time_sec"] == 0.08
    assert rows["training", "Consumer 24GB"]["actual_time_sec"] == 10.0
    assert rows["training", "Datacenter 80GB"]["memory_time_sec"] == 0.14
    assert {r["bottleneck"] for r in rows.values()} == {"compute"}
    assert rows["inference", "Datacenter 80GB"]["cost_usd"] == 0.0  # rounded away


def test_generating_1000_tokens_is_memory_bound_and_far_slower_than_the_seed_says():
    """The seed's 14 GB read once is a prefill; generating reads the weights once per token."""
    seed = gpu_infrastructure.estimate_runtime(
        gpu_infrastructure.SOURCE_GPUS["datacenter"],
        gpu_infrastructure.SOURCE_WORKLOADS["inference"],
    )
    gen = gpu_infrastructure.course_estimate("generate", "a100-80gb-sxm")
    pre = gpu_infrastructure.course_estimate("prefill", "a100-80gb-sxm")
    assert gen.bound == "memory" and pre.bound == "compute"
    assert gen.seconds > 50 * seed["actual_time_sec"]
    assert gen.bytes_moved_bytes > 900 * 13e9
    assert gpu_infrastructure.course_estimate("training", "h100-sxm").bytes_moved_bytes is None
    assert "None" in str(gpu_infrastructure.course_estimate("training", "h100-sxm"))
    assert pre.seconds == pytest.approx(seed["actual_time_sec"], rel=0.2)


def test_seed_estimate_refuses_other_types():
    with pytest.raises(ValueError):
        gpu_infrastructure.estimate_runtime("a100", gpu_infrastructure.SOURCE_WORKLOADS["training"])
    with pytest.raises(ValueError, match="workload"):
        gpu_infrastructure.course_estimate("finetune", "h100-sxm")


def test_seed_000_rule_as_written_and_what_it_misses():
    """'GPU Infrastructure & Computational Requirements', calculate_multi_gpu_efficiency."""
    dp = gpu_infrastructure.multi_gpu_efficiency_as_written(8, "data", 14, 64)
    assert dp == {"memory_per_gpu_gb": 14, "scaling_efficiency": pytest.approx(1 - 0.1 * 7 / 8)}
    # its data-parallel efficiency ignores the model size and the link altogether ...
    assert (
        gpu_infrastructure.multi_gpu_efficiency_as_written(8, "data", 1400, 64)[
            "scaling_efficiency"
        ]
        == dp["scaling_efficiency"]
    )
    # ... while the ring model's communication grows with the gradients and shrinks with the link
    small, big = (
        C.gradient_allreduce_on_links(p, 8, links=("pcie5",))[0].seconds for p in (7e8, 7e10)
    )
    assert big == pytest.approx(100 * small)
    # and its memory per GPU is the weights alone: ZeRO-0 mixed-precision Adam needs 8x that
    zero0 = P.zero_model_state_bytes_per_gpu(7e9, 8, 0)
    assert zero0.total_bytes / 14e9 == pytest.approx(8)
    # pipeline: it takes the batch size for the number of micro-batches
    pp = gpu_infrastructure.multi_gpu_efficiency_as_written(8, "pipeline", 140, 32)
    assert pp["scaling_efficiency"] == pytest.approx(1 - P.pipeline_bubble_fraction(8, 32) - 0.1)
    assert gpu_infrastructure.multi_gpu_efficiency_as_written(4, "model", 140, 1) == {
        "memory_per_gpu_gb": 35,
        "scaling_efficiency": pytest.approx(0.8),
    }
