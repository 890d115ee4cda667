"""What the per-lesson quiz tests (tests/presentation/test_quizzes_lesson_NN.py) share."""

from __future__ import annotations

from course.presentation.quiz import Numeric
from course.presentation.quizzes import questions


def numeric_questions(lesson: str) -> list[Numeric]:
    """Lesson ``lesson``'s numeric questions, in the order the lesson asks them."""
    return [q for q in questions(lesson) if isinstance(q, Numeric)]
