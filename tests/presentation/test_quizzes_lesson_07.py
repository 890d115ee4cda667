"""Lesson 07's quiz: its numeric answers agree with the fine-tuning and memory calculators the
explanations name, so a change in the registry or a formula cannot leave the quiz wrong. Every
lesson's questions and options: tests/presentation/test_quizzes.py."""

from __future__ import annotations

import pytest
from quiz_cases import numeric_questions

from course.calculators.finetune import accumulation_steps
from course.calculators.memory import attention_scores_bytes


def test_accumulation_and_the_attention_scores_are_the_calculators():
    steps, scores = numeric_questions("07")
    assert steps.answer == accumulation_steps(256, 4, data_parallel=8).steps
    assert scores.answer == pytest.approx(attention_scores_bytes(4, 16, 2048) / 2**20, rel=1e-9)
