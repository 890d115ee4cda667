"""nbgrader's long CSV export: one row per student and set.

The columns and their rules are those of nbgrader's ``CsvExportPlugin``
(https://nbgrader.readthedocs.io/en/stable/command_line_tools/nbgrader-export.html;
``nbgrader/plugins/export.py`` in jupyter/nbgrader): ``assignment, duedate, timestamp, student_id,
last_name, first_name, email, raw_score, late_submission_penalty, score, max_score``; a student
with no submission gets an empty timestamp and scores of 0, as nbgrader writes them. nbgrader never
writes an empty number, so a student with two files for a set (never merged) and one whose file
the grader could not grade (``not-graded``) have no row for that set: the roster report and the
gradebook name them.
This grader applies no late penalty (0); Canvas's LATE marker is reported, not priced.

Values are written as nbgrader writes them (``str()`` of its columns): scores as floats
(``13.0``), the timestamp of a submitted file as its time stamp in UTC (``2026-11-28
10:00:00.123456``, nbgrader's naive UTC ``datetime``), empty only where there is no submission;
so "no submission" (empty timestamp, 0.0) and "handed in blank" (a timestamp, 0.0) differ.
"""

from __future__ import annotations

from pathlib import Path

from teaching.grading.exports.common import csv_text
from teaching.grading.files import write_new
from teaching.grading.grades import Grade
from teaching.grading.roster import Join, key

HEADER = [
    "assignment",
    "duedate",
    "timestamp",
    "student_id",
    "last_name",
    "first_name",
    "email",
    "raw_score",
    "late_submission_penalty",
    "score",
    "max_score",
]


def split_name(last: str, first: str, name: str) -> tuple[str, str]:
    """(last, first): the roster's, else from ``Doe, Jane`` (Canvas) or ``Jane Doe``."""
    if last or first or not name:
        return last, first
    if "," in name:
        last, first = name.split(",", 1)
        return last.strip(), first.strip()
    first, _, last = name.rpartition(" ")
    return last, first


def value(x: float) -> str:
    """A number as nbgrader's CSV has it: ``str`` of a float."""
    return str(float(x))


def rows(join: Join, grades: dict[str, Grade], possible: dict[str, float]) -> list[list]:
    out: list[list] = [HEADER]
    for s, p in possible.items():
        for st in sorted(join.roster.students.values(), key=lambda s: s.student_id):
            last, first = split_name(st.last_name, st.first_name, st.name)
            ident = [st.student_id, last, first, st.email]
            files = join.files.get((key(st.student_id), s), [])
            g = grades.get(files[0]) if len(files) == 1 else None
            if not files:
                out.append([s, "", "", *ident, value(0), value(0), value(0), value(p)])
            elif g is None or not g.earned:
                continue  # no grade to give: never an empty number, never a 0 not earned
            else:
                total = value(g.total)
                out.append([s, "", g.submitted, *ident, total, value(0), total, value(p)])
    return out


def write(
    out: Path, join: Join, grades: dict[str, Grade], possible: dict[str, float]
) -> list[Path]:
    """``<out>-nbgrader.csv``."""
    path = out.with_name(f"{out.stem}-nbgrader.csv")
    write_new(path, csv_text(rows(join, grades, possible), verbatim=(3, 6)))
    return [path]
