"""Coalescing: how many 32-byte sectors and 128-byte lines one warp's memory request touches.

The 32 threads of a warp issue one load or store instruction together; the memory system serves
it in 32-byte sectors (and 128-byte cache lines of four sectors), whatever each thread asked for
(CUDA C++ Programming Guide, "Device Memory Accesses"; Best Practices Guide, "Coalesced Access to
Global Memory"). Thread ``i`` touching ``element_bytes`` at ``offset_bytes + i x stride x
element_bytes`` therefore moves every sector any thread touches, and

    efficiency = bytes the threads use / bytes moved (sectors x 32).

Adjacent 4-byte words from an aligned start: 4 sectors, 100 %. The same shifted by one word: 5
sectors, 80 %. Stride 2: 8 sectors, 50 % (the Best Practices Guide's three cases). The helpers
:func:`struct_field_access` (array of structs vs struct of arrays) and :func:`matrix_walk`
(row vs column walk of a row-major matrix) turn a data layout into a stride. The same physics on
a CPU is the 64-byte cache line (lesson 11's stride sweep). Used by lesson 11.
"""

from __future__ import annotations

from dataclasses import dataclass

from course.facts import cuda_limits, validate
from course.facts.report import Report

SECTOR_BYTES = cuda_limits.SECTOR_BYTES
LINE_BYTES = cuda_limits.CACHE_LINE_BYTES


@dataclass(frozen=True)
class WarpAccess(Report):
    """The memory traffic of one warp-wide load: what the threads use and what moves."""

    _title = "One warp's memory request"

    threads: int
    element_bytes: int
    stride_elements: int
    offset_bytes: int
    used_bytes: int
    sectors: int
    lines: int
    moved_bytes: int
    efficiency: float  # used_bytes / moved_bytes


def warp_access(
    element_bytes: int = 4,
    stride_elements: int = 1,
    offset_bytes: int = 0,
    *,
    threads: int = cuda_limits.WARP_SIZE,
    sector_bytes: int = SECTOR_BYTES,
    line_bytes: int = LINE_BYTES,
) -> WarpAccess:
    """Sectors and lines one warp request touches; thread ``i`` reads ``element_bytes`` at
    ``offset_bytes + i * stride_elements * element_bytes``.

    ``element_bytes`` 1-16 (a char to a float4), ``stride_elements`` >= 0 (0: every thread reads
    the same element, a broadcast), ``offset_bytes`` >= 0 (misalignment of the first element).
    ``sector_bytes``/``line_bytes`` default to the GPU's 32/128; pass 64/64 for a CPU cache line.
    Bytes used count each distinct byte once. Source: CUDA C++ Best Practices Guide, "Coalesced
    Access to Global Memory".
    """
    size = validate.positive_int("element size (bytes)", element_bytes, maximum=16)
    stride = validate.positive_int("stride (elements)", stride_elements, minimum=0, maximum=2**20)
    offset = validate.positive_int("offset (bytes)", offset_bytes, minimum=0, maximum=2**30)
    n = validate.positive_int("threads", threads, maximum=1024)
    sector = validate.positive_int("sector size (bytes)", sector_bytes, maximum=4096)
    line = validate.positive_int("line size (bytes)", line_bytes, minimum=sector, maximum=65536)
    starts = {offset + i * stride * size for i in range(n)}
    used = set()
    for s in starts:
        used.update(range(s, s + size))
    sectors = {b // sector for b in used}
    lines = {b // line for b in used}
    moved = len(sectors) * sector
    return WarpAccess(
        threads=n,
        element_bytes=size,
        stride_elements=stride,
        offset_bytes=offset,
        used_bytes=len(used),
        sectors=len(sectors),
        lines=len(lines),
        moved_bytes=moved,
        efficiency=len(used) / moved,
    )


def struct_field_access(
    field_bytes: int, fields: int, *, layout: str = "aos", field_index: int = 0
) -> WarpAccess:
    """A warp reading one field of ``fields`` equal fields of ``field_bytes`` for 32 records.

    ``layout="aos"`` (array of structs: ``particles[i].x``) puts the records ``fields`` apart, a
    stride; ``"soa"`` (struct of arrays: ``particles.x[i]``) makes the field contiguous.
    """
    n_fields = validate.positive_int("fields per struct", fields, maximum=1024)
    validate.choice("layout", layout, ("aos", "soa"))
    index = validate.positive_int("field index", field_index, minimum=0, maximum=n_fields - 1)
    if layout == "soa":
        return warp_access(field_bytes, 1, 0)
    return warp_access(field_bytes, n_fields, index * field_bytes)


def matrix_walk(element_bytes: int, columns: int, *, walk: str = "row") -> WarpAccess:
    """A warp whose 32 threads read 32 neighbours of a row-major matrix with ``columns`` columns.

    ``walk="row"``: thread ``i`` reads ``A[r, i]`` (adjacent addresses); ``"column"``: thread ``i``
    reads ``A[i, c]`` (addresses a row apart, stride ``columns``). Rows are assumed to start
    aligned.
    """
    cols = validate.positive_int("columns", columns, maximum=2**20)
    validate.choice("walk", walk, ("row", "column"))
    return warp_access(element_bytes, 1 if walk == "row" else cols, 0)


def stride_sweep(
    element_bytes: int = 4,
    strides: tuple[int, ...] = (1, 2, 4, 8, 16, 32),
    *,
    sector_bytes: int = SECTOR_BYTES,
    line_bytes: int = LINE_BYTES,
) -> list[WarpAccess]:
    """:func:`warp_access` for each stride: the predicted coalescing curve."""
    return [
        warp_access(element_bytes, s, 0, sector_bytes=sector_bytes, line_bytes=line_bytes)
        for s in strides
    ]


__all__ = [
    "LINE_BYTES",
    "SECTOR_BYTES",
    "WarpAccess",
    "matrix_walk",
    "stride_sweep",
    "struct_field_access",
    "warp_access",
]
