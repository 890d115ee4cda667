"""course.facts.hardware.systems: DGX systems, their fabrics, the SuperPOD architecture and the
GB200 NVL72 rack, against the sources each row names (DGX user guides and datasheets, the DGX
SuperPOD reference architecture, NVIDIA's GB200 NVL72 spec)."""

from __future__ import annotations

import pytest

from course.facts import hardware
from course.facts.hardware import (
    GPUS,
    SUPERPODS,
    SYSTEM_FABRICS,
    SYSTEMS,
)
from course.facts.units import GiB


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


def test_dgx_systems_point_at_registry_gpus():
    for system in SYSTEMS.values():
        assert system.gpu in GPUS and system.gpus == 8 and system.source


def test_dgx_h100_power_and_memory_match_the_user_guide():
    dgx = SYSTEMS["dgx-h100"]
    assert dgx.max_power_watts == 10_200
    assert dgx.gpus * GPUS[dgx.gpu].memory_bytes == 640 * GiB  # the guide's "640GB" is 8 x 80 GiB


def test_gb200_nvl72_per_gpu_figures_match_the_b200_and_nvlink_5():
    # NVIDIA GB200 NVL72 spec (2024): 576 TB/s HBM and 130 TB/s NVLink for 72 GPUs; B200 (DGX B200
    # datasheet): 8 TB/s HBM and 1.8 TB/s NVLink 5 per GPU. The rack is one 72-GPU NVLink domain.
    from course.facts.hardware import RACKS

    rack, b200 = RACKS["gb200-nvl72"], GPUS["b200"]
    assert rack.gpus == 72 and rack.cooling == "liquid"
    assert rack.per_gpu_memory_bandwidth_bytes_per_s == pytest.approx(
        b200.memory_bandwidth_bytes_per_s
    )
    assert rack.per_gpu_nvlink_bandwidth_bytes_per_s == pytest.approx(
        b200.nvlink_bandwidth_bytes_per_s, rel=0.01
    )
    assert rack.dense_flop_per_s["fp8"] / rack.gpus == pytest.approx(5e15)
    assert rack.dense_flop_per_s["fp8"] / rack.gpus >= b200.peak_flop_per_s("fp8")
    assert (
        rack.dense_flop_per_s["fp4"]
        == 2 * rack.dense_flop_per_s["fp8"]
        == 4 * rack.dense_flop_per_s["bf16"]
    )
    assert rack.average_watts == pytest.approx(150e3)
