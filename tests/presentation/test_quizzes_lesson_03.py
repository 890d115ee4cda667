"""Lesson 03's quiz: its numeric answers agree with torch's fp16 and the dtype table, so a change
in the registry or a formula cannot leave the quiz wrong. Every lesson's questions and options:
tests/presentation/test_quizzes.py."""

from __future__ import annotations

import pytest
import torch
from quiz_cases import numeric_questions

from course.facts.dtypes import BYTES_PER_VALUE


def test_the_largest_fp16_and_grouped_int4_bytes_are_the_tables():
    largest, int4 = numeric_questions("03")
    assert largest.answer == torch.finfo(torch.float16).max == 65504
    per_param = BYTES_PER_VALUE["int4"] + BYTES_PER_VALUE["fp16"] / 128  # a level + a shared scale
    assert int4.answer == pytest.approx(per_param, rel=1e-9)
