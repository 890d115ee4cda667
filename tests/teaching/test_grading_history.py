"""Grading history: every run kept, and a per-question diff for a regrade."""

from __future__ import annotations

from teaching.grading import history


def test_a_regrade_diff_lists_each_changed_score_per_question(tmp_path):
    before = (
        "submission,assignment,q1 [2 pts],q2 [1 pts],total,possible,percent,status,reason\n"
        "a.ipynb,s,2,0,2,3,66.7,ok,\n"
        "'=b.ipynb,s,0,0,0,3,0,timeout,\n"
        "gone.ipynb,s,1,1,2,3,66.7,ok,\n"
    )
    after = before.replace("a.ipynb,s,2,0,2", "a.ipynb,s,2,1,3").replace(
        "'=b.ipynb,s,0,0,0,3,0,timeout", "'=b.ipynb,s,2,0,2,3,66.7,ok"
    )
    after = after.replace("gone.ipynb,s,1,1,2,3,66.7,ok,\n", "new.ipynb,s,0,0,0,3,0,ok,\n")
    rows = history.diff(before, after, {"a.ipynb": "11", "=b.ipynb": "12"})
    assert rows[0] == history.DIFF_HEADER
    assert rows[1:] == [
        ["'=b.ipynb", "12", "q1", "0", "2"],
        ["'=b.ipynb", "12", "total", "0", "2"],
        ["'=b.ipynb", "12", "status", "timeout", "ok"],
        ["a.ipynb", "11", "q2", "0", "1"],
        ["a.ipynb", "11", "total", "2", "3"],
        ["gone.ipynb", "", "(submission)", "2", ""],
        ["new.ipynb", "", "(submission)", "", "0"],
    ]


def test_history_keeps_every_run_and_writes_a_diff_only_for_a_regrade(tmp_path):
    target = tmp_path / "grades.csv"
    target.write_text("submission,assignment,q1 [2 pts],total,status\na.ipynb,s,0,0,ok\n")
    assert "first run" in history.record(target, None)
    before = target.read_text()
    target.write_text(before.replace(",0,0,ok", ",2,2,ok"))
    line = history.record(target, before)
    assert "2 change(s) in 1 submission(s)" in line
    kept = sorted(p.name for p in (tmp_path / "grades_history").iterdir())
    assert len(kept) == 3 and len([k for k in kept if k.endswith("-diff.csv")]) == 1
