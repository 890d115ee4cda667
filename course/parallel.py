"""Parallel training on paper: ZeRO/FSDP sharding, tensor and pipeline parallelism, collectives.

- ZeRO stages (Rajbhandari et al. 2019): stage 1 shards optimizer states (with the fp32 master
  weights) over the data-parallel GPUs, stage 2 also gradients, stage 3 also the weights (what
  PyTorch FSDP's ``FULL_SHARD`` / FSDP2 ``fully_shard`` do).
- Tensor and pipeline parallelism (Megatron-LM: Shoeybi et al. 2019, Narayanan et al. 2021,
  Korthikanti et al. 2022): weights split t x p ways, activations per Korthikanti's Table 2.
- Pipeline bubble: GPipe's (p - 1) / (m + p - 1) of the schedule (Huang et al. 2019); the
  interleaved schedule divides the bubble by the number of virtual stages (Narayanan et al. 2021).
- Ring collectives: all-reduce moves 2 (n - 1) / n of the message through each GPU's link; the
  nccl-tests "bus bandwidth" = algorithm bandwidth x 2 (n - 1) / n (NVIDIA nccl-tests,
  doc/PERFORMANCE.md).

Used by lessons 06, 08 and 10. Layer 2: no torch.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from course import validate
from course.memory import (
    MAX_BATCH,
    MAX_BYTES,
    MAX_SEQ_LEN,
    activation_bytes_per_layer,
    model_state_bytes,
)
from course.models import TransformerConfig, param_breakdown
from course.report import Report

MAX_GPUS = 10**8
ZERO_STAGES = (0, 1, 2, 3)
COLLECTIVES = ("all_reduce", "all_gather", "reduce_scatter", "broadcast")


def _gpus(name: str, value: object) -> int:
    return validate.positive_int(name, value, maximum=MAX_GPUS)


def _stage(value: object) -> int:
    return int(validate.choice("stage", value, ZERO_STAGES))  # type: ignore[arg-type]


# ---------------------------------------------------------------------------------------------
# ZeRO / FSDP
# ---------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class ShardedModelState(Report):
    """Model-state memory on each GPU under a ZeRO stage (no activations)."""

    _title = "Model states per GPU (ZeRO)"
    _formats = {"stage": "number", "n_gpus": "number"}

    stage: int
    n_gpus: int
    weights_bytes: float
    gradients_bytes: float
    master_weights_bytes: float
    optimizer_states_bytes: float
    total_bytes: float


def zero_model_state_bytes_per_gpu(
    params: float,
    n_gpus: int,
    stage: int,
    *,
    precision: str = "mixed",
    optimizer: str = "adam",
) -> ShardedModelState:
    """Per-GPU model states with ZeRO ``stage`` over ``n_gpus`` data-parallel GPUs.

    Stage 0 keeps everything on every GPU; 1 divides the optimizer states and fp32 master weights
    by ``n_gpus`` (ZeRO's P_os); 2 also the gradients (P_os+g); 3 also the 16-bit weights
    (P_os+g+p, = FSDP full sharding). Rajbhandari et al. 2019, Fig. 1: 7.5B params, 64 GPUs,
    mixed-precision Adam: 120 GB, 31.4 GB, 16.6 GB, 1.9 GB per GPU.
    """
    states = model_state_bytes(params, precision=precision, optimizer=optimizer)
    n = _gpus("n_gpus", n_gpus)
    s = _stage(stage)
    opt_div = n if s >= 1 else 1
    grad_div = n if s >= 2 else 1
    weight_div = n if s >= 3 else 1
    weights = states.weights_bytes / weight_div
    grads = states.gradients_bytes / grad_div
    master = states.master_weights_bytes / opt_div
    opt = states.optimizer_states_bytes / opt_div
    return ShardedModelState(
        stage=s,
        n_gpus=n,
        weights_bytes=weights,
        gradients_bytes=grads,
        master_weights_bytes=master,
        optimizer_states_bytes=opt,
        total_bytes=weights + grads + master + opt,
    )


# ---------------------------------------------------------------------------------------------
# Tensor x pipeline x data parallelism: memory of the busiest GPU
# ---------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class ParallelMemory(Report):
    """Training memory of the busiest GPU under tensor x pipeline x data parallelism."""

    _title = "Training memory per GPU (3D parallel)"
    _formats = {"params_per_gpu": "count"}

    params_per_gpu: float
    weights_bytes: float
    gradients_bytes: float
    master_weights_bytes: float
    optimizer_states_bytes: float
    activations_bytes: float
    total_bytes: float


def parallel_training_memory_per_gpu(
    config: TransformerConfig,
    *,
    seq_len: int,
    micro_batch: int = 1,
    tensor_parallel: int = 1,
    pipeline_parallel: int = 1,
    data_parallel: int = 1,
    zero_stage: int = 0,
    sequence_parallel: bool = False,
    recompute: str = "none",
    precision: str = "mixed",
    optimizer: str = "adam",
) -> ParallelMemory:
    """Memory of the busiest GPU when training ``config`` with t x p x d parallelism.

    Each pipeline stage holds ``ceil(layers / p)`` layers, split ``t`` ways; the first stage also
    holds the token (and position) embedding, the last the LM head (and the fp32 logits,
    ``4*s*b*vocab/t``). Under the 1F1B schedule the first stage keeps the activations of ``p``
    micro-batches in flight, so its activations are ``p x layers/p = layers`` layers' worth,
    whatever ``p`` (Korthikanti et al. 2022, "pipeline parallelism" in sec. 4); the last stage keeps one. Model states
    are then sharded over ``data_parallel`` GPUs by ``zero_stage``. Returns the larger of the first
    and last stage. Norm weights are counted as split t ways (they are replicated; the error is
    negligible).
    """
    if not isinstance(config, TransformerConfig):
        raise ValueError(f"config must be a TransformerConfig, got {config!r}")
    c = config
    s = validate.positive_int("seq_len", seq_len, maximum=MAX_SEQ_LEN)
    b = validate.positive_int("micro_batch", micro_batch, maximum=MAX_BATCH)
    t = validate.positive_int("tensor_parallel", tensor_parallel, maximum=c.heads)
    if c.heads % t:
        raise ValueError(f"tensor_parallel must divide heads ({c.heads}), got {t}")
    p = validate.positive_int("pipeline_parallel", pipeline_parallel, maximum=c.layers)
    d = _gpus("data_parallel", data_parallel)
    zs = validate.choice("zero_stage", zero_stage, ZERO_STAGES)

    parts = param_breakdown(c)
    per_layer = (parts.attention_params + parts.mlp_params + parts.norm_params) / c.layers
    layers_per_stage = math.ceil(c.layers / p)
    vocab_table = c.vocab * c.hidden
    head = vocab_table if c.lm_head else 0  # tied: the last stage keeps its own copy
    first_params = (layers_per_stage * per_layer + parts.embedding_params) / t
    last_params = (layers_per_stage * per_layer + parts.pooler_params + head) / t
    if p == 1:
        first_params = last_params = parts.total_params / t

    act_layer = activation_bytes_per_layer(
        s, b, c.hidden, c.heads, tensor_parallel=t, sequence_parallel=sequence_parallel,
        recompute=recompute,
    )  # fmt: skip
    logits = 4.0 * s * b * c.vocab / t if c.lm_head else 0.0
    first_act = p * layers_per_stage * act_layer + (logits if p == 1 else 0.0)
    last_act = layers_per_stage * act_layer + logits

    def stage(params: float, activations: float) -> ParallelMemory:
        st = zero_model_state_bytes_per_gpu(params, d, zs, precision=precision,
                                            optimizer=optimizer)  # fmt: skip
        return ParallelMemory(
            params_per_gpu=params,
            weights_bytes=st.weights_bytes,
            gradients_bytes=st.gradients_bytes,
            master_weights_bytes=st.master_weights_bytes,
            optimizer_states_bytes=st.optimizer_states_bytes,
            activations_bytes=activations,
            total_bytes=st.total_bytes + activations,
        )

    first, last = stage(first_params, first_act), stage(last_params, last_act)
    return first if first.total_bytes >= last.total_bytes else last


# ---------------------------------------------------------------------------------------------
# Pipeline bubble
# ---------------------------------------------------------------------------------------------


def _pipeline_args(stages: object, microbatches: object, virtual_stages: object):
    p = validate.positive_int("stages", stages, maximum=10**6)
    m = validate.positive_int("microbatches", microbatches, maximum=10**9)
    v = validate.positive_int("virtual_stages", virtual_stages, maximum=10**6)
    return p, m, v


def pipeline_bubble_fraction(stages: int, microbatches: int, *, virtual_stages: int = 1) -> float:
    """Fraction of a pipeline schedule's time each GPU sits idle: (p - 1) / (v*m + p - 1).

    With ``virtual_stages`` v = 1 this is GPipe's bubble, (p - 1) / (m + p - 1) = 1 - m/(m + p - 1)
    (Huang et al. 2019; 1F1B has the same bubble). The interleaved schedule of Narayanan et al.
    2021 shrinks the bubble time to (p - 1)/v micro-batch times. More micro-batches, fewer stages
    or more virtual stages: a smaller bubble.
    """
    p, m, v = _pipeline_args(stages, microbatches, virtual_stages)
    return (p - 1) / (v * m + p - 1)


def pipeline_bubble_overhead(stages: int, microbatches: int, *, virtual_stages: int = 1) -> float:
    """Bubble time relative to the ideal (bubble-free) time: (p - 1) / (v*m), Narayanan et al.
    2021's form. ``overhead / (1 + overhead)`` = :func:`pipeline_bubble_fraction`."""
    p, m, v = _pipeline_args(stages, microbatches, virtual_stages)
    return (p - 1) / (v * m)


# ---------------------------------------------------------------------------------------------
# Collectives
# ---------------------------------------------------------------------------------------------


def _collective_args(message_bytes: object, n: object, bandwidth: object, latency_s: object):
    size = validate.number("message_bytes", message_bytes, minimum=0, maximum=MAX_BYTES)
    ranks = _gpus("n", n)
    bw = validate.number("bandwidth_bytes_per_s", bandwidth, minimum=0, maximum=1e18,
                         strict_min=True)  # fmt: skip
    lat = validate.number("latency_s", latency_s, minimum=0, maximum=1e3)
    return size, ranks, bw, lat


def ring_allreduce_seconds(
    message_bytes: float, n: int, bandwidth_bytes_per_s: float, *, latency_s: float = 0.0
) -> float:
    """Ring all-reduce of ``message_bytes`` over ``n`` GPUs: 2 (n - 1) / n x S / B + 2 (n - 1) x latency.

    A reduce-scatter then an all-gather, each n - 1 steps sending S/n bytes per GPU.
    ``bandwidth_bytes_per_s`` is one GPU's link bandwidth in one direction (NVLink 4 on H100:
    450 GB/s; the "900 GB/s" is both directions). n = 1 takes no time.
    """
    size, ranks, bw, lat = _collective_args(message_bytes, n, bandwidth_bytes_per_s, latency_s)
    return 2 * (ranks - 1) / ranks * size / bw + 2 * (ranks - 1) * lat


def ring_allgather_seconds(
    message_bytes: float, n: int, bandwidth_bytes_per_s: float, *, latency_s: float = 0.0
) -> float:
    """Ring all-gather producing ``message_bytes`` on each GPU: (n - 1)/n x S / B + (n - 1) x latency.

    ``message_bytes`` is the gathered (output) size, as nccl-tests report it; each GPU contributes
    S / n. FSDP/ZeRO-3 all-gathers each layer's weights before using them.
    """
    size, ranks, bw, lat = _collective_args(message_bytes, n, bandwidth_bytes_per_s, latency_s)
    return (ranks - 1) / ranks * size / bw + (ranks - 1) * lat


def ring_reduce_scatter_seconds(
    message_bytes: float, n: int, bandwidth_bytes_per_s: float, *, latency_s: float = 0.0
) -> float:
    """Ring reduce-scatter of ``message_bytes`` (input size): (n - 1)/n x S / B + (n - 1) x latency.

    Each GPU ends with the sum of its S / n shard (ZeRO-2/3 and FSDP reduce gradients this way).
    """
    size, ranks, bw, lat = _collective_args(message_bytes, n, bandwidth_bytes_per_s, latency_s)
    return (ranks - 1) / ranks * size / bw + (ranks - 1) * lat


_BUS_FACTOR = {
    "all_reduce": lambda n: 2 * (n - 1) / n,
    "all_gather": lambda n: (n - 1) / n,
    "reduce_scatter": lambda n: (n - 1) / n,
    "broadcast": lambda n: 1.0,
}


def algorithm_bandwidth(message_bytes: float, seconds: float) -> float:
    """nccl-tests' "algbw": message size / time, in bytes/s."""
    size = validate.number("message_bytes", message_bytes, minimum=0, maximum=MAX_BYTES)
    t = validate.number("seconds", seconds, minimum=0, maximum=1e9, strict_min=True)
    return size / t


def bus_bandwidth(algorithm_bytes_per_s: float, n: int, *, collective: str = "all_reduce") -> float:
    """nccl-tests' "busbw": algorithm bandwidth x the collective's factor, in bytes/s.

    Factors (nccl-tests doc/PERFORMANCE.md): all-reduce 2 (n - 1) / n; all-gather and
    reduce-scatter (n - 1) / n; broadcast 1. Bus bandwidth is comparable with the link's peak
    whatever n, which algorithm bandwidth is not.
    """
    algbw = validate.number("algorithm_bytes_per_s", algorithm_bytes_per_s, minimum=0,
                            maximum=1e18)  # fmt: skip
    ranks = _gpus("n", n)
    kind = validate.choice("collective", collective, COLLECTIVES)
    return algbw * _BUS_FACTOR[kind](ranks)


# ---------------------------------------------------------------------------------------------
# Data-parallel step time and scaling efficiency
# ---------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class DataParallelStep(Report):
    """One data-parallel training step: compute, gradient all-reduce, and what overlaps."""

    _title = "Data-parallel step"
    _formats = {"n_gpus": "number", "speedup": "number"}

    n_gpus: int
    compute_seconds: float
    communication_seconds: float
    exposed_communication_seconds: float
    step_seconds: float
    scaling_efficiency: float  # compute / step: 1.0 is perfect scaling
    speedup: float  # throughput relative to one GPU = n_gpus x scaling efficiency


def data_parallel_step_seconds(
    compute_seconds: float,
    gradient_bytes: float,
    n_gpus: int,
    bandwidth_bytes_per_s: float,
    *,
    latency_s: float = 0.0,
    overlap: float = 0.0,
) -> DataParallelStep:
    """Step time of data parallelism with a fixed per-GPU batch (weak scaling).

    Communication is one ring all-reduce of the gradients (:func:`ring_allreduce_seconds`).
    ``overlap`` is the fraction of the compute time during which that all-reduce can run
    concurrently (DDP overlaps bucketed all-reduces with the backward pass, about 2/3 of the
    compute); only what does not fit is exposed: step = compute + max(0, comm - overlap x compute).
    Scaling efficiency = compute / step; speedup = n_gpus x efficiency.
    """
    t_compute = validate.number("compute_seconds", compute_seconds, minimum=0, maximum=1e9,
                                strict_min=True)  # fmt: skip
    n = _gpus("n_gpus", n_gpus)
    comm = ring_allreduce_seconds(gradient_bytes, n, bandwidth_bytes_per_s, latency_s=latency_s)
    hidden = validate.fraction("overlap", overlap, allow_zero=True) * t_compute
    exposed = max(0.0, comm - hidden)
    step = t_compute + exposed
    efficiency = t_compute / step
    return DataParallelStep(
        n_gpus=n,
        compute_seconds=t_compute,
        communication_seconds=comm,
        exposed_communication_seconds=exposed,
        step_seconds=step,
        scaling_efficiency=efficiency,
        speedup=n * efficiency,
    )


__all__ = [
    "DataParallelStep",
    "ParallelMemory",
    "ShardedModelState",
    "algorithm_bandwidth",
    "bus_bandwidth",
    "data_parallel_step_seconds",
    "parallel_training_memory_per_gpu",
    "pipeline_bubble_fraction",
    "pipeline_bubble_overhead",
    "ring_allgather_seconds",
    "ring_allreduce_seconds",
    "ring_reduce_scatter_seconds",
    "zero_model_state_bytes_per_gpu",
]
