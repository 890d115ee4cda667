"""course.calculators.kernel_traffic (lesson 11) against published cases, each cited."""

from __future__ import annotations

import pytest


def test_rmsnorm_traffic_matches_the_tensors_torch_reads_and_writes():
    """Counted, not restated: every aten op rmsnorm_torch runs reads its input tensors and writes
    its outputs (each storage once per op). torch runs six ops, the model four: it folds
    ``mean + eps`` and ``sqrt`` (two row-vector ops, 4 row vectors of traffic) into the divide."""
    import torch
    from torch.utils._python_dispatch import TorchDispatchMode

    from course.calculators import kernel_traffic
    from course.measure.triton_kernels import rmsnorm_torch

    class Traffic(TorchDispatchMode):
        moved = 0

        def __torch_dispatch__(self, func, types, args=(), kwargs=None):
            out = func(*args, **(kwargs or {}))
            tensors = [a for a in (*args, out) if isinstance(a, torch.Tensor)]
            unique = {t.untyped_storage().data_ptr(): t.nbytes for t in tensors}
            Traffic.moved += sum(unique.values())
            return out

    rows, cols = 64, 256
    x, w = torch.randn(rows, cols), torch.randn(cols)
    with Traffic():
        rmsnorm_torch(x, w)
    r = kernel_traffic.rmsnorm_bytes(rows, cols, 4)
    assert r.unfused_bytes == Traffic.moved - 4 * rows * 4
    assert r.fused_bytes == x.nbytes + w.nbytes + x.nbytes  # read x and w, write the output
    assert 3.4 < kernel_traffic.rmsnorm_bytes(1024, 4096, 4).ratio < 3.6


def test_tiled_matmul_bytes_per_flop_halves_when_the_tile_doubles():
    from course.calculators import kernel_traffic

    # n=64, block=16: 16 programs x (16x64 of A + 64x16 of B) x 4 bytes + the 64x64 output.
    r = kernel_traffic.tiled_matmul_traffic(64, 16)
    assert (r.moved_bytes, r.flops) == (16 * 2 * 16 * 64 * 4 + 64 * 64 * 4, 2 * 64**3)
    big = [kernel_traffic.tiled_matmul_traffic(4096, b).bytes_per_flop for b in (32, 64, 128)]
    assert big[0] / big[1] == pytest.approx(2, rel=0.05)
    assert big[1] / big[2] == pytest.approx(2, rel=0.05)
    with pytest.raises(ValueError, match="block"):
        kernel_traffic.tiled_matmul_traffic(64, 128)
