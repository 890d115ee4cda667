"""Grading history: every run kept, and a diff per (student, set) or (file bytes, set) and
question that misses no change (no sandbox: grade records)."""

from __future__ import annotations

import os

from teaching.grading import history
from teaching.grading.grades import Grade, merge, not_graded

POINTS = {"q1": 2.0, "q2": 1.0}


def row(name, scores, *, student="", status="ok", set_name="s") -> Grade:
    return Grade(
        name,
        set_name,
        dict(scores),
        dict(POINTS),
        status,
        name_hex=os.fsencode(name).hex(),
        student=student,
    )


def test_a_regrade_diff_lists_each_changed_score_per_question():
    before = [
        row("a.ipynb", {"q1": 2, "q2": 0}, student="ada"),
        row("=b.ipynb", {"q1": 0, "q2": 0}, student="bo", status="timeout"),
        row("gone.ipynb", {"q1": 1, "q2": 1}),
    ]
    after = [
        row("a.ipynb", {"q1": 2, "q2": 1}, student="ada"),
        row("=b.ipynb", {"q1": 2, "q2": 0}, student="bo"),
        row("new.ipynb", {"q1": 0, "q2": 0}),
    ]
    rows = history.diff(before, after, {"ada": "11", "bo": "12"})
    assert rows[0] == history.DIFF_HEADER
    assert sorted(rows[1:]) == sorted(
        [
            ["s", "12", "=b.ipynb", "q1", "0", "2"],
            ["s", "12", "=b.ipynb", "total", "0", "2"],
            ["s", "12", "=b.ipynb", "status", "timeout", "ok"],
            ["s", "11", "a.ipynb", "q2", "0", "1"],
            ["s", "11", "a.ipynb", "total", "2", "3"],
            ["s", "", "gone.ipynb", "(submission)", "2", ""],
            ["s", "", "new.ipynb", "(submission)", "", "0"],
        ]
    )


def test_two_names_that_print_alike_keep_their_own_changes():
    """``a\\x1b.ipynb`` (an escape byte) and ``a\\\\x1b.ipynb`` (the four characters) print
    alike; without a roster the diff keys rows by the name's bytes, so lowering one is seen."""
    escape, literal = "a\x1b.ipynb", "a\\x1b.ipynb"
    before = [row(escape, {"q1": 2, "q2": 1}), row(literal, {"q1": 2, "q2": 1})]
    after = [row(escape, {"q1": 2, "q2": 1}), row(literal, {"q1": 0, "q2": 1})]
    changed = history.diff(before, after)[1:]
    assert ["s", "", "a\\x1b.ipynb", "total", "3", "1"] in changed
    assert len(changed) == 2  # q1 and the total of one row; the other unchanged


def test_a_resubmission_under_a_new_name_is_the_same_students_grade():
    before = [row("ada_1_111_s.ipynb", {"q1": 2, "q2": 1}, student="ada")]
    after = [row("ada_1_222_s.ipynb", {"q1": 0, "q2": 1}, student="ada")]
    changed = history.diff(before, after, {"ada": "1"})[1:]
    assert ["s", "1", "ada_1_222_s.ipynb", "total", "3", "1"] in changed
    assert not [r for r in changed if r[3] == "(submission)"]


def test_a_grade_the_grader_could_not_give_is_a_change_not_a_zero():
    before = [row("a.ipynb", {"q1": 2, "q2": 1})]
    after = [not_graded(row("a.ipynb", {}), "no sandbox")]
    changed = history.diff(before, after)[1:]
    assert ["s", "", "a.ipynb", "total", "3", ""] in changed
    assert ["s", "", "a.ipynb", "status", "ok", "not-graded"] in changed


def test_a_merge_replaces_the_same_file_and_the_same_students_set_only():
    earlier = [
        row("ada.ipynb", {"q1": 2}, student="ada"),
        row("bo-v1.ipynb", {"q1": 0}, student="bo"),
        row("bo-other.ipynb", {"q1": 1}, student="bo", set_name="t"),
        row("x.ipynb", {"q1": 1}),
    ]
    now = [row("bo-v2.ipynb", {"q1": 2}, student="bo"), row("x.ipynb", {"q1": 2})]
    rows, replaced = merge(earlier, now)
    assert {g.submission for g in replaced} == {"bo-v1.ipynb", "x.ipynb"}
    assert {(g.submission, g.total) for g in rows} == {
        ("ada.ipynb", 2),
        ("bo-v2.ipynb", 2),
        ("bo-other.ipynb", 1),
        ("x.ipynb", 2),
    }


def test_history_keeps_every_run_and_writes_a_diff_only_for_a_regrade(tmp_path):
    book = tmp_path / "grades.csv"
    book.write_bytes(b"submission,total\r\na.ipynb,0\r\n")
    first = history.new_run_folder(tmp_path / "grades_history")
    assert "first run" in history.keep_run(
        first, books=[book], rows=[row("a.ipynb", {"q1": 0})], before=None, names={}
    )
    assert (first / "grades.csv").read_bytes() == book.read_bytes()  # a byte copy (CRLF)
    second = history.new_run_folder(tmp_path / "grades_history")
    line = history.keep_run(
        second,
        books=[book],
        rows=[row("a.ipynb", {"q1": 2})],
        before=[row("a.ipynb", {"q1": 0})],
        names={},
    )
    assert "2 change(s) in 1 row(s)" in line
    assert first != second and (second / "diff.csv").is_file() and not (first / "diff.csv").exists()
