"""course.facts.hardware.interconnects: NVLink totals count both directions, PCIe x16 follows
from lane rate and encoding (PCI-SIG base specifications)."""

from __future__ import annotations

import pytest

from course.facts.hardware import GPUS, INTERCONNECTS


def test_nvlink_totals_are_both_directions():
    assert (
        INTERCONNECTS["nvlink3"].bidirectional_bandwidth_bytes_per_s
        == GPUS["a100-80gb-sxm"].nvlink_bandwidth_bytes_per_s
    )
    assert (
        INTERCONNECTS["nvlink4"].bidirectional_bandwidth_bytes_per_s
        == GPUS["h100-sxm"].nvlink_bandwidth_bytes_per_s
    )


def test_pcie_x16_bandwidth_follows_from_lane_rate_and_encoding():
    # 16 lanes x transfer rate x 128/130 encoding / 8 bits (PCI-SIG base specifications).
    for key, gt_per_s in (("pcie3", 8e9), ("pcie4", 16e9), ("pcie5", 32e9)):
        derived = 16 * gt_per_s * 128 / 130 / 8
        assert INTERCONNECTS[key].bandwidth_bytes_per_s == pytest.approx(derived, rel=0.01)
