"""What a GPU's power trace shows: idle draw, whether the power cap was reached, how far the SM
clock fell under sustained load, and FLOPs per joule (lesson 08).

``summarise(power)`` reduces a ``power.json``-shaped record (as the reference run recorded it:
``limit_w``, ``idle_samples`` and ``sustained_<dtype>_<n>`` phases of ``[time, watts, sm_mhz,
temperature]`` samples at 20 Hz) to a few numbers; ``sentence(power, boost_clock_hz)`` turns
them into Markdown with the explanation that fits. The first second of each phase (the ramp) is
left out of the medians.
"""

from __future__ import annotations

import statistics

RAMP_SECONDS = 1.0


def _steady(samples: list) -> list:
    if not samples:
        return []
    start = samples[0][0]
    steady = [s for s in samples if s[0] - start >= RAMP_SECONDS]
    return steady or samples


def summarise(power: dict, phase: str = "sustained_bf16_8192") -> dict | None:
    """Idle watts, the phase's median watts, median SM clock (MHz), FLOP/s and FLOP/J; None if
    the record lacks the phase or its samples."""
    run = power.get(phase) if isinstance(power, dict) else None
    if not run or not run.get("samples") or not power.get("idle_samples"):
        return None
    steady = _steady(run["samples"])
    idle = power["idle_samples"]
    watts = statistics.median(s[1] for s in steady)
    return {
        "limit_watts": float(power.get("limit_w", float("nan"))),
        "idle_watts": min(s[1] for s in idle),
        "watts": watts,
        "max_watts": max(s[1] for s in steady),
        "sm_mhz": statistics.median(s[2] for s in steady),
        "flop_per_s": run["flop_per_s"],
        "flop_per_joule": run["flop_per_s"] / watts,
        "seconds": run["seconds"],
    }


def sentence(
    power: dict,
    boost_clock_hz: float,
    *,
    phase: str = "sustained_bf16_8192",
    label: str = "H100 SXM, reference run 2026-11-22",
) -> str:
    """Markdown: what the trace says about the cap and the clock (every outcome has a branch)."""
    s = summarise(power, phase)
    if s is None:
        return f"*{label}: no `{phase}` trace with samples in this record: nothing to report.*"
    boost_mhz = boost_clock_hz / 1e6
    head = (
        f"**{label}**, {phase.replace('_', ' ')}: {s['flop_per_s'] / 1e12:,.0f} TFLOP/s at "
        f"a median {s['watts']:,.0f} W (idle {s['idle_watts']:,.0f} W; cap "
        f"{s['limit_watts']:,.0f} W) = {s['flop_per_joule'] / 1e12:.2f} TFLOP per joule; "
        f"median SM clock {s['sm_mhz']:,.0f} of {boost_mhz:,.0f} MHz. "
    )
    at_cap = s["watts"] >= 0.97 * s["limit_watts"]
    clock_drop = s["sm_mhz"] <= 0.9 * boost_mhz
    if at_cap and clock_drop:
        why = (
            "The card sat at its power cap and the driver lowered the SM clock to stay under "
            "it: sustained Tensor Core work is limited by power, not by the boost clock the "
            "peak assumes."
        )
    elif at_cap:
        why = (
            "The card reached its power cap but kept its clock near boost: this kernel is "
            "close to the cap without being throttled by it."
        )
    elif clock_drop:
        why = (
            "The clock fell without the card reaching its cap: look for a thermal limit or "
            "another application clock setting, and rerun."
        )
    else:
        why = (
            "Neither the cap nor a clock drop: the kernel did not load the card fully (too "
            "small, or the machine was busy): rerun with a larger problem."
        )
    return head + why


__all__ = ["RAMP_SECONDS", "sentence", "summarise"]
