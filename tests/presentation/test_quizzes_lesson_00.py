"""Lesson 00's quiz: its numeric answers agree with the memory calculator and the released
checkpoint's parameter count, so a change in the registry or a formula cannot leave the quiz
wrong. Every lesson's questions and options: tests/presentation/test_quizzes.py."""

from __future__ import annotations

import pytest
from quiz_cases import numeric_questions

from course.calculators.memory import weights_bytes
from course.facts.models import PRESETS, param_count
from course.facts.units import GiB


def test_the_gib_of_llama_2_7b_are_the_calculators():
    (q,) = numeric_questions("00")
    n = param_count(PRESETS["llama-2-7b"])
    assert f"{n:,}" in q.question  # meta-llama/Llama-2-7b-hf: 6,738,415,616
    assert q.answer == pytest.approx(weights_bytes(n, "fp16") / GiB, rel=1e-3)
