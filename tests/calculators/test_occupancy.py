"""Lesson 11's calculators: CUDA limits, occupancy, coalescing and divergence, against published
cases (each test cites its source) and the H100 reference run."""

from __future__ import annotations

import pytest
from hypothesis import assume, given
from hypothesis import strategies as st

from course.calculators import coalescing, divergence, occupancy
from course.facts import cuda_limits
from course.facts.data import reference
from course.facts.units import KiB

# --- facts ----------------------------------------------------------------------------------


def test_h100_reference_run_device_properties_match_the_9_0_row():
    # torch.cuda.get_device_properties on the H100 of the reference run (machine.json).
    props = reference.load(reference.H100, "machine")["device_properties"]
    lim = cuda_limits.limits((props["major"], props["minor"]))
    assert lim.max_threads_per_sm == props["max_threads_per_multi_processor"] == 2048
    assert lim.registers_per_sm == props["regs_per_multiprocessor"]
    assert lim.shared_memory_per_sm_bytes == props["shared_memory_per_multiprocessor"]
    assert lim.max_shared_memory_per_block_bytes == props["shared_memory_per_block_optin"]
    assert lim.max_threads_per_block == props["max_threads_per_block"]
    assert props["warp_size"] == cuda_limits.WARP_SIZE


def test_every_row_is_consistent():
    for lim in cuda_limits.LIMITS.values():
        assert lim.max_warps_per_sm * cuda_limits.WARP_SIZE == lim.max_threads_per_sm
        assert (
            lim.max_shared_memory_per_block_bytes + lim.reserved_shared_memory_per_block_bytes
            == lim.shared_memory_per_sm_bytes
        )
        assert "Programming Guide" in lim.source


def test_shared_memory_per_sm_agrees_with_the_anatomy_registry():
    from course.facts import hardware

    for key, cc in (("a100-80gb-sxm", (8, 0)), ("h100-sxm", (9, 0))):
        assert (
            hardware.anatomy(key).max_shared_memory_per_sm_bytes
            == cuda_limits.limits(cc).shared_memory_per_sm_bytes
        )


@pytest.mark.parametrize("value", ["9.0", 9.0, (9, 0), " 9.0 "])
def test_limits_accepts_the_usual_spellings(value):
    assert cuda_limits.limits(value).cc == (9, 0)


@pytest.mark.parametrize("value", ["7.5", "x", None, float("nan"), (9,), True])
def test_unknown_compute_capability_names_the_choices(value):
    with pytest.raises(ValueError, match="compute capability must be one of 7.0, 8.0"):
        cuda_limits.limits(value)


# --- occupancy ------------------------------------------------------------------------------


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
    assume(-(-threads // 32) * -(-(regs + 8) * 32 // 256) * 256 <= 65536)  # all three launch
    base = occupancy.occupancy(threads, regs, smem, compute_capability=cc)
    assert 0 <= base.occupancy_fraction <= 1
    assert base.resident_warps <= base.max_warps
    more_regs = occupancy.occupancy(threads, regs + 8, smem, compute_capability=cc)
    more_smem = occupancy.occupancy(threads, regs, smem + 4096, compute_capability=cc)
    assert more_regs.resident_blocks <= base.resident_blocks
    assert more_smem.resident_blocks <= base.resident_blocks


# --- coalescing -----------------------------------------------------------------------------


def test_best_practices_guide_coalescing_cases():
    # CUDA C++ Best Practices Guide 9.2.1: 32 adjacent 4-byte words aligned -> four 32-byte
    # sectors (9.2.1.1); the same pattern misaligned -> five sectors (9.2.1.2); stride 2 ->
    # 50 % load/store efficiency, "half the elements in the transaction are not used" (9.2.1.4).
    aligned = coalescing.warp_access(4, 1, 0)
    assert (aligned.sectors, aligned.lines, aligned.efficiency) == (4, 1, 1.0)
    shifted = coalescing.warp_access(4, 1, 4)
    assert (shifted.sectors, shifted.lines, shifted.efficiency) == (5, 2, 0.8)
    assert coalescing.warp_access(4, 2, 0).efficiency == 0.5


def test_large_stride_moves_one_sector_per_thread():
    r = coalescing.warp_access(4, 32, 0)
    assert (r.sectors, r.lines, r.moved_bytes, r.efficiency) == (32, 32, 1024, 0.125)
    assert coalescing.warp_access(4, 0, 0).sectors == 1  # a broadcast


def test_aos_vs_soa_and_row_vs_column():
    soa = coalescing.struct_field_access(4, 4, layout="soa")
    aos = coalescing.struct_field_access(4, 4, layout="aos", field_index=1)
    assert soa.efficiency == 1.0 and aos.efficiency == 0.25
    assert coalescing.matrix_walk(4, 1024, walk="row").sectors == 4
    assert coalescing.matrix_walk(4, 1024, walk="column").sectors == 32


def test_float4_loads_coalesce_to_512_bytes():
    r = coalescing.warp_access(16, 1, 0)
    assert (r.sectors, r.lines, r.efficiency) == (16, 4, 1.0)


@given(st.sampled_from([1, 2, 4, 8, 16]), st.integers(0, 64), st.integers(0, 256))
def test_efficiency_is_a_fraction_and_sectors_bound_the_bytes(size, stride, offset):
    r = coalescing.warp_access(size, stride, offset)
    assert 0 < r.efficiency <= 1
    assert r.moved_bytes >= r.used_bytes
    assert r.lines <= r.sectors <= 4 * r.lines


@pytest.mark.parametrize(
    "kwargs, label",
    [
        ({"element_bytes": 0}, "element size"),
        ({"element_bytes": 3.5}, "element size"),
        ({"stride_elements": -1}, "stride"),
        ({"offset_bytes": float("nan")}, "offset"),
    ],
)
def test_coalescing_bad_input(kwargs, label):
    with pytest.raises(ValueError, match=label):
        coalescing.warp_access(**kwargs)


# --- divergence -----------------------------------------------------------------------------


def test_odd_even_branch_serialises_both_paths():
    # Programming Guide, SIMT Architecture: a diverged warp executes each path taken.
    r = divergence.branch(divergence.lane_mask("tid % 2 == 0"), then_cost=10, else_cost=10)
    assert (r.lanes_then, r.lanes_else, r.diverged) == (16, 16, True)
    assert (r.issued_cost, r.slowdown, r.efficiency) == (20, 2.0, 0.5)


def test_tid_below_16_diverges_only_in_warp_0():
    assert divergence.branch(divergence.lane_mask("tid < 16", warp=0)).diverged
    assert not divergence.branch(divergence.lane_mask("tid < 16", warp=1)).diverged


def test_warp_uniform_branch_costs_one_path():
    r = divergence.branch(divergence.lane_mask("tid // 32 % 2 == 0", warp=1), 10, 3)
    assert (r.diverged, r.issued_cost, r.efficiency) == (False, 3, 1.0)


def test_data_dependent_branch_almost_always_diverges():
    assert divergence.data_dependent_divergence(0.5) == pytest.approx(1 - 2 * 0.5**32)
    assert divergence.data_dependent_divergence(0.0) == 0.0
    assert divergence.data_dependent_divergence(0.01) == pytest.approx(1 - 0.99**32)


def test_divergence_bad_input():
    with pytest.raises(ValueError, match="32 booleans"):
        divergence.branch([True] * 31)
    with pytest.raises(ValueError, match="branch pattern"):
        divergence.lane_mask("tid % 3")
    with pytest.raises(ValueError, match="probability"):
        divergence.data_dependent_divergence(float("nan"))


# --- kernel traffic -------------------------------------------------------------------------


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
