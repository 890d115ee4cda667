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
cell of a CSV through :func:`~teaching.grading.files.spreadsheet_safe` (:mod:`.common`).
"""

from __future__ import annotations

from pathlib import Path

from teaching.grading.exports import canvas, gradescope, moodle, nbgrader, prairielearn
from teaching.grading.grades import Grade
from teaching.grading.roster import Join

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


def check_before_grading(formats: list[str], class_roster, visibility: str) -> None:
    """Before anyone is graded: the roster has what each export needs, and Gradescope's visibility
    is one it knows (ValueError naming the option if not)."""
    if visibility not in gradescope.VISIBILITY:
        raise ValueError(
            f"--visibility must be one of {', '.join(gradescope.VISIBILITY)}; got {visibility!r}"
        )
    if "moodle" in formats and class_roster is not None:
        moodle.identity(Join(class_roster, []))


def write_all(
    formats: list[str], out: Path, grades: list[Grade], assignments: dict, join, *, visibility: str
) -> list[Path]:
    """Write each named format beside ``out``; the paths written."""
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
