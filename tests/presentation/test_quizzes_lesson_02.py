"""Lesson 02's quiz: its numeric answers agree with the decode and roofline calculators on the V100
and H100 rows, so a change in the registry or a formula cannot leave the quiz wrong. Every
lesson's questions and options: tests/presentation/test_quizzes.py."""

from __future__ import annotations

import pytest
from quiz_cases import numeric_questions

from course.calculators.compute import decode_step
from course.facts.hardware import GPUS


def test_the_decode_floor_and_the_ridge_are_the_calculators():
    floor, ridge = numeric_questions("02")
    v100 = GPUS["v100-sxm2-32gb"]  # the question's 900 GB/s
    assert v100.memory_bandwidth_bytes_per_s == 900e9
    floor_ms = decode_step(13e9, "fp16", v100).step_seconds * 1e3
    assert floor.answer == pytest.approx(floor_ms, rel=0.01)
    h100 = GPUS["h100-sxm"]
    step = decode_step(7e9, "bf16", h100)
    assert step.compute_bound_batch == pytest.approx(
        h100.dense_flop_per_s["bf16"] / h100.memory_bandwidth_bytes_per_s
    )
    assert ridge.answer == pytest.approx(step.compute_bound_batch, rel=0.01)
