"""Exercise set 12 (training at scale): the solution passes the learner's checks and gets full marks
from the trusted checker against the build-time key; a blank submission gets 0; known wrong
answers get their hint (no sandbox here: the sandboxed grading of every set is in
tests/teaching/test_grading.py)."""

from __future__ import annotations

import pytest
from solution_run import feedback_with, solution_namespace
from teaching.grading import authoring, check, runner, spec

from course.distributed import resume
from course.selfcheck.answers import Grader

pytestmark = pytest.mark.sandbox  # runs solutions in the grading sandbox (tests/conftest.py)

SET = "12_training_at_scale"
SOLUTION = authoring.SOLUTIONS_DIR / f"{SET}.ipynb"


@pytest.fixture(scope="module")
def namespace() -> dict:
    return solution_namespace(SET)


@pytest.fixture(scope="module")
def key() -> dict:
    keys, errors = authoring.answer_keys([SOLUTION])
    assert not errors, errors
    return keys[SET]


def _grade(answers: dict, key: dict) -> list:
    return check.check_all(spec.read(SOLUTION), answers, key["answers"], key["extras"])


def test_at_least_seven_questions():
    assert len(spec.read(SOLUTION).questions) >= 7


def test_the_solution_passes_every_learner_check(namespace, monkeypatch):
    monkeypatch.delenv("COURSE_GRADING", raising=False)
    report = Grader(SET).check_all(namespace)
    assert bool(report), repr(report)


def test_the_solution_scores_full_marks_and_a_blank_scores_zero(namespace, key):
    assignment = spec.read(SOLUTION)
    request = check.request_questions(assignment, key["probes"])
    answers = {q: runner.extract_answers(namespace, r) for q, r in request.items()}
    full = _grade(answers, key)
    assert [r.score for r in full] == [r.points for r in full], [r.reason for r in full]
    blank = _grade({}, key)
    assert sum(r.score for r in blank) == 0 and all(r.points > 0 for r in blank)


@pytest.mark.parametrize(
    ("question", "name", "change", "hint"),
    [
        ("q1", "ckpt_bytes", lambda v: v + 4 * 70e9, "gradients are not saved"),
        ("q2", "job_mtbf_h", lambda v: v * 4096 * 4096, "divide the per-GPU MTBF"),
        ("q6", "a2a_bytes_per_step", lambda v: v / 2, "4 exchanges, not 2"),
        ("q9", "needed", lambda v: ["model", "optim"], "weights and optimizer are not enough"),
        ("q9", "blocked_async_s", lambda v: v * 512, "stages its own shard"),
    ],
)
def test_known_wrong_answers_get_their_hint(namespace, monkeypatch, question, name, change, hint):
    monkeypatch.delenv("COURSE_GRADING", raising=False)
    text = feedback_with(SET, namespace, question, name, change(namespace[name]))
    assert f"{name}: not right yet" in text and hint in text


def test_the_whole_training_state_is_what_the_courses_resume_saves(namespace):
    """Q9's answer is :data:`course.distributed.resume.PARTS`, what the lesson's bitwise restart
    saves (tests/distributed/test_resume.py fails when one part is left out)."""
    assert namespace["needed"] == sorted(resume.PARTS)
    assert set(namespace["needed"]) < set(namespace["MENU"])
