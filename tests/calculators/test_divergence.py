"""course.calculators.divergence (lesson 11) against published cases, each cited."""

from __future__ import annotations

import pytest

from course.calculators import divergence


def test_odd_even_branch_serialises_both_paths():
    # Programming Guide, SIMT Architecture: a diverged warp executes each path taken.
    r = divergence.branch(divergence.lane_mask("tid % 2 == 0"), then_cost=10, else_cost=10)
    assert (r.lanes_then, r.lanes_else, r.diverged) == (16, 16, True)
    assert (r.issued_cost, r.slowdown, r.efficiency) == (20, 2.0, 0.5)


def test_tid_below_16_diverges_only_in_warp_0():
    assert divergence.branch(divergence.lane_mask("tid < 16", warp=0)).diverged
    assert not divergence.branch(divergence.lane_mask("tid < 16", warp=1)).diverged


def test_warp_uniform_branch_costs_one_path():
    r = divergence.branch(divergence.lane_mask("tid // 32 % 2 == 0", warp=1), 10, 3)
    assert (r.diverged, r.issued_cost, r.efficiency) == (False, 3, 1.0)


def test_lane_mask_takes_any_threshold_and_modulus():
    # exercise set 11's Q6 needs `tid < 8`: lanes 0-7 of warp 0, none of warp 1
    assert divergence.lane_mask("tid < 8") == tuple(t < 8 for t in range(32))
    assert not any(divergence.lane_mask("tid < 8", warp=1))
    assert sum(divergence.lane_mask("tid % 4 == 0", warp=3)) == 8
    with pytest.raises(ValueError, match="K a whole number"):
        divergence.lane_mask("tid % 0 == 0")


def test_data_dependent_branch_almost_always_diverges():
    assert divergence.data_dependent_divergence(0.5) == pytest.approx(1 - 2 * 0.5**32)
    assert divergence.data_dependent_divergence(0.0) == 0.0
    assert divergence.data_dependent_divergence(0.01) == pytest.approx(1 - 0.99**32)


def test_divergence_bad_input():
    with pytest.raises(ValueError, match="32 booleans"):
        divergence.branch([True] * 31)
    with pytest.raises(ValueError, match="branch pattern"):
        divergence.lane_mask("tid % 3")
    with pytest.raises(ValueError, match="probability"):
        divergence.data_dependent_divergence(float("nan"))
