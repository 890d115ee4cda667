"""course.calculators.occupancy (lesson 11) against published cases, each cited."""

from __future__ import annotations

import pytest
from hypothesis import assume, given
from hypothesis import strategies as st

from course.calculators import occupancy
from course.facts import cuda_limits
from course.facts.units import KiB


def test_best_practices_guide_37_registers_on_7_0():
    # CUDA C++ Best Practices Guide, "Calculating Occupancy": on compute capability 7.0, 128-thread
    # blocks with 37 registers per thread give 75 % occupancy with 12 active blocks per SM;
    # 320-thread blocks with the same 37 registers give 63 %, only four blocks resident.
    small = occupancy.occupancy(128, 37, 0, compute_capability="7.0")
    assert (small.resident_blocks, small.occupancy_fraction) == (12, 0.75)
    assert small.limited_by == "registers"
    large = occupancy.occupancy(320, 37, 0, compute_capability="7.0")
    assert large.resident_blocks == 4
    assert large.occupancy_fraction == 40 / 64  # 62.5 %, which the guide rounds to 63 %


def test_programming_guide_64_vs_65_registers_with_512_threads():
    # CUDA C++ Programming Guide, "Multiprocessor Level": with 512-thread blocks and 64 registers
    # per thread two blocks (32 warps) fit the 64K-register file exactly; "as soon as the kernel
    # uses one more register, only one block (i.e., 16 warps) can be resident".
    assert occupancy.occupancy(512, 64, compute_capability="8.0").resident_warps == 32
    one_more = occupancy.occupancy(512, 65, compute_capability="8.0")
    assert (one_more.resident_blocks, one_more.resident_warps) == (1, 16)
    assert one_more.limited_by == "registers"


def test_shared_memory_limit_derived_by_hand_on_a100():
    # 48 KiB per block + 1 KiB reserved = 49 KiB; 164 KiB per SM holds 3 such blocks (Programming
    # Guide table for 8.0): 3 x 8 warps = 24 of 64 warps.
    r = occupancy.occupancy(256, 32, 48 * KiB, compute_capability="8.0")
    assert (r.resident_blocks, r.resident_warps, r.limited_by) == (3, 24, "shared memory")
    assert r.occupancy_fraction == 24 / 64


def test_block_count_limit_binds_for_tiny_blocks():
    # 32-thread blocks: 32 blocks per SM on 9.0 = 32 warps = 50 % (the max-blocks row of the table);
    # 8.6 allows only 16 blocks.
    assert occupancy.occupancy(32, 16, compute_capability="9.0").limited_by == "blocks per SM"
    assert occupancy.occupancy(32, 16, compute_capability="9.0").occupancy_fraction == 0.5
    assert occupancy.occupancy(32, 16, compute_capability="8.6").resident_blocks == 16


def test_full_occupancy_with_1024_threads_and_32_registers():
    r = occupancy.occupancy(1024, 32, compute_capability="9.0")
    # 2 blocks x 32 warps = 64 warps: the warp limit binds (registers tie: 64 x 1,024 = 64K).
    assert (r.resident_blocks, r.occupancy_fraction) == (2, 1.0)
    assert r.limited_by == "threads (warps) per SM" and r.blocks_limit_by_registers == 2


def test_a_block_that_cannot_launch_is_refused():
    with pytest.raises(ValueError, match="cannot launch"):
        occupancy.occupancy(1024, 255, compute_capability="9.0")
    assert len(occupancy.occupancy_sweep([1024], [32, 255])) == 1


def test_zero_resident_blocks_is_a_launch_failure_not_an_occupancy():
    """544 threads x 120 registers on 9.0: 17 warps x 3,840 registers = 65,280 <= 65,536 per
    block, but the register file gives warps in groups of 4 (16 of 3,840), so no SM holds one
    block: the CUDA Occupancy Calculator shows 0 blocks and the launch fails with
    cudaErrorLaunchOutOfResources."""
    with pytest.raises(ValueError, match="cannot launch.*cudaErrorLaunchOutOfResources"):
        occupancy.occupancy(544, 120, compute_capability="9.0")
    assert occupancy.occupancy(512, 120, compute_capability="9.0").resident_blocks == 1
    assert occupancy.occupancy_sweep([544], [120]) == []


@pytest.mark.parametrize(
    "args, label",
    [
        ((0, 32, 0), "threads per block"),
        ((2048, 32, 0), "threads per block"),
        ((128, 0, 0), "registers per thread"),
        ((128, 256, 0), "registers per thread"),
        ((128, 32, -1), "shared memory per block"),
        ((128, 32, 10**9), "shared memory per block"),
        ((float("nan"), 32, 0), "threads per block"),
        ((128, float("inf"), 0), "registers"),
    ],
)
def test_bad_input_names_the_label(args, label):
    with pytest.raises(ValueError, match=label):
        occupancy.occupancy(*args)


@given(
    st.sampled_from(sorted(cuda_limits.LIMITS)),
    st.integers(1, 1024),
    st.integers(1, 128),
    st.integers(0, 48 * 1024),
)
def test_more_registers_or_shared_memory_never_raise_occupancy(cc, threads, regs, smem):
    def blocks(t, r, m):  # 0 where the launch fails
        try:
            return occupancy.occupancy(t, r, m, compute_capability=cc).resident_blocks
        except ValueError as err:
            assert "cannot launch" in str(err)
            return 0

    assume(blocks(threads, regs, smem) > 0)
    base = occupancy.occupancy(threads, regs, smem, compute_capability=cc)
    assert 0 < base.occupancy_fraction <= 1
    assert base.resident_warps <= base.max_warps
    assert blocks(threads, regs + 8, smem) <= base.resident_blocks
    assert blocks(threads, regs, smem + 4096) <= base.resident_blocks
