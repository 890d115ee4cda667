"""Exercise set 05's learner checks on the solution, and its known wrong answers' hints (no sandbox:
the full grading of every set is in tests/teaching/test_grading.py)."""

from __future__ import annotations

import pytest
from solution_run import feedback_with, solution_namespace

from course.selfcheck.answers import Grader

SET = "05_flops_time_cost"


@pytest.fixture(scope="module")
def namespace() -> dict:
    return solution_namespace(SET)


def test_the_solution_passes_every_learner_check(namespace, monkeypatch):
    monkeypatch.delenv("COURSE_GRADING", raising=False)
    report = Grader(SET).check_all(namespace)
    assert bool(report), repr(report)


@pytest.mark.parametrize(
    ("question", "name", "change", "hint"),
    [
        ("q3", "mfu_70b", lambda v: 100 * v, "not a percentage"),
        ("q4", "train_days", lambda v: 24 * v, "that is hours"),
        ("q5", "n_opt", lambda v: v * 120**0.5 / 6**0.5, "D is not N"),
        ("q6", "co2_tonnes", lambda v: 1000 * v, "that is kilograms"),
    ],
)
def test_known_wrong_answers_get_their_hint(namespace, monkeypatch, question, name, change, hint):
    monkeypatch.delenv("COURSE_GRADING", raising=False)
    text = feedback_with(SET, namespace, question, name, change(namespace[name]))
    assert f"{name}: not right yet" in text and hint in text
