"""Findings on matrix-multiply rates: libraries, data types, alignment, share of a datasheet peak.

Each function takes the tidy records of ``course.measure.matmul`` (``MatmulRecord`` or the dicts of
``course.facts.data.reference``) and returns Markdown that states what *this* run measured, with the
explanation that fits the outcome. Lessons 01 and 03.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from course.facts.units import fmt_flop_rate
from course.presentation.findings._common import (
    RERUN,
    by_factor,
    get,
    join,
    outcome,
    relative_spread,
    times,
)

#: CPU features (``course.measure.devices.cpu_features``) that multiply each dtype in hardware.
UNITS_FOR = {
    "bf16": ("AMX-BF16", "AVX-512 BF16", "BF16", "SME"),
    "fp16": ("AMX-FP16", "AVX-512 FP16", "SME"),
    "int8": ("AMX-INT8", "AVX-512 VNNI", "I8MM", "SME"),
}


def _rate(records: Sequence[Any], **match: Any) -> Any | None:
    """The fastest record matching ``match`` (None when none does)."""
    found = [r for r in records if all(get(r, k) == v for k, v in match.items())]
    return max(found, key=lambda r: get(r, "flop_per_s")) if found else None


def _threads(record: Any) -> str:
    threads = get(record, "threads")
    return (
        "its default thread count"
        if threads is None
        else f"{threads} thread" + "s" * (threads != 1)
    )


def library_comparison(records: Sequence[Any]) -> str:
    """numpy vs torch (and the Python loop) on the same n x n products, at the largest common
    size."""
    common = sorted(
        {get(r, "size") for r in records if get(r, "library") == "numpy"}
        & {get(r, "size") for r in records if get(r, "library") == "torch"}
    )
    loop = _rate(records, library="python")
    if not common:
        return (
            "numpy and torch were not both measured at any size (the budget ran out): "
            "rerun the cell, or give the sweep a larger budget."
        )
    n = common[-1]
    np_rec, torch_rec = (
        _rate(records, library="numpy", size=n),
        _rate(records, library="torch", size=n),
    )
    ratio = get(np_rec, "flop_per_s") / get(torch_rec, "flop_per_s")
    kind = outcome(ratio, relative_spread(np_rec) + relative_spread(torch_rec))
    rates = (
        f"At n = {n:,}, numpy ran at {fmt_flop_rate(get(np_rec, 'flop_per_s'))} on "
        f"{_threads(np_rec)} and torch at {fmt_flop_rate(get(torch_rec, 'flop_per_s'))} on "
        f"{_threads(torch_rec)}"
    )
    if kind == "noisy":
        text = f"{rates}: the spreads are too wide to rank them; {RERUN}."
    elif kind == "same":
        text = (
            f"{rates}: about the same rate (within 10 %). Both hand the product to a compiled, "
            "vectorised BLAS; the Python around the call costs nothing at this size."
        )
    else:
        fast, slow = ("numpy", "torch") if ratio > 1 else ("torch", "numpy")
        text = (
            f"{rates}: {fast} was {times(max(ratio, 1 / ratio))} faster than {slow}. Both call a "
            "compiled BLAS; they differ in which library and kernels they ship for this CPU "
            "(see the library lines printed above), not in Python vs C."
        )
    if get(np_rec, "threads") != get(torch_rec, "threads"):
        text += (
            " The two ran on different thread counts, so this is not a like-for-like comparison."
        )
    if loop is not None:
        best = max(get(np_rec, "flop_per_s"), get(torch_rec, "flop_per_s"))
        text += (
            f" The Python loop's best was {fmt_flop_rate(get(loop, 'flop_per_s'))}: the BLAS "
            f"did {times(best / get(loop, 'flop_per_s'))} more FLOPs per second."
        )
    return text


def _why(dtype: str, kind: str, device: str, features: Sequence[str]) -> str:
    """The explanation of one dtype's outcome against fp32 on ``device``."""
    if dtype == "fp64":
        return {
            "slower": "a vector register holds half as many fp64 values as fp32, so each "
            "instruction does half the work",
            "faster": "unusual: fp64 does half the work per instruction; the fp32 point was "
            "probably disturbed",
            "same": "this size is limited by something other than arithmetic width (memory or "
            "per-call costs)",
        }[kind]
    if device != "cpu":
        return {
            "faster": "the GPU's Tensor Cores multiply it; fp32 runs on the CUDA cores",
            "slower": (
                "the matrix is too small to fill the GPU, or this GPU has no fast path for it"
            ),
            "same": "at this size the GPU is limited by launch and memory, not arithmetic",
        }[kind]
    units = [f for f in features if f in UNITS_FOR.get(dtype, ())]
    has = f"this CPU has {join(units)}" if units else ""
    if dtype in ("fp8_e4m3", "fp8_e5m2"):
        return "no CPU multiplies fp8: torch upcasts the inputs and multiplies in a wider type" + (
            ", through a slow generic path here"
            if kind == "slower"
            else ", and that type's kernel sets the pace"
        )
    if kind == "faster":
        share = "a quarter" if dtype == "int8" else "half"
        return (
            f"{has}, instructions that multiply {dtype} inputs directly, and {dtype} moves "
            f"{share} of fp32's bytes"
            if units
            else f"faster although the CPU reports none of {join(UNITS_FOR.get(dtype, ()))}: "
            "torch's library found another fast path here"
        )
    if kind == "slower":
        return (
            f"{has}, but this product took a generic path that does not use them (small size, "
            "or a kernel without support for this dtype)"
            if units
            else f"this CPU has no {dtype} matrix instructions (none of "
            f"{join(UNITS_FOR.get(dtype, ()))}), so each multiply converts its inputs first and "
            "the conversions cost more than the narrower type saves"
        )
    return f"{has or 'the CPU'}: the narrower type neither helped nor hurt at this size"


def dtype_speed(
    records: Sequence[Any], *, features: Sequence[str] = (), baseline: str = "fp32"
) -> str:
    """Each dtype's rate against ``baseline`` at the largest size both were measured, explained.

    ``features`` are the CPU's matrix features (``course.measure.devices.cpu_features()``); the
    explanation of a CPU outcome names the units that exist or are missing.
    """
    base_sizes = {get(r, "size") for r in records if get(r, "dtype") == baseline}
    others = sorted({get(r, "dtype") for r in records} - {baseline})
    if not base_sizes or not others:
        return (
            f"{baseline} and another dtype were not both measured (the budget ran out, or the "
            "device cannot run them): rerun the cell."
        )
    lines = []
    for dtype in others:
        sizes = base_sizes & {get(r, "size") for r in records if get(r, "dtype") == dtype}
        if not sizes:
            lines.append(f"- **{dtype}**: not measured at a size {baseline} was measured at.")
            continue
        n = max(sizes)
        new, base = _rate(records, dtype=dtype, size=n), _rate(records, dtype=baseline, size=n)
        ratio = get(new, "flop_per_s") / get(base, "flop_per_s")
        kind = outcome(ratio, relative_spread(new) + relative_spread(base))
        device = get(new, "device", "cpu")
        unit = " (integer operations)" if dtype == "int8" else ""
        head = f"- **{dtype}** at n = {n:,}: {fmt_flop_rate(get(new, 'flop_per_s'))}{unit}"
        if kind == "noisy":
            lines.append(f"{head}, {times(ratio)} {baseline}'s rate; {RERUN}.")
        elif kind == "same":
            lines.append(f"{head}, about {baseline}'s rate: {_why(dtype, kind, device, features)}.")
        else:
            lines.append(
                f"{head}, {by_factor(ratio)} than {baseline}: "
                f"{_why(dtype, kind, device, features)}."
            )
    return "\n".join(lines)


def alignment(records: Sequence[Any], multiple: int = 8) -> str:
    """Does a size that is a multiple of ``multiple`` run faster than its neighbours? From
    records."""
    sizes = {get(r, "size"): get(r, "flop_per_s") for r in records}
    aligned = {n: v for n, v in sizes.items() if n % multiple == 0}
    unaligned = {n: v for n, v in sizes.items() if n % multiple}
    if not aligned or not unaligned:
        return (
            f"The records need sizes both on and off a multiple of {multiple} to test the "
            "claim: rerun the alignment sweep."
        )
    worst_aligned, best_unaligned = min(aligned.values()), max(unaligned.values())
    listing = ", ".join(f"{n:,}: {fmt_flop_rate(v)}" for n, v in sorted(sizes.items()))
    if worst_aligned > best_unaligned * (1 + 0.10):
        return (
            f"The claim holds in these records ({listing}): every multiple of {multiple} ran at "
            f"{fmt_flop_rate(worst_aligned)} or more, every other size at "
            f"{fmt_flop_rate(best_unaligned)} or less, {times(worst_aligned / best_unaligned)} "
            f"slower at least. Tensor Cores take tiles whose inner dimension is a multiple of 8 "
            "16-bit values (16 bytes); other sizes make cuBLAS pad or use a slower kernel."
        )
    return (
        f"The claim does not hold in these records ({listing}): some size off a multiple of "
        f"{multiple} ran as fast as an aligned one (within 10 % or faster)."
    )


def peak_fractions(records: Sequence[Any], peaks: Mapping[str, float], *, label: str) -> str:
    """Best measured rate per dtype as a share of a datasheet's dense peak, one line each."""
    lines = []
    for dtype, peak in peaks.items():
        best = _rate(records, dtype=dtype)
        if best is None:
            lines.append(f"- {dtype}: not measured in {label}.")
            continue
        share = get(best, "flop_per_s") / peak
        lines.append(
            f"- {dtype}: {fmt_flop_rate(get(best, 'flop_per_s'))} at n = "
            f"{get(best, 'size'):,} = {share:.0%} of the dense datasheet peak "
            f"{fmt_flop_rate(peak)} ({label})"
        )
    return "\n".join(lines)
