"""A fixed cost per call plus a rate: the model behind "small problems do not pay off".

Measured seconds per call are modelled as ``fixed_seconds + flops / flop_per_s``: a fixed cost
(overhead: Python dispatch, thread wake-up, on a GPU kernel launch and transfers) and a rate.

- :func:`fit_fixed_cost` fits the model to timed matrix products (records with ``size``,
  ``seconds`` and ``flops``, e.g. ``course.measure.matmul.MatmulRecord``);
- :func:`crossover_size` says from which size the faster-but-costlier-to-start option wins;
- :func:`offload_seconds` and :func:`offload_crossover` estimate the same for sending a product to
  a GPU over its host link, from datasheet numbers.

Used by lesson 01. Pure functions: no torch, no measurement.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from course.facts import validate
from course.facts.report import Report


@dataclass(frozen=True)
class FixedCostFit(Report):
    """Measured seconds per call modelled as ``fixed_seconds + flops / flop_per_s``."""

    _title = "Fixed cost per call + rate"

    label: str
    fixed_seconds: float  # cost per call that does not grow with the work (overhead)
    flop_per_s: float  # rate at which the work itself is done

    def seconds(self, flops: float) -> float:
        return self.fixed_seconds + flops / self.flop_per_s


def fit_fixed_cost(records: Sequence[Any], label: str = "") -> FixedCostFit:
    """Fit ``seconds = fixed + flops / rate`` through the smallest and the largest size measured.

    The smallest size pins down the fixed cost, the largest the rate; two medians are sturdier on
    a noisy machine than a least-squares fit through every point, which one slow outlier can tip.
    If noise makes the slope negative, the rate is taken from the largest size alone.
    """
    if len({r.size for r in records}) < 2:
        raise ValueError("fit_fixed_cost needs records of at least two sizes")
    small = min(records, key=lambda r: r.size)
    large = max(records, key=lambda r: r.size)
    per_flop = (large.seconds - small.seconds) / (large.flops - small.flops)
    if per_flop <= 0:
        per_flop = large.seconds / large.flops
    fixed = max(0.0, small.seconds - small.flops * per_flop)
    return FixedCostFit(label=label or small.library, fixed_seconds=fixed, flop_per_s=1 / per_flop)


def crossover_size(slow_start: FixedCostFit, quick_start: FixedCostFit) -> float:
    """Matrix size n from which ``slow_start`` (more overhead, faster rate) beats ``quick_start``.

    Solves ``f_seconds + 2n^3 / r_seconds = f_q + 2n^3 / r_q`` for n. ``math.inf`` when the option
    with more overhead is not faster per FLOP either (it never wins); 0 when it has no more
    overhead.
    """
    extra_fixed = slow_start.fixed_seconds - quick_start.fixed_seconds
    saved_per_flop = 1.0 / quick_start.flop_per_s - 1.0 / slow_start.flop_per_s
    if extra_fixed <= 0:
        return 0.0
    if saved_per_flop <= 0:
        return math.inf
    return (extra_fixed / saved_per_flop / 2.0) ** (1.0 / 3.0)


def offload_seconds(
    size: int,
    *,
    launch_seconds: float,
    link_bandwidth_bytes_per_s: float,
    peak_flop_per_s: float,
    bytes_per_element: int = 4,
) -> float:
    """Estimated seconds to send an n x n matmul to a GPU and get the product back.

    = launch (fixed) + 3 n^2 elements over the host link (A and B in, C out) + 2 n^3 / peak.
    An estimate from datasheet numbers, not a measurement: real kernels reach a fraction of peak
    and small copies do not reach the link's full bandwidth, so the GPU's true cost is higher.
    """
    n = validate.positive_int("size", size, maximum=2**20)
    launch = validate.number("launch_seconds", launch_seconds, minimum=0, maximum=1)
    link = validate.positive("link_bandwidth_bytes_per_s", link_bandwidth_bytes_per_s)
    peak = validate.positive("peak_flop_per_s", peak_flop_per_s)
    bpe = validate.positive_int("bytes_per_element", bytes_per_element, maximum=8)
    return launch + 3.0 * n * n * bpe / link + 2.0 * n**3 / peak


def offload_crossover(cpu: FixedCostFit, max_size: int = 1 << 16, **gpu: float) -> int | None:
    """Smallest n (a power of two up to ``max_size``) where :func:`offload_seconds` beats ``cpu``.

    ``gpu`` takes the keyword arguments of :func:`offload_seconds`. None if the GPU never wins.
    """
    n = 1
    while n <= max_size:
        if offload_seconds(n, **gpu) < cpu.seconds(2.0 * n**3):
            return n
        n *= 2
    return None


# ---------------------------------------------------------------------------------------------
# One matmul on two devices (practice question 1)
# ---------------------------------------------------------------------------------------------

#: Largest matrix side :func:`two_devices` times or searches for a crossover.
MAX_SIZE = 1 << 20


@dataclass(frozen=True)
class Device:
    """A device as the fixed-cost-plus-roofline model sees it: a call costs ``fixed_seconds`` plus
    the larger of FLOPs / ``flop_per_s`` and bytes / ``bandwidth_bytes_per_s`` (None: a measured
    rate that already includes memory traffic), plus the operands' copy over
    ``link_bandwidth_bytes_per_s`` when they start elsewhere (None: they are already there)."""

    label: str
    fixed_seconds: float
    flop_per_s: float
    bandwidth_bytes_per_s: float | None = None
    link_bandwidth_bytes_per_s: float | None = None

    @classmethod
    def from_fit(cls, fit: FixedCostFit) -> Device:
        """A device measured by its matmuls (:func:`fit_fixed_cost`): its fixed cost and rate."""
        if not isinstance(fit, FixedCostFit):
            raise ValueError(f"fit must be a FixedCostFit, got {fit!r}")
        return cls(fit.label, fit.fixed_seconds, fit.flop_per_s)

    def parts(self, size: int, bytes_per_element: float) -> dict[str, float]:
        """Seconds of each part of an n x n matmul: overhead, compute, memory, transfer."""
        n = validate.positive_int("size", size, maximum=MAX_SIZE)
        bpe = validate.number("bytes_per_element", bytes_per_element, minimum=0.125, maximum=8)
        moved = 3.0 * n * n * bpe  # A and B read, C written (and copied, when they travel)
        return {
            "overhead": validate.number("fixed_seconds", self.fixed_seconds, minimum=0, maximum=1),
            "compute": 2.0 * n**3 / validate.positive("flop_per_s", self.flop_per_s),
            "memory": 0.0
            if self.bandwidth_bytes_per_s is None
            else moved / validate.positive("bandwidth_bytes_per_s", self.bandwidth_bytes_per_s),
            "transfer": 0.0
            if self.link_bandwidth_bytes_per_s is None
            else moved
            / validate.positive("link_bandwidth_bytes_per_s", self.link_bandwidth_bytes_per_s),
        }

    def seconds(self, size: int, bytes_per_element: float) -> float:
        """overhead + max(compute, memory) + transfer (the roofline's max: reads overlap work)."""
        p = self.parts(size, bytes_per_element)
        return p["overhead"] + max(p["compute"], p["memory"]) + p["transfer"]


@dataclass(frozen=True)
class TwoDevices(Report):
    """One n x n matmul on two devices: time on each, what bounds it, and where ``b`` wins."""

    _title = "One matmul on two devices"

    size: int
    device_a: str
    device_b: str
    seconds_a: float
    seconds_b: float
    bound_a: str  # the largest part: overhead, compute, memory or transfer
    bound_b: str
    faster: str
    crossover_size: int | None  # smallest power of two from which b beats a (None: never)


def _bound(parts: dict[str, float]) -> str:
    return max(parts, key=parts.get)


def two_devices(a: Device, b: Device, size: int, *, bytes_per_element: float = 4) -> TwoDevices:
    """Practice question 1 of *AI Infrastructure* ("CPUs and GPUs for AI") with numbers: an n x n
    matmul (2n^3 FLOPs, 3n^2 values moved) on ``a`` (say a CPU) and ``b`` (say a GPU), each
    :meth:`Device.seconds`, and the smallest power of two n from which ``b`` is faster (the
    crossover, :func:`offload_crossover`'s rule; :func:`crossover_size` solves the same for two
    fitted rates). A GPU starts behind by its launch (and, for operands in CPU memory, the copy
    over its host link) and wins once the n^3 work outgrows that.
    """
    for name, device in (("a", a), ("b", b)):
        if not isinstance(device, Device):
            raise ValueError(f"{name} must be an overhead.Device, got {device!r}")
    parts_a, parts_b = a.parts(size, bytes_per_element), b.parts(size, bytes_per_element)
    t_a, t_b = a.seconds(size, bytes_per_element), b.seconds(size, bytes_per_element)
    n, crossover = 1, None
    while n <= MAX_SIZE:
        if b.seconds(n, bytes_per_element) < a.seconds(n, bytes_per_element):
            crossover = n
            break
        n *= 2
    return TwoDevices(
        size=int(size),
        device_a=a.label,
        device_b=b.label,
        seconds_a=t_a,
        seconds_b=t_b,
        bound_a=_bound(parts_a),
        bound_b=_bound(parts_b),
        faster=a.label if t_a <= t_b else b.label,
        crossover_size=crossover,
    )


__all__ = [
    "MAX_SIZE",
    "Device",
    "FixedCostFit",
    "TwoDevices",
    "crossover_size",
    "fit_fixed_cost",
    "offload_crossover",
    "offload_seconds",
    "two_devices",
]
