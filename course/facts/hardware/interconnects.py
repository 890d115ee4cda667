"""Links between chips and machines: PCIe, NVLink, NVLink-C2C, InfiniBand (``INTERCONNECTS``)."""

from __future__ import annotations

from dataclasses import dataclass
from types import MappingProxyType

from course.facts.hardware.gpus import SRC_A100, SRC_B200, SRC_GH200, SRC_H100
from course.facts.units import GB, GBIT_PER_S


@dataclass(frozen=True)
class Interconnect:
    """A link between chips or machines. ``bandwidth_bytes_per_s`` is per direction, in bytes/s."""

    key: str
    name: str
    bandwidth_bytes_per_s: float  # bytes/s, one direction
    connects: str
    source: str
    notes: str = ""

    @property
    def bidirectional_bandwidth_bytes_per_s(self) -> float:
        """Both directions together: the figure NVIDIA quotes for NVLink (600 / 900 GB/s)."""
        return 2 * self.bandwidth_bytes_per_s


INTERCONNECTS: MappingProxyType = MappingProxyType({i.key: i for i in [
    Interconnect("pcie3", "PCIe 3.0 x16", 15.75 * GB, "CPU to GPU",
                 "PCI-SIG PCIe 3.0 base specification: 8 GT/s per lane, 128b/130b encoding"),
    Interconnect("pcie4", "PCIe 4.0 x16", 31.5 * GB, "CPU to GPU",
                 "PCI-SIG PCIe 4.0 base specification: 16 GT/s per lane, 128b/130b encoding",
                 notes="Often rounded to 32 GB/s per direction, 64 GB/s both ways."),
    Interconnect("pcie5", "PCIe 5.0 x16", 63 * GB, "CPU to GPU",
                 "PCI-SIG PCIe 5.0 base specification: 32 GT/s per lane, 128b/130b encoding",
                 notes="Often rounded to 64 GB/s per direction, 128 GB/s both ways."),
    Interconnect("nvlink3", "NVLink 3 (A100: 12 links)", 300 * GB, "GPU to GPU",
                 SRC_A100, notes="12 links x 25 GB/s per direction = 600 GB/s both ways."),
    Interconnect("nvlink4", "NVLink 4 (H100 SXM: 18 links)", 450 * GB, "GPU to GPU",
                 SRC_H100, notes="18 links x 25 GB/s per direction = 900 GB/s both ways."),
    Interconnect("nvlink-c2c", "NVLink-C2C (Grace Hopper)", 450 * GB, "CPU to GPU",
                 SRC_GH200 + "; NVIDIA Grace Hopper Superchip Architecture whitepaper (2023): "
                 "900 GB/s bidirectional", notes="900 GB/s both ways: 7x a PCIe 5.0 x16 link (126 GB/s both "
                                  "ways); coherent, so the GPU reads CPU memory directly."),
    Interconnect("nvlink5", "NVLink 5 (B200: 18 links)", 900 * GB, "GPU to GPU", SRC_B200,
                 notes="18 links x 50 GB/s per direction = 1.8 TB/s both ways."),
    Interconnect("ib-hdr", "InfiniBand HDR (200 Gb/s port)", 200 * GBIT_PER_S, "node to node",
                 "NVIDIA ConnectX-6 / Quantum HDR product briefs (2019)"),
    Interconnect("ib-ndr", "InfiniBand NDR (400 Gb/s port)", 400 * GBIT_PER_S, "node to node",
                 "NVIDIA ConnectX-7 / Quantum-2 NDR product briefs (2021)"),
]})  # fmt: skip

#: The CPU-GPU link of Grace Hopper (GH200), the alternative to PCIe that the memory pyramid shows.
#: One row, in ``INTERCONNECTS`` (lesson 08's GH200 rows use it as their host link).
NVLINK_C2C = INTERCONNECTS["nvlink-c2c"]


__all__ = [
    "Interconnect",
    "INTERCONNECTS",
    "NVLINK_C2C",
]
