"""Canvas export against its importer's rules, on small grade records (no sandbox): the rules are
written out here from Canvas's own source, not read back from the writer.

``GradebookImporter`` (instructure/canvas-lms ``app/models/gradebook_importer.rb``): the header's
first cells hold ``Student`` and ``ID``, the identity columns end with ``Section``; a row whose
first cell includes ``Points Possible`` sets each column's points; every other column is an
assignment, and one that matches no existing title creates a new assignment; columns named like
``Current Score`` / ``Final Grade`` ... are not assignments.
"""

from __future__ import annotations

import re

from export_cases import OTHER, SET, assert_spreadsheet_safe, parse
from teaching.grading import exports
from teaching.grading.exports import canvas

NON_ASSIGNMENT = re.compile(
    "Current Score|Current Points|Current Grade|Final Score|Final Points|Final Grade|"
    "Override Score|Override Grade|Override Status"
)


def canvas_import(rows: list[list[str]]) -> dict:
    """What Canvas's importer makes of the rows (its rules, for a course with no assignments)."""
    header = rows[0]
    assert "Student" in header[0] and "ID" in header[1] and len(header) > 3
    identity = 5 if header[2:4] == ["SIS User ID", "SIS Login ID"] else 3
    assert "Section" in header[identity - 1]
    assignments = [h for h in header[identity:] if not NON_ASSIGNMENT.search(h)]
    points, students = {}, {}
    for row in rows[1:]:
        if "Points Possible" in row[0]:
            points = dict(zip(assignments, row[identity:], strict=True))
            continue
        students[row[1]] = dict(zip(assignments, row[identity:], strict=True))
    return {"new_assignments": assignments, "points": points, "students": students}


def test_a_canvas_import_creates_one_assignment_per_set_with_its_points(klass):
    rows = parse(exports.csv_text(canvas.gradebook_rows(klass.join, klass.grades, klass.possible)))
    seen = canvas_import(rows)
    assert seen["new_assignments"] == [SET, OTHER]  # one per set, never one per question
    assert seen["points"] == {SET: "3", OTHER: "3"}
    assert seen["students"]["11"] == {SET: "3", OTHER: "3"}
    assert seen["students"]["12"] == {SET: "1", OTHER: ""}  # Eve, named =HYPERLINK(...)
    assert seen["students"]["13"] == {SET: "", OTHER: ""}  # two files: left for the instructor
    assert seen["students"]["14"] == {SET: "", OTHER: ""}  # no file: Canvas keeps its grade
    assert set(seen["students"]) == {"11", "12", "13", "14"}  # the stranger's file is no row
    for s, cells in seen["students"].items():
        for set_name, cell in cells.items():
            assert cell == "" or 0 <= float(cell) <= klass.possible[set_name], (s, cell)
    assert_spreadsheet_safe(rows)


def test_canvas_per_question_detail_is_in_its_own_feedback_file(klass):
    rows = canvas.feedback_rows(klass.join, klass.grades, klass.possible)
    assert rows[0] == canvas.FEEDBACK_HEADER
    eve = [r for r in rows[1:] if r[1] == "12"]
    assert [(r[4], r[5], r[6]) for r in eve] == [("q1", "0", "2"), ("q2", "1", "1")]
    assert "hint: GiB" in eve[0][7]
    assert_spreadsheet_safe(parse(exports.csv_text(rows)))
