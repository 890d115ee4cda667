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
    # Independently of the formula: the bytes are what torch holds for A, B and C (fp32), the FLOPs
    # what torch.utils.flop_counter counts for the product; 10 µs launch, 30 GB/s, 20 TFLOP/s.
    import torch
    from torch.utils.flop_counter import FlopCounterMode

    n = 1000
    a, b = torch.ones(n, n), torch.ones(n, n)
    with FlopCounterMode(display=False) as counter:
        c = a @ b
    moved = a.nbytes + b.nbytes + c.nbytes
    t = overhead.offload_seconds(
        n, launch_seconds=1e-5, link_bandwidth_bytes_per_s=3e10, peak_flop_per_s=2e13
    )
    assert t == pytest.approx(1e-5 + moved / 3e10 + counter.get_total_flops() / 2e13, rel=1e-12)
    half = overhead.offload_seconds(
        n,
        launch_seconds=1e-5,
        link_bandwidth_bytes_per_s=3e10,
        peak_flop_per_s=2e13,
        bytes_per_element=2,
    )
    assert t - half == pytest.approx(moved / 2 / 3e10, rel=1e-12)  # bf16 moves half the bytes
    cpu = overhead.FixedCostFit("cpu", 2e-6, 1e11)
    gpu = dict(launch_seconds=1e-5, link_bandwidth_bytes_per_s=3e10, peak_flop_per_s=2e13)
    n = overhead.offload_crossover(cpu, **gpu)
    assert n is not None and n > 1
    assert overhead.offload_seconds(n, **gpu) < cpu.seconds(2 * n**3)
    assert overhead.offload_seconds(n // 2, **gpu) >= cpu.seconds(2 * (n // 2) ** 3)
    slow_gpu = dict(gpu, peak_flop_per_s=1e9)  # slower than the CPU: never worth it
    assert overhead.offload_crossover(cpu, **slow_gpu) is None


def test_two_devices_find_the_crossover_of_a_launch_against_a_slower_rate():
    """A CPU at 1 TFLOP/s with no fixed cost against a GPU at 1 PFLOP/s behind a 10 us launch:
    2n^3 (1/1e12 - 1/1e15) = 1e-5 s at n = 171, so the GPU wins from the next power of two, 256."""
    from course.calculators.overhead import Device, two_devices

    cpu = Device("cpu", 0.0, 1e12)
    gpu = Device("gpu", 10e-6, 1e15)
    r = two_devices(cpu, gpu, 128)
    assert r.faster == "cpu" and r.bound_b == "overhead" and r.crossover_size == 256
    exact = (10e-6 / (1 / 1e12 - 1 / 1e15) / 2) ** (1 / 3)
    assert 128 < exact < 256
    big = two_devices(cpu, gpu, 4096)
    assert big.faster == "gpu" and big.bound_a == "compute"
    assert big.seconds_b == pytest.approx(10e-6 + 2 * 4096**3 / 1e15)
    with pytest.raises(ValueError, match="a must be an overhead.Device"):
        two_devices("cpu", gpu, 8)
