"""The autograder entry point Gradescope's and PrairieLearn's containers run (no sandbox needed
for a submission without a notebook)."""

from __future__ import annotations

import json

import pytest
from export_cases import SET


@pytest.mark.parametrize("tool", ["gradescope", "prairielearn"])
def test_an_autograder_run_without_a_notebook_still_writes_a_result(tmp_path, tool):
    from teaching.grading import autograder

    (tmp_path / "submission").mkdir()
    (tmp_path / "submission" / "answers.pdf").write_bytes(b"%PDF-1.4")
    results = tmp_path / "results" / "results.json"
    status = autograder.main(
        [tool, str(tmp_path / "submission"), str(results), "--assignment", SET]
    )
    data = json.loads(results.read_text())
    assert status == 0
    if tool == "gradescope":  # a score, since no test carries one; the reason as output
        assert data["score"] == 0.0 and data["tests"] == [] and "no .ipynb" in data["output"]
    else:  # PrairieLearn: not gradable, no attempt used
        assert data["gradable"] is False and "no .ipynb" in data["format_errors"][0]


@pytest.mark.parametrize("tool", ["gradescope", "prairielearn"])
def test_an_autograder_whose_key_cannot_run_records_no_score(tmp_path, monkeypatch, tool, capsys):
    """The solution cannot run in the container (memory, a missing package): PrairieLearn gets
    ``gradable: false`` (no points, no attempt used); Gradescope gets no results.json and a
    non-zero exit (a failed autograder run staff see), never 0 with every test "right"."""
    from teaching.grading import autograder, sandbox, submission

    why = "the solution failed on this machine: MemoryError"
    monkeypatch.setattr(
        autograder, "prepare_set", lambda a, **k: submission.SetGrader(a, None, why)
    )
    monkeypatch.setattr(sandbox, "start_factory", lambda *a, **k: None)
    (tmp_path / "submission").mkdir()
    nb = {"cells": [], "metadata": {}, "nbformat": 4, "nbformat_minor": 5}
    (tmp_path / "submission" / "mine.ipynb").write_text(json.dumps(nb))
    results = tmp_path / "results" / "results.json"
    status = autograder.main(
        [tool, str(tmp_path / "submission"), str(results), "--assignment", SET]
    )
    if tool == "gradescope":
        assert status == 3 and not results.exists()
        assert why in capsys.readouterr().err
    else:
        data = json.loads(results.read_text())
        assert status == 0 and data["gradable"] is False and why in data["format_errors"][0]
        assert "score" not in data and "tests" not in data
