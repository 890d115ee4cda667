"""course.calculators.coalescing (lesson 11) against published cases, each cited."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from course.calculators import coalescing


def test_best_practices_guide_coalescing_cases():
    # CUDA C++ Best Practices Guide, "Coalesced Access to Global Memory": 32 adjacent 4-byte words
    # aligned -> four 32-byte sectors ("A Simple Access Pattern"); the same pattern misaligned ->
    # five sectors ("A Sequential but Misaligned Access Pattern"); stride 2 -> 50 % load/store
    # efficiency, "half the elements in the transaction are not used" ("Strided Accesses").
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
