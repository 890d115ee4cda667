"""Canvas gradebook CSV: one file per exercise set, one row per student with a grade.

The rules, from Instructure's "How do I import grades in the Gradebook?"
(https://community.canvaslms.com/t5/Instructor-Guide/How-do-I-import-grades-in-the-Gradebook/ta-p/807)
and the importer itself (``GradebookImporter`` in instructure/canvas-lms
``app/models/gradebook_importer.rb``): the header row begins ``Student, ID`` and its identity
columns end with ``Section`` (``SIS User ID`` and ``SIS Login ID`` between them); a row whose first
cell holds ``Points Possible`` gives each column's points; every other column is an assignment,
matched to an existing one by ``Title (id)`` or by its title, and a column that matches none
creates a new assignment. A student is matched by ``ID`` (Canvas's user id), then SIS User ID,
then SIS Login ID, then name.

**An empty cell is not "keep Canvas's grade"**: the importer reads it as ``nil``, counts nil
against an existing score as a change, and the upload posts ``posted_grade: null``, which removes
the score (or an ``EX``) once the preview is accepted. A student absent from the file, and a
column absent from it, are left as they are. So every cell of this file is a grade the learner
earned: one file per set (``<out>-canvas-<set>.csv``, its one assignment column named after the
set), holding only the students with exactly one file of that set that was graded. A student with
no file, with two files, or whose file the grader could not grade (``not-graded``) has no row
(``<out>-roster.txt`` and the console say who and why). The per-question detail goes to a
separate feedback CSV (``<out>-canvas-feedback.csv``), which Canvas does not import.

``ID`` is Canvas's user id: it is filled only from Canvas's own gradebook export as the roster;
with any other roster the id goes to ``SIS User ID`` (the importer's next match) and ``ID`` stays
empty. With Canvas's export as the roster, a set's column reuses the roster's own assignment
column (``Exercise 4 (311)``) when exactly one names the set or its number, so the import fills
that assignment instead of creating a second one. Both files are
UTF-8 with a byte-order mark, so Excel opens them as UTF-8 (Canvas's header test,
``include?("Student")``, reads them the same).
"""

from __future__ import annotations

import re
from pathlib import Path

from teaching.grading.exports.common import BOM, csv_text, feedback
from teaching.grading.files import write_new
from teaching.grading.grades import Grade, number
from teaching.grading.roster import Join, Student

IDENTITY = ["Student", "ID", "SIS User ID", "SIS Login ID", "Section"]
IDS = (1, 2, 3)  # ID, SIS User ID, SIS Login ID: matched exactly by the importer
FEEDBACK_HEADER = ["Student", "ID", "set", "submission", "question", "score", "points", "feedback"]


def earned(join: Join, grades: dict[str, Grade], student: Student, set_name: str) -> Grade | None:
    """The student's grade in the set, when there is one to export: exactly one file, graded."""
    g = grades.get(join.only_file(student, set_name) or "")
    return g if g is not None and g.earned else None


TITLE_ID = re.compile(r"(?P<title>.+) \((?P<id>\d+)\)")


def column(join: Join, set_name: str) -> str:
    """The set's column header: the Canvas roster's own assignment column (``Title (id)``, which
    the importer matches by id) when exactly one names the set or its number, else the set's
    name (a new assignment, or one of that title)."""
    number_ = int(set_name.split("_", 1)[0]) if set_name[:2].isdigit() else None
    found = []
    for h in join.roster.columns if join.roster.canvas else []:
        m = TITLE_ID.fullmatch(h.strip())
        if m is None:
            continue
        title = m.group("title").casefold()
        numbers = {int(n) for n in re.findall(r"\d+", title)}
        if set_name.casefold() in title or (number_ is not None and numbers == {number_}):
            found.append(h.strip())
    return found[0] if len(found) == 1 else set_name


def identity(st: Student, canvas_roster: bool) -> list[str]:
    """The identity cells: ``ID`` is Canvas's user id, so it holds the roster's id only when the
    roster is Canvas's own export; any other id goes to ``SIS User ID`` (Canvas's second match)."""
    if canvas_roster:
        return [st.display, st.student_id, st.sis_user_id, st.sis_login_id, st.section]
    return [st.display, "", st.sis_user_id or st.student_id, st.sis_login_id, st.section]


def gradebook_rows(
    join: Join, grades: dict[str, Grade], set_name: str, points: float
) -> list[list]:
    """The import file of one set: only rows with a grade (a blank cell would clear Canvas's)."""
    rows: list[list] = [[*IDENTITY, column(join, set_name)]]
    rows.append(["Points Possible", "", "", "", "", number(points)])
    for st in sorted(join.roster.students.values(), key=lambda s: (s.display, s.student_id)):
        g = earned(join, grades, st, set_name)
        if g is not None:
            rows.append([*identity(st, join.roster.canvas), number(g.total)])
    return rows


def feedback_rows(join: Join, grades: dict[str, Grade], possible: dict[str, float]) -> list[list]:
    rows: list[list] = [FEEDBACK_HEADER]
    for st in sorted(join.roster.students.values(), key=lambda s: (s.display, s.student_id)):
        for s in possible:
            g = earned(join, grades, st, s)
            if g is None:
                continue
            for q, score, points, why in feedback(g):
                rows.append(
                    [st.display, st.student_id, s, g.submission, q, number(score), number(points)]
                    + [why]
                )
    return rows


def write(
    out: Path, join: Join, grades: dict[str, Grade], possible: dict[str, float]
) -> list[Path]:
    """``<out>-canvas-<set>.csv`` per set (import each) and ``<out>-canvas-feedback.csv``."""
    written = []
    for s, p in possible.items():
        book = out.with_name(f"{out.stem}-canvas-{s}.csv")
        write_new(book, BOM + csv_text(gradebook_rows(join, grades, s, p), verbatim=IDS))
        written.append(book)
    detail = out.with_name(f"{out.stem}-canvas-feedback.csv")
    write_new(detail, BOM + csv_text(feedback_rows(join, grades, possible)))
    return [*written, detail]
