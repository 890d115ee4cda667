"""Lesson 08's facts: B200 and GH200 rows, Grace, MIG profiles, DGX fabric, SuperPOD architecture.

Expected figures are from the sources each row names (datasheets, NVIDIA's MIG user guide, the
DGX SuperPOD reference architecture) and, for the H100's MIG profiles, from the H100 SXM
reference run of 2026-11-22 (``nvidia-smi mig -lgip`` in machine.json).
"""

from __future__ import annotations

import re

import pytest

from course.facts import hardware
from course.facts.data import reference
from course.facts.hardware import (
    CPUS,
    GPUS,
    INTERCONNECTS,
    MIG_COMPUTE_SLICES,
    MIG_MEMORY_SLICES,
    MIG_PROFILES,
    SUPERPODS,
    SYSTEM_FABRICS,
    SYSTEMS,
    mig_profiles,
)
from course.facts.units import GB, GiB

NEW_GPUS = ["b200", "gh200-96gb", "gh200-144gb"]


@pytest.mark.parametrize("key", NEW_GPUS)
def test_new_rows_are_sourced_binary_and_sparse_is_twice_dense(key):
    g = GPUS[key]
    assert g.source and g.memory_type.startswith("HBM") and g.host_link in INTERCONNECTS
    assert g.memory_bytes % GiB == 0  # binary sizes: nvidia-smi shows 81,559 MiB of an "80GB" H100
    for dtype, sparse in g.sparse_flop_per_s.items():
        assert sparse == pytest.approx(2 * g.dense_flop_per_s[dtype], rel=0.015)


def test_b200_matches_the_dgx_b200_datasheet_divided_by_eight():
    """DGX B200 datasheet: 8 GPUs, 1,440 GB, 64 TB/s, 72 PF FP8 (sparse), 14.4 TB/s NVLink."""
    b = GPUS["b200"]
    assert 8 * b.memory_bytes / GiB == 1440
    assert 8 * b.memory_bandwidth_bytes_per_s == 64e12
    assert 8 * b.peak_flop_per_s("fp8", sparse=True) == 72e15
    assert 8 * b.nvlink_bandwidth_bytes_per_s == 14.4e12
    assert b.peak_flop_per_s("bf16") == pytest.approx(2.25e15)  # HGX B200: 4.5 PF sparse
    assert (
        b.peak_flop_per_s("fp32") == 75e12 and b.peak_flop_per_s("fp64") == 37e12
    )  # HGX B200 spec
    with pytest.raises(ValueError, match="fp8"):
        b.peak_flop_per_s("fp4")  # FP4 is not among the registry's dtypes


def test_gh200_is_an_h100_with_more_memory_behind_nvlink_c2c():
    """GH200 datasheet: 96 GB HBM3 at 4 TB/s or 144 GB HBM3e at 4.9 TB/s; NVLink-C2C 900 GB/s;
    *AI Infrastructure* draws it with an 80 GB, 3.35 TB/s H100 (wrong)."""
    h100 = GPUS["h100-sxm"]
    for key, gib, tbps in (("gh200-96gb", 96, 4.0), ("gh200-144gb", 144, 4.9)):
        g = GPUS[key]
        assert g.memory_bytes == gib * GiB and g.memory_bandwidth_bytes_per_s == tbps * 1e12
        assert dict(g.dense_flop_per_s) == dict(h100.dense_flop_per_s) and g.sms == h100.sms
        assert g.host_link == "nvlink-c2c"
    c2c = INTERCONNECTS["nvlink-c2c"]
    assert c2c.bidirectional_bandwidth_bytes_per_s == 900 * GB
    assert c2c.bandwidth_bytes_per_s / INTERCONNECTS[
        "pcie5"
    ].bandwidth_bytes_per_s == pytest.approx(7.1, abs=0.05)


def test_grace_has_72_neoverse_v2_cores_and_480_gb_not_960():
    grace = CPUS["grace"]
    assert (grace.cores, grace.core) == (72, "Arm Neoverse V2")
    assert grace.memory_bytes == 480 * GB and grace.memory_type == "LPDDR5X"
    assert "960" in grace.notes  # the two-CPU Grace Superchip's figure, explained


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


def test_dgx_fabrics_have_one_compute_nic_per_gpu():
    """DGX H100 User Guide: 8 ConnectX-7 at 400 Gb/s, 4 NVSwitch; DGX A100: 8 x 200 Gb/s, 6."""
    for key, fabric in SYSTEM_FABRICS.items():
        assert fabric.compute_nics == SYSTEMS[key].gpus and fabric.source
    assert SYSTEM_FABRICS["dgx-h100"].nvswitches == 4
    assert SYSTEM_FABRICS["dgx-h100"].compute_nic_bandwidth_bytes_per_s * 8 == 400e9
    assert SYSTEM_FABRICS["dgx-a100-640gb"].nvswitches == 6


def test_superpod_architecture_is_32_dgx_h100_per_su_on_8_rails():
    arch = SUPERPODS["dgx-superpod-h100"]
    assert (arch.systems_per_su, arch.rails, arch.switch_ports) == (32, 8, 64)
    assert arch.system in SYSTEMS and hardware.SYSTEMS[arch.system].gpus == 8
