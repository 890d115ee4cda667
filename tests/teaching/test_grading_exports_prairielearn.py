"""PrairieLearn export against its "External Grading" documentation (no sandbox): ``score`` in
[0, 1], ``gradable``, tests with ``points`` and ``max_points``, a file under 1 MB.
"""

from __future__ import annotations

import json

from export_cases import SET, grade
from teaching.grading.exports import prairielearn


def test_prairielearn_results_follow_its_external_grading_format(klass):
    for g in klass.list:
        out = prairielearn.results(g)
        if g.status == "not-graded":  # the grader failed: no points, no attempt counted
            assert out == {"gradable": False, "format_errors": [g.reason]}
            assert "the solution failed on this machine" in g.reason
            continue
        assert out["gradable"] is True and 0.0 <= out["score"] <= 1.0
        tests = out["tests"]
        assert {tuple(sorted(t)) for t in tests} == {
            ("description", "max_points", "message", "name", "output", "points")
        }
        assert sum(t["points"] for t in tests) / sum(t["max_points"] for t in tests) == out["score"]
    broken = grade("x.ipynb", SET, {"q1": 0, "q2": 0}, status="not-a-notebook")
    broken.reason = "not JSON"
    assert prairielearn.results(broken) == {"gradable": False, "format_errors": ["not JSON"]}
    huge = grade("h.ipynb", SET, {"q1": 0, "q2": 0}, {"q1": "x" * 5_000_000, "q2": "y" * 10})
    huge.reason = "z" * 5_000_000
    assert len(json.dumps(prairielearn.results(huge))) < prairielearn.MAX_BYTES
