"""Exercise set 02 (memory hierarchy): the learner's checks accept the solution's calculated answers
and give the hints written for known wrong answers. Only the setup and the calculated questions run
here (no measurement); the measured questions' checks are tested in
tests/teaching/test_measured_answers.py,
the set's full and blank scores in tests/project/test_exercises.py."""

from __future__ import annotations

import pytest
from solution_run import feedback_with, solution_namespace
from teaching.grading import authoring, spec

from course.selfcheck.answers import Grader

SET = "02_memory_hierarchy"
CALCULATED = ("q1", "q2", "q3", "q4", "q5", "q6")


@pytest.fixture(scope="module")
def namespace() -> dict:
    return solution_namespace(SET, lambda cell: cell["question"] in (None, *CALCULATED))


def test_set_02_has_six_to_eight_questions_two_of_them_measured():
    questions = spec.read(authoring.SOLUTIONS_DIR / f"{SET}.ipynb").questions
    assert 6 <= len(questions) <= 8
    measured = [q.name for q in questions if any(a.expect == "none" for a in q.answers)]
    assert measured == ["q7", "q8"]


@pytest.mark.parametrize("question", CALCULATED)
def test_the_solution_passes_the_learner_checks(namespace, monkeypatch, question):
    monkeypatch.delenv("COURSE_GRADING", raising=False)
    report = Grader(SET).check(question, namespace)
    assert bool(report), repr(report)


@pytest.mark.parametrize(
    ("question", "name", "change", "hint"),
    [
        ("q1", "hbm_over_host", lambda v: v / 2, "per direction"),
        ("q1", "load_seconds_host", lambda v: v / 2, "2 bytes each"),
        ("q3", "intensity_vadd_bf16", lambda v: v / 2, "bf16 values take 2 bytes"),
        (
            "q4",
            "floor_seconds",
            lambda v: v * 2.1704908510208207e-06 / 4.022149731343284e-05,
            "compute time only",
        ),
        ("q5", "tokens_per_s_b64", lambda v: v / 64, "per sequence"),
        ("q5", "tokens_per_s_b1", lambda v: v / 2, "1 byte each"),
    ],
)
def test_known_wrong_answers_get_their_hint(namespace, monkeypatch, question, name, change, hint):
    monkeypatch.delenv("COURSE_GRADING", raising=False)
    text = feedback_with(SET, namespace, question, name, change(namespace[name]))
    assert f"{name}: not right yet" in text and hint in text
