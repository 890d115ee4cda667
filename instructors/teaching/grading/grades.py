"""The grade row and what is written from the rows: the gradebook CSV (one row per file) and the
class's summary (mean per question, who timed out)."""

from __future__ import annotations

import csv
import io
from dataclasses import dataclass, field
from pathlib import Path

from teaching.grading.files import (
    capped,
    make_dir,
    printable,
    safe_text,
    spreadsheet_safe,
    write_new,
)


@dataclass
class Grade:
    """One row of the gradebook."""

    submission: str
    assignment: str = ""
    scores: dict[str, float] = field(default_factory=dict)
    points: dict[str, float] = field(default_factory=dict)
    status: str = "ok"  # ok | timeout | crashed | error | not-a-notebook | unknown-assignment
    reason: str = ""
    seconds: float = 0.0
    protections_off: tuple[str, ...] = ()
    feedback: dict[str, str] = field(default_factory=dict)  # question -> why it lost points
    log: str = ""  # the log folder this run wrote for it ('' when none)

    @property
    def total(self) -> float:
        return sum(self.scores.values())

    @property
    def possible(self) -> float:
        return sum(self.points.values())


def number(x: float) -> str:
    return f"{x:g}"


HEADER_TAIL = ["total", "possible", "percent", "status", "reason", "protections_off", "seconds"]
MAX_REASON_CHARS = 4000  # a reason cell, whatever a notebook's metadata or output holds


def write_csv(out_csv: Path, grades: list[Grade], points: dict[str, float]) -> None:
    """The gradebook, written without following links, every text cell safe for a spreadsheet."""
    buf = io.StringIO()
    writer = csv.writer(buf)
    writer.writerow(
        [
            "submission",
            "assignment",
            *(f"{q} [{number(p)} pts]" for q, p in points.items()),
            *HEADER_TAIL,
        ]
    )
    for g in grades:
        percent = 100 * g.total / g.possible if g.possible else 0.0
        text = [spreadsheet_safe(printable(safe_text(t))) for t in (g.submission, g.assignment)]
        writer.writerow(
            [
                *text,
                *(number(g.scores.get(q, 0)) for q in points),
                number(g.total),
                number(g.possible),
                f"{percent:.1f}",
                spreadsheet_safe(printable(safe_text(g.status))),
                spreadsheet_safe(printable(safe_text(capped(g.reason, MAX_REASON_CHARS)))),
                " ".join(g.protections_off),
                f"{g.seconds:.1f}",
            ]
        )
    make_dir(out_csv.parent)
    write_new(out_csv, buf.getvalue())


def summary(grades: list[Grade], points: dict[str, float]) -> dict:
    """The class at a glance: mean score per question, and who timed out, crashed or erred."""
    rows = [g for g in grades if g.points]
    return {
        "submissions": len(grades),
        "mean_per_question": {
            q: round(sum(g.scores.get(q, 0) for g in rows) / len(rows), 3) if rows else None
            for q in points
        },
        "mean_percent": round(sum(100 * g.total / g.possible for g in rows) / len(rows), 1)
        if rows
        else None,
        "timed_out": [
            g.submission for g in grades if g.status == "timeout" or "timed out" in g.reason
        ],
        "not_ok": {g.submission: g.status for g in grades if g.status != "ok"},
    }


def summary_text(s: dict) -> str:
    means = ", ".join(f"{q} {m:g}" for q, m in s["mean_per_question"].items() if m is not None)
    lines = [
        f"  class: {s['submissions']} submission(s), mean {s['mean_percent']}%; mean per "
        f"question: {means}"
    ]
    if s["timed_out"]:
        lines.append(
            "  timed out (whole or a cell): " + printable(safe_text(", ".join(s["timed_out"])))
        )
    return "\n".join(lines)
