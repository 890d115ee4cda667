"""The gradebook's folder run, with the grading replaced (fast: no sandbox). The class-wide run
through the CLI is tests/teaching/test_grading_class.py."""

from __future__ import annotations

import json

from teaching.grading import gradebook, grades, sandbox, submission


def test_a_grader_failure_on_one_file_is_a_row_not_the_end_of_the_run(monkeypatch, tmp_path):
    subs = tmp_path / "subs"
    subs.mkdir()
    for name in ("00_units_and_memory-a.ipynb", "00_units_and_memory-b.ipynb"):
        (subs / name).write_text(
            json.dumps({"cells": [], "metadata": {}, "nbformat": 4, "nbformat_minor": 5})
        )
    monkeypatch.setattr(
        gradebook,
        "prepare_set",
        lambda a, **k: submission.SetGrader(a, {"probes": {}, "answers": {}, "extras": {}}),
    )
    monkeypatch.setattr(sandbox, "start_factory", lambda *a, **k: None)

    def full_disk(path, *a, **k):
        if path.name.endswith("-a.ipynb"):
            raise OSError(28, "No space left on device")
        return grades.Grade(path.name, "00_units_and_memory", status="ok")

    monkeypatch.setattr(submission, "grade_one", full_disk)
    out = tmp_path / "out" / "grades.csv"
    assert gradebook.grade_folder(subs, out, assignment="00_units_and_memory") == 0
    rows = out.read_text().splitlines()
    assert len(rows) == 3
    assert "error" in rows[1] and "No space left on device" in rows[1]
    assert rows[2].startswith("00_units_and_memory-b.ipynb,00_units_and_memory")
