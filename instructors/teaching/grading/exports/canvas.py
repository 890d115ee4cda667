"""Canvas gradebook CSV: one row per student, one column per exercise set.

The rules, from Instructure's "How do I import grades in the Gradebook?"
(https://community.canvaslms.com/t5/Instructor-Guide/How-do-I-import-grades-in-the-Gradebook/ta-p/807)
and the importer itself (``GradebookImporter`` in instructure/canvas-lms): the header row begins
``Student, ID`` and its identity columns end with ``Section`` (``SIS User ID`` and ``SIS Login ID``
between them); a row whose first cell holds ``Points Possible`` gives each column's points; every
other column is an assignment, matched to an existing one by ``Title (id)`` or by its title, and a
column that matches none creates a new assignment. So this file has exactly one column per set
(named after the set: name the Canvas assignment the same, or let the import create it), and the
per-question detail goes to a separate feedback CSV, never into columns. A student is matched by
``ID`` (Canvas's user id), then SIS User ID, then SIS Login ID, then name. An empty cell leaves
Canvas's grade as it is: a student with no file, or with two, gets one (the report says why).
"""

from __future__ import annotations

from pathlib import Path

from teaching.grading.exports.common import csv_text, feedback
from teaching.grading.files import write_new
from teaching.grading.grades import Grade, number
from teaching.grading.roster import Join

IDENTITY = ["Student", "ID", "SIS User ID", "SIS Login ID", "Section"]
FEEDBACK_HEADER = ["Student", "ID", "set", "submission", "question", "score", "points", "feedback"]


def gradebook_rows(join: Join, grades: dict[str, Grade], possible: dict[str, float]) -> list[list]:
    rows: list[list] = [IDENTITY + list(possible)]
    rows.append(["Points Possible", "", "", "", ""] + [number(p) for p in possible.values()])
    for st in sorted(join.roster.students.values(), key=lambda s: (s.display, s.student_id)):
        row = [st.display, st.student_id, st.sis_user_id, st.sis_login_id, st.section]
        for s in possible:
            g = grades.get(join.only_file(st, s) or "")
            row.append(number(g.total) if g is not None and g.points else "")
        rows.append(row)
    return rows


def feedback_rows(join: Join, grades: dict[str, Grade], possible: dict[str, float]) -> list[list]:
    rows: list[list] = [FEEDBACK_HEADER]
    for st in sorted(join.roster.students.values(), key=lambda s: (s.display, s.student_id)):
        for s in possible:
            name = join.only_file(st, s)
            if name is None or name not in grades:
                continue
            for q, score, points, why in feedback(grades[name]):
                rows.append(
                    [st.display, st.student_id, s, name, q, number(score), number(points), why]
                )
    return rows


def write(
    out: Path, join: Join, grades: dict[str, Grade], possible: dict[str, float]
) -> list[Path]:
    """``<out>-canvas.csv`` (import it) and ``<out>-canvas-feedback.csv`` (per question)."""
    book = out.with_name(f"{out.stem}-canvas.csv")
    detail = out.with_name(f"{out.stem}-canvas-feedback.csv")
    write_new(book, csv_text(gradebook_rows(join, grades, possible)))
    write_new(detail, csv_text(feedback_rows(join, grades, possible)))
    return [book, detail]
