"""course.claims.silicon_to_tensors: the reading's break-even table reproduced, then corrected
with :mod:`course.calculators.cloud` for power, hosting and utilisation."""

from __future__ import annotations

import pytest

from course.calculators.cloud import HOURS_PER_MONTH
from course.claims import silicon_to_tensors
from course.facts import hardware


def test_seed004_rows_reproduce_the_seed_then_running_costs_push_breakeven_later():
    bare = silicon_to_tensors.breakeven_table_as_written()
    assert [round(r.reproduced_hours) for r in bare] == [4000, 3750, 4688]
    assert [r.hours_as_written for r in bare] == [4000, 3750, 4700]  # the seed rounds 4,687.5 up
    for r in bare:
        assert r.corrected_hours == pytest.approx(r.reproduced_hours)
    real = silicon_to_tensors.breakeven_table_as_written(
        utilisation=0.5, usd_per_kwh=0.15, pue=1.5, hosting_usd_per_gpu_year=1000
    )
    for before, after in zip(bare, real, strict=True):
        assert after.corrected_hours > before.reproduced_hours
        assert after.corrected_months > before.reproduced_hours / HOURS_PER_MONTH
    # RTX 4090: 450 W TDP (registry) x 1.5 x $0.15 = $0.10/h of energy
    rtx = real[0]
    tdp = hardware.gpu("rtx-4090").tdp_watts
    hosting_per_hour = 1000 / (0.5 * 8760)
    assert rtx.running_usd_per_hour == pytest.approx(tdp / 1000 * 1.5 * 0.15 + hosting_per_hour)
