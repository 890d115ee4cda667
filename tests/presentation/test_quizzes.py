"""Every lesson's quiz (course/presentation/quizzes/lesson_NN.py, discovered) builds, explains
every option on its own, keeps its options alike in length, and shows no answer before the
learner has answered."""

import re
from pathlib import Path

import pytest

import course.presentation.quizzes
from course.presentation.quiz import MultipleChoice, Numeric
from course.presentation.quizzes import questions, show

LESSONS = sorted(
    p.stem.removeprefix("lesson_")
    for p in Path(course.presentation.quizzes.__file__).parent.glob("lesson_*.py")
)
MAX_LENGTH_RATIO = 2.5  # longest option / shortest option


def test_the_quizzes_of_lessons_00_to_04_are_found():
    assert {"00", "01", "02", "03", "04"} <= set(LESSONS)


@pytest.mark.parametrize("lesson", LESSONS)
def test_every_question_is_a_question_and_every_option_has_its_own_explanation(lesson):
    qs = questions(lesson)
    most = 10 if lesson == "10" else 8  # lesson 10 asks the reading's ten practice questions
    assert 3 <= len(qs) <= most, f"lesson {lesson}: {len(qs)} questions (3-5 is the house style)"
    for q in qs:
        assert isinstance(q, MultipleChoice | Numeric)
        if isinstance(q, MultipleChoice):
            assert len(q.why) == len(q.options)
            assert len({w.strip() for w in q.why}) == len(q.why), q.question
            assert all(len(w.strip()) >= 20 for w in q.why), q.question
            for i in range(len(q.options)):  # each option gets its own feedback
                feedback = q.check(i)
                assert feedback.correct == (i == q.answer)
                assert q.why[i] in feedback.message
        else:
            assert q.explain.strip() and q.check(q.answer).correct


@pytest.mark.parametrize("lesson", LESSONS)
def test_options_are_of_similar_length(lesson):
    for q in questions(lesson):
        if isinstance(q, MultipleChoice):
            lengths = [len(o) for o in q.options]
            assert max(lengths) <= MAX_LENGTH_RATIO * min(lengths), (q.question, q.options)


@pytest.mark.parametrize("lesson", LESSONS)
def test_the_static_forms_show_no_answer_and_no_explanation(lesson):
    quiz = show(lesson)
    bundle = quiz._repr_mimebundle_()
    text, page = bundle["text/plain"], bundle["text/html"]
    for q in quiz.questions:
        explanations = q.why if isinstance(q, MultipleChoice) else (q.explain,)
        for shown in (text, page):
            assert not any(w in shown for w in explanations), q.question
    assert "<details" not in page and "Answer</summary>" not in page


def test_no_lesson_notebook_defines_its_quiz_inline():
    for path in sorted(Path(__file__).parents[2].glob("notebooks/[0-9][0-9]_*.ipynb")):
        source = path.read_text()
        assert "MultipleChoice(" not in source and "Numeric(" not in source, path.name
        lesson = path.name[:2]
        if lesson in LESSONS:
            shown = (f'show(\\"{lesson}\\")', f'show_question(\\"{lesson}\\"')
            assert any(s in source for s in shown), f"{path.name} does not call show({lesson!r})"


@pytest.mark.parametrize("lesson", LESSONS)
def test_the_right_option_does_not_give_itself_away(lesson):
    """Not the longest by a margin, and not always in the same place."""
    choices = [q for q in questions(lesson) if isinstance(q, MultipleChoice)]
    for q in choices:
        right = len(q.options[q.answer])
        longest_wrong = max(len(o) for i, o in enumerate(q.options) if i != q.answer)
        assert right <= 1.15 * longest_wrong, (q.question, q.options)
    if len(choices) >= 3:
        assert len({q.answer for q in choices}) > 1, "the right answer sits in one position"


def _forms_of(value: float) -> set[str]:
    """How an explanation could write ``value``: 3 or 4 significant figures, with or without
    thousands separators, and as a whole number when it is one."""
    forms = {f"{value:.3g}", f"{value:.4g}", f"{value:,.3g}", f"{value:,.4g}"}
    if abs(value) >= 1:
        forms |= {f"{value:,.0f}", f"{value:.0f}", f"{value:,.1f}", f"{value:.1f}"}
    return {f for f in forms if sum(c.isdigit() for c in f) >= 2 or abs(value) >= 10}


def _written(form: str, text: str) -> bool:
    """``form`` appears in ``text`` as a number of its own (not inside 1,024 or 2.5)."""
    return re.search(rf"(?<![\w.,]){re.escape(form)}(?![\w]|[.,]\d)", text) is not None


@pytest.mark.parametrize("lesson", LESSONS)
def test_a_wrong_numeric_answer_gets_a_hint_that_does_not_give_the_value(lesson):
    """Every numeric question has its own hint; a wrong answer shows it and never the value (the
    learner can try again), the way lesson 10's practice questions do."""
    for q in questions(lesson):
        if not isinstance(q, Numeric):
            continue
        assert q.hint.strip(), f"lesson {lesson}: {q.question[:60]!r} has no hint"
        for wrong in (q.answer * 3 + 1, q.answer / 7, -q.answer - 1):
            feedback = q.check(wrong)
            assert not feedback.correct and q.hint in feedback.message
            assert q.explain not in feedback.message
            leaked = [f for f in _forms_of(q.answer) if _written(f, feedback.message)]
            assert not leaked, (lesson, q.question[:60], leaked, feedback.message)
