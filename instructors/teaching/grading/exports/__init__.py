"""Grades in the formats other tools import: ``course grade ... --export canvas,moodle,...``.

One module per format, each citing the tool's own documentation and tested against its rules:

- :mod:`.canvas`: Canvas gradebook CSV (one column per set) and a per-question feedback CSV;
- :mod:`.moodle`: Moodle grade import CSV (identity, grade, feedback), one file per set;
- :mod:`.nbgrader`: nbgrader's long CSV export (one row per student and set);
- :mod:`.prairielearn`: PrairieLearn external grading ``results.json``, one per submission;
- :mod:`.gradescope`: Gradescope ``results.json`` per submission, and the autograder archive
  (``setup.sh``, ``run_autograder``) built by ``python -m teaching autograder``.

The first three need ``--roster`` (they are keyed by student); the last two are keyed by file.
Every file is written whole or not at all (a temporary file or folder, then renamed), every text
cell of a CSV through :func:`~teaching.grading.gradebook.spreadsheet_safe`.
"""

from __future__ import annotations

import contextlib
import csv
import io
import json
import os
import shutil
import tempfile
from collections.abc import Callable
from pathlib import Path

from teaching.grading.gradebook import (
    Grade,
    _log_name,
    make_dir,
    safe_text,
    spreadsheet_safe,
    write_new,
)

BY_STUDENT = ("canvas", "moodle", "nbgrader")
BY_FILE = ("prairielearn", "gradescope")
FORMATS = BY_STUDENT + BY_FILE


def parse_formats(text: str | None, *, has_roster: bool) -> list[str]:
    """``--export`` as a list; ValueError naming the option for an unknown or unkeyed format."""
    names = [t.strip().lower() for t in (text or "").split(",") if t.strip()]
    unknown = [n for n in names if n not in FORMATS]
    if unknown:
        raise ValueError(f"--export must be among {', '.join(FORMATS)}; got {', '.join(unknown)}")
    keyed = [n for n in names if n in BY_STUDENT]
    if keyed and not has_roster:
        raise ValueError(f"--export {','.join(keyed)} needs --roster (its rows are students)")
    return list(dict.fromkeys(names))


def check(formats: list[str], class_roster, visibility: str) -> None:
    """Before anyone is graded: the roster has what each export needs, and Gradescope's visibility
    is one it knows (ValueError naming the option if not)."""
    from teaching.grading.exports.gradescope import VISIBILITY

    if visibility not in VISIBILITY:
        raise ValueError(f"--visibility must be one of {', '.join(VISIBILITY)}; got {visibility!r}")
    if "moodle" in formats and class_roster is not None:
        from teaching.grading.exports import moodle
        from teaching.grading.roster import Join

        moodle.identity(Join(class_roster, []))


def number(x: float) -> str:
    return f"{x:g}"


def csv_text(rows: list[list], *, delimiter: str = ",") -> str:
    """Rows as CSV; every text cell made safe (no formula, any bytes), numbers as they are."""
    buf = io.StringIO()
    writer = csv.writer(buf, delimiter=delimiter, lineterminator="\r\n")
    for row in rows:
        writer.writerow(
            [c if isinstance(c, int | float) else spreadsheet_safe(safe_text(c)) for c in row]
        )
    return buf.getvalue()


def feedback(grade: Grade) -> list[tuple[str, float, float, str]]:
    """(question, score, points, why it lost points) per question, in the set's order."""
    return [
        (q, grade.scores.get(q, 0.0), p, grade.feedback.get(q, "")) for q, p in grade.points.items()
    ]


def feedback_text(grade: Grade) -> str:
    """One line per question (``q2 0/2: wrong value (hint: ...)``), then the run's notes."""
    lines = [
        f"{q} {number(s)}/{number(p)}" + (f": {why}" if why else "")
        for q, s, p, why in feedback(grade)
    ]
    if grade.status != "ok":
        lines.append(f"status: {grade.status}")
    return "\n".join(lines)


def write_folder(target: Path, fill: Callable[[Path], None]) -> None:
    """Fill a fresh folder beside ``target`` and rename it into place: an interrupted run leaves
    the previous folder (or none), never half of a new one."""
    make_dir(target.parent)
    tmp = Path(tempfile.mkdtemp(prefix=f".{target.name}.", suffix=".tmp", dir=target.parent))
    old = None
    try:
        fill(tmp)
        if target.exists() or target.is_symlink():
            old = Path(
                tempfile.mkdtemp(prefix=f".{target.name}.", suffix=".old", dir=target.parent)
            )
            os.replace(target, old / "previous")
        os.replace(tmp, target)
    except BaseException:
        if old is not None and not target.exists():
            with contextlib.suppress(OSError):
                os.replace(old / "previous", target)
        shutil.rmtree(tmp, ignore_errors=True)
        raise
    finally:
        if old is not None:
            shutil.rmtree(old, ignore_errors=True)


def write_per_file(target: Path, grades: list[Grade], render: Callable[[Grade], dict]) -> None:
    """``target/<submission>/results.json`` for every graded file, written as one folder."""

    def fill(folder: Path) -> None:
        used: set[str] = set()
        for g in grades:
            base = name = _log_name(Path(g.submission))
            n = 1
            while name in used:  # two names that print alike keep a folder each
                n += 1
                name = f"{base}-{n}"
            used.add(name)
            (folder / name).mkdir()
            write_new(folder / name / "results.json", json.dumps(render(g), indent=1))

    write_folder(target, fill)


def write_all(
    formats: list[str], out: Path, grades: list[Grade], assignments: dict, join, *, visibility: str
) -> list[Path]:
    """Write each named format beside ``out``; the paths written."""
    from teaching.grading.exports import canvas, gradescope, moodle, nbgrader, prairielearn

    by_file = {g.submission: g for g in grades}
    possible = {s: sum(q.points for q in a.questions) for s, a in sorted(assignments.items())}
    written: list[Path] = []
    for name in formats:
        if name in BY_STUDENT:
            module = {"canvas": canvas, "moodle": moodle, "nbgrader": nbgrader}[name]
            written += module.write(out, join, by_file, possible)
        elif name == "prairielearn":
            written += prairielearn.write(out, grades)
        else:
            written += gradescope.write(out, grades, assignments, visibility=visibility)
    return written
