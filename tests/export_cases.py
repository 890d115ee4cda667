"""Small grade records for the export tests (no sandbox): a class of five on a roster, graded in
two sets, with the cases each export must handle (a formula for a name, two files from one
student, no file, a file the grader could not grade, a file from nobody on the roster), and the
two LMS importers that read the keyed exports, written out from their source as
/work/shared/reference/lms-import-semantics.md reads it (not from the writers)."""

from __future__ import annotations

import csv
import io
import types

from teaching.grading import roster
from teaching.grading.grades import Grade, not_graded

SET, OTHER = "04_model_memory", "05_flops_time_cost"
POINTS = {SET: {"q1": 2.0, "q2": 1.0}, OTHER: {"q1": 3.0}}
FORMULA = '=HYPERLINK("http://evil.example","x")'
ROSTER = (
    "Student,ID,SIS User ID,SIS Login ID,Section,Email\n"
    f'"Ada Lovelace",11,S11,ada,A,ada@x.org\n'
    f'"{FORMULA.replace(chr(34), 2 * chr(34))}",12,S12,eve,A,eve@x.org\n'
    '"Bo Both",13,S13,bo,B,bo@x.org\n'
    '"Ned Nofile",14,S14,ned,B,ned@x.org\n'
    '"Kim Keyfail",15,S15,kim,B,kim@x.org\n'
)


def grade(name: str, set_name: str, scores: dict, feedback=None, status="ok") -> Grade:
    """A row as the gradebook makes it (handed in at a fixed time)."""
    return Grade(
        submitted="2026-11-28 10:00:00.250000",
        submission=name,
        assignment=set_name,
        scores=dict(scores),
        points=dict(POINTS[set_name]),
        status=status,
        reason="; ".join(f"{q}: {w}" for q, w in (feedback or {}).items()),
        feedback=dict(feedback or {}),
    )


def graded_class(tmp_path) -> types.SimpleNamespace:
    """Ada graded in both sets; Eve (a formula for a name) in one, wrongly; Bo with two files;
    Ned with none; Kim's file in the first set not graded (the grader's side failed: no key on
    this machine); one file from nobody on the roster."""
    path = tmp_path / "roster.csv"
    path.write_text(ROSTER, encoding="utf-8")
    grades = [
        grade(f"{SET}-11.ipynb", SET, {"q1": 2, "q2": 1}),
        grade(f"{OTHER}-11.ipynb", OTHER, {"q1": 3}),
        grade(f"{SET}-12.ipynb", SET, {"q1": 0, "q2": 1}, {"q1": "=1+1 wrong value (hint: GiB)"}),
        grade(f"{SET}-13.ipynb", SET, {"q1": 2, "q2": 1}),
        grade(f"{SET}-013.ipynb", SET, {"q1": 0, "q2": 0}),
        grade(f"{SET}-99.ipynb", SET, {"q1": 2, "q2": 1}),
        not_graded(grade(f"{SET}-15.ipynb", SET, {}), "the solution failed on this machine"),
    ]
    pattern = roster.compile_pattern(r"(?P<set>\d\d)_[a-z_]+-0?(?P<student>\d+)\.ipynb")
    j = roster.join_files(
        [(g.submission, g.assignment) for g in grades],
        roster.read_roster(path),
        pattern,
        [SET, OTHER],
    )
    by_file = {g.submission: g for g in grades}
    possible = {s: sum(p.values()) for s, p in POINTS.items()}
    return types.SimpleNamespace(join=j, grades=by_file, list=grades, possible=possible)


def parse(text: str) -> list[list[str]]:
    return list(csv.reader(io.StringIO(text, newline="")))


def assert_spreadsheet_safe(rows: list[list[str]]) -> None:
    for row in rows:
        for cell in row:
            assert cell[:1] not in ("=", "+", "-", "@", "\t", "\r"), cell


# The importers, as their source reads a file (lms-import-semantics.md). ``before`` and the result
# map (student key, column) to the grade the LMS holds; None is "no grade".
def canvas_import_into(rows: list[list[str]], before: dict) -> dict:
    """Canvas's ``GradebookImporter`` and the upload page: the identity columns end with
    ``Section``; a student is matched by ``ID``; each assignment cell is parsed (an empty cell is
    ``nil``) and any cell that differs from the score held, nil included, is posted as
    ``posted_grade`` (``grade_student(grade: nil)`` removes the score). Students and columns not
    in the file are untouched."""
    header = rows[0]
    assert header[:5] == ["Student", "ID", "SIS User ID", "SIS Login ID", "Section"]
    after = dict(before)
    for row in rows[1:]:
        if "Points Possible" in row[0]:
            continue
        for column, cell in zip(header[5:], row[5:], strict=True):
            value = None if cell.strip() == "" else float(cell.replace(",", "."))
            if value != before.get((row[1], column)):
                after[(row[1], column)] = value
    return after


def moodle_import_into(rows: list[list[str]], before: dict) -> dict:
    """Moodle's CSV grade import (``load_data::update_grade_item``, ``grade_import_commit``): the
    first column identifies the user; ``''`` or ``-`` becomes null ("No grade") and is committed
    with ``update_final_grade``, like any value. Users not in the file are untouched."""
    column = rows[0][1]
    after = dict(before)
    for row in rows[1:]:
        cell = row[1]
        after[(row[0], column)] = None if cell in ("", "-") else float(cell)
    return after
