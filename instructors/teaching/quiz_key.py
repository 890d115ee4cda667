"""The instructors' quiz key, generated from ``course/presentation/quizzes/`` (never copied by
hand).

One Markdown page: for every lesson's self-check quiz, each question, its right answer (the option,
or the value with its unit and the tolerance the widget accepts) and the explanation learners see.
It is written with the answer keys (``python -m teaching answer-keys OUTDIR``; the site's
instructors' copy, ``make site ANSWER_KEYS=1``), never into the public site or the student release:
a learner who reads it has no quiz left to think about.
"""

from __future__ import annotations

import re
from pathlib import Path

from course.presentation import quizzes
from course.presentation.quiz import MultipleChoice, Numeric

QUIZ_DIR = Path(quizzes.__file__).parent
NOTICE = (
    "```{warning}\nInstructors only. Generated from `course/presentation/quizzes/` by "
    "`python -m teaching answer-keys`: edit the quiz module, not this page.\n```"
)


def quiz_lessons(folder: Path = QUIZ_DIR) -> list[str]:
    """The two-digit numbers of the lessons that have a quiz module, in order."""
    return sorted(
        m.group(1)
        for p in folder.glob("lesson_*.py")
        if (m := re.fullmatch(r"lesson_(\d\d)\.py", p.name))
    )


def _md(text: str) -> str:
    """Quiz text as Markdown: a dollar is money, never math."""
    return " ".join(str(text).split()).replace("$", r"\$")


def answer_line(question: MultipleChoice | Numeric) -> str:
    """The right answer of one question, as the key shows it."""
    if isinstance(question, MultipleChoice):
        letter = chr(ord("a") + question.answer)
        return f"**({letter})** {_md(question.options[question.answer])}"
    unit = f" {_md(question.unit)}" if question.unit else ""
    return f"**{question.answer:,.4g}{unit}** (accepted within ±{question.rel_tol:.0%})"


def quiz_key_page(lessons: list[str] | None = None) -> str:
    """The quiz key as MyST Markdown: every question of every lesson's quiz with its answer."""
    parts = ["# Quiz key", "", NOTICE]
    total = 0
    for lesson in lessons if lessons is not None else quiz_lessons():
        qs = quizzes.questions(lesson)
        total += len(qs)
        parts += ["", f"## Lesson {lesson}", ""]
        for number, q in enumerate(qs, 1):
            parts.append(f"{number}. {_md(q.question)}")
            parts.append(f"   - Answer: {answer_line(q)}")
            why = q.why[q.answer] if isinstance(q, MultipleChoice) else ""
            explain = " ".join(x for x in (why, q.explain) if x)
            if explain:
                parts.append(f"   - Why: {_md(explain)}")
    parts[3:3] = ["", f"{total} questions."]
    return "\n".join(parts) + "\n"


def write_quiz_key(outdir: str | Path) -> Path:
    """Write ``OUTDIR/quiz-key.md`` and return its path."""
    page = Path(outdir) / "quiz-key.md"
    page.parent.mkdir(parents=True, exist_ok=True)
    page.write_text(quiz_key_page(), encoding="utf-8")
    return page
