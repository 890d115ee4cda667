"""Exercise set 14's learner checks: every question accepts the solution, known wrong answers get
the hint written for them, and the answers read from the recorded Slurm run follow that run (a
recording where big had not waited would change them). (Full grading, the solution to full marks
and a blank to 0, is in tests/project/test_exercises.py.)"""

from __future__ import annotations

import pytest
from solution_run import solution_namespace

from course.distributed import scheduling
from course.publishing.grading.learner import Grader

SET = "14_running_a_gpu_cluster"


@pytest.fixture(scope="module")
def namespace() -> dict:
    return solution_namespace(SET, lambda cell: True)


@pytest.fixture
def grader(monkeypatch):
    monkeypatch.delenv("COURSE_GRADING", raising=False)
    return Grader(SET)


@pytest.mark.parametrize("question", [f"q{i}" for i in range(1, 9)])
def test_the_solution_passes_each_question(namespace, grader, question):
    report = grader.check(question, dict(namespace))
    assert bool(report), repr(report)


@pytest.mark.parametrize(
    ("question", "name", "value", "hint"),
    [
        ("q1", "gpus_total", 4, "on each node"),
        ("q4", "jobs_fit", 6, "pools the GPUs"),
        ("q7", "total_gpus", 4, "per pod"),
        ("q8", "gpu_hours", {"alice": 12.0, "bob": 26.0}, "multiply the hours"),
    ],
)
def test_known_wrong_answers_get_their_hint(namespace, grader, question, name, value, hint):
    ns = {**namespace, name: value}
    text = repr(grader.check(question, ns))
    assert f"{name}: not right yet" in text and hint in text


def test_the_pending_reason_is_read_from_the_recording(namespace):
    run = scheduling.recorded()
    big = run.job("big")
    assert namespace["big_reason"] == big["reasons"][0] == "Resources"
    assert namespace["big_wait_seconds"] == big["start_seconds"] - big["submit_seconds"] > 0
