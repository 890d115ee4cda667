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

from course.calculators.memory import (
    MAX_BATCH,
    MAX_BYTES,
    MAX_SEQ_LEN,
    activation_bytes_per_layer,
    model_state_bytes,
)
from course.facts import validate
from course.facts.models import TransformerConfig, param_breakdown
from course.facts.report import Report
from course.facts.validate import MAX_GPUS

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
    microbatches: int | None = None,
    virtual_stages: int = 1,
) -> ParallelMemory:
    """Memory of the busiest GPU when training ``config`` with t x p x d parallelism.

    Each pipeline stage holds ``ceil(layers / p)`` layers, split ``t`` ways; the first stage also
    holds the token (and position) embedding, the last the LM head (and the fp32 logits,
    ``4*s*b*vocab/t``). Under the 1F1B schedule the first stage keeps the activations of ``p``
    micro-batches in flight, so its activations are ``p x layers/p = layers`` layers' worth,
    whatever ``p`` (Korthikanti et al. 2022, "pipeline parallelism" in sec. 4); the last stage keeps one.
    With fewer ``microbatches`` than stages (m < p) only m are ever in flight. The interleaved
    schedule (``virtual_stages`` v > 1) holds 1 + (p - 1)/(p v) times as much on the first stage
    (Korthikanti et al. 2022, sec. 4.2.3). Model states
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
    m = p if microbatches is None else validate.positive_int("microbatches", microbatches,
                                                             maximum=10**9)  # fmt: skip
    v = validate.positive_int("virtual_stages", virtual_stages, maximum=c.layers)
    in_flight = min(p, m) * (1 + (p - 1) / (p * v) if v > 1 else 1.0)

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
    first_act = in_flight * layers_per_stage * act_layer + (logits if p == 1 else 0.0)
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


def _collective_args(
    message_bytes: object, n: object, bandwidth_bytes_per_s: object, latency_seconds: object
):
    size = validate.number("message_bytes", message_bytes, minimum=0, maximum=MAX_BYTES)
    ranks = _gpus("n", n)
    bw = validate.number("bandwidth_bytes_per_s", bandwidth_bytes_per_s, minimum=0, maximum=1e18,
                         strict_min=True)  # fmt: skip
    lat = validate.number("latency_seconds", latency_seconds, minimum=0, maximum=1e3)
    return size, ranks, bw, lat


def ring_allreduce_seconds(
    message_bytes: float, n: int, bandwidth_bytes_per_s: float, *, latency_seconds: float = 0.0
) -> float:
    """Ring all-reduce of ``message_bytes`` over ``n`` GPUs: 2 (n - 1) / n x S / B + 2 (n - 1) x latency.

    A reduce-scatter then an all-gather, each n - 1 steps sending S/n bytes per GPU.
    ``bandwidth_bytes_per_s`` is one GPU's link bandwidth in one direction (NVLink 4 on H100:
    450 GB/s; the "900 GB/s" is both directions). n = 1 takes no time.
    """
    size, ranks, bw, lat = _collective_args(
        message_bytes, n, bandwidth_bytes_per_s, latency_seconds
    )
    return 2 * (ranks - 1) / ranks * size / bw + 2 * (ranks - 1) * lat


def ring_allgather_seconds(
    message_bytes: float, n: int, bandwidth_bytes_per_s: float, *, latency_seconds: float = 0.0
) -> float:
    """Ring all-gather producing ``message_bytes`` on each GPU: (n - 1)/n x S / B + (n - 1) x latency.

    ``message_bytes`` is the gathered (output) size, as nccl-tests report it; each GPU contributes
    S / n. FSDP/ZeRO-3 all-gathers each layer's weights before using them.
    """
    size, ranks, bw, lat = _collective_args(
        message_bytes, n, bandwidth_bytes_per_s, latency_seconds
    )
    return (ranks - 1) / ranks * size / bw + (ranks - 1) * lat


def ring_reduce_scatter_seconds(
    message_bytes: float, n: int, bandwidth_bytes_per_s: float, *, latency_seconds: float = 0.0
) -> float:
    """Ring reduce-scatter of ``message_bytes`` (input size): (n - 1)/n x S / B + (n - 1) x latency.

    Each GPU ends with the sum of its S / n shard (ZeRO-2/3 and FSDP reduce gradients this way).
    """
    size, ranks, bw, lat = _collective_args(
        message_bytes, n, bandwidth_bytes_per_s, latency_seconds
    )
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
    latency_seconds: float = 0.0,
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
    comm = ring_allreduce_seconds(
        gradient_bytes, n, bandwidth_bytes_per_s, latency_seconds=latency_seconds
    )
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


# ---------------------------------------------------------------------------------------------
# The alpha-beta model: fit it to measurements, apply it to the registry's links
# ---------------------------------------------------------------------------------------------

#: (latency steps, bandwidth factor) of each ring collective on n ranks: t = steps*alpha + factor*S/B.
_RING_TERMS = {
    "all_reduce": lambda n: (2 * (n - 1), 2 * (n - 1) / n),
    "all_gather": lambda n: (n - 1, (n - 1) / n),
    "reduce_scatter": lambda n: (n - 1, (n - 1) / n),
    "broadcast": lambda n: (n - 1, 1.0),
}


def ring_collective_seconds(
    collective: str,
    message_bytes: float,
    n: int,
    bandwidth_bytes_per_s: float,
    *,
    latency_seconds: float = 0.0,
) -> float:
    """The alpha-beta model of a ring ``collective``: steps x latency + factor x S / bandwidth.

    ``all_reduce``: 2 (n - 1) steps, factor 2 (n - 1) / n; ``all_gather`` and ``reduce_scatter``:
    n - 1 steps, factor (n - 1) / n (S = the gathered output / the scattered input, as nccl-tests
    count it); ``broadcast`` (pipelined ring): factor 1. ``latency_seconds`` is alpha, the cost of one
    step; ``bandwidth_bytes_per_s`` is B = 1 / beta, one rank's link in one direction.
    """
    kind = validate.choice("collective", collective, COLLECTIVES)
    size, ranks, bw, lat = _collective_args(
        message_bytes, n, bandwidth_bytes_per_s, latency_seconds
    )
    steps, factor = _RING_TERMS[kind](ranks)
    return steps * lat + factor * size / bw


@dataclass(frozen=True)
class AlphaBetaFit(Report):
    """Latency and bandwidth of a collective, fitted to measured (size, time) points."""

    _title = "Alpha-beta fit"

    collective: str
    ranks: int
    points: int
    intercept_seconds: float  # time of an empty message: steps x alpha
    latency_seconds: float  # alpha: one ring step
    bandwidth_bytes_per_s: float  # B = 1 / beta: the link bandwidth the ring model implies
    bus_bandwidth_bytes_per_s: float  # = B: nccl-tests' busbw of a large message, for comparison
    r_squared: float


def fit_alpha_beta(
    message_bytes, seconds, *, collective: str = "all_reduce", n: int = 2
) -> AlphaBetaFit:
    """Weighted least-squares fit of t = a + b x S to measured times; alpha and B from the ring model.

    With the ring terms of :func:`ring_collective_seconds`, a = steps x alpha and
    b = factor / B, so alpha = a / steps and B = factor / b. B is then the bus bandwidth of
    nccl-tests for large messages (doc/PERFORMANCE.md), comparable across rank counts. Each point
    is weighted by 1 / t**2 (relative errors), so microsecond and millisecond messages count alike;
    pass sizes spread over decades and medians, not single runs.
    ``ValueError`` if fewer than two distinct sizes, or if time does not grow with size (noise:
    measure again with larger messages).
    """
    kind = validate.choice("collective", collective, COLLECTIVES)
    ranks = validate.positive_int("n", n, minimum=2, maximum=MAX_GPUS)
    for name, values in (("message_bytes", message_bytes), ("seconds", seconds)):
        if not isinstance(values, list | tuple):
            raise ValueError(f"{name} must be a list of numbers, got {values!r}")
    xs = [validate.number("message_bytes", x, minimum=0, maximum=MAX_BYTES) for x in message_bytes]
    ys = [validate.number("seconds", y, minimum=0, maximum=1e9, strict_min=True) for y in seconds]
    if len(xs) != len(ys):
        raise ValueError(f"message_bytes and seconds must have the same length, got {len(xs)} "
                         f"and {len(ys)}")  # fmt: skip
    if len(set(xs)) < 2:
        raise ValueError(
            f"message_bytes must hold at least 2 distinct sizes, got {sorted(set(xs))}"
        )
    k = len(xs)
    w = [1.0 / y**2 for y in ys]  # relative errors: small and large messages count alike
    total = sum(w)
    mx = sum(wi * x for wi, x in zip(w, xs, strict=True)) / total
    my = sum(wi * y for wi, y in zip(w, ys, strict=True)) / total
    sxx = sum(wi * (x - mx) ** 2 for wi, x in zip(w, xs, strict=True))
    slope = sum(wi * (x - mx) * (y - my) for wi, x, y in zip(w, xs, ys, strict=True)) / sxx
    if not slope > 0:
        raise ValueError("seconds must grow with message_bytes for a bandwidth to be fitted "
                         f"(slope {slope:.3g} s/byte): measure larger messages or again")  # fmt: skip
    intercept = max(0.0, my - slope * mx)
    ss_tot = sum(wi * (y - my) ** 2 for wi, y in zip(w, ys, strict=True))
    ss_res = sum(
        wi * (y - (intercept + slope * x)) ** 2 for wi, x, y in zip(w, xs, ys, strict=True)
    )
    steps, factor = _RING_TERMS[kind](ranks)
    bandwidth_bytes_per_s = factor / slope
    return AlphaBetaFit(
        collective=kind,
        ranks=ranks,
        points=k,
        intercept_seconds=intercept,
        latency_seconds=intercept / steps,
        bandwidth_bytes_per_s=bandwidth_bytes_per_s,
        bus_bandwidth_bytes_per_s=bandwidth_bytes_per_s,
        r_squared=1 - ss_res / ss_tot if ss_tot > 0 else 1.0,
    )


@dataclass(frozen=True)
class LinkAllReduce(Report):
    """A gradient all-reduce over one kind of link (ring model, bandwidth term only)."""

    _title = "Gradient all-reduce over a link"

    link: str
    n_gpus: int
    message_bytes: float
    link_bandwidth_bytes_per_s: float  # one direction, as the registry lists it
    efficiency: float  # share of the line rate the library reaches (1.0 = the datasheet)
    seconds: float
    algorithm_bandwidth_bytes_per_s: float
    bus_bandwidth_bytes_per_s: float


#: Links of practice question 6: NVLink 4 (H100 SXM), PCIe 5.0 x16, InfiniBand NDR (one port/GPU).
QUESTION_6_LINKS = ("nvlink4", "pcie5", "ib-ndr")


def gradient_allreduce_on_links(
    params: float,
    n_gpus: int = 8,
    *,
    bytes_per_gradient: float = 2,
    links=QUESTION_6_LINKS,
    efficiency: float = 1.0,
) -> tuple[LinkAllReduce, ...]:
    """Time to ring-all-reduce ``params`` gradients across ``n_gpus`` over each of ``links``.

    Message S = params x bytes_per_gradient (2 for bf16); time = 2 (n - 1)/n x S / (B x
    efficiency), B from ``course.facts.hardware.INTERCONNECTS`` (one direction). Latency is left out: it
    is microseconds against the tenths of a second of a 7B model's gradients. ``efficiency``
    scales the line rate to what a library reaches: NCCL's ring gets about 370 of NVLink 4's
    450 GB/s (0.82; NCCL maintainer S. Jeaugey, github.com/NVIDIA/nccl-tests/issues/212, 2024).
    For InfiniBand this assumes one GPU per node, each with its own 400 Gb/s port (a DGX H100 has
    eight, one per GPU: a rail-optimised fabric).
    """
    from course.facts.hardware import INTERCONNECTS

    n = _gpus("n_gpus", n_gpus)
    size = validate.number("params", params, minimum=0, maximum=MAX_BYTES) * validate.number(
        "bytes_per_gradient", bytes_per_gradient, minimum=0, maximum=64, strict_min=True
    )
    eff = validate.fraction("efficiency", efficiency)
    if not isinstance(links, list | tuple) or not links:
        raise ValueError(f"links must be a non-empty list of {', '.join(INTERCONNECTS)}, "
                         f"got {links!r}")  # fmt: skip
    rows = []
    for key in links:
        link = INTERCONNECTS[validate.choice("links", key, tuple(INTERCONNECTS))]
        bw = link.bandwidth_bytes_per_s * eff
        t = ring_allreduce_seconds(size, n, bw)
        algbw = size / t if t > 0 else math.inf
        rows.append(LinkAllReduce(link=link.name, n_gpus=n, message_bytes=size,
                                  link_bandwidth_bytes_per_s=link.bandwidth_bytes_per_s, efficiency=eff,
                                  seconds=t, algorithm_bandwidth_bytes_per_s=algbw,
                                  bus_bandwidth_bytes_per_s=bw if n > 1 else math.inf))  # fmt: skip
    return tuple(rows)


@dataclass(frozen=True)
class TensorParallelLayerComm(Report):
    """Communication of one transformer layer under Megatron tensor parallelism, per micro-batch."""

    _title = "Tensor-parallel communication per layer"

    tensor_parallel: int
    all_reduces: int  # 2 in the forward pass, 2 in the backward pass
    message_bytes: float  # one all-reduce: the b x s x h activations
    bytes_sent_per_gpu: float  # all four, through one GPU's link (ring)
    seconds: float


def tensor_parallel_layer_comm(
    config: TransformerConfig,
    *,
    seq_len: int,
    micro_batch: int = 1,
    tensor_parallel: int = 8,
    bandwidth_bytes_per_s: float = 450e9,
    bytes_per_value: float = 2,
) -> TensorParallelLayerComm:
    """Megatron TP (Shoeybi et al. 2019, sec. 3): each layer all-reduces its b x s x h output twice
    in the forward pass (after attention, after the MLP) and twice in the backward pass.

    Each is a ring all-reduce of S = b x s x h x bytes_per_value over ``tensor_parallel`` GPUs:
    2 (t - 1)/t x S through every GPU's link (:func:`ring_allreduce_seconds`). With sequence
    parallelism (Korthikanti et al. 2022) each all-reduce becomes a reduce-scatter plus an
    all-gather: the same bytes. Latency left out.
    """
    if not isinstance(config, TransformerConfig):
        raise ValueError(f"config must be a TransformerConfig, got {config!r}")
    s = validate.positive_int("seq_len", seq_len, maximum=MAX_SEQ_LEN)
    b = validate.positive_int("micro_batch", micro_batch, maximum=MAX_BATCH)
    t = validate.positive_int("tensor_parallel", tensor_parallel, maximum=config.heads)
    width = validate.number("bytes_per_value", bytes_per_value, minimum=0, maximum=64,
                            strict_min=True)  # fmt: skip
    size = b * s * config.hidden * width
    one = ring_allreduce_seconds(size, t, bandwidth_bytes_per_s)
    return TensorParallelLayerComm(
        tensor_parallel=t,
        all_reduces=4,
        message_bytes=size,
        bytes_sent_per_gpu=4 * 2 * (t - 1) / t * size,
        seconds=4 * one,
    )


# ---------------------------------------------------------------------------------------------
# Choosing a layout: data x tensor x pipeline parallelism on nodes of GPUs
# ---------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class LayoutStep(Report):
    """One training step of a DP x TP x PP layout: memory of the busiest GPU and where time goes."""

    _title = "Training layout: one step"
    _formats = {"mfu": "percent", "hfu": "percent"}

    layout: str
    gpu: str
    dtype: str  # the GPU's own 16-bit format: bf16, or fp16 where it has none (V100)
    intra_node_link: str
    inter_node_link: str
    n_gpus: int
    global_batch: int  # sequences per step = data_parallel x micro-batches x micro-batch size
    memory_per_gpu_bytes: float
    gpu_memory_bytes: float
    fits: str
    model_flops: float  # per step: forward + backward, attention included, no recomputation
    hardware_flops: float  # what the GPUs execute: model FLOPs + the recomputed forward
    compute_seconds: float
    tensor_parallel_comm_seconds: float
    pipeline_comm_seconds: float
    data_parallel_comm_seconds: float
    bubble_seconds: float
    step_seconds: float
    bubble_fraction: float
    communication_fraction: float
    compute_efficiency: float  # compute / step
    mfu: float  # model FLOPs / (step x GPUs x peak): what the run reports as MFU
    hfu: float  # hardware FLOPs / (step x GPUs x peak): Megatron-LM's "% of peak"
    notes: str


def gpu_links(gpu: str) -> tuple:
    """The links a node of ``gpu`` has: (inside the node, between nodes), from the registry.

    Inside: the GPU's own NVLink (per direction: half the datasheet's two-way figure; NVLink 3 on
    an A100, 4 on an H100 SXM, 5 on a B200) on SXM boards, where an NVSwitch joins every GPU;
    PCIe and consumer cards (L40S, RTX 4090, H100 PCIe: NVLink bridges join pairs at most) talk
    through their host link, PCIe. Between nodes: one InfiniBand port per GPU, HDR (200 Gb/s) for
    GPUs launched before 2022 (the A100 era), NDR (400 Gb/s) after.
    """
    from course.facts.hardware import INTERCONNECTS, Interconnect
    from course.facts.hardware import gpu as lookup_gpu

    device = lookup_gpu(gpu)
    intra = INTERCONNECTS[device.host_link]
    if device.form_factor == "SXM" and device.nvlink_bandwidth_bytes_per_s > 0:
        per_direction = device.nvlink_bandwidth_bytes_per_s / 2
        intra = next((i for i in INTERCONNECTS.values() if i.connects == "GPU to GPU"
                      and math.isclose(i.bandwidth_bytes_per_s, per_direction, rel_tol=1e-3)), None) or \
            Interconnect(f"nvlink-{device.key}", f"NVLink ({device.name})", per_direction,
                         "GPU to GPU", device.source)  # fmt: skip
    inter = INTERCONNECTS["ib-ndr" if device.launch_year >= 2022 else "ib-hdr"]
    return intra, inter


def _link(name: str, key: object, default):
    from course.facts.hardware import INTERCONNECTS

    if key is None:
        return default
    return INTERCONNECTS[validate.choice(name, key, tuple(INTERCONNECTS))]


def layout_step(
    config: TransformerConfig,
    *,
    gpu: str = "h100-sxm",
    gpus_per_node: int = 8,
    nodes: int = 1,
    data_parallel: int = 8,
    tensor_parallel: int = 1,
    pipeline_parallel: int = 1,
    zero_stage: int = 1,
    micro_batch: int = 1,
    microbatches: int = 8,
    seq_len: int = 4096,
    recompute: str = "selective",
    compute_hfu: float = 0.5,
    virtual_stages: int = 1,
    intra_node_link: str | None = None,
    inter_node_link: str | None = None,
) -> LayoutStep:
    """Memory per GPU and the step time of a layout, split into compute, communication, bubble.

    An estimate with stated assumptions (Narayanan et al. 2021 for the layout, Korthikanti et al.
    2022 for activations and recomputation):

    - ``data_parallel x tensor_parallel x pipeline_parallel`` must equal ``gpus_per_node x
      nodes``, and tensor parallelism stays inside a node (its all-reduces run on every layer);
      anything else is refused with ``ValueError``. Ranks are ordered TP, then DP, then PP
      (Megatron's order): DP crosses nodes once ``tensor_parallel x data_parallel`` exceeds a node.
      TP must divide the heads and the K/V heads (or be a multiple of them: K/V heads are then
      copied); stages that do not divide the layers are allowed, with a note (the busiest stage
      has ``ceil(layers / p)``).
    - Memory: :func:`parallel_training_memory_per_gpu` (mixed precision, Adam, sequence
      parallelism on when TP > 1; at most ``min(p, m)`` micro-batches in flight; the interleaved
      schedule's 1 + (p - 1)/(p v)), against the GPU's memory.
    - Compute: the model FLOPs of :func:`course.calculators.compute.training_flops_with_attention`
      (6 N per token plus attention's 12 l s h, which matters at long context), plus the
      recomputed forward (all layers with ``recompute="full"``, the attention core with
      ``"selective"``): the *hardware* FLOPs, executed at ``compute_hfu`` x the GPU's dense peak
      in its own 16-bit format (bf16, fp16 on a V100). ``compute_hfu`` is the kernels' efficiency
      while computing, an HFU before any bubble or communication; its default 0.5 is about what
      Narayanan et al. 2021, Table 2, imply for GPT-3 175B on A100s (0.53; 0.59 for their 530B:
      tests/test_parallel_links.py calibrates it on each model's smallest cluster and predicts
      the two larger ones within 2 %). It grows with the model's matrices: Korthikanti et al.
      2022, Table 5, imply 0.47 for 22B on 8 GPUs up to 0.66 for 1T on 512, and with it the
      full-recomputation times within 2.5 % (tests/test_layout_korthikanti.py).
    - Bubble: compute x (p - 1) / (v m) (:func:`pipeline_bubble_overhead`; ``virtual_stages`` v > 1
      is the interleaved schedule of Narayanan et al. 2021, sec. 2.2.2).
    - TP: per layer and micro-batch, 2 all-reduces forward and 2 backward of b x s x h 16-bit
      activations over the node's link. PP: one activation send forward and one gradient back per
      stage boundary and micro-batch (v times as many when interleaved). DP: one all-reduce of the
      16-bit gradients of the GPU's parameters (ZeRO-3 adds the weights' all-gathers: 1.5x,
      Rajbhandari et al. 2019), over the inter-node link (one port per GPU) once DP leaves the node.
    - Links: the GPU's own (:func:`gpu_links`) unless ``intra_node_link`` / ``inter_node_link``
      name a row of ``course.facts.hardware.INTERCONNECTS``.
    - Nothing overlaps (an upper bound: real frameworks hide much of the DP all-reduce behind the
      backward pass).

    The result's ``mfu`` and ``hfu`` are the whole step's: model FLOPs and hardware FLOPs over
    (step time x GPUs x peak). Megatron-LM reports the second (its FLOPs count the recomputation).
    Korthikanti et al. 2022's HFU (their eq. 8, Table 5) adds 12 B L s^2 h for selective
    recomputation, three times the recomputed attention forward their appendix A lists; ``hfu``
    here counts it once, so it reads lower than theirs by that much.
    """
    from course.calculators.compute import attention_flops_per_token, training_flops_with_attention
    from course.facts.hardware import gpu as lookup_gpu

    if not isinstance(config, TransformerConfig):
        raise ValueError(f"config must be a TransformerConfig, got {config!r}")
    device = lookup_gpu(gpu)
    per_node = validate.positive_int("gpus_per_node", gpus_per_node, maximum=1024)
    n_nodes = _gpus("nodes", nodes)
    d = _gpus("data_parallel", data_parallel)
    t = validate.positive_int("tensor_parallel", tensor_parallel, maximum=MAX_GPUS)
    p = validate.positive_int("pipeline_parallel", pipeline_parallel, maximum=MAX_GPUS)
    total = per_node * n_nodes
    if d * t * p != total:
        raise ValueError(
            f"data x tensor x pipeline parallel = {d} x {t} x {p} = {d * t * p:,} GPUs must equal "
            f"GPUs per node x nodes = {per_node} x {n_nodes} = {total:,}")  # fmt: skip
    if t > per_node:
        raise ValueError(
            f"tensor_parallel ({t}) must be at most GPUs per node ({per_node}): its all-reduces "
            "run on every layer and need the node's NVLink")  # fmt: skip
    if config.heads % t:
        raise ValueError(f"tensor_parallel ({t}) must divide the {config.heads} attention heads "
                         "(each GPU computes whole heads)")  # fmt: skip
    if config.kv_heads % t and t % config.kv_heads:
        raise ValueError(f"tensor_parallel ({t}) must divide the {config.kv_heads} K/V heads, or "
                         "be a multiple of them (each GPU then keeps a copy of one)")  # fmt: skip
    if p > config.layers:
        raise ValueError(f"pipeline_parallel ({p}) must be at most the model's {config.layers} "
                         "layers (one layer per stage at least)")  # fmt: skip
    m = validate.positive_int("microbatches", microbatches, maximum=10**6)
    v = validate.positive_int("virtual_stages", virtual_stages, maximum=config.layers)
    if p * v > config.layers:
        raise ValueError(f"pipeline_parallel x virtual_stages = {p * v} must be at most the "
                         f"model's {config.layers} layers")  # fmt: skip
    b = validate.positive_int("micro_batch", micro_batch, maximum=MAX_BATCH)
    s = validate.positive_int("seq_len", seq_len, maximum=MAX_SEQ_LEN)
    rc = validate.choice("recompute", recompute, ("none", "selective", "full"))
    eff = validate.fraction("compute_hfu", compute_hfu)
    own_intra, own_inter = gpu_links(device.key)
    intra = _link("intra_node_link", intra_node_link, own_intra)
    inter = _link("inter_node_link", inter_node_link, own_inter)
    dtype = "bf16" if "bf16" in device.dense_flop_per_s else "fp16"
    peak = device.peak_flop_per_s(dtype)

    mem = parallel_training_memory_per_gpu(
        config, seq_len=s, micro_batch=b, tensor_parallel=t, pipeline_parallel=p,
        data_parallel=d, zero_stage=zero_stage, sequence_parallel=t > 1, recompute=rc,
        microbatches=m, virtual_stages=v,
    )  # fmt: skip
    tokens = d * m * b * s
    model_flops = training_flops_with_attention(config, tokens, s)
    if rc == "full":
        hardware_flops = training_flops_with_attention(config, tokens, s, recompute=True)
    elif rc == "selective":  # the attention core's forward (Q K^T, softmax, x V) runs again
        hardware_flops = model_flops + attention_flops_per_token(config, s) * tokens
    else:
        hardware_flops = model_flops
    compute = hardware_flops / (total * eff * peak)
    bubble = compute * pipeline_bubble_overhead(p, m, virtual_stages=v)
    act_bytes = 2.0 * b * s * config.hidden
    layers_here = math.ceil(config.layers / p)
    per_layer = tensor_parallel_layer_comm(config, seq_len=s, micro_batch=b, tensor_parallel=t,
                                           bandwidth_bytes_per_s=intra.bandwidth_bytes_per_s)  # fmt: skip
    tp_comm = layers_here * m * per_layer.seconds
    pp_link = intra if t * d * p <= per_node else inter
    pp_comm = 0.0 if p == 1 else 2 * v * m * act_bytes / (t * pp_link.bandwidth_bytes_per_s)
    dp_link = intra if t * d <= per_node else inter
    grad_bytes = 2.0 * mem.params_per_gpu
    dp_comm = ring_allreduce_seconds(grad_bytes, d, dp_link.bandwidth_bytes_per_s) * (1.5 if zero_stage == 3
                                                                          else 1.0)  # fmt: skip
    comm = tp_comm + pp_comm + dp_comm
    step = compute + bubble + comm
    capacity = device.memory_bytes
    notes = []
    if config.layers % p:
        notes.append(f"{p} stages do not divide the {config.layers} layers: the busiest stage has "
                     f"{layers_here}, the others wait for it")  # fmt: skip
    if m < p:
        notes.append(f"fewer micro-batches ({m}) than stages ({p}): most of the step is bubble")
    if t > config.kv_heads:
        notes.append(f"TP {t} exceeds the {config.kv_heads} K/V heads: each is copied "
                     f"{t // config.kv_heads} times")  # fmt: skip
    if dtype != "bf16":
        notes.append(f"the {device.name} has no bf16: priced in fp16")
    sched = f", interleaved v = {v}" if v > 1 else ""
    return LayoutStep(
        layout=f"DP {d} x TP {t} x PP {p}{sched}, ZeRO-{zero_stage}, {m} micro-batches of {b}",
        gpu=device.name,
        dtype=dtype,
        intra_node_link=intra.name,
        inter_node_link=inter.name,
        n_gpus=total,
        global_batch=d * m * b,
        memory_per_gpu_bytes=mem.total_bytes,
        gpu_memory_bytes=capacity,
        fits="yes"
        if mem.total_bytes <= capacity
        else f"no: {mem.total_bytes / capacity:.1f}x the GPU's memory",  # fmt: skip
        model_flops=model_flops,
        hardware_flops=hardware_flops,
        compute_seconds=compute,
        tensor_parallel_comm_seconds=tp_comm,
        pipeline_comm_seconds=pp_comm,
        data_parallel_comm_seconds=dp_comm,
        bubble_seconds=bubble,
        step_seconds=step,
        bubble_fraction=bubble / step,
        communication_fraction=comm / step,
        compute_efficiency=compute / step,
        mfu=model_flops / (step * total * peak),
        hfu=hardware_flops / (step * total * peak),
        notes="; ".join(notes) or "none",
    )


__all__ = [
    "TensorParallelLayerComm",
    "tensor_parallel_layer_comm",
    "LayoutStep",
    "gpu_links",
    "layout_step",
    "AlphaBetaFit",
    "LinkAllReduce",
    "QUESTION_6_LINKS",
    "fit_alpha_beta",
    "gradient_allreduce_on_links",
    "ring_collective_seconds",
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
