"""Lesson 06's quiz: its numeric answers agree with the ring all-reduce and the pipeline-bubble
calculators, so a change in the registry or a formula cannot leave the quiz wrong. Every
lesson's questions and options: tests/presentation/test_quizzes.py."""

from __future__ import annotations

import pytest
from quiz_cases import numeric_questions

from course.calculators.communication import ring_allreduce_seconds
from course.calculators.parallel import pipeline_bubble_fraction


def test_the_ring_traffic_and_the_bubble_are_the_calculators():
    ring, bubble = numeric_questions("06")
    size, bandwidth = 1e9, 1e11  # sent bytes = time x bandwidth
    sent = ring_allreduce_seconds(size, 8, bandwidth) * bandwidth
    assert ring.answer == pytest.approx(sent / size)
    assert bubble.answer == pytest.approx(100 * pipeline_bubble_fraction(4, 12))
