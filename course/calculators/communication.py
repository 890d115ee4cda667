"""Communication on paper: ring collectives, nccl-tests' bus bandwidth, the alpha-beta model.

- Ring collectives: all-reduce moves 2 (n - 1) / n of the message through each GPU's link; the
  nccl-tests "bus bandwidth" = algorithm bandwidth x 2 (n - 1) / n (NVIDIA nccl-tests,
  doc/PERFORMANCE.md).
- The alpha-beta (latency-bandwidth) model, t = steps x alpha + factor x S / B (Hockney 1994;
  Thakur, Rabenseifner and Gropp 2005 for the ring terms): fitted to measured collectives, applied
  to the registry's links (the gradient all-reduce, a tensor-parallel layer's traffic).
- The links of a node of a GPU (inside: NVLink or PCIe; between nodes: InfiniBand), from
  ``course.facts.hardware``.

:mod:`course.calculators.parallel` prices layouts with these. Used by lessons 06, 08 and 10 and the
distributed demos.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from course.calculators.memory import MAX_BATCH, MAX_BYTES, MAX_SEQ_LEN
from course.facts import validate
from course.facts.models import TransformerConfig
from course.facts.report import Report, Table
from course.facts.validate import MAX_GPUS

COLLECTIVES = ("all_reduce", "all_gather", "reduce_scatter", "broadcast")


def _gpus(name: str, value: object) -> int:
    return validate.positive_int(name, value, maximum=MAX_GPUS)


# ---------------------------------------------------------------------------------------------
# Collectives
# ---------------------------------------------------------------------------------------------


def _collective_args(
    message_bytes: object, n: object, bandwidth_bytes_per_s: object, latency_seconds: object
):
    size = validate.number("message_bytes", message_bytes, minimum=0, maximum=MAX_BYTES)
    ranks = _gpus("n", n)
    bw = validate.number(
        "bandwidth_bytes_per_s", bandwidth_bytes_per_s, minimum=0, maximum=1e18, strict_min=True
    )
    lat = validate.number("latency_seconds", latency_seconds, minimum=0, maximum=1e3)
    return size, ranks, bw, lat


def ring_allreduce_seconds(
    message_bytes: float, n: int, bandwidth_bytes_per_s: float, *, latency_seconds: float = 0.0
) -> float:
    """Ring all-reduce of ``message_bytes`` over ``n`` GPUs: 2 (n - 1) / n x S / B + 2
    (n - 1) x latency.

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
    """Ring all-gather producing ``message_bytes`` on each GPU:
    (n - 1)/n x S / B + (n - 1) x latency.

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


def algorithm_bandwidth_bytes_per_s(message_bytes: float, seconds: float) -> float:
    """nccl-tests' "algbw": message size / time, in bytes/s."""
    size = validate.number("message_bytes", message_bytes, minimum=0, maximum=MAX_BYTES)
    t = validate.number("seconds", seconds, minimum=0, maximum=1e9, strict_min=True)
    return size / t


def bus_bandwidth_bytes_per_s(
    algorithm_bytes_per_s: float, n: int, *, collective: str = "all_reduce"
) -> float:
    """nccl-tests' "busbw": algorithm bandwidth x the collective's factor, in bytes/s.

    Factors (nccl-tests doc/PERFORMANCE.md): all-reduce 2 (n - 1) / n; all-gather and
    reduce-scatter (n - 1) / n; broadcast 1. Bus bandwidth is comparable with the link's peak
    whatever n, which algorithm bandwidth is not.
    """
    algbw = validate.number("algorithm_bytes_per_s", algorithm_bytes_per_s, minimum=0, maximum=1e18)
    ranks = _gpus("n", n)
    kind = validate.choice("collective", collective, COLLECTIVES)
    return algbw * _BUS_FACTOR[kind](ranks)


# ---------------------------------------------------------------------------------------------
# The alpha-beta model: fit it to measurements, apply it to the registry's links
# ---------------------------------------------------------------------------------------------

#: (latency steps, bandwidth factor) of each ring collective on n ranks:
#: t = steps*alpha + factor*S/B.
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
    count it); ``broadcast`` (pipelined ring): factor 1. ``latency_seconds`` is alpha, the cost of
    one step; ``bandwidth_bytes_per_s`` is B = 1 / beta, one rank's link in one direction.
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
    """Weighted least-squares fit of t = a + b x S to measured times; alpha and B from the ring
    model.

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
        raise ValueError(
            f"message_bytes and seconds must have the same length, got {len(xs)} and {len(ys)}"
        )
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
        raise ValueError(
            "seconds must grow with message_bytes for a bandwidth to be fitted "
            f"(slope {slope:.3g} s/byte): measure larger messages or again"
        )
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
) -> Table:
    """Time to ring-all-reduce ``params`` gradients across ``n_gpus`` over each of ``links``.

    Message S = params x bytes_per_gradient (2 for bf16); time = 2 (n - 1)/n x S / (B x efficiency),
    B from ``course.facts.hardware.INTERCONNECTS`` (one direction). Latency is left out: it is
    microseconds against the tenths of a second of a 7B model's gradients. ``efficiency`` scales the
    line rate to what a library reaches: NCCL's ring gets about 370 of NVLink 4's 450 GB/s (0.82;
    NCCL maintainer S. Jeaugey, github.com/NVIDIA/nccl-tests/issues/212, 2024). For InfiniBand this
    assumes one GPU per node, each with its own 400 Gb/s port (a DGX H100 has eight, one per GPU: a
    rail-optimised fabric).
    """
    from course.facts.hardware import INTERCONNECTS

    n = _gpus("n_gpus", n_gpus)
    size = validate.number("params", params, minimum=0, maximum=MAX_BYTES) * validate.number(
        "bytes_per_gradient", bytes_per_gradient, minimum=0, maximum=64, strict_min=True
    )
    eff = validate.fraction("efficiency", efficiency)
    if not isinstance(links, list | tuple) or not links:
        raise ValueError(
            f"links must be a non-empty list of {', '.join(INTERCONNECTS)}, got {links!r}"
        )
    rows = []
    for key in links:
        link = INTERCONNECTS[validate.choice("links", key, tuple(INTERCONNECTS))]
        bw = link.bandwidth_bytes_per_s * eff
        t = ring_allreduce_seconds(size, n, bw)
        algbw = size / t if t > 0 else math.inf
        rows.append(
            LinkAllReduce(
                link=link.name,
                n_gpus=n,
                message_bytes=size,
                link_bandwidth_bytes_per_s=link.bandwidth_bytes_per_s,
                efficiency=eff,
                seconds=t,
                algorithm_bandwidth_bytes_per_s=algbw,
                bus_bandwidth_bytes_per_s=bw if n > 1 else math.inf,
            )
        )
    return Table(rows, title="Gradient all-reduce by link (ring, bandwidth term)")


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
    width = validate.number(
        "bytes_per_value", bytes_per_value, minimum=0, maximum=64, strict_min=True
    )
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
# The links of a node, from the registry
# ---------------------------------------------------------------------------------------------


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
        intra = next(
            (
                i
                for i in INTERCONNECTS.values()
                if i.connects == "GPU to GPU"
                and math.isclose(i.bandwidth_bytes_per_s, per_direction, rel_tol=1e-3)
            ),
            None,
        ) or Interconnect(
            f"nvlink-{device.key}",
            f"NVLink ({device.name})",
            per_direction,
            "GPU to GPU",
            device.source,
        )
    inter = INTERCONNECTS["ib-ndr" if device.launch_year >= 2022 else "ib-hdr"]
    return intra, inter


def link_or_default(name: str, key: object, default):
    """The registry's link of key ``key`` (checked, named ``name`` in errors), or ``default`` if
    None."""
    from course.facts.hardware import INTERCONNECTS

    if key is None:
        return default
    return INTERCONNECTS[validate.choice(name, key, tuple(INTERCONNECTS))]


__all__ = [
    "link_or_default",
    "AlphaBetaFit",
    "COLLECTIVES",
    "LinkAllReduce",
    "QUESTION_6_LINKS",
    "TensorParallelLayerComm",
    "algorithm_bandwidth_bytes_per_s",
    "bus_bandwidth_bytes_per_s",
    "fit_alpha_beta",
    "gpu_links",
    "gradient_allreduce_on_links",
    "ring_allgather_seconds",
    "ring_allreduce_seconds",
    "ring_collective_seconds",
    "ring_reduce_scatter_seconds",
    "tensor_parallel_layer_comm",
]
