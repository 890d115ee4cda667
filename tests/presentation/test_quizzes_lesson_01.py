"""Lesson 01's quiz: its numeric answers agree with the FLOP formula and the H100 row of the
hardware registry, so a change in the registry or a formula cannot leave the quiz wrong. Every
lesson's questions and options: tests/presentation/test_quizzes.py."""

from __future__ import annotations

import pytest
from quiz_cases import numeric_questions

from course.calculators.compute import training_flops
from course.facts.hardware import GPUS


def test_6n_and_the_h100_tensor_core_to_fp32_ratio_are_the_courses():
    six_n, ratio = numeric_questions("01")
    assert six_n.answer == pytest.approx(training_flops(7e9, 1))
    h100 = GPUS["h100-sxm"]
    bf16, fp32 = h100.dense_flop_per_s["bf16"], h100.dense_flop_per_s["fp32"]
    assert f"{bf16 / 1e12:.1f}" in ratio.question and f"{fp32 / 1e12:.0f}" in ratio.question
    assert ratio.answer == pytest.approx(bf16 / fp32, rel=0.01)
