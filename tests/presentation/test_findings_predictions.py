"""course.presentation.findings.predictions: a prediction checked as lesson 14 says."""

from __future__ import annotations

import pytest

from course.presentation.findings import predictions


@pytest.mark.parametrize(
    ("predicted", "actual", "right"),
    [
        ("Resources", "PENDING (Resources)", True),
        ("priority", "PENDING (Resources)", False),
        (["A", "C", "B"], ["A", "C", "B"], True),
        (["A", "B", "C"], ["A", "C", "B"], False),
        ({"B": 4, "C": 0}, {"B": 5.0, "C": 1.0}, True),
        ({"B": 2, "C": 0}, {"B": 5.0, "C": 1.0}, False),
        (None, "RUNNING", None),
        ("", "RUNNING", None),
    ],
)
def test_a_prediction_is_checked_against_what_slurm_did(predicted, actual, right):
    verdict = predictions.check("x", predicted, actual)
    assert verdict.right is right
    assert ("no prediction" in str(verdict)) is (right is None)
