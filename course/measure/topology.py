"""This machine's NUMA nodes and caches, and the GPU topology of a reference run (lesson 11).

- :func:`numa_nodes` reads ``/sys/devices/system/node/node*/`` (Linux): each node's CPUs and
  memory. A process whose memory sits on another socket's node pays the inter-socket link on every
  miss, so a training rank is pinned (``numactl --cpunodebind=N --membind=N``, or torchrun's
  ``--numa-binding``) to the node its GPU and NIC hang off.
- :func:`cache_hierarchy` reads ``/sys/devices/system/cpu/cpu0/cache/index*/``: level, type, size,
  line size and which CPUs share it.
- :func:`parse_topo` turns the matrix of ``nvidia-smi topo -m`` into rows (one per GPU or NIC:
  its links to the others, CPU affinity, NUMA affinity); :func:`parse_smi_summary` reads the
  fields of the ``nvidia-smi`` summary screen (power draw and cap, ECC, performance state, MIG).

Each returns a :class:`course.facts.report.Table` of its rows, which prints itself. On macOS or
where ``/sys`` is absent the tables are empty and their note says so.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

from course.facts.report import Table

SYS = Path("/sys/devices/system")


def _read(path: Path) -> str | None:
    try:
        return path.read_text().strip()
    except OSError:
        return None


def cpu_list(text: str) -> list[int]:
    """``"0-3,8,10-11"`` -> ``[0, 1, 2, 3, 8, 10, 11]`` (the kernel's cpulist format)."""
    out: list[int] = []
    for part in filter(None, (p.strip() for p in text.split(","))):
        low, _, high = part.partition("-")
        out.extend(range(int(low), int(high or low) + 1))
    return out


@dataclass(frozen=True)
class NumaNode:
    node: int
    cpus: list[int]
    memory_bytes: int | None


_NO_SYS = "No {} here (macOS?): `sysctl hw` lists the CPUs and caches."


def numa_nodes(root: Path = SYS) -> Table:
    """The NUMA nodes Linux reports (empty where ``/sys`` has none, e.g. macOS)."""
    nodes = []
    for d in sorted((root / "node").glob("node[0-9]*"), key=lambda p: int(p.name[4:])):
        cpus = cpu_list(_read(d / "cpulist") or "")
        meminfo = _read(d / "meminfo") or ""
        m = re.search(r"MemTotal:\s+(\d+)\s*kB", meminfo)
        nodes.append(NumaNode(int(d.name[4:]), cpus, int(m.group(1)) * 1024 if m else None))
    return Table(
        nodes,
        title="NUMA nodes of this machine (/sys)",
        missing={"memory_bytes": "unknown"},
        note="" if nodes else _NO_SYS.format(root / "node"),
    )


@dataclass(frozen=True)
class CacheLevel:
    level: int
    kind: str  # Data, Instruction, Unified
    size_bytes: int
    line_bytes: int | None
    shared_by_cpus: list[int]


def _size(text: str | None) -> int:
    m = re.fullmatch(r"(\d+)\s*([KMG]?)", (text or "0").strip())
    if not m:
        return 0
    return int(m.group(1)) * {"": 1, "K": 1024, "M": 1024**2, "G": 1024**3}[m.group(2)]


def cache_hierarchy(root: Path = SYS, cpu: int = 0) -> Table:
    """The caches of one CPU from ``/sys`` (per level: size, line size, CPUs sharing it)."""
    out = []
    for d in sorted((root / "cpu" / f"cpu{cpu}" / "cache").glob("index[0-9]*")):
        line = _read(d / "coherency_line_size")
        out.append(
            CacheLevel(
                int(_read(d / "level") or 0),
                _read(d / "type") or "?",
                _size(_read(d / "size")),
                int(line) if line else None,
                cpu_list(_read(d / "shared_cpu_list") or ""),
            )
        )
    return Table(
        out,
        title=f"Caches of CPU {cpu} (/sys)",
        formats={"line_bytes": "number"},
        note="" if out else _NO_SYS.format(root / "cpu" / f"cpu{cpu}" / "cache"),
    )


def cache_line_bytes(default: int = 64) -> int:
    """The L1 data cache's line size (64 bytes on x86 and most Arm; 128 on Apple M-series)."""
    for c in cache_hierarchy():
        if c.level == 1 and c.kind == "Data" and c.line_bytes:
            return c.line_bytes
    return default


@dataclass(frozen=True)
class TopoRow:
    """One device row of ``nvidia-smi topo -m``."""

    device: str
    links: dict[str, str]  # other device -> X, NV#, PIX, PXB, PHB, NODE, SYS
    cpu_affinity: str
    numa_affinity: str


LINK_MEANING = {
    "X": "itself",
    "NV": "a bonded set of NVLinks (the number says how many)",
    "PIX": "at most one PCIe bridge",
    "PXB": "several PCIe bridges, not through the CPU",
    "PHB": "a PCIe host bridge (the CPU)",
    "NODE": "PCIe and the interconnect between host bridges within one NUMA node",
    "SYS": "PCIe and the link between NUMA nodes (QPI/UPI): the slowest path",
}


def parse_topo(text: str) -> Table:
    """Rows of an ``nvidia-smi topo -m`` matrix (ANSI escapes and the legend ignored)."""
    clean = re.sub(r"\x1b\[[0-9;]*m", "", text)
    lines = [ln for ln in clean.splitlines() if ln.strip()]
    header_i = next((i for i, ln in enumerate(lines) if "CPU Affinity" in ln), None)
    if header_i is None:
        return Table(title="nvidia-smi topo -m: no matrix found")
    header = [h.strip() for h in lines[header_i].split("\t") if h.strip()]
    devices = [h for h in header if h not in ("CPU Affinity", "NUMA Affinity", "GPU NUMA ID")]
    rows = []
    for ln in lines[header_i + 1 :]:
        cells = [c.strip() for c in ln.split("\t") if c.strip()]
        if not cells or cells[0] not in devices and not re.fullmatch(r"(GPU|NIC|mlx)\w*", cells[0]):
            if ln.startswith("Legend"):
                break
            continue
        links = dict(zip(devices, cells[1 : 1 + len(devices)], strict=False))
        rest = cells[1 + len(devices) :]
        rows.append(
            TopoRow(cells[0], links, rest[0] if rest else "", rest[1] if len(rest) > 1 else "")
        )
    return Table(rows, title="nvidia-smi topo -m, one row per device")


def parse_smi_summary(text: str) -> dict[str, str]:
    """Fields of the first GPU in ``nvidia-smi``'s summary screen (power, memory, ECC, MIG)."""
    m = re.search(
        r"\|\s+(\d+)\s+(.+?)\s+(On|Off)\s+\|\s+(\S+)\s+(\S+)\s+\|\s+(\S+)\s+\|\s*\n"
        r"\|\s+(\S+)\s+(\S+)\s+(P\d+)\s+(\d+W)\s*/\s*(\d+W)\s+\|\s+(\S+)\s*/\s*(\S+)\s+\|\s+"
        r"(\S+)\s+(\S+)\s+\|\s*\n\|\s+\|\s+\|\s+(\S+)",
        text,
    )
    if not m:
        return {}
    keys = (
        "gpu",
        "name",
        "persistence_mode",
        "bus_id",
        "display_active",
        "volatile_uncorrected_ecc",
        "fan",
        "temperature",
        "performance_state",
        "power_draw",
        "power_cap",
        "memory_used",
        "memory_total",
        "gpu_utilisation",
        "compute_mode",
        "mig_mode",
    )
    return dict(zip(keys, m.groups(), strict=True))


__all__ = [
    "CacheLevel",
    "LINK_MEANING",
    "NumaNode",
    "TopoRow",
    "cache_hierarchy",
    "cache_line_bytes",
    "cpu_list",
    "numa_nodes",
    "parse_smi_summary",
    "parse_topo",
]
