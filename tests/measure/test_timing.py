"""course.measure.timing: medians inside their range, warm-up first, budgets count down.

They never assert a speed (speed is a measurement, not a property).
"""

from __future__ import annotations

import time

import pytest
import torch
from measured import finite_positive

from course.measure import timing


def test_time_call_reports_median_within_its_range_and_restores_threads():
    before = torch.get_num_threads()
    x = torch.ones(10_000)
    t = timing.time_call(lambda: x.sum(), threads=1, min_run_time=0.02)
    assert finite_positive(t.median_seconds)
    assert t.min_seconds <= t.median_seconds <= t.max_seconds
    assert t.iqr_seconds >= 0 and t.repeats >= 1 and t.calls_per_repeat >= 1
    assert t.threads == 1 and t.device == "cpu"
    assert torch.get_num_threads() == before
    assert "per call" in str(t) and "IQR" in str(t)


def test_time_call_runs_warmup_before_measuring():
    calls = []
    timing.time_call(lambda: calls.append(1), warmup=3, min_run_time=0.001)
    assert len(calls) > 3  # 3 warm-up calls, then the measured ones


def test_a_call_slower_than_the_run_time_is_timed_three_times_so_its_spread_is_real():
    """One run has an IQR of 0, which would let any difference beat "noise" in the findings
    (lesson 07 printed a spread of "0 ns" for a 310 ms attention pass timed once)."""
    calls = []
    t = timing.time_call(lambda: (calls.append(1), time.sleep(0.01)), warmup=0, min_run_time=0.001)
    assert t.repeats >= timing.MIN_REPEATS and len(calls) >= timing.MIN_REPEATS
    assert t.iqr_seconds > 0 and t.min_seconds <= t.median_seconds <= t.max_seconds


@pytest.mark.parametrize("device", ["gpu", "tpu:0", 3])
def test_time_call_rejects_unknown_devices(device):
    with pytest.raises(ValueError, match="device"):
        timing.time_call(lambda: None, device=device)


def test_budget_counts_down():
    b = timing.Budget(10.0)
    assert 0 < b.remaining <= 10.0 and b.elapsed >= 0
    assert b.fits(1.0) and not b.fits(11.0)
    with pytest.raises(ValueError, match="budget_seconds"):
        timing.Budget(0)
