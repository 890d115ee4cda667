"""Lesson 14's quiz: its numeric answers agree with the fragmentation calculator, so a change in
the registry or a formula cannot leave the quiz wrong. Every lesson's questions and options:
tests/presentation/test_quizzes.py."""

from __future__ import annotations

from quiz_cases import numeric_questions

from course.calculators.scheduling import fragmentation


def test_the_jobs_that_fit_are_the_calculators():
    (jobs,) = numeric_questions("14")
    assert "3, 5, 2 and 6" in jobs.question
    assert jobs.answer == fragmentation([3, 5, 2, 6], 4).jobs_that_fit
