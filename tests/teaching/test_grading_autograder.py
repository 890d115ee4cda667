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
