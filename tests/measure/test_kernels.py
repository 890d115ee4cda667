"""course.measure.kernels: each kernel computes what its FLOP formula claims; records well formed.

They never assert a speed (speed is a measurement, not a property).
"""

from __future__ import annotations

import pytest
import torch
from measured import finite_positive

from course.measure import kernels


def test_kernel_formulas():
    assert kernels.matmul(100).flops == 2e6 and kernels.matmul(100).bytes_moved == 3 * 100**2 * 4
    assert kernels.matvec(100).intensity == pytest.approx(2 * 100**2 / ((100**2 + 200) * 4))
    assert kernels.vector_add(10, "fp16").bytes_moved == 60
    assert kernels.mlp_forward(2, 8).flops == 16 * 2 * 8**2
    assert kernels.batched_matvec(64, 1).intensity < kernels.batched_matvec(64, 32).intensity


def test_kernels_compute_the_operation_they_are_named_after():
    out = kernels.batched_matvec(32, 4).build("cpu", torch.float32)()
    assert out.shape == (4, 32)
    out = kernels.mlp_forward(3, 16).build("cpu", torch.float32)()
    assert out.shape == (3, 16)
    assert kernels.dot(1000).build("cpu", torch.float64)().shape == ()


def test_measure_kernels_and_batching_records():
    sweep = kernels.measure_kernels(
        [kernels.dot(10_000), kernels.matmul(64)], budget_seconds=0.5, show_progress=False
    )
    for r in sweep.records:
        assert finite_positive(r.flop_per_s) and finite_positive(r.bytes_per_s)
        assert r.intensity_flop_per_byte == pytest.approx(r.flops / r.bytes_moved)
    batch = kernels.batching_sweep(256, (1, 4, 16), budget_seconds=0.5, show_progress=False)
    assert [r.batch for r in batch.records] == [1, 4, 16][: len(batch.records)]


def test_building_a_kernel_leaves_the_global_random_state_alone():
    torch.manual_seed(123)
    expected = torch.rand(3)
    torch.manual_seed(123)
    kernels.mlp_forward(2, 8).build("cpu", torch.float32)
    assert torch.equal(torch.rand(3), expected)
