"""course.facts.cuda_limits (lesson 11): the per-SM limits against a real H100 and each other."""

from __future__ import annotations

import pytest

from course.facts import cuda_limits
from course.facts.data import reference


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
