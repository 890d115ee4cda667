"""Lesson 10's self-checks: the numeric answers agree with published figures and with the
calculators, hints never give the answer away, and ``show_question`` shows one question under its
own number."""

import pytest

from course.presentation.quiz import Numeric
from course.presentation.quizzes import questions, show_question

QS = questions("10")


def test_lesson_10_asks_the_ten_practice_questions_in_order():
    assert len(QS) == 10
    assert "Tensor Core" in QS[1].question and "7B" in QS[2].question
    assert "MIG" in QS[4].question and "175B" in QS[7].question and "32-GPU" in QS[9].question


@pytest.mark.parametrize(
    ("number", "expected", "source"),
    [
        (2, 16.0, "A100 datasheet: 312 TFLOP/s dense fp16 Tensor Core / 19.5 TFLOP/s FP32"),
        (3, 112.0, "ZeRO (Rajbhandari et al. 2019, sec. 3.1): 16 B/param x 7e9 = 112 GB"),
        (
            6,
            54.44,
            "ring all-reduce 2 x 7/8 x 14 GB / 450 GB/s (NVLink 4, H100 datasheet 900 GB/s)",
        ),
        (8, 33, "175e9 x 16 B = 2.8 TB over 80 GiB = 32.6 GPUs, rounded up"),
        (10, 35_740.8, "4 x 10.2 kW (DGX H100 User Guide) x 8,760 h x $0.10/kWh"),
    ],
)
def test_numeric_answers_match_the_published_arithmetic(number, expected, source):
    q = QS[number - 1]
    assert isinstance(q, Numeric)
    assert q.answer == pytest.approx(expected, rel=1e-3), source
    assert q.check(expected).correct


def test_a_wrong_numeric_answer_gets_a_hint_that_does_not_state_the_answer():
    for q in QS:
        if isinstance(q, Numeric):
            assert q.hint, q.question
            feedback = q.check(q.answer * 3)
            assert not feedback.correct and "Hint:" in feedback.message
            assert (
                f"{q.answer:,.0f}" not in feedback.message
                and f"{q.answer:g}" not in feedback.message
            )


def test_question_8_accepts_only_the_whole_number_of_gpus():
    assert not QS[7].check(QS[7].answer - 1).correct


def test_show_question_numbers_the_question_and_rejects_a_bad_number():
    shown = show_question("10", 7)
    assert repr(shown).splitlines()[1].startswith("7. ")
    assert '<ol start="7">' in shown._repr_html_()
    for bad in (0, 11, "3"):
        with pytest.raises(ValueError, match="number must be"):
            show_question("10", bad)
