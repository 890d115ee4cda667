"""Each lesson's self-check quiz, defined here so that its answers are not in the notebook.

A lesson ``NN`` has a module ``course/presentation/quizzes/lesson_NN.py`` with ``QUESTIONS``, a tuple of
``course.presentation.quiz.MultipleChoice`` / ``course.presentation.quiz.Numeric``; every ``MultipleChoice`` gives one ``why``
per option. The notebook's last cell is ``from course.presentation.quizzes import show; show("NN")``.

"""

from __future__ import annotations

import importlib

from course.presentation.quiz import Quiz


def questions(lesson: str) -> tuple:
    """The questions of lesson ``lesson`` ("05"), from ``course.presentation.quizzes.lesson_05``."""
    if not (isinstance(lesson, str) and lesson.isdigit() and len(lesson) == 2):
        raise ValueError(f"lesson must be a two-digit string such as '05', got {lesson!r}")
    try:
        module = importlib.import_module(f"course.presentation.quizzes.lesson_{lesson}")
    except ModuleNotFoundError as exc:
        raise ValueError(
            f"lesson {lesson!r} has no quiz (no course/presentation/quizzes/lesson_{lesson}.py)"
        ) from exc
    return tuple(module.QUESTIONS)


def show(lesson: str) -> Quiz:
    """The quiz of lesson ``lesson``; end a cell with it to display it."""
    return Quiz(*questions(lesson))


def show_question(lesson: str, number: int) -> Quiz:
    """Question ``number`` (1-based) of lesson ``lesson``'s quiz, alone: an attempt box.

    Lesson 10 asks one practice question per section and shows its worked answer after it.
    """
    qs = questions(lesson)
    if not (isinstance(number, int) and 1 <= number <= len(qs)):
        raise ValueError(f"number must be 1..{len(qs)} for lesson {lesson!r}, got {number!r}")
    return Quiz(qs[number - 1], first=number, heading="Your attempt")
