"""course.measure.strides (lesson 11): the stride sweep's records are well formed."""

from __future__ import annotations

import math

from course.measure import strides


def test_stride_sweep_records_are_well_formed():
    sweep = strides.stride_sweep((1, 4, 32), buffer_bytes=2 * 2**20, budget_seconds=1.0)
    assert sweep.records
    for r in sweep.records:
        assert r.useful_bytes_per_s > 0 and math.isfinite(r.seconds)
        assert r.line_bytes_moved >= r.useful_bytes
        assert 0 < r.predicted_efficiency <= 1
