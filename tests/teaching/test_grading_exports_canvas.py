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

from export_cases import OTHER, SET, assert_spreadsheet_safe, canvas_import_into, parse
from teaching.grading.exports import canvas, common

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
    seen = {}
    for s, p in klass.possible.items():
        rows = parse(common.csv_text(canvas.gradebook_rows(klass.join, klass.grades, s, p)))
        seen[s] = canvas_import(rows)
        assert seen[s]["new_assignments"] == [s]  # one per set, never one per question
        assert seen[s]["points"] == {s: "3"}
        assert_spreadsheet_safe(rows)
    assert seen[SET]["students"] == {"11": {SET: "3"}, "12": {SET: "1"}}  # 12: =HYPERLINK(...)
    assert seen[OTHER]["students"] == {"11": {OTHER: "3"}}
    # Bo (two files), Ned (no file), Kim (not graded) and the stranger's file have no row


def test_a_canvas_import_never_clears_a_grade_nobody_earned_here(klass, tmp_path):
    """Every roster student already holds a grade in Canvas (1.5 in each set, say a manual
    grade); importing the files Canvas would read (each ``grades-canvas*.csv`` but the feedback)
    must keep it for Bo (two files), Ned (no file) and Kim (the grader failed), and replace it for
    Ada and Eve. Canvas's importer clears a grade for an empty cell (export_cases)."""
    out = tmp_path / "grades.csv"
    canvas.write(out, klass.join, klass.grades, klass.possible)
    ids = ["11", "12", "13", "14", "15"]
    held = {(i, s): 1.5 for i in ids for s in klass.possible}
    files = sorted(p for p in tmp_path.glob("grades-canvas*.csv") if "feedback" not in p.name)
    assert files
    for path in tmp_path.glob("grades-canvas*.csv"):  # Excel reads UTF-8 only after a BOM
        assert path.read_bytes().startswith(b"\xef\xbb\xbf"), path.name
    for path in files:
        held = canvas_import_into(parse(path.read_text(encoding="utf-8-sig")), held)
    assert held == {
        **{(i, s): 1.5 for i in ids for s in klass.possible},
        ("11", SET): 3.0,
        ("11", OTHER): 3.0,
        ("12", SET): 1.0,
    }


def test_canvas_per_question_detail_is_in_its_own_feedback_file(klass):
    rows = canvas.feedback_rows(klass.join, klass.grades, klass.possible)
    assert rows[0] == canvas.FEEDBACK_HEADER
    assert {r[1] for r in rows[1:]} == {"11", "12"}  # no detail for a grade not exported
    eve = [r for r in rows[1:] if r[1] == "12"]
    assert [(r[4], r[5], r[6]) for r in eve] == [("q1", "0", "2"), ("q2", "1", "1")]
    assert "hint: GiB" in eve[0][7]
    assert_spreadsheet_safe(parse(common.csv_text(rows)))


def test_canvas_ids_go_to_id_only_from_canvas_and_its_own_column_is_reused(tmp_path):
    """Canvas reads ``ID`` as its user id (``to_i``): a university number there would find
    another user or none. With Canvas's export as the roster its own ``Title (id)`` column is
    filled (the importer matches it by id) instead of a new assignment being created."""
    from teaching.grading import roster
    from teaching.grading.grades import Grade

    pattern = roster.compile_pattern("default")
    graded = {f"{SET}-7.ipynb": Grade(f"{SET}-7.ipynb", SET, {"q1": 2.0}, {"q1": 2.0})}
    path = tmp_path / "r.csv"
    path.write_text("student_id,name\n7,Ada\n")
    plain = roster.join_files([(f, SET) for f in graded], roster.read_roster(path), pattern, [SET])
    rows = canvas.gradebook_rows(plain, graded, SET, 2.0)
    assert rows[0][-1] == SET and rows[2][:3] == ["Ada", "", "7"]  # SIS User ID, not ID
    path.write_text(
        "Student,ID,SIS User ID,SIS Login ID,Section,Exercise 4 (311),Exercise 5 (312)\n"
        '"Lovelace, Ada",7,S7,ada,A,,\n'
    )
    own = roster.join_files([(f, SET) for f in graded], roster.read_roster(path), pattern, [SET])
    rows = canvas.gradebook_rows(own, graded, SET, 2.0)
    assert rows[0][-1] == "Exercise 4 (311)" and rows[2][:3] == ["Lovelace, Ada", "7", "S7"]
    assert canvas.gradebook_rows(own, graded, OTHER, 3.0)[0][-1] == "Exercise 5 (312)"
