"""course.calculators.kernel_traffic (lesson 11) against published cases, each cited."""

from __future__ import annotations

import pytest


def test_rmsnorm_fused_moves_read_plus_write_and_unfused_about_four_times_more():
    from course.calculators import kernel_traffic

    # Derived by hand from the four ops of rmsnorm_torch (x*x, mean, divide, scale), fp32.
    r = kernel_traffic.rmsnorm_bytes(1024, 4096, 4)
    full = 1024 * 4096 * 4
    assert r.fused_bytes == 2 * full + 4096 * 4
    assert r.unfused_bytes == 7 * full + 2 * 1024 * 4 + 4096 * 4
    assert 3.4 < r.ratio < 3.6


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
