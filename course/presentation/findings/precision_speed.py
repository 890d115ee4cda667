"""Findings on mixed precision and quantised inference speed (lesson 03).

- :func:`autocast_speed`: step times of the same training in fp32, bf16 autocast and fp16
  autocast (``course.measure.precision.train``), explained by whether the device has 16-bit
  matrix units;
- :func:`quantised_speed`: the forward times of ``course.measure.quantize.benchmark_variants``
  records (name, batch, median_seconds, iqr_seconds) at each batch, int8 and bf16 against fp32.
The per-dtype matmul rates of lesson 03 §6 use
:func:`course.presentation.findings.matmul_rates.dtype_speed`.
"""

from __future__ import annotations

import statistics
from collections.abc import Mapping, Sequence
from typing import Any

from course.presentation.findings._common import RERUN, by_factor, get, outcome, times


def _median_iqr(seconds: Sequence[float]) -> tuple[float, float]:
    values = sorted(seconds)
    if len(values) < 4:
        return statistics.median(values), 0.0
    q = statistics.quantiles(values, n=4)
    return statistics.median(values), q[2] - q[0]


def autocast_speed(
    step_seconds: Mapping[str, Sequence[float]], *, device: str, bf16_units: bool | None
) -> str:
    """bf16 / fp16 autocast step time against fp32, with the reason that fits this device.

    ``step_seconds`` maps "fp32", "bf16", "fp16" to the seconds of each timed step;
    ``bf16_units`` says whether the device has bf16 matrix units (on a CPU, oneDNN's answer or the
    CPU features; None: unknown).
    """
    if "fp32" not in step_seconds or not step_seconds["fp32"]:
        return "The fp32 run is missing, so there is nothing to compare against: rerun the cell."
    base, base_iqr = _median_iqr(step_seconds["fp32"])
    lines = []
    for p in ("bf16", "fp16"):
        if not step_seconds.get(p):
            lines.append(f"- {p} autocast: not run.")
            continue
        median, iqr = _median_iqr(step_seconds[p])
        ratio = base / median  # > 1: faster than fp32
        kind = outcome(ratio, iqr / median + base_iqr / base)
        head = f"- {p} autocast: {median * 1e3:.1f} ms per step against fp32's {base * 1e3:.1f} ms"
        if kind == "noisy":
            lines.append(f"{head}; the spreads overlap, {RERUN}.")
        elif kind == "same":
            lines.append(
                f"{head}, about the same: this model is small, and the casts autocast adds "
                "cost about what the 16-bit matmuls save."
            )
        elif kind == "faster":
            unit = "Tensor Cores" if device == "cuda" else "16-bit matrix instructions"
            lines.append(
                f"{head}, {by_factor(ratio)}: this {device} has {unit}, so the matmuls run "
                "in 16 bits on half the bytes."
            )
        elif bf16_units is False and device == "cpu":
            lines.append(
                f"{head}, {by_factor(ratio)}: this CPU has no 16-bit matrix instructions, "
                "so each matmul converts its inputs and the conversions cost more than "
                "they save."
            )
        else:
            lines.append(
                f"{head}, {by_factor(ratio)}: the device has 16-bit units, but this small "
                "model spends its time in the casts autocast inserts and in kernels "
                "without a 16-bit fast path"
                + (" (fp16 on this CPU may have none)" if p == "fp16" and device == "cpu" else "")
                + "."
            )
    return "\n".join(lines)


def quantised_speed(records: Sequence[Any], *, baseline: str = "fp32") -> str:
    """Each variant's forward time against ``baseline`` at each batch, explained by the batch."""
    batches = sorted({get(r, "batch") for r in records})
    lines = []
    for batch in batches:
        rows = {get(r, "name"): r for r in records if get(r, "batch") == batch}
        if baseline not in rows:
            lines.append(f"- batch {batch}: {baseline} was not measured.")
            continue
        base = rows[baseline]
        parts = []
        for name, r in rows.items():
            if name == baseline:
                continue
            ratio = get(base, "median_seconds") / get(r, "median_seconds")
            spread = get(r, "iqr_seconds") / get(r, "median_seconds") + get(
                base, "iqr_seconds"
            ) / get(base, "median_seconds")
            kind = outcome(ratio, spread)
            verdict = {"same": "about the same", "noisy": "noisy"}.get(kind) or by_factor(ratio)
            parts.append(f"{name} {verdict}")
        fastest = min(rows.values(), key=lambda r: get(r, "median_seconds"))
        why = (
            "reading the weights is most of the work at batch 1, so fewer bytes per weight pay off"
            if get(fastest, "name") != baseline and batch == 1
            else f"{baseline} was fastest: at this batch compute dominates, and the smaller types "
            "are converted inside every multiply"
            if get(fastest, "name") == baseline
            else "the work per weight is large, and this machine's kernels for the smaller type "
            "are faster than its fp32 path"
        )
        lines.append(
            f"- batch {batch}: against {baseline}, {', '.join(parts)}; fastest "
            f"**{get(fastest, 'name')}** "
            f"({times(get(base, 'median_seconds') / get(fastest, 'median_seconds'))}"
            f" {baseline}'s speed): {why}."
        )
    if not lines:
        return "No variant was measured: rerun the cell."
    return "\n".join(lines)
