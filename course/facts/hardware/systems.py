"""Systems of GPUs as sold: DGX servers (``SYSTEMS``), their fabric (``SYSTEM_FABRICS``), the DGX
SuperPOD reference architecture (``SUPERPODS``) and rack-scale systems (``RACKS``: GB200 NVL72)."""

from __future__ import annotations

from dataclasses import dataclass
from types import MappingProxyType

from course.facts.units import GBIT_PER_S


@dataclass(frozen=True)
class System:
    """A multi-GPU server as sold (DGX)."""

    key: str
    name: str
    gpu: str  # key in GPUS
    gpus: int
    cpu: str
    cpu_cores: int
    system_memory_bytes: float
    storage_bytes: float
    max_power_watts: float
    rack_units: int
    source: str
    notes: str = ""


SYSTEMS: MappingProxyType = MappingProxyType({s.key: s for s in [
    System("dgx-a100-640gb", "NVIDIA DGX A100 (640 GB)", gpu="a100-80gb-sxm", gpus=8,
           cpu="2x AMD EPYC 7742", cpu_cores=128, system_memory_bytes=2e12, storage_bytes=30e12,
           max_power_watts=6500, rack_units=6, source="NVIDIA DGX A100 datasheet (2020)",
           notes="The 320 GB model (8x A100 40GB) has 1 TB RAM and 15 TB storage."),
    System("dgx-h100", "NVIDIA DGX H100", gpu="h100-sxm", gpus=8,
           cpu="2x Intel Xeon Platinum 8480C", cpu_cores=112, system_memory_bytes=2e12,
           storage_bytes=30.72e12, max_power_watts=10200, rack_units=8,
           source="NVIDIA DGX H100/H200 User Guide (2024)"),
    System("dgx-h200", "NVIDIA DGX H200", gpu="h200-sxm", gpus=8,
           cpu="2x Intel Xeon Platinum 8480C", cpu_cores=112, system_memory_bytes=2e12,
           storage_bytes=30.72e12, max_power_watts=10200, rack_units=8,
           source="NVIDIA DGX H100/H200 User Guide (2024)"),
]})  # fmt: skip


def system(key_or_system: str | System) -> System:
    """Look up a GPU system (``"dgx-h100"``) by key; ValueError lists the choices."""
    if isinstance(key_or_system, System):
        return key_or_system
    if isinstance(key_or_system, str) and key_or_system in SYSTEMS:
        return SYSTEMS[key_or_system]
    raise ValueError(f"system must be one of {', '.join(SYSTEMS)}; got {key_or_system!r}")


# ---------------------------------------------------------------------------------------------
# DGX fabric (NVSwitch, compute NICs) and the DGX SuperPOD reference architecture
# ---------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class SystemFabric:
    """How a DGX's GPUs talk: NVSwitch chips inside, one compute NIC per GPU outside."""

    system: str  # key in SYSTEMS
    nvswitches: int
    nvswitch: str
    compute_nics: int
    compute_nic_bandwidth_bytes_per_s: float  # bytes/s per NIC, one direction
    compute_nic: str
    source: str
    notes: str = ""


SYSTEM_FABRICS: MappingProxyType = MappingProxyType({f.system: f for f in [
    SystemFabric("dgx-a100-640gb", nvswitches=6, nvswitch="NVSwitch (2nd generation)",
                 compute_nics=8, compute_nic_bandwidth_bytes_per_s=200 * GBIT_PER_S,
                 compute_nic="ConnectX-6 single-port HDR InfiniBand 200 Gb/s",
                 source="NVIDIA DGX A100 datasheet (2020) and User Guide",
                 notes="Plus 2 dual-port NICs for storage and the in-band network."),
    SystemFabric("dgx-h100", nvswitches=4, nvswitch="NVSwitch (3rd generation)",
                 compute_nics=8, compute_nic_bandwidth_bytes_per_s=400 * GBIT_PER_S,
                 compute_nic="ConnectX-7 NDR InfiniBand 400 Gb/s (in 4 OSFP cages, 2 per cage)",
                 source="NVIDIA DGX H100/H200 User Guide (2024); DGX H100 datasheet (2023)",
                 notes="*AI Infrastructure*'s '8x OSFP ports' are 4 OSFP cages of 2 x 400 Gb/s each; "
                       "storage and in-band management use 2 more dual-port NICs."),
    SystemFabric("dgx-h200", nvswitches=4, nvswitch="NVSwitch (3rd generation)",
                 compute_nics=8, compute_nic_bandwidth_bytes_per_s=400 * GBIT_PER_S,
                 compute_nic="ConnectX-7 NDR InfiniBand 400 Gb/s (in 4 OSFP cages, 2 per cage)",
                 source="NVIDIA DGX H100/H200 User Guide (2024)"),
]})  # fmt: skip


@dataclass(frozen=True)
class SuperPodArchitecture:
    """The DGX SuperPOD reference architecture's compute fabric, as its parts.

    A scalable unit (SU) is ``systems_per_su`` DGX systems. The compute fabric is
    rail-optimised: NIC *i* of every DGX in an SU goes to the same leaf switch (rail *i*), so
    ``rails`` leaf switches per SU, each with ``switch_ports / 2`` ports down to the systems and
    as many up. Up to ``switch_ports**2 / 2`` GPUs a two-tier (leaf-spine) fat tree suffices;
    beyond, a third (core) tier is added.
    """

    key: str
    system: str  # key in SYSTEMS
    systems_per_su: int
    rails: int  # compute NICs per system = leaf switches per SU
    switch: str
    switch_ports: int  # ports per switch at the NIC speed
    max_sus_tested: int
    source: str
    notes: str = ""


SUPERPODS: MappingProxyType = MappingProxyType({a.key: a for a in [
    SuperPodArchitecture(
        "dgx-superpod-h100", system="dgx-h100", systems_per_su=32, rails=8,
        switch="NVIDIA Quantum-2 QM9700 (64 x 400 Gb/s NDR ports)", switch_ports=64,
        max_sus_tested=4,
        source="NVIDIA DGX SuperPOD Reference Architecture featuring DGX H100 (RA-11333-001 "
               "V11, 2023-09-22): SUs of 32 DGX H100, rail-optimised NDR fabric, 4 SU fully "
               "tested (127 DGX + UFM, 38 racks), scales to 64 SU; switch counts per SU count in "
               "the DGX SuperPOD B200 RA's 'Larger DGX SuperPOD component counts' table (same SU "
               "and switch); NVIDIA Quantum-2 QM9700 datasheet (64 NDR ports)",
        notes="The 4-SU design has 127 DGX: one node position serves the fabric manager (UFM)."),
]})  # fmt: skip


# ---------------------------------------------------------------------------------------------
# Rack-scale systems: Blackwell's GB200 NVL72, the rack as the unit of design (lesson 08)
# ---------------------------------------------------------------------------------------------

SRC_GB200_NVL72 = (
    "NVIDIA GB200 NVL72 product page and specification table (announced GTC, March 2024; read "
    "2026): 36 Grace CPUs and 72 Blackwell GPUs in one liquid-cooled rack, one NVLink domain; "
    "up to 13.4 TB HBM3e at 576 TB/s; 130 TB/s of NVLink; Tensor Core FP4 1,440, FP8/FP6 720, "
    "INT8 720 (POPS), FP16/BF16 360, TF32 180 PFLOPS, all with sparsity (dense is half); "
    "NVIDIA DGX SuperPOD GB200 reference architecture (2024): 1.2 MW for a scalable unit of 8 racks"
)


@dataclass(frozen=True)
class Rack:
    """A rack sold as one system, whose GPUs share one NVLink domain. SI units; totals per rack."""

    key: str
    name: str
    gpu_architecture: str
    gpus: int  # in one NVLink domain
    cpus: int
    memory_bytes: float  # HBM, all GPUs, decimal as NVIDIA states it ("up to 13.4 TB")
    memory_bandwidth_bytes_per_s: float  # bytes/s, all GPUs
    nvlink_bandwidth_bytes_per_s: float  # bytes/s, all GPUs, both directions
    dense_flop_per_s: MappingProxyType  # dtype -> FLOP/s for the rack, without sparsity
    average_watts: float  # facility planning figure per rack (an average over a scalable unit)
    cooling: str
    source: str
    notes: str = ""

    @property
    def per_gpu_memory_bandwidth_bytes_per_s(self) -> float:
        return self.memory_bandwidth_bytes_per_s / self.gpus

    @property
    def per_gpu_nvlink_bandwidth_bytes_per_s(self) -> float:
        return self.nvlink_bandwidth_bytes_per_s / self.gpus


RACKS: MappingProxyType = MappingProxyType({r.key: r for r in [
    Rack("gb200-nvl72", "NVIDIA GB200 NVL72", gpu_architecture="Blackwell", gpus=72, cpus=36,
         memory_bytes=13.4e12, memory_bandwidth_bytes_per_s=576e12, nvlink_bandwidth_bytes_per_s=130e12,
         dense_flop_per_s=MappingProxyType({"fp4": 720e15, "fp8": 360e15, "int8": 360e15,
                                            "fp16": 180e15, "bf16": 180e15, "tf32": 90e15}),
         average_watts=1.2e6 / 8, cooling="liquid", source=SRC_GB200_NVL72,
         notes="Dense = half of NVIDIA's sparse figures. 150 kW is the reference architecture's "
               "1.2 MW per 8-rack scalable unit divided evenly (switches and cooling included), "
               "not one rack's nameplate. Per GPU: 8 TB/s HBM and 1.8 TB/s NVLink, as the B200; "
               "5 PFLOP/s dense FP8, above the HGX B200's 4.5 (GB200's GPUs may draw more power)."),
]})  # fmt: skip


__all__ = [
    "System",
    "SYSTEMS",
    "system",
    "SystemFabric",
    "SYSTEM_FABRICS",
    "SuperPodArchitecture",
    "SUPERPODS",
    "Rack",
    "RACKS",
]
