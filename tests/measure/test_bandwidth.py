"""course.measure.bandwidth: records well formed, cache plateaus found; CUDA paths skip, saying why.

They never assert a speed (speed is a measurement, not a property).
"""

from __future__ import annotations

import math

import pytest
import torch
from measured import HAS_CUDA, NO_CUDA, bandwidth_record, finite_positive

from course.facts.units import KiB, MiB
from course.measure import bandwidth, timing


def test_read_kernel_really_reads_the_buffer_as_often_as_it_claims():
    fn, moved = bandwidth.read_callable(8 * KiB)
    n = 8 * KiB // 4
    assert moved >= bandwidth.READ_BYTES_PER_CALL["cpu"]
    assert fn().item() == pytest.approx(moved / 4)  # sum of ones = values read
    assert moved % (4 * n) == 0


@pytest.mark.serial  # times itself against its budget or the cores: alone
def test_working_set_sweep_records_are_well_formed_and_in_budget():
    sizes = [4 * KiB, 64 * KiB, 1 * MiB, 8 * MiB]
    sweep = bandwidth.working_set_sweep(sizes, budget_seconds=1.0, show_progress=False)
    assert sweep.elapsed_seconds <= 1.0 * 1.3 + 0.3
    assert [r.working_set_bytes for r in sweep.records] == sizes[: len(sweep.records)]
    for r in sweep.records:
        assert r.bytes_moved >= r.working_set_bytes and finite_positive(r.bytes_per_s)
        assert math.isclose(r.bytes_per_s, r.bytes_moved / r.seconds)
        assert r.threads == 1


@pytest.mark.serial  # times itself against its budget or the cores: alone
def test_working_set_sweep_skips_points_when_the_budget_is_spent():
    sizes = [2**k for k in range(12, 27)]  # 4 KiB .. 64 MiB, far more than 0.1 s allows
    sweep = bandwidth.working_set_sweep(sizes, budget_seconds=0.1, show_progress=False)
    assert sweep.skipped and len(sweep.records) + len(sweep.skipped) == len(sizes)
    assert sweep.elapsed_seconds < 1.5


def test_copy_kernel_moves_twice_the_buffer():
    fn, moved = bandwidth.copy_callable(4 * KiB)
    assert moved == 8 * KiB
    assert torch.equal(fn(), torch.ones(KiB))


def test_default_working_sets_span_the_caches():
    caches = {"L1d": 32 * KiB, "L2": 512 * KiB, "L3": 32 * MiB}
    sizes = bandwidth.default_working_sets("cpu", caches)
    assert sizes[0] <= 4 * KiB and sizes[-1] >= 4 * 32 * MiB
    assert all(b == 2 * a for a, b in zip(sizes, sizes[1:], strict=False))


def test_cache_plateaus_take_points_clearly_inside_each_level():
    caches = {"L1d": 32 * KiB, "L2": 512 * KiB, "L3": 32 * MiB}
    sweep = timing.Sweep("synthetic", 1.0)
    truth = {
        4 * KiB: 100,
        16 * KiB: 100,
        32 * KiB: 80,
        64 * KiB: 50,
        256 * KiB: 50,
        1 * MiB: 30,
        16 * MiB: 30,
        64 * MiB: 25,
        128 * MiB: 10,
        256 * MiB: 10,
    }
    sweep.records = [bandwidth_record(s, r) for s, r in truth.items()]
    got = {p.level: (p.bytes_per_s, p.points) for p in bandwidth.cache_plateaus(sweep, caches)}
    assert got == {"L1d": (100, 2), "L2": (50, 2), "L3": (30, 2), "memory": (10, 2)}


@pytest.mark.skipif(not HAS_CUDA, reason=NO_CUDA)
def test_cuda_device_memory_and_host_link_bandwidth():
    dev = bandwidth.working_set_sweep(
        [1 * MiB, 256 * MiB], kernel="copy", device="cuda", budget_seconds=2, show_progress=False
    )
    assert all(finite_positive(r.bytes_per_s) for r in dev.records)
    link = bandwidth.host_device_sweep([16 * MiB], budget_seconds=2)
    assert {(r.kernel, r.pinned) for r in link.records} >= {("h2d", True), ("d2h", False)}


@pytest.mark.skipif(HAS_CUDA, reason="this machine has CUDA")
def test_host_device_sweep_needs_cuda():
    with pytest.raises(ValueError, match="needs a CUDA device"):
        bandwidth.host_device_sweep(device="cpu")
