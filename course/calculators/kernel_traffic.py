"""Bytes a kernel must move: fused against unfused, and a tiled matmul against its tile size.

Pure arithmetic on shapes (lesson 11): the least traffic to and from device memory, assuming no
intermediate stays in a cache. A fused kernel reads its inputs once and writes its output once;
the unfused torch version writes every intermediate back and reads it again. A tiled matmul
reuses each loaded tile ``block`` times, so its bytes per FLOP fall as ``1 / block`` (the blocking
of the CUDA C++ Programming Guide's shared-memory matmul example, and of Triton's matmul
tutorial).
"""

from __future__ import annotations

from dataclasses import dataclass

from course.facts import validate
from course.facts.report import Report


@dataclass(frozen=True)
class FusionBytes(Report):
    """RMSNorm's memory traffic, fused and unfused."""

    _title = "RMSNorm: bytes to and from memory"

    matrix_rows: int
    matrix_cols: int
    element_bytes: int
    fused_bytes: int
    unfused_bytes: int
    ratio: float


def rmsnorm_bytes(rows: int, cols: int, element_bytes: int = 4) -> FusionBytes:
    """Bytes to and from memory of RMSNorm fused (read x, read w, write out) against the four
    unfused torch ops of ``course.measure.triton_kernels.rmsnorm_torch`` (``x*x``: read x, write sq;
    ``mean``: read sq, write rows; ``x/sqrt(..)``: read x and rows, write normed; ``*w``: read
    normed and w, write out),
    assuming no intermediate stays in cache."""
    r = validate.positive_int("rows", rows)
    c = validate.positive_int("cols", cols)
    e = validate.positive_int("element size (bytes)", element_bytes, maximum=16)
    full, vec, col = r * c * e, c * e, r * e
    fused = 2 * full + vec
    unfused = (2 * full) + (full + col) + (full + col + full) + (2 * full + vec)
    return FusionBytes(r, c, e, fused, unfused, unfused / fused)


@dataclass(frozen=True)
class TileTraffic(Report):
    """A tiled matmul's loads and stores per FLOP."""

    _title = "Tiled matmul traffic"

    block: int
    flops: int
    moved_bytes: int
    bytes_per_flop: float


def tiled_matmul_traffic(n: int, block: int, element_bytes: int = 4) -> TileTraffic:
    """Bytes a tiled ``n x n`` matmul loads from memory per FLOP with square ``block`` tiles.

    Each of the ``(n/block)^2`` programs loads a ``block x n`` strip of A and an ``n x block``
    strip of B and writes its tile: ``2 n^3 / block`` loads + ``n^2`` stores, for ``2 n^3`` FLOPs.
    So bytes per FLOP ~ ``element_bytes / block``: doubling the tile halves the traffic (until the
    tiles outgrow the SM's registers and shared memory).
    """
    nn = validate.positive_int("n", n)
    bl = validate.positive_int("block", block, maximum=nn)
    e = validate.positive_int("element size (bytes)", element_bytes, maximum=16)
    tiles = -(-nn // bl)
    loads = tiles * tiles * 2 * (bl * nn) * e
    moved = loads + nn * nn * e
    flops = 2 * nn**3
    return TileTraffic(bl, flops, moved, moved / flops)


__all__ = ["FusionBytes", "TileTraffic", "rmsnorm_bytes", "tiled_matmul_traffic"]
