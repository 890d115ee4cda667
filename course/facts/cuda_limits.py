"""What one streaming multiprocessor (SM) can hold, per CUDA compute capability (lesson 11).

The occupancy calculator (``course.calculators.occupancy``) and the coalescing calculator read
their limits from here; a lesson never types one. Each row is a column of the CUDA C++ Programming
Guide's table "Technical Specifications per Compute Capability" (CUDA 12.x/13.0 guide, read
2026-11); the allocation granularities (registers allocated per warp in units of 256, warps in
groups of 4, shared memory in units of 256 or 128 bytes) are those of NVIDIA's CUDA Occupancy
Calculator ("GPU Data" sheet), which implements the same rules as
``cudaOccupancyMaxActiveBlocksPerMultiprocessor``. Byte sizes are binary, as the guide's "KB" is
(96 KB = 98,304 bytes).

The device-memory rules (a warp's request is served in 32-byte sectors of 128-byte cache lines)
are in the guide's "Device Memory Accesses" section (compute capability 6.0 and later: global memory
accesses are cached in L2 in 32-byte segments) and in the CUDA C++ Best Practices Guide,
"Coalesced Access to Global Memory".
"""

from __future__ import annotations

from dataclasses import dataclass
from types import MappingProxyType

from course.facts.units import KiB

SOURCE = (
    "NVIDIA CUDA C++ Programming Guide, 'Technical Specifications per Compute Capability' table "
    "(CUDA 12.x/13.0, read 2026-11): threads, blocks and warps per SM, 32-bit registers per SM and "
    "per thread, shared memory per SM and per block (opt-in), 1 KB shared memory reserved per block "
    "from 8.0 on; allocation granularities from NVIDIA's CUDA Occupancy Calculator ('GPU Data')"
)
SOURCE_MEMORY = (
    "NVIDIA CUDA C++ Programming Guide, 'Device Memory Accesses' (global memory is cached in L2 in "
    "32-byte sectors; an L1 cache line is 128 bytes); CUDA C++ Best Practices Guide, 'Coalesced "
    "Access to Global Memory' (cited by title: the guide's sections are renumbered between releases)"
)

#: Threads that execute one instruction together (every compute capability so far).
WARP_SIZE = 32
#: A warp's memory request is served in these units (bytes): L2 sectors and L1/L2 cache lines.
SECTOR_BYTES = 32
CACHE_LINE_BYTES = 128


@dataclass(frozen=True)
class CudaLimits:
    """The per-SM resources of one compute capability (``cc``, e.g. ``(9, 0)``)."""

    cc: tuple[int, int]
    example_gpus: str
    max_threads_per_sm: int
    max_blocks_per_sm: int
    max_warps_per_sm: int
    max_threads_per_block: int
    registers_per_sm: int  # 32-bit registers
    max_registers_per_block: int
    max_registers_per_thread: int
    shared_memory_per_sm_bytes: int  # the largest carve-out of the unified L1/shared memory
    max_shared_memory_per_block_bytes: int  # with opt-in (cudaFuncSetAttribute)
    reserved_shared_memory_per_block_bytes: int  # the system's own use, per resident block
    register_allocation_unit: int = 256  # registers, allocated per warp
    warp_allocation_granularity: int = 4  # register-limited warps come in groups of this size
    shared_memory_allocation_unit_bytes: int = 128
    source: str = SOURCE

    @property
    def label(self) -> str:
        return f"{self.cc[0]}.{self.cc[1]}"


LIMITS: MappingProxyType = MappingProxyType({row.cc: row for row in [
    CudaLimits((7, 0), "V100", max_threads_per_sm=2048, max_blocks_per_sm=32,
               max_warps_per_sm=64, max_threads_per_block=1024, registers_per_sm=64 * 1024,
               max_registers_per_block=64 * 1024, max_registers_per_thread=255,
               shared_memory_per_sm_bytes=96 * KiB, max_shared_memory_per_block_bytes=96 * KiB,
               reserved_shared_memory_per_block_bytes=0, shared_memory_allocation_unit_bytes=256),
    CudaLimits((8, 0), "A100", max_threads_per_sm=2048, max_blocks_per_sm=32,
               max_warps_per_sm=64, max_threads_per_block=1024, registers_per_sm=64 * 1024,
               max_registers_per_block=64 * 1024, max_registers_per_thread=255,
               shared_memory_per_sm_bytes=164 * KiB, max_shared_memory_per_block_bytes=163 * KiB,
               reserved_shared_memory_per_block_bytes=1 * KiB),
    CudaLimits((8, 6), "RTX 3090, A40, A10", max_threads_per_sm=1536, max_blocks_per_sm=16,
               max_warps_per_sm=48, max_threads_per_block=1024, registers_per_sm=64 * 1024,
               max_registers_per_block=64 * 1024, max_registers_per_thread=255,
               shared_memory_per_sm_bytes=100 * KiB, max_shared_memory_per_block_bytes=99 * KiB,
               reserved_shared_memory_per_block_bytes=1 * KiB),
    CudaLimits((8, 9), "L4, L40S, RTX 4090", max_threads_per_sm=1536, max_blocks_per_sm=24,
               max_warps_per_sm=48, max_threads_per_block=1024, registers_per_sm=64 * 1024,
               max_registers_per_block=64 * 1024, max_registers_per_thread=255,
               shared_memory_per_sm_bytes=100 * KiB, max_shared_memory_per_block_bytes=99 * KiB,
               reserved_shared_memory_per_block_bytes=1 * KiB),
    CudaLimits((9, 0), "H100, H200", max_threads_per_sm=2048, max_blocks_per_sm=32,
               max_warps_per_sm=64, max_threads_per_block=1024, registers_per_sm=64 * 1024,
               max_registers_per_block=64 * 1024, max_registers_per_thread=255,
               shared_memory_per_sm_bytes=228 * KiB, max_shared_memory_per_block_bytes=227 * KiB,
               reserved_shared_memory_per_block_bytes=1 * KiB),
    CudaLimits((10, 0), "B200, GB200", max_threads_per_sm=2048, max_blocks_per_sm=32,
               max_warps_per_sm=64, max_threads_per_block=1024, registers_per_sm=64 * 1024,
               max_registers_per_block=64 * 1024, max_registers_per_thread=255,
               shared_memory_per_sm_bytes=228 * KiB, max_shared_memory_per_block_bytes=227 * KiB,
               reserved_shared_memory_per_block_bytes=1 * KiB),
]})  # fmt: skip


def parse_cc(value: object) -> tuple[int, int]:
    """A compute capability as ``(major, minor)`` from ``(9, 0)``, ``"9.0"`` or ``9.0``."""
    if isinstance(value, tuple) and len(value) == 2 and all(isinstance(v, int) for v in value):
        return value
    if isinstance(value, str | float) and not isinstance(value, bool):
        text = f"{value:.1f}" if isinstance(value, float) else value.strip()
        major, _, minor = text.partition(".")
        if major.isdigit() and minor.isdigit():
            return int(major), int(minor)
    return (-1, -1)


def limits(cc: object) -> CudaLimits:
    """The row of compute capability ``cc`` (``"9.0"``, ``9.0`` or ``(9, 0)``); ValueError lists them."""
    key = parse_cc(cc)
    if key not in LIMITS:
        shown = ", ".join(row.label for row in LIMITS.values())
        raise ValueError(f"compute capability must be one of {shown}; got {cc!r}")
    return LIMITS[key]


__all__ = ["CACHE_LINE_BYTES", "LIMITS", "SECTOR_BYTES", "SOURCE", "SOURCE_MEMORY", "WARP_SIZE",
           "CudaLimits", "limits", "parse_cc"]  # fmt: skip
