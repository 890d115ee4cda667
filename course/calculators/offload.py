"""Offloading calculators: what moving optimizer states or weights to CPU memory saves and costs.

- :func:`optimizer_offload` follows ZeRO-Offload (Ren et al. 2021, "ZeRO-Offload: Democratizing
  Billion-Scale Model Training", USENIX ATC, sec. 4): the GPU keeps the 16-bit weights (2 B/param)
  and runs forward and backward; the 16-bit gradients go to the CPU (2 B/param), the CPU holds the
  fp32 master weights and Adam's two moments (12 B/param) plus fp32 gradients (4 B/param) and runs
  the optimizer step, and the updated 16-bit weights come back (2 B/param). GPU memory for model
  states drops from 16 to 2 B/param: a 13 B-parameter model's states need 26 GB instead of 208 GB,
  which is how the paper trains 13 B parameters on one 32 GB V100. The price: 2 x 2 B/param over the
  CPU-GPU link and a CPU optimizer step every step, partly hidden behind the GPU's compute.
- :func:`weight_streaming` is the inference case: weights that live in CPU memory must cross the
  link on every forward pass, so a decode step costs at least weights / link bandwidth.

Link bandwidths come from ``course.facts.hardware.INTERCONNECTS`` (PCIe 4/5 x16, NVLink-C2C) or a
number in bytes/s, such as the H100 reference run's measured 55 GB/s of pinned host-to-device
copies. Used by lesson 07.
"""

from __future__ import annotations

from dataclasses import dataclass

from course.calculators.memory import (
    USABLE_MEMORY_FRACTION,
    inference_memory,
    model_state_bytes,
    params_of,
)
from course.facts import hardware, validate
from course.facts.dtypes import BYTES_PER_VALUE
from course.facts.models import TransformerConfig
from course.facts.report import Report

#: Bytes per parameter that cross the link each step under ZeRO-Offload: 16-bit gradients to the
#: CPU, 16-bit updated weights back (Ren et al. 2021, sec. 4.1).
OFFLOAD_LINK_BYTES_PER_PARAM = 2 + 2


def link_bandwidth_bytes_per_s(link: object) -> float:
    """Bytes/s of one direction of ``link``: a key of ``hardware.INTERCONNECTS`` or a number."""
    if isinstance(link, str):
        key = validate.choice("link", link, hardware.INTERCONNECTS)
        return hardware.INTERCONNECTS[key].bandwidth_bytes_per_s
    return validate.number("link", link, minimum=1e6, maximum=1e14)


@dataclass(frozen=True)
class OffloadCost(Report):
    """GPU memory and step time with the optimizer offloaded to the CPU (ZeRO-Offload)."""

    _title = "Optimizer offload (ZeRO-Offload), per training step"

    params: float
    gpu_states_without_offload_bytes: float  # 16 B/param: mixed-precision Adam all on the GPU
    gpu_states_with_offload_bytes: float  # 2 B/param: the 16-bit weights only
    cpu_states_bytes: float  # fp32 master weights, Adam m and v, fp32 gradients: 16 B/param
    link_traffic_bytes: float  # 16-bit gradients down + 16-bit weights up
    link_time_seconds: (
        float  # link_traffic_bytes / bandwidth (the two directions run one after the other)
    )
    cpu_optimizer_seconds: float
    compute_seconds: float  # the GPU's forward + backward, given
    step_seconds: float  # with the given overlap
    slowdown: float  # step_seconds / compute_seconds


def optimizer_offload(
    params: float,
    *,
    link: str | float = "pcie5",
    compute_seconds: float,
    cpu_seconds_per_param: float,
    overlap: float = 0.0,
) -> OffloadCost:
    """ZeRO-Offload's memory and time for one step of a ``params`` model.

    ``compute_seconds`` is the GPU's forward + backward without offload (for instance
    ``6 * params * tokens / (peak * mfu)``, lesson 05). ``cpu_seconds_per_param`` is the CPU's
    optimizer time per parameter (AdamW on fp32 states): measure it with
    ``course.measure.training_optimisations.cpu_optimizer_step``. ``overlap`` in [0, 1] is the share
    of the link and CPU time hidden behind the GPU's compute (ZeRO-Offload overlaps gradient
    transfer with the backward pass; its "delayed parameter update" hides the CPU step behind the
    next step).
    Step time = max(compute + (1 - overlap) x (link + CPU optimizer), link + CPU optimizer): with
    full overlap the longer of the two sets the pace.
    """
    n = params_of("params", params)
    bandwidth_bytes_per_s = link_bandwidth_bytes_per_s(link)
    compute = validate.number(
        "compute_seconds", compute_seconds, minimum=0, maximum=1e9, strict_min=True
    )
    per_param = validate.number(
        "cpu_seconds_per_param", cpu_seconds_per_param, minimum=0, maximum=1
    )
    hidden = validate.fraction("overlap", overlap, allow_zero=True)
    full = model_state_bytes(n, precision="mixed", optimizer="adam")
    moved = OFFLOAD_LINK_BYTES_PER_PARAM * n
    link_seconds = moved / bandwidth_bytes_per_s
    cpu_seconds = per_param * n
    offloaded = link_seconds + cpu_seconds
    step = max(compute + (1 - hidden) * offloaded, offloaded)
    return OffloadCost(
        params=n,
        gpu_states_without_offload_bytes=full.total_bytes,
        gpu_states_with_offload_bytes=full.weights_bytes,
        cpu_states_bytes=full.master_weights_bytes + full.optimizer_states_bytes + 4 * n,
        link_traffic_bytes=moved,
        link_time_seconds=link_seconds,
        cpu_optimizer_seconds=cpu_seconds,
        compute_seconds=compute,
        step_seconds=step,
        slowdown=step / compute,
    )


@dataclass(frozen=True)
class WeightStreaming(Report):
    """The floor on a forward pass when the weights live in CPU memory."""

    _title = "Weights streamed from CPU memory"

    link: str
    weights_bytes: float
    over_link_seconds: float  # weights / link bandwidth: every forward pass
    from_gpu_memory_seconds: float  # weights / the GPU's memory bandwidth (weights on the GPU)
    slowdown: float


def weight_streaming(
    params: float, *, dtype: str = "bf16", link: str | float = "pcie5", gpu: str = "h100-sxm"
) -> WeightStreaming:
    """Seconds to read every weight once from CPU memory over ``link`` vs from the GPU's memory.

    Decoding one token reads every weight once (lesson 02), so with the weights offloaded the
    link's bandwidth, not the GPU's, sets the floor: Llama-2-7B in bf16 (13.5 GB) over PCIe 5.0
    x16 (63 GB/s) takes 0.21 s per token against 4.0 ms from an H100's 3.35 TB/s.
    """
    n = params_of("params", params)
    per = BYTES_PER_VALUE[validate.choice("dtype", dtype, BYTES_PER_VALUE)]
    bandwidth_bytes_per_s = link_bandwidth_bytes_per_s(link)
    if not isinstance(gpu, str):
        raise ValueError(f"gpu must be one of {', '.join(hardware.GPUS)}; got {gpu!r}")
    g = hardware.gpu(gpu)
    weights = n * per
    slow, fast = weights / bandwidth_bytes_per_s, weights / g.memory_bandwidth_bytes_per_s
    name = link if isinstance(link, str) else f"{bandwidth_bytes_per_s / 1e9:g} GB/s"
    # slow / fast = the GPU's bandwidth over the link's (not a division by a tiny ``fast``)
    return WeightStreaming(
        name, weights, slow, fast, g.memory_bandwidth_bytes_per_s / bandwidth_bytes_per_s
    )


# Grace Hopper's NVLink-C2C against PCIe for offloading (practice question 7)


@dataclass(frozen=True)
class OffloadStep(Report):
    """One decoding step when what does not fit in GPU memory lives in CPU memory."""

    _title = "Decoding with CPU offload"

    gpu: str
    model: str
    link: str
    link_bandwidth_bytes_per_s: float  # one direction (host to GPU)
    needed_bytes: float  # weights + KV cache
    gpu_usable_bytes: float
    offloaded_bytes: float  # read over the link every step
    host_memory_bytes: float | None  # None: not tabulated (a PCIe server's RAM varies)
    fits_host: bool
    gpu_read_seconds: float  # the resident part from HBM
    link_seconds: float  # the offloaded part over the link
    step_seconds: float  # the larger (reads overlap at best)
    tokens_per_s: float


def offload_decode_step(
    model: TransformerConfig,
    *,
    gpu: str | hardware.GPU = "h100-sxm",
    dtype: str = "bf16",
    seq_len: int = 4096,
    batch: int = 1,
    usable_fraction: float = USABLE_MEMORY_FRACTION,
) -> OffloadStep:
    """Floor of one decoding step when weights + KV cache exceed GPU memory and the excess is
    streamed from CPU memory each step (every weight and every cached token is read per step).

    time >= max(resident bytes / HBM bandwidth, offloaded bytes / host-link bandwidth), the
    link being the GPU's ``host_link``: PCIe 5.0 x16 (63 GB/s per direction) on an H100 SXM,
    NVLink-C2C (450 GB/s per direction, 900 both ways) on a GH200, whose Grace CPU holds up to
    480 GB. Same offloaded bytes: 7.1x faster over C2C. Weights only matter when the batch is
    small; KV caches grow with ``batch`` x ``seq_len`` (lesson 04).
    """
    if not isinstance(model, TransformerConfig):
        raise ValueError(f"model must be a TransformerConfig, got {model!r}")
    card = hardware.gpu(gpu)
    mem = inference_memory(model, dtype=dtype, seq_len=seq_len, batch=batch)
    usable = validate.fraction("usable_fraction", usable_fraction) * card.memory_bytes
    need = mem.total_bytes
    offloaded = max(0.0, need - usable)
    link = hardware.INTERCONNECTS[card.host_link]
    cpu = next((c for c in hardware.CPUS.values() if c.gpu_link == card.host_link), None)
    host = cpu.memory_bytes if cpu else None
    gpu_seconds = (need - offloaded) / card.memory_bandwidth_bytes_per_s
    link_seconds = offloaded / link.bandwidth_bytes_per_s
    step = max(gpu_seconds, link_seconds)
    return OffloadStep(
        gpu=card.name,
        model=model.name,
        link=link.name,
        link_bandwidth_bytes_per_s=link.bandwidth_bytes_per_s,
        needed_bytes=need,
        gpu_usable_bytes=usable,
        offloaded_bytes=offloaded,
        host_memory_bytes=host,
        fits_host=host is None or offloaded <= host,
        gpu_read_seconds=gpu_seconds,
        link_seconds=link_seconds,
        step_seconds=step,
        tokens_per_s=int(batch) / step,
    )


__all__ = [
    "OffloadStep",
    "offload_decode_step",
    "OFFLOAD_LINK_BYTES_PER_PARAM",
    "OffloadCost",
    "WeightStreaming",
    "link_bandwidth_bytes_per_s",
    "optimizer_offload",
    "weight_streaming",
]
