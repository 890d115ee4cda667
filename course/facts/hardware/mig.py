"""Multi-Instance GPU (MIG): the profiles one GPU splits into (``MIG_PROFILES``, :func:`mig_profiles`)."""

from __future__ import annotations

from dataclasses import dataclass
from types import MappingProxyType

from course.facts.hardware.gpus import gpu
from course.facts.units import GB, GiB

SRC_MIG_GUIDE = (
    "NVIDIA Multi-Instance GPU User Guide, 'Supported MIG Profiles' (A100, H100 tables: fraction "
    "of SMs and memory, instances per GPU) and the placements nvidia-smi mig -lgipp lists "
    "(memory-slice start:size)"
)
SRC_MIG_H100 = (
    "H100 SXM, reference run 2026-11-22: nvidia-smi mig -lgip (machine.json): SMs and GiB; "
    + SRC_MIG_GUIDE
)
SRC_MIG_A100_40 = (
    "nvidia-smi mig -lgip on an A100-SXM4-40GB (NVIDIA developer forum thread 'Why MIG instances "
    "can only sum up to 98 SMs', 2021): SMs and GiB; " + SRC_MIG_GUIDE
)
SRC_MIG_A100_80 = (
    SRC_MIG_GUIDE + "; the A100 80GB profiles are the 40GB ones with twice the memory (the guide "
    "renames them); memory here is the profile name's nominal GB, not a measured figure"
)

#: A GPU under MIG is 8 memory slices and 7 compute slices (MIG user guide).
MIG_MEMORY_SLICES = 8
MIG_COMPUTE_SLICES = 7


@dataclass(frozen=True)
class MigProfile:
    """One GPU-instance profile: ``1g.10gb`` = 1 compute slice with ~10 GB.

    ``placements`` are the memory-slice indices an instance may start at; it then covers
    ``memory_slices`` consecutive slices. Two instances may not share a memory slice, and the
    compute slices of all instances add up to at most 7.
    """

    name: str
    gpu: str  # key in GPUS
    instances: int  # the most of this profile one GPU holds
    sms: int
    memory_bytes: float
    compute_slices: int
    memory_slices: int
    placements: tuple[int, ...]
    source: str


def _mig(gpu_key: str, source: str, rows) -> tuple[MigProfile, ...]:
    return tuple(MigProfile(name, gpu_key, n, sms, mem, c, m, tuple(starts), source)
                 for name, n, sms, mem, c, m, starts in rows)  # fmt: skip


_ONE = range(7)  # a 1g profile with one memory slice starts at slice 0..6
_PAIRS = (0, 2, 4, 6)

MIG_PROFILES: MappingProxyType = MappingProxyType({
    "h100-sxm": _mig("h100-sxm", SRC_MIG_H100, [
        ("1g.10gb", 7, 16, 9.75 * GiB, 1, 1, _ONE),
        ("1g.20gb", 4, 26, 19.62 * GiB, 1, 2, _PAIRS),
        ("2g.20gb", 3, 32, 19.62 * GiB, 2, 2, (0, 2, 4)),
        ("3g.40gb", 2, 60, 39.50 * GiB, 3, 4, (0, 4)),
        ("4g.40gb", 1, 64, 39.50 * GiB, 4, 4, (0,)),
        ("7g.80gb", 1, 132, 79.25 * GiB, 7, 8, (0,)),
    ]),
    "a100-40gb-sxm": _mig("a100-40gb-sxm", SRC_MIG_A100_40, [
        ("1g.5gb", 7, 14, 4.75 * GiB, 1, 1, _ONE),
        ("1g.10gb", 4, 14, 9.75 * GiB, 1, 2, _PAIRS),
        ("2g.10gb", 3, 28, 9.75 * GiB, 2, 2, (0, 2, 4)),
        ("3g.20gb", 2, 42, 19.62 * GiB, 3, 4, (0, 4)),
        ("4g.20gb", 1, 56, 19.62 * GiB, 4, 4, (0,)),
        ("7g.40gb", 1, 98, 39.50 * GiB, 7, 8, (0,)),
    ]),
    "a100-80gb-sxm": _mig("a100-80gb-sxm", SRC_MIG_A100_80, [
        ("1g.10gb", 7, 14, 10 * GB, 1, 1, _ONE),
        ("1g.20gb", 4, 14, 20 * GB, 1, 2, _PAIRS),
        ("2g.20gb", 3, 28, 20 * GB, 2, 2, (0, 2, 4)),
        ("3g.40gb", 2, 42, 40 * GB, 3, 4, (0, 4)),
        ("4g.40gb", 1, 56, 40 * GB, 4, 4, (0,)),
        ("7g.80gb", 1, 98, 80 * GB, 7, 8, (0,)),
    ]),
})  # fmt: skip


def mig_profiles(gpu_key: str) -> tuple[MigProfile, ...]:
    """The MIG profiles of ``gpu_key`` (largest instance count first); ValueError if it has none.

    Media-extension variants (``1g.10gb+me``: one per GPU, with the video decoders) are left
    out. H100 PCIe, H200, B200 and GH200 support MIG too, with other sizes; they are not
    tabulated here.
    """
    key = gpu(gpu_key).key
    if key not in MIG_PROFILES:
        raise ValueError(f"gpu must be one of {', '.join(MIG_PROFILES)} (GPUs with tabulated MIG "
                         f"profiles); got {gpu_key!r}")  # fmt: skip
    return MIG_PROFILES[key]


__all__ = [
    "MIG_COMPUTE_SLICES",
    "MIG_MEMORY_SLICES",
    "MIG_PROFILES",
    "MigProfile",
    "mig_profiles",
]
