"""CPUs next to GPUs: Grace (lesson 08, *AI Infrastructure*'s Grace Hopper question)."""

from __future__ import annotations

from dataclasses import dataclass
from types import MappingProxyType

from course.facts.hardware.gpus import SRC_GH200
from course.facts.units import GB


@dataclass(frozen=True)
class CPU:
    """A CPU as its datasheet states it (only what the lessons use)."""

    key: str
    name: str
    cores: int
    core: str
    memory_bytes: float  # largest memory one CPU carries
    memory_type: str
    memory_bandwidth_bytes_per_s: float  # bytes/s
    gpu_link: str  # key in INTERCONNECTS: how it reaches its GPU
    source: str
    notes: str = ""


CPUS: MappingProxyType = MappingProxyType({c.key: c for c in [
    CPU("grace", "NVIDIA Grace CPU (in GH200)", cores=72, core="Arm Neoverse V2",
        memory_bytes=480 * GB, memory_type="LPDDR5X", memory_bandwidth_bytes_per_s=512 * GB,
        gpu_link="nvlink-c2c", source=SRC_GH200,
        notes="Up to 480 GB and up to 512 GB/s per Grace CPU. The Grace CPU Superchip (two Grace "
              "CPUs, 144 cores) carries up to 960 GB: *AI Infrastructure*'s '960 GB' is that, not one CPU."),
]})  # fmt: skip


__all__ = [
    "CPU",
    "CPUS",
]
