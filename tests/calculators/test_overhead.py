"""A fixed cost per call plus a rate (course.calculators.overhead): fit, crossover, offload."""

import math
from types import SimpleNamespace

import pytest

from course.calculators import overhead


def _synthetic(fixed: float, rate: float, sizes=(2, 8, 32, 128, 512)):
    """Timed n x n products that follow ``fixed + 2n^3 / rate`` exactly."""
    return [
        SimpleNamespace(size=n, flops=2.0 * n**3, seconds=fixed + 2.0 * n**3 / rate, library="x")
        for n in sizes
    ]


def test_fit_fixed_cost_recovers_the_model_it_was_made_from():
    fit = overhead.fit_fixed_cost(_synthetic(5e-6, 1e11))
    assert math.isclose(fit.fixed_seconds, 5e-6, rel_tol=1e-3)
    assert math.isclose(fit.flop_per_s, 1e11, rel_tol=1e-3)
    with pytest.raises(ValueError, match="two sizes"):
        overhead.fit_fixed_cost(_synthetic(1e-6, 1e9, sizes=(4,)))


def test_crossover_size_is_where_the_two_models_take_equal_time():
    quick = overhead.FixedCostFit("cpu", 2e-6, 1e11)
    slow = overhead.FixedCostFit("gpu", 30e-6, 1e13)
    n = overhead.crossover_size(slow, quick)
    assert math.isclose(slow.seconds(2 * n**3), quick.seconds(2 * n**3), rel_tol=1e-9)
    assert slow.seconds(2 * (2 * n) ** 3) < quick.seconds(2 * (2 * n) ** 3)  # bigger: slow wins
    assert overhead.crossover_size(quick, slow) == 0.0
    assert overhead.crossover_size(overhead.FixedCostFit("worse", 1e-3, 1e9), quick) == math.inf


def test_offload_estimate_adds_launch_transfer_and_compute():
    t = overhead.offload_seconds(
        1000, launch_seconds=1e-5, link_bandwidth_bytes_per_s=3e10, peak_flop_per_s=2e13
    )
    # worked by hand: 10 µs launch + 12 MB (A, B in, C out; 4-byte floats) over 30 GB/s = 400 µs
    # + 2 GFLOP at 20 TFLOP/s = 100 µs: 510 µs
    assert t == pytest.approx(510e-6, rel=1e-12)
    cpu = overhead.FixedCostFit("cpu", 2e-6, 1e11)
    gpu = dict(launch_seconds=1e-5, link_bandwidth_bytes_per_s=3e10, peak_flop_per_s=2e13)
    n = overhead.offload_crossover(cpu, **gpu)
    assert n is not None and n > 1
    assert overhead.offload_seconds(n, **gpu) < cpu.seconds(2 * n**3)
    assert overhead.offload_seconds(n // 2, **gpu) >= cpu.seconds(2 * (n // 2) ** 3)
    slow_gpu = dict(gpu, peak_flop_per_s=1e9)  # slower than the CPU: never worth it
    assert overhead.offload_crossover(cpu, **slow_gpu) is None
