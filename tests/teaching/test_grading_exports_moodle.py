"""Moodle export against MoodleDocs "Grade import", on small grade records (no sandbox): one
identity column mapped to email, ID number or username; grade and feedback columns mapped to a
grade item.
"""

from __future__ import annotations

import pytest
from export_cases import OTHER, SET, assert_spreadsheet_safe, moodle_import_into, parse
from teaching.grading import roster
from teaching.grading.exports import common, moodle


def test_moodle_has_an_identity_a_grade_and_a_feedback_column(klass):
    rows = moodle.rows(klass.join, klass.grades, SET, klass.possible[SET])
    assert rows[0][0] == "Email address" and len(rows[0]) == 3
    assert rows[0][1].startswith(SET) and "feedback" in rows[0][2]
    by_email = {r[0]: r for r in rows[1:]}
    assert set(by_email) == {"ada@x.org", "eve@x.org"}  # Bo, Ned and Kim have no grade to give
    assert by_email["ada@x.org"][1] == "3" and by_email["eve@x.org"][1] == "1"
    assert "q1 0/2" in by_email["eve@x.org"][2]
    assert_spreadsheet_safe(parse(common.csv_text(rows)))


def test_a_moodle_import_never_clears_a_grade_nobody_earned_here(klass, tmp_path):
    """Everyone holds 1.5 in Moodle; importing every ``grades-moodle-<set>.csv`` keeps it for Bo
    (two files), Ned (no file) and Kim (the grader failed): Moodle commits an empty cell as "No
    grade" (export_cases.moodle_import_into)."""
    moodle.write(tmp_path / "grades.csv", klass.join, klass.grades, klass.possible)
    emails = ["ada@x.org", "eve@x.org", "bo@x.org", "ned@x.org", "kim@x.org"]
    held, files = {}, sorted(tmp_path.glob("grades-moodle-*.csv"))
    assert len(files) == len(klass.possible)
    for path in files:
        assert path.read_bytes().startswith(b"\xef\xbb\xbf")  # Excel reads UTF-8 after a BOM
        rows = parse(path.read_text(encoding="utf-8-sig"))
        start = {(e, rows[0][1]): 1.5 for e in emails}
        held |= moodle_import_into(rows, start)
    by_set = {k[1].split(" ")[0]: {} for k in held}
    for (e, column), v in held.items():
        by_set[column.split(" ")[0]][e] = v
    assert by_set[SET] == {e: 1.5 for e in emails} | {"ada@x.org": 3.0, "eve@x.org": 1.0}
    assert by_set[OTHER] == {e: 1.5 for e in emails} | {"ada@x.org": 3.0}


def test_moodle_falls_back_to_id_number_and_refuses_a_roster_without_identity(tmp_path):
    path = tmp_path / "r.csv"
    path.write_text("student_id,ID number\n1,A-1\n2,A-2\n")
    j = roster.join_files([], roster.read_roster(path), roster.compile_pattern("default"), [SET])
    assert moodle.identity(j) == ("idnumber", "ID number")
    path.write_text("student_id,email\n1,a@x.org\n2,\n")
    j = roster.join_files([], roster.read_roster(path), roster.compile_pattern("default"), [SET])
    with pytest.raises(ValueError, match="--export moodle"):
        moodle.identity(j)
