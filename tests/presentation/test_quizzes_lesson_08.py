"""Lesson 08's quiz: every MultipleChoice explains each option, and the numbers the questions
rely on agree with the calculators (so a change in the registry cannot leave the quiz wrong)."""

from __future__ import annotations

import pytest

from course.calculators import facility, gpu_systems, offload
from course.facts.models import PRESETS
from course.presentation.quiz import MultipleChoice, Numeric
from course.presentation.quizzes import questions


def test_every_option_is_explained():
    qs = questions("08")
    assert len(qs) >= 5
    for q in qs:
        if isinstance(q, MultipleChoice):
            assert len(q.why) == len(q.options)
            assert len(set(q.why)) == len(q.why)  # its own explanation per option


def test_quiz_figures_match_the_calculators():
    qs = questions("08")
    dgx = gpu_systems.dgx_from_parts("dgx-h100")
    assert dgx.dense_fp8_flop_per_s == pytest.approx(15.8e15, rel=0.005)  # question 1
    assert gpu_systems.mig_layout("h100-sxm", ["1g.10gb"] * 7).sms_idle == 20  # question 2
    serving = gpu_systems.choose_gpu(
        PRESETS["llama-2-7b"], workload="serving", usd_per_gpu_hour_a=1, usd_per_gpu_hour_b=1
    )
    assert serving.speedup == pytest.approx(1.64, abs=0.01)  # question 3
    numeric = next(q for q in qs if isinstance(q, Numeric))
    levels = facility.power_levels("dgx-h100", 32, other_watts_per_rack=0, pue=1.58)
    assert numeric.answer == pytest.approx(levels.facility_watts / 1e3)  # question 4
    pcie = offload.offload_decode_step(PRESETS["llama-2-70b"], gpu="h100-sxm")
    c2c = offload.offload_decode_step(PRESETS["llama-2-70b"], gpu="gh200-96gb")
    ratio = c2c.link_bandwidth_bytes_per_s / pcie.link_bandwidth_bytes_per_s
    assert ratio == pytest.approx(7.1, abs=0.05)  # question 5
