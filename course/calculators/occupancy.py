"""Occupancy: how many blocks and warps of a kernel one SM holds at once, and what stops more.

An SM keeps every resident warp's registers and every resident block's shared memory on chip, so
the number of blocks that fit is the smallest of four limits: blocks per SM, warps (threads) per
SM, registers and shared memory. :func:`occupancy` computes each, names the one that binds and
gives occupancy = resident warps / the SM's maximum warps. The rules are those of NVIDIA's CUDA
Occupancy Calculator and ``cudaOccupancyMaxActiveBlocksPerMultiprocessor``:

- warps per block = ceil(threads per block / 32);
- registers are allocated per warp in units of 256: ceil(32 x registers per thread, 256); the
  register file holds floor(registers per SM / that) warps, rounded down to a multiple of the warp
  allocation granularity (4: one per SM sub-partition), and blocks = floor(those warps / warps
  per block);
- shared memory per block is rounded up to the allocation unit after adding the 1 KB the system
  reserves per block (8.0 and later); blocks = floor(shared memory per SM / that).

The limits come from ``course.facts.cuda_limits`` (the Programming Guide's table). Higher occupancy
hides latency (more warps to switch to while one waits for memory) but is not always faster: a
kernel that keeps more in registers per thread (register tiling in a matmul) can do more useful
work per load with fewer warps (V. Volkov, "Better performance at lower occupancy", GTC 2010).
Used by lesson 11.
"""

from __future__ import annotations

from dataclasses import dataclass

from course.facts import cuda_limits, validate
from course.facts.report import Report

#: The resources that can bind, in the order :func:`occupancy` reports them.
RESOURCES = ("blocks per SM", "threads (warps) per SM", "registers", "shared memory")


def _ceil_to(value: int, unit: int) -> int:
    return -(-value // unit) * unit


@dataclass(frozen=True)
class Occupancy(Report):
    """Blocks and warps of one kernel configuration resident on one SM."""

    _title = "Occupancy of one SM"

    compute_capability: str
    threads_per_block: int
    registers_per_thread: int
    shared_memory_per_block_bytes: int
    warps_per_block: int
    blocks_limit_by_blocks: int
    blocks_limit_by_warps: int
    blocks_limit_by_registers: int
    blocks_limit_by_smem: int
    resident_blocks: int
    resident_warps: int
    max_warps: int
    occupancy_fraction: float
    limited_by: str


def occupancy(
    threads_per_block: int,
    registers_per_thread: int,
    shared_memory_per_block_bytes: int = 0,
    *,
    compute_capability: object = "9.0",
) -> Occupancy:
    """Resident blocks and warps per SM for a kernel on a GPU of ``compute_capability``.

    ``threads_per_block`` (1-1024), ``registers_per_thread`` (1-255, as ``nvcc --resource-usage``
    or ``ncu`` report them), ``shared_memory_per_block_bytes`` (static + dynamic, up to the
    opt-in maximum). A configuration that cannot launch raises ``ValueError``: a block needs more
    registers than a block may have, or no SM can hold a single block (544 threads x 120 registers
    on compute capability 9.0: 17 warps of 3,840 registers fit in 65,536, but registers go to
    warps in groups of 4, so an SM holds 16 of them: zero blocks, and CUDA refuses the launch).
    ``limited_by`` names the binding resource; ties name the first in :data:`RESOURCES`. Source:
    CUDA Occupancy Calculator rules, limits from ``course.facts.cuda_limits``.
    """
    lim = cuda_limits.limits(compute_capability)
    threads = validate.positive_int(
        "threads per block", threads_per_block, maximum=lim.max_threads_per_block
    )
    regs = validate.positive_int(
        "registers per thread", registers_per_thread, maximum=lim.max_registers_per_thread
    )
    smem = validate.positive_int(
        "shared memory per block (bytes)",
        shared_memory_per_block_bytes,
        minimum=0,
        maximum=lim.max_shared_memory_per_block_bytes,
    )
    warps_per_block = -(-threads // cuda_limits.WARP_SIZE)
    regs_per_warp = _ceil_to(regs * cuda_limits.WARP_SIZE, lim.register_allocation_unit)
    if regs_per_warp * warps_per_block > lim.max_registers_per_block:
        raise ValueError(
            f"registers per thread x threads per block must be <= "
            f"{lim.max_registers_per_block:,} registers per block on {lim.label}; got "
            f"{regs} x {threads} (allocated as {regs_per_warp * warps_per_block:,}): "
            "the kernel cannot launch"
        )
    by_blocks = lim.max_blocks_per_sm
    by_warps = lim.max_warps_per_sm // warps_per_block
    warps_by_regs = lim.registers_per_sm // regs_per_warp
    warps_by_regs -= warps_by_regs % lim.warp_allocation_granularity
    by_regs = warps_by_regs // warps_per_block
    smem_alloc = _ceil_to(
        smem + lim.reserved_shared_memory_per_block_bytes, lim.shared_memory_allocation_unit_bytes
    )
    by_smem = lim.shared_memory_per_sm_bytes // smem_alloc if smem_alloc else by_blocks
    limits = (by_blocks, by_warps, by_regs, by_smem)
    blocks = min(limits)
    if blocks == 0:  # no SM can hold one block: CUDA refuses the launch
        raise ValueError(
            f"{regs} registers per thread x {threads} threads per block: not one block fits on "
            f"an SM of compute capability {lim.label} ({RESOURCES[limits.index(0)]}: the "
            f"register file holds {warps_by_regs} warps in groups of "
            f"{lim.warp_allocation_granularity}, a block needs {warps_per_block}); the kernel "
            "cannot launch (CUDA returns cudaErrorLaunchOutOfResources, 'too many resources "
            "requested for launch')"
        )
    return Occupancy(
        compute_capability=lim.label,
        threads_per_block=threads,
        registers_per_thread=regs,
        shared_memory_per_block_bytes=smem,
        warps_per_block=warps_per_block,
        blocks_limit_by_blocks=by_blocks,
        blocks_limit_by_warps=by_warps,
        blocks_limit_by_registers=by_regs,
        blocks_limit_by_smem=by_smem,
        resident_blocks=blocks,
        resident_warps=blocks * warps_per_block,
        max_warps=lim.max_warps_per_sm,
        occupancy_fraction=blocks * warps_per_block / lim.max_warps_per_sm,
        limited_by=RESOURCES[limits.index(blocks)],
    )


def occupancy_sweep(
    threads_per_block: list[int] | tuple[int, ...],
    registers_per_thread: list[int] | tuple[int, ...],
    shared_memory_per_block_bytes: int = 0,
    *,
    compute_capability: object = "9.0",
) -> list[Occupancy]:
    """:func:`occupancy` over every (threads, registers) pair, skipping those that cannot launch."""
    out = []
    for t in threads_per_block:
        for r in registers_per_thread:
            try:
                out.append(
                    occupancy(
                        t, r, shared_memory_per_block_bytes, compute_capability=compute_capability
                    )
                )
            except ValueError as err:
                if "cannot launch" not in str(err):
                    raise
    return out


__all__ = ["RESOURCES", "Occupancy", "occupancy", "occupancy_sweep"]
