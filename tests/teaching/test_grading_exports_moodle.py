"""Moodle export against MoodleDocs "Grade import", on small grade records (no sandbox): one
identity column mapped to email, ID number or username; grade and feedback columns mapped to a
grade item.
"""

from __future__ import annotations

import pytest
from export_cases import SET, assert_spreadsheet_safe, parse
from teaching.grading import exports, roster
from teaching.grading.exports import moodle


def test_moodle_has_an_identity_a_grade_and_a_feedback_column(klass):
    rows = moodle.rows(klass.join, klass.grades, SET, klass.possible[SET])
    assert rows[0][0] == "Email address" and len(rows[0]) == 3
    assert rows[0][1].startswith(SET) and "feedback" in rows[0][2]
    by_email = {r[0]: r for r in rows[1:]}
    assert set(by_email) == {"ada@x.org", "eve@x.org", "bo@x.org", "ned@x.org"}
    assert by_email["ada@x.org"][1] == "3" and by_email["eve@x.org"][1] == "1"
    assert by_email["bo@x.org"][1:] == ["", ""] and by_email["ned@x.org"][1:] == ["", ""]
    assert "q1 0/2" in by_email["eve@x.org"][2]
    assert_spreadsheet_safe(parse(exports.csv_text(rows)))


def test_moodle_falls_back_to_id_number_and_refuses_a_roster_without_identity(tmp_path):
    path = tmp_path / "r.csv"
    path.write_text("student_id,ID number\n1,A-1\n2,A-2\n")
    j = roster.join_files([], roster.read_roster(path), roster.compile_pattern("default"), [SET])
    assert moodle.identity(j) == ("idnumber", "ID number")
    path.write_text("student_id,email\n1,a@x.org\n2,\n")
    j = roster.join_files([], roster.read_roster(path), roster.compile_pattern("default"), [SET])
    with pytest.raises(ValueError, match="--export moodle"):
        moodle.identity(j)
