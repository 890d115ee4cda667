"""The gradebook CSV and the class summary, from grade rows."""

from __future__ import annotations

import csv

from teaching.grading import grades


def test_the_gradebook_has_one_column_per_question_and_cells_no_spreadsheet_runs(tmp_path):
    row = grades.Grade(
        "=cmd|' /C calc'!A0.ipynb",
        "00_units_and_memory",
        scores={"q1": 1.0, "q2": 0.5},
        points={"q1": 1.0, "q2": 2.0},
        status="ok",
        reason="q2: wrong unit\x1b[2J",
    )
    out = tmp_path / "out" / "grades.csv"
    grades.write_csv(out, [row], row.points)
    header, cells = list(csv.reader(out.open(encoding="utf-8")))
    assert header[:4] == ["submission", "assignment", "q1 [1 pts]", "q2 [2 pts]"]
    assert header[4:] == grades.HEADER_TAIL
    assert cells[0].startswith("'=")  # not a formula
    assert cells[2:7] == ["1", "0.5", "1.5", "3", "50.0"]
    assert "\x1b" not in cells[header.index("reason")]


def test_the_summary_means_each_question_over_graded_rows_and_names_who_timed_out():
    points = {"q1": 2.0}
    rows = [
        grades.Grade("a", "s", scores={"q1": 2.0}, points=points),
        grades.Grade("b", "s", scores={"q1": 0.0}, points=points, status="timeout"),
        grades.Grade("c", status="unknown-assignment"),  # no points: not in the means
    ]
    s = grades.summary(rows, points)
    assert s["submissions"] == 3
    assert s["mean_per_question"] == {"q1": 1.0}
    assert s["mean_percent"] == 50.0
    assert s["timed_out"] == ["b"]
    assert s["not_ok"] == {"b": "timeout", "c": "unknown-assignment"}
    assert "mean 50.0%" in grades.summary_text(s)


def test_adjustments_apply_from_the_graders_scores_once_however_often_they_run():
    row = grades.Grade("a.ipynb", "s", {"q1": 2.0, "q2": 4.0}, {"q1": 2.0, "q2": 4.0}, late=True)
    adj = grades.Adjustments(0.25, [grades.Override("a.ipynb", "s", "q1", 0.0, "copied")])
    for _ in range(2):  # every run applies them again: never twice
        assert grades.adjust([row], adj) == 1
        assert row.scores == {"q1": 0.0, "q2": 3.0} and row.graded_scores == {"q1": 2.0, "q2": 4.0}
    assert "q1 set to 0 by the instructor, the grader gave 2 (copied)" in row.adjusted
    assert grades.adjust([row], grades.Adjustments()) == 0  # removed: the grader's scores again
    assert (
        row.scores == {"q1": 2.0, "q2": 4.0} and row.adjusted == "ADJUSTED: LATE (no penalty set)"
    )
