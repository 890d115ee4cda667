"""The runtime estimator of *GPU Infrastructure & Computational Requirements*, as written, and the
course's estimate for the same workloads.

That source document defines ``GPUSpec``, ``WorkloadProfile`` and ``estimate_runtime(gpu,
workload, efficiency=0.6)`` and runs it on two made-up GPUs ("Consumer 24GB", "Datacenter 80GB")
and two workloads ("7B inference on 1,000 tokens", "7B training on 10,000 tokens"). The code here
reproduces that logic line for line, rounding included (:func:`estimate_runtime`), so lesson 05 can
show what it prints and where it goes wrong:

- it takes max(compute, memory) and then divides only the compute time by an efficiency;
- ``memory_accessed_gb=14`` for inference reads the weights once, which is right for a prefill of
  1,000 tokens but not for *generating* 1,000 tokens one at a time (1,000 weight reads: the batch
  and the phase are absent from the profile);
- ``memory_accessed_gb=280`` for training has no derivation ("multiple passes through weights");
- its "Datacenter 80GB" FP32 figure of 20 TFLOP/s is the A100's non-Tensor-Core FP32 (19.5); the
  comment "3x operations (forward, backward, optimizer)" misnames the 6 (2 forward + 4 backward).

:func:`course_estimate` gives the course's answer for the same workloads on a real GPU from
``course.facts.hardware``.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from course.calculators import compute, inference
from course.calculators.memory import MAX_BATCH, MAX_COUNT, MAX_SEQ_LEN
from course.facts import hardware, validate
from course.facts.models import PRESETS
from course.facts.report import Report, Table
from course.facts.validate import MAX_GPUS


@dataclass
class GPUSpec:
    """The source's "Simplified GPU specifications" (its units: TFLOP/s, GB, GB/s, W, $/h)."""

    name: str
    fp32_tflops: float
    fp16_tflops: float
    memory_gb: int
    memory_bandwidth_gbps: int
    tdp_watts: int
    cost_per_hour: float


@dataclass
class WorkloadProfile:
    """The source's "Computational workload characteristics"."""

    total_flops: float
    memory_accessed_gb: float
    precision: str  # 'fp32' or 'fp16'


def estimate_runtime(gpu: GPUSpec, workload: WorkloadProfile, efficiency: float = 0.6) -> dict:
    """The source's ``estimate_runtime``, reproduced as written (its rounding included).

    Compute time = FLOPs / (peak x efficiency); memory time = GB accessed / GB/s (no efficiency);
    time = the larger; cost = hours x $/h; energy = hours x TDP.
    """
    if not isinstance(gpu, GPUSpec) or not isinstance(workload, WorkloadProfile):
        raise ValueError(
            "estimate_runtime takes a GPUSpec and a WorkloadProfile "
            "(course.claims.gpu_infrastructure)"
        )
    validate.number("efficiency", efficiency, minimum=0, maximum=1, strict_min=True)
    tflops = gpu.fp16_tflops if workload.precision == "fp16" else gpu.fp32_tflops
    achievable_tflops = tflops * efficiency
    compute_time_seconds = workload.total_flops / (achievable_tflops * 1e12)
    memory_time_seconds = workload.memory_accessed_gb / gpu.memory_bandwidth_gbps
    actual_time = max(compute_time_seconds, memory_time_seconds)
    bottleneck = "compute" if compute_time_seconds > memory_time_seconds else "memory"
    cost = (actual_time / 3600) * gpu.cost_per_hour
    energy_kwh = (actual_time / 3600) * (gpu.tdp_watts / 1000)
    return {
        "compute_time_sec": round(compute_time_seconds, 2),
        "memory_time_sec": round(memory_time_seconds, 2),
        "actual_time_sec": round(actual_time, 2),
        "bottleneck": bottleneck,
        "compute_utilisation": round(compute_time_seconds / actual_time, 2),
        "cost_usd": round(cost, 2),
        "energy_kwh": round(energy_kwh, 3),
    }


#: The source's two GPUs, as it defines them.
SOURCE_GPUS = {
    "consumer": GPUSpec(
        name="Consumer 24GB",
        fp32_tflops=35,
        fp16_tflops=70,
        memory_gb=24,
        memory_bandwidth_gbps=900,
        tdp_watts=350,
        cost_per_hour=1.50,
    ),
    "datacenter": GPUSpec(
        name="Datacenter 80GB",
        fp32_tflops=20,
        fp16_tflops=300,
        memory_gb=80,
        memory_bandwidth_gbps=2000,
        tdp_watts=400,
        cost_per_hour=8.00,
    ),
}

#: The source's two workloads, as it defines them.
SOURCE_WORKLOADS = {
    "inference": WorkloadProfile(
        total_flops=7e9 * 2 * 1000, memory_accessed_gb=14, precision="fp16"
    ),
    "training": WorkloadProfile(
        total_flops=7e9 * 6 * 10000, memory_accessed_gb=280, precision="fp16"
    ),
}

#: The real GPUs the source's two stand for (their figures match the A100 80GB SXM's datasheet
#: and are close to the RTX 3090's in NVIDIA's GA102 whitepaper).
REAL_GPUS = {"consumer": "rtx-3090", "datacenter": "a100-80gb-sxm"}


def table_as_written() -> Table:
    """``estimate_runtime`` on the source's own GPUs and workloads: one row per pair (a
    :class:`course.facts.report.Table`, which prints itself)."""
    rows = [
        {
            "workload": w,
            "gpu": SOURCE_GPUS[g].name,
            **estimate_runtime(SOURCE_GPUS[g], SOURCE_WORKLOADS[w]),
        }
        for w in SOURCE_WORKLOADS
        for g in SOURCE_GPUS
    ]
    return Table(rows, title="estimate_runtime as written, on the source's own GPUs")


@dataclass(frozen=True)
class CourseEstimate(Report):
    """The course's roofline estimate of one of the source's workloads on a real GPU."""

    _title = "Course estimate"

    workload: str
    gpu: str
    work_flops: float
    bytes_moved_bytes: float | None  # None: not modelled (training here is compute-bound)
    efficiency: float
    seconds: float
    bound: str


def course_estimate(
    workload: str, gpu: hardware.GPU | str, *, efficiency: float = 0.6
) -> CourseEstimate:
    """The course's estimate for the source's workloads with a Llama-2-7B (bf16) on ``gpu``.

    - ``"prefill"``: the 1,000 tokens as one prompt (:func:`course.calculators.inference.prefill`);
    - ``"generate"``: 1,000 tokens generated one at a time at batch 1, 1,000 decode steps that each
      read the weights and the KV cache (:func:`course.calculators.inference.decode`, mean context
      500);
    - ``"training"``: 10,000 tokens at 6N + attention per token (seq 2,048), compute-bound
      (:func:`course.calculators.compute.training_flops_with_attention`) at ``efficiency`` of the
      bf16 peak.

    ``efficiency`` divides the binding roof (the source divides only the compute roof).
    """
    key = validate.choice("workload", workload, ("prefill", "generate", "training"))
    card, cfg = hardware.gpu(gpu), PRESETS["llama-2-7b"]
    if key == "prefill":
        p = inference.prefill(cfg, 1000, card, efficiency=efficiency)
        flops, moved, seconds, bound = p.work_flops, p.weights_bytes, p.seconds, p.bound
    elif key == "generate":
        d = inference.decode(cfg, card, context_tokens=500, efficiency=efficiency)
        flops, moved = 1000 * d.work_flops, 1000 * (d.weights_bytes + d.kv_cache_bytes)
        seconds, bound = 1000 * d.step_seconds, d.bound
    else:
        flops = compute.training_flops_with_attention(cfg, 10_000, 2048)
        moved = None
        seconds = flops / (
            card.peak_flop_per_s("bf16")
            * validate.number("efficiency", efficiency, minimum=0, maximum=1, strict_min=True)
        )
        bound = "compute"
    return CourseEstimate(
        workload=key,
        gpu=card.name,
        work_flops=flops,
        bytes_moved_bytes=moved,
        efficiency=float(efficiency),
        seconds=seconds,
        bound=bound,
    )


# ---------------------------------------------------------------------------------------------
# Its memory calculator and its multi-GPU rule, as written (lessons 04 and 06 judge them)
# ---------------------------------------------------------------------------------------------


def memory_requirements_as_written(
    num_parameters: int,
    precision_bytes: float,
    batch_size: int,
    sequence_length: int,
    training: bool = False,
) -> dict[str, float]:
    """The reading's heuristic memory calculator (``calculate_memory_requirements``), reproduced so
    a lesson can show what it gets wrong.

    Same inputs and output as the reading (values in "GB" that are really GiB, rounded to 0.01):
    activations = 4 x weights x batch x seq_len / 2048; gradients = weights; optimizer = 2 x
    weights; KV cache from layers = 8*log10(N) and hidden = sqrt(N / (12*layers)); recommended =
    1.2 x total. The activation and KV heuristics have no physical basis (7B gives 79 layers and
    hidden 2,720; Llama-2-7B has 32 and 4,096: Touvron et al. 2023, Table 1; activations per layer:
    Korthikanti et al. 2022) and training ignores fp32 master weights.
    Use :func:`course.calculators.memory.training_memory` / ``inference_memory`` instead.
    """
    n = validate.number("num_parameters", num_parameters, minimum=2, maximum=MAX_COUNT)
    p = validate.number("precision_bytes", precision_bytes, minimum=0, maximum=8, strict_min=True)
    b = validate.positive_int("batch_size", batch_size, maximum=MAX_BATCH)
    s = validate.positive_int("sequence_length", sequence_length, maximum=MAX_SEQ_LEN)
    validate.choice("training", training, (True, False))
    model_memory = (n * p) / (1024**3)
    activation_memory = (model_memory * 4 * b * s) / 2048
    gradient_memory = model_memory if training else 0
    optimizer_memory = model_memory * 2 if training else 0
    num_layers = math.log(n, 10) * 8
    hidden_dim = (n / (num_layers * 12)) ** 0.5
    kv_cache = (2 * num_layers * hidden_dim * s * b * p) / (1024**3)
    total = model_memory + activation_memory + gradient_memory + optimizer_memory + kv_cache
    return {
        "model_weights_gb": round(model_memory, 2),
        "activations_gb": round(activation_memory, 2),
        "gradients_gb": round(gradient_memory, 2),
        "optimizer_states_gb": round(optimizer_memory, 2),
        "kv_cache_gb": round(kv_cache, 2),
        "total_gb": round(total, 2),
        "recommended_gpu_memory_gb": round(total * 1.2, 2),
    }


STRATEGIES = ("data", "model", "pipeline")


def multi_gpu_efficiency_as_written(
    num_gpus: int,
    strategy: str,
    model_size_gb: float,
    batch_size: int,
    communication_overhead: float = 0.1,
) -> dict:
    """``calculate_multi_gpu_efficiency`` of *GPU Infrastructure & Computational Requirements*,
    as written there (the document ends inside it: its tensor-parallel branch is missing).

    Kept to be judged in lesson 06, not to be used: the communication cost is a constant
    fraction (0.1) whatever the model, the link or the batch; data parallelism's memory per GPU is
    the model's size alone (no gradients or optimizer states, no ZeRO); the pipeline's bubble
    uses the *batch size* as the number of micro-batches. Returns the source's numbers:
    ``memory_per_gpu_gb`` and ``scaling_efficiency``.
    """
    n = validate.positive_int("num_gpus", num_gpus, maximum=MAX_GPUS)
    kind = validate.choice("strategy", strategy, STRATEGIES)
    size = validate.number("model_size_gb", model_size_gb, minimum=0, maximum=1e9)
    batch = validate.positive_int("batch_size", batch_size, maximum=10**9)
    overhead = validate.fraction("communication_overhead", communication_overhead, allow_zero=True)
    if kind == "data":
        memory, efficiency = size, 1 - overhead * (1 - 1 / n)
    elif kind == "model":
        memory, efficiency = size / n, 1 - overhead * 2
    else:
        bubble = 1 - batch / (batch + n - 1)
        memory, efficiency = size / n, 1 - bubble - overhead
    return {"memory_per_gpu_gb": memory, "scaling_efficiency": efficiency}


__all__ = [
    "STRATEGIES",
    "memory_requirements_as_written",
    "multi_gpu_efficiency_as_written",
    "GPUSpec",
    "REAL_GPUS",
    "SOURCE_GPUS",
    "SOURCE_WORKLOADS",
    "WorkloadProfile",
    "course_estimate",
    "estimate_runtime",
    "table_as_written",
]
