"""course.facts.hardware.mig: MIG profiles against NVIDIA's MIG user guide and, for the H100, the
H100 SXM reference run of 2026-11-22 (``nvidia-smi mig -lgip`` in machine.json)."""

from __future__ import annotations

import re

import pytest

from course.facts.data import reference
from course.facts.hardware import (
    GPUS,
    MIG_COMPUTE_SLICES,
    MIG_MEMORY_SLICES,
    MIG_PROFILES,
    mig_profiles,
)
from course.facts.units import GiB


def _lgip_rows(text: str) -> dict[str, tuple[int, float, int]]:
    """name -> (instances, GiB, SMs) from ``nvidia-smi mig -lgip`` output."""
    rows = {}
    for m in re.finditer(r"MIG (\S+)\s+\d+\s+\d+/(\d+)\s+([\d.]+)\s+\w+\s+(\d+)", text):
        rows[m.group(1)] = (int(m.group(2)), float(m.group(3)), int(m.group(4)))
    return rows


def test_h100_mig_profiles_match_the_reference_runs_nvidia_smi():
    measured = _lgip_rows(reference.load(reference.H100, "machine")["nvidia_smi_mig_lgip"])
    profiles = mig_profiles("h100-sxm")
    assert {p.name for p in profiles} == {n for n in measured if "+me" not in n}
    for p in profiles:
        instances, gib, sms = measured[p.name]
        assert (p.instances, p.sms) == (instances, sms)
        assert p.memory_bytes == pytest.approx(gib * GiB)


def test_seven_1g_slices_use_112_of_132_sms_on_an_h100():
    one_g = next(p for p in mig_profiles("h100-sxm") if p.name == "1g.10gb")
    assert one_g.instances * one_g.sms == 112 and GPUS["h100-sxm"].sms == 132


def test_a100_mig_uses_98_of_108_sms_and_14_per_slice():
    """MIG user guide: 1/7 of the SMs per compute slice; nvidia-smi shows 14 and 98 on an A100."""
    for key in ("a100-40gb-sxm", "a100-80gb-sxm"):
        by_name = {p.name: p for p in mig_profiles(key)}
        full = max(by_name.values(), key=lambda p: p.sms)
        assert full.sms == 98 and full.compute_slices == 7
        assert all(p.sms == 14 * p.compute_slices for p in by_name.values())


@pytest.mark.parametrize("key", list(MIG_PROFILES))
def test_every_profile_placement_fits_the_slices(key):
    full = max(mig_profiles(key), key=lambda p: p.memory_slices)
    assert full.memory_slices == MIG_MEMORY_SLICES and full.sms <= GPUS[key].sms
    for p in mig_profiles(key):
        assert p.compute_slices <= MIG_COMPUTE_SLICES
        assert all(start + p.memory_slices <= MIG_MEMORY_SLICES for start in p.placements)
        assert len(p.placements) >= p.instances
        # memory in proportion to the memory slices (MIG user guide: 1/8 per slice)
        assert p.memory_bytes <= full.memory_bytes * p.memory_slices / MIG_MEMORY_SLICES * 1.001


def test_mig_profiles_refuse_gpus_without_a_table():
    with pytest.raises(ValueError, match="h100-sxm"):
        mig_profiles("rtx-4090")
    assert mig_profiles("NVIDIA H100 SXM 80GB") == mig_profiles("h100-sxm")
