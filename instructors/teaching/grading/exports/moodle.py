"""Moodle grade import CSV: an identity column, one grade column and one feedback column per set.

The rules, from MoodleDocs "Grade import" (https://docs.moodle.org/en/Grade_import) and the
importer (``gradeimport_csv_load_data``, moodle/moodle ``grade/import/csv/classes/load_data.php``):
a header row; one column identifies the user, mapped in the import form ("Map from" -> "Map to":
email address, ID number or username); each other column is mapped to a grade item or to the
feedback of one. This file holds ``Email address`` (else ``ID number``, else ``Username``: the
first the roster has for every student), the set's points, and the per-question feedback. Set the
grade item's maximum to the set's points (the header names it). Map both the grade and the
feedback column: MoodleDocs warns that importing feedback alone overwrites the grades.

**An empty grade is not "unchanged"**: ``update_grade_item`` turns ``''`` (and ``-``) into
``null`` ("No grade") and ``grade_import_commit`` writes it with ``update_final_grade``, clearing
the grade already there (and the empty feedback overwrites its feedback). So only students with
exactly one file of the set that was graded have a row; a student with no file, two files or a
``not-graded`` file is left out (Moodle leaves a user absent from the file as it is; the roster
report says who and why). UTF-8 with a byte-order mark (Moodle's CSV reader removes it; Excel
needs it to read UTF-8).
"""

from __future__ import annotations

from pathlib import Path

from teaching.grading.exports.common import BOM, csv_text, feedback_text
from teaching.grading.files import write_new
from teaching.grading.grades import Grade, number
from teaching.grading.roster import Join

IDENTITIES = (("email", "Email address"), ("idnumber", "ID number"), ("username", "Username"))


def identity(join: Join) -> tuple[str, str]:
    """(roster field, Moodle's column name): the first every student has; ValueError otherwise."""
    students = list(join.roster.students.values())
    for f, column in IDENTITIES:
        if all(getattr(s, f) for s in students):
            return f, column
    lacking = [s.student_id for s in students if not s.email][:5]
    raise ValueError(
        "--export moodle: the roster needs an email, ID number or username for every student "
        f"(no email for {', '.join(lacking)})"
    )


def rows(join: Join, grades: dict[str, Grade], set_name: str, points: float) -> list[list]:
    f, column = identity(join)
    out: list[list] = [[column, f"{set_name} ({number(points)} points)", f"{set_name} feedback"]]
    for st in sorted(join.roster.students.values(), key=lambda s: (s.display, s.student_id)):
        g = grades.get(join.only_file(st, set_name) or "")
        if g is not None and g.earned:  # a blank grade would clear Moodle's
            out.append([getattr(st, f), number(g.total), feedback_text(g)])
    return out


def write(
    out: Path, join: Join, grades: dict[str, Grade], possible: dict[str, float]
) -> list[Path]:
    """``<out>-moodle-<set>.csv``, one per set."""
    written = []
    for s, p in possible.items():
        path = out.with_name(f"{out.stem}-moodle-{s}.csv")
        write_new(path, BOM + csv_text(rows(join, grades, s, p), verbatim=(0,)))
        written.append(path)
    return written
