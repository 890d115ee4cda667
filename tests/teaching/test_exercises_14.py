"""Exercise set 14: known wrong answers get the hint written for them, and the answers read from
the recorded Slurm run follow that run. (The solution passing every public check, full marks and a
blank's 0 are tested for every set in tests/project/test_exercises.py.)"""

from __future__ import annotations

import pytest
from solution_run import feedback_with, solution_namespace

from course.distributed import job_mix

SET = "14_running_a_gpu_cluster"


@pytest.fixture(scope="module")
def namespace() -> dict:
    return solution_namespace(SET)


@pytest.mark.parametrize(
    ("question", "name", "value", "hint"),
    [
        ("q1", "gpus_total", 4, "on each node"),
        ("q4", "jobs_that_fit", 6, "pools the GPUs"),
        ("q7", "total_gpus", 4, "per pod"),
        ("q8", "gpu_hours", {"alice": 12.0, "bob": 26.0}, "multiply the hours"),
    ],
)
def test_known_wrong_answers_get_their_hint(namespace, monkeypatch, question, name, value, hint):
    monkeypatch.delenv("COURSE_GRADING", raising=False)
    text = feedback_with(SET, namespace, question, name, value)
    assert f"{name}: not right yet" in text and hint in text


def test_the_pending_reason_is_read_from_the_recording(namespace):
    big = job_mix.recorded().job("big")
    assert namespace["big_reason"] == big["reasons"][0] == "Resources"
    assert namespace["big_wait_seconds"] == big["start_seconds"] - big["submit_seconds"] > 0
