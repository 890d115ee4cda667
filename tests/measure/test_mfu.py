"""course.measure.mfu: the FLOPs of a training step counted on the meta device equal the training
formula (3 x forward), a measured MFU record is well formed, and slow steps are still timed
(properties only: never a speed)."""

from __future__ import annotations

import math

import pytest

from course.calculators import compute
from course.facts.models import DEMO_PRESETS, PRESETS
from course.measure import mfu

TINY = DEMO_PRESETS["tiny-llama"]


def test_step_flops_on_meta_equal_the_training_formula():
    counted = mfu.step_flops(TINY, 2, 64)
    assert counted == pytest.approx(3 * compute.forward_flops(TINY, 64, batch=2), rel=0.01)


def test_measured_mfu_record_is_well_formed():
    rec = mfu.measure_training_mfu(
        TINY, batch=2, seq_len=32, budget_seconds=0.6, peak_size=128, show_progress=False
    )
    assert rec.params == TINY.params
    assert rec.step_seconds > 0 and rec.repeats >= 1
    assert rec.mfu == pytest.approx(rec.step_flops / rec.step_seconds / rec.peak_flop_per_s)
    assert math.isfinite(rec.mfu) and rec.mfu > 0
    assert rec.tokens_per_s == pytest.approx(64 / rec.step_seconds)
    assert "MFU" in str(rec)


def test_mfu_refuses_an_encoder_without_lm_head():
    with pytest.raises(ValueError, match="LM head"):
        mfu.measure_training_mfu(PRESETS["bert-base"], budget_seconds=0.5)


def test_slow_steps_are_timed_call_by_call_inside_the_budget():
    """A busy machine: a step slower than the budget is still timed (once), never skipped."""
    import time

    median, spread, repeats, _ = mfu._time_step(lambda: time.sleep(0.05), "cpu", 0.06)
    assert repeats >= 1 and median >= 0.05 and spread >= 0
    median, _, repeats, _ = mfu._time_step(lambda: None, "cpu", 0.2)
    assert repeats >= 1 and median < 0.01
