"""Lesson 05's quiz computes its numeric answers with the calculators; this checks them against
published runs and the questions' own numbers, so a wrong formula cannot make a right-looking
quiz. Every lesson's questions and options: tests/presentation/test_quizzes.py."""

from __future__ import annotations

import math

import pytest
from quiz_cases import numeric_questions


def test_training_days_chinchilla_size_and_energy_match_published_cases():
    days, chinchilla, energy = numeric_questions("05")
    # Touvron et al. 2023, Llama 2, Table 2: the 7B model (2T tokens) took 184,320 A100 GPU-hours,
    # 7.5 days on 1,024 GPUs; the question's 40 % MFU is close to what that implies.
    assert days.answer == pytest.approx(184_320 / 1024 / 24, rel=0.02)
    # C = 6 N D with D = 20 N: N = sqrt(C / 120). Hoffmann et al. 2022, Table 3, brackets it:
    # 67B for 5.76e23 FLOPs, 175B for 3.85e24.
    assert chinchilla.answer == pytest.approx(math.sqrt(1e24 / 120) / 1e9, rel=1e-6)
    assert 67 < chinchilla.answer < 175
    # 1,000 GPU-hours x 0.7 kW x PUE 1.2
    assert energy.answer == pytest.approx(1000 * 0.7 * 1.2)
