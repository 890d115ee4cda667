"""Lesson 09's quiz: its numeric answers agree with the break-even and checkpoint-interval
calculators, so a change in the registry or a formula cannot leave the quiz wrong. Every
lesson's questions and options: tests/presentation/test_quizzes.py."""

from __future__ import annotations

import pytest
from quiz_cases import numeric_questions

from course.calculators.cloud import breakeven_hours
from course.calculators.reliability import daly_interval_seconds, young_interval_seconds
from course.facts.units import DAY, HOUR


def test_the_breakeven_and_youngs_interval_are_the_calculators():
    breakeven, young = numeric_questions("09")
    assert breakeven.answer == pytest.approx(breakeven_hours(15_000, 4.0))
    assert young.answer == pytest.approx(young_interval_seconds(300, DAY) / HOUR, rel=1e-9)
    # the explanation's "about 1.94 h" for Daly's estimate
    assert daly_interval_seconds(300, DAY) / HOUR == pytest.approx(1.94, abs=0.01)
