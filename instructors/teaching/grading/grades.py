"""The grade row and what is written from the rows: the gradebook CSV (one row per file), the
class's record that regrades merge into (``gradebook.json``), and the class's summary (mean per
question, who timed out).

The instructor's adjustments (:class:`Adjustments`, kept beside the record in
``adjustments.json``) are applied to every row of every run, from the grader's own scores: an
override sets one question's score for one student (nbgrader's manual grade, which a later
autograde never overwrites); a late penalty takes a fraction off every question of a file the LMS
marked late (nbgrader's and otter's late policy, as a fraction). A regrade replaces the grader's
scores and the adjustments apply again, so neither is lost nor applied twice.

The record is nbgrader's model: one row per graded file, each row kept until a later run grades
the same file or the same student's file of the same set (:func:`merge`). A regrade of some files
updates their rows and keeps everyone else's. The CSV is what people read; the record (every
field of every row, the file name's bytes, the student) is what the next run merges into and what
the history compares, so a spreadsheet that re-saves the CSV changes neither.
"""

from __future__ import annotations

import csv
import io
import json
from dataclasses import asdict, dataclass, field, fields
from pathlib import Path

from teaching.grading.files import (
    capped,
    make_dir,
    printable,
    safe_text,
    spreadsheet_safe,
    write_new,
)

NOT_GRADED = "not-graded"  # the grader's side failed: no score, whatever the learner did
NOT_GRADED_MARK = "NOT GRADED (the grader failed, not the submission):"
NOT_GRADED_EXIT = 3  # the commands' exit status when a row has no score because the grader failed


@dataclass
class Grade:
    """One row of the gradebook."""

    submission: str
    assignment: str = ""
    scores: dict[str, float] = field(default_factory=dict)
    points: dict[str, float] = field(default_factory=dict)
    # ok | timeout | crashed | error | not-a-notebook | unknown-assignment | not-graded
    status: str = "ok"
    reason: str = ""
    seconds: float = 0.0
    protections_off: tuple[str, ...] = ()
    feedback: dict[str, str] = field(default_factory=dict)  # question -> why it lost points
    log: str = ""  # the log folder this run wrote for it ('' when none)
    name_hex: str = ""  # the file name's bytes (hex): two names that print alike stay two rows
    student: str = ""  # the roster's id key of its owner ('' without a roster, or unmatched)
    submitted: str = ""  # when the file was handed in (its time stamp, UTC, as nbgrader writes one)
    late: bool = False  # the LMS marked the file late (the LATE in its download name)
    graded_scores: dict[str, float] = field(default_factory=dict)  # before adjustments ({}: none)
    adjusted: str = ""  # what the instructor's adjustments changed (overrides, the late penalty)

    @property
    def earned(self) -> bool:
        """Whether the row holds a grade the learner earned: graded against a key (not an unknown
        set) and not failed on the grader's side (:data:`NOT_GRADED`: the key could not be made,
        the sandbox could not start, the grader failed on the file). A row without one is never
        exported as a score: not as 0, not as a blank that clears the LMS's grade."""
        return bool(self.points) and self.status != NOT_GRADED

    @property
    def key(self) -> tuple[str, str]:
        """What a later run's row replaces: (set, student) when the file is a roster student's,
        else (set, the file name's bytes)."""
        return (self.assignment, "student:" + self.student if self.student else "file:" + self.file)

    @property
    def file(self) -> str:
        return self.name_hex or self.submission.encode("utf-8", "surrogateescape").hex()

    @property
    def total(self) -> float:
        return sum(self.scores.values())

    @property
    def possible(self) -> float:
        return sum(self.points.values())


def not_graded(grade: Grade, why: str) -> Grade:
    """``grade`` marked as having no score: the grader's side failed (``why``)."""
    grade.status, grade.scores, grade.feedback = NOT_GRADED, {}, {}
    grade.reason = f"{NOT_GRADED_MARK} {why}"
    return grade


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
        void = g.status == NOT_GRADED  # no score: empty cells, never a 0 nobody earned
        writer.writerow(
            [
                *text,
                *("" if void else number(g.scores.get(q, 0)) for q in points),
                "" if void else number(g.total),
                number(g.possible),
                "" if void else f"{percent:.1f}",
                spreadsheet_safe(printable(safe_text(g.status))),
                spreadsheet_safe(printable(safe_text(capped(_with_adjusted(g), MAX_REASON_CHARS)))),
                " ".join(g.protections_off),
                f"{g.seconds:.1f}",
            ]
        )
    make_dir(out_csv.parent)
    write_new(out_csv, buf.getvalue())


def _with_adjusted(g: Grade) -> str:
    return "; ".join(t for t in (g.adjusted, g.reason) if t)


def summary(grades: list[Grade], points: dict[str, float]) -> dict:
    """The class at a glance: mean score per question, and who timed out, crashed or erred."""
    rows = [g for g in grades if g.earned]
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
        "not_graded": [g.submission for g in grades if g.status == NOT_GRADED],
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


RECORD = "gradebook.json"
RECORD_VERSION = 1


def record_rows(grades: list[Grade]) -> str:
    """The class's record as JSON text (every field of every row)."""
    return json.dumps({"version": RECORD_VERSION, "rows": [asdict(g) for g in grades]}, indent=1)


def read_record(path: Path) -> list[Grade] | None:
    """The rows of a record an earlier run wrote (None when there is none); ValueError when it
    cannot be read as one (the run must not go on as if the class had no grades)."""
    if not path.is_file():
        return None
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
        if data.get("version") != RECORD_VERSION:
            raise ValueError(f"version {data.get('version')!r}")
        names = {f.name for f in fields(Grade)}
        rows = []
        for r in data["rows"]:
            row = Grade(**{k: v for k, v in r.items() if k in names})
            row.protections_off = tuple(row.protections_off)
            rows.append(row)
        return rows
    except (OSError, ValueError, KeyError, TypeError, AttributeError) as e:
        raise ValueError(f"the class record {path} cannot be read ({e})") from None


def merge(earlier: list[Grade], now: list[Grade]) -> tuple[list[Grade], list[Grade]]:
    """(the class's rows after this run, the earlier rows it replaced). A row of this run replaces
    every earlier row of the same file (whatever its set) and of the same student and set; every
    other earlier row is kept as it was. Ordered by set, then file name bytes."""
    files = {g.file for g in now}
    keys = {g.key for g in now if g.student}
    replaced = [g for g in earlier if g.file in files or g.key in keys]
    kept = [g for g in earlier if not (g.file in files or g.key in keys)]
    rows = sorted([*kept, *now], key=lambda g: (g.assignment, bytes.fromhex(g.file)))
    return rows, replaced


ADJUSTMENTS = "adjustments.json"
OVERRIDE_COLUMNS = ("student", "set", "question", "points", "reason")


@dataclass
class Override:
    """One question's score for one student, set by the instructor."""

    student: str  # the roster's student id (with --roster), else the submission's file name
    set: str
    question: str
    points: float
    reason: str = ""


@dataclass
class Adjustments:
    """The instructor's adjustments to the class's grades: kept, applied to every run."""

    late_penalty: float = 0.0  # the fraction of each question's score a late file loses
    overrides: list[Override] = field(default_factory=list)

    def to_json(self) -> str:
        return json.dumps(asdict(self), indent=1)


def read_adjustments(path: Path) -> Adjustments:
    """The adjustments an earlier run kept (none when there is no file); ValueError when the file
    cannot be read."""
    if not path.is_file():
        return Adjustments()
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
        return Adjustments(
            float(data.get("late_penalty", 0.0)), [Override(**o) for o in data.get("overrides", [])]
        )
    except (OSError, ValueError, TypeError, AttributeError) as e:
        raise ValueError(f"the adjustments {path} cannot be read ({e})") from None


def read_overrides(
    path: Path, points: dict[str, dict[str, float]], student_key=None
) -> tuple[list[Override], list[tuple[str, str, str]]]:
    """``(overrides, removed)`` from an overrides CSV (``student,set,question,points[,reason]``):
    a row with empty ``points`` removes that override. ``points`` maps each set to its
    questions' points; ``student_key`` (the roster's, when there is one) turns an id into the
    row's student and raises ValueError for an id not on the roster. ValueError names the line."""
    text = Path(path).read_text(encoding="utf-8-sig")
    reader = csv.DictReader(io.StringIO(text))
    header = [h.strip().lower() for h in reader.fieldnames or []]
    missing = [c for c in OVERRIDE_COLUMNS[:4] if c not in header]
    if missing:
        raise ValueError(f"--overrides {path}: needs the columns {', '.join(missing)}")
    reader.fieldnames = header
    found, removed = [], []
    for line, row in enumerate(reader, start=2):
        get = {k: (v or "").strip() for k, v in row.items() if k}
        where = f"--overrides {path} line {line}"
        student, set_name, question = get["student"], get["set"], get["question"]
        if set_name not in points:
            raise ValueError(f"{where}: no exercise set {set_name!r}")
        if question not in points[set_name]:
            raise ValueError(f"{where}: {set_name} has no question {question!r}")
        if not student:
            raise ValueError(f"{where}: no student")
        if student_key is not None:
            student = student_key(student, where)
        if get["points"] == "":
            removed.append((student, set_name, question))
            continue
        most = points[set_name][question]
        try:
            value = float(get["points"])
        except ValueError:
            raise ValueError(f"{where}: points {get['points']!r} is not a number") from None
        if not 0 <= value <= most:
            raise ValueError(f"{where}: points must be between 0 and {number(most)}")
        found.append(Override(student, set_name, question, value, get.get("reason", "")))
    return found, removed


def updated(
    adj: Adjustments,
    *,
    late_penalty: float | None = None,
    overrides: list[Override] = (),
    removed: list[tuple[str, str, str]] = (),
) -> Adjustments:
    """``adj`` with a new late penalty (None: kept) and overrides set or removed (one per
    student, set and question: the newest wins)."""
    gone = set(removed) | {(o.student, o.set, o.question) for o in overrides}
    kept = [o for o in adj.overrides if (o.student, o.set, o.question) not in gone]
    penalty = adj.late_penalty if late_penalty is None else late_penalty
    return Adjustments(penalty, kept + list(overrides))


def adjust(rows: list[Grade], adj: Adjustments) -> int:
    """Apply ``adj`` to each row from its grader's scores (idempotent); the rows changed."""
    changed = 0
    for g in rows:
        if not g.earned:
            continue
        graded = dict(g.graded_scores or g.scores)
        scores, notes = dict(graded), []
        who = g.student or g.submission
        for o in adj.overrides:
            if (o.student, o.set) == (who, g.assignment) and o.question in scores:
                scores[o.question] = o.points
                why = f" ({o.reason})" if o.reason else ""
                notes.append(
                    f"{o.question} set to {number(o.points)} by the instructor, the grader gave "
                    f"{number(graded[o.question])}{why}"
                )
        if g.late and adj.late_penalty:
            scores = {q: round(v * (1 - adj.late_penalty), 6) for q, v in scores.items()}
            notes.append(f"LATE: each question's score x {number(1 - adj.late_penalty)}")
        elif g.late:
            notes.append("LATE (no penalty set)")
        g.scores = scores
        g.graded_scores = graded if scores != graded else {}
        g.adjusted = "ADJUSTED: " + "; ".join(notes) if notes else ""
        changed += bool(g.graded_scores)
    return changed
