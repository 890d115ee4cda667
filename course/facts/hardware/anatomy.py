"""The inside of a GPU: what the anatomy and memory-pyramid diagrams draw (``ANATOMY``, :func:`anatomy`)."""

from __future__ import annotations

from dataclasses import dataclass
from types import MappingProxyType

from course.facts.units import KiB

# ---------------------------------------------------------------------------------------------
# The inside of a GPU: what the anatomy and memory-pyramid diagrams of course/presentation/diagrams.py draw
# (lessons 00-02). A separate table so that the rows above stay as they are; each row adds what a
# GPU row lacks and names the whitepaper pages it comes from. Byte sizes binary, as the hardware has
# them (64K 32-bit registers = 256 KiB).
# ---------------------------------------------------------------------------------------------

SRC_A100_ANATOMY = (
    "NVIDIA A100 Tensor Core GPU Architecture whitepaper (2020): 'The full implementation of the "
    "GA100 GPU' (8 GPCs, 16 SMs/GPC, 128 SMs) and 'The A100 Tensor Core GPU implementation' (7 GPCs, "
    "108 SMs, 5 HBM2 stacks); the A100 SM diagram (4 partitions, each with a warp scheduler and a "
    "16,384 x 32-bit register file; 4 Tensor Cores per SM; up to 164 KB shared memory); the A100 vs "
    "V100 table (L2 cache read bandwidth 5,120 bytes/clk)"
)
SRC_H100_ANATOMY = (
    "NVIDIA H100 Tensor Core GPU Architecture whitepaper (2022): 'The full implementation of the "
    "GH100 GPU' (8 GPCs, 18 SMs/GPC, 144 SMs) and 'The NVIDIA H100 GPU with SXM5 board form-factor' "
    "(8 GPCs, 66 TPCs, 132 SMs, 5 HBM3 stacks); the H100 SM diagram (4 partitions, each with a warp "
    "scheduler and a 16,384 x 32-bit register file; 4 Tensor Cores per SM; up to 228 KB shared "
    "memory). The whitepaper gives no L2 bandwidth for H100."
)
SRC_SHARED_BANKS = (
    "NVIDIA CUDA C++ Programming Guide, compute capabilities 5.x and later, shared memory: 32 banks, "
    "each with a bandwidth of 32 bits per clock cycle (128 bytes per clock per SM)"
)


@dataclass(frozen=True)
class Anatomy:
    """The inside of one GPU (``gpu`` is its key in ``GPUS``): chip layout and per-SM resources.

    ``chip_*`` describe the full die; ``gpcs`` and ``GPUS[gpu].sms`` what the product enables.
    Bandwidths per clock are multiplied by ``GPUS[gpu].boost_clock_hz`` where a diagram needs bytes/s;
    ``None`` where the whitepaper publishes none.
    """

    gpu: str
    chip: str
    chip_gpcs: int
    chip_sms_per_gpc: int
    gpcs: int
    warp_schedulers_per_sm: int
    tensor_cores_per_sm: int
    register_file_per_sm_bytes: int
    max_shared_memory_per_sm_bytes: int
    shared_memory_bytes_per_clock_per_sm: int
    l2_read_bytes_per_clock: int | None
    hbm_stacks: int
    source: str


ANATOMY: MappingProxyType = MappingProxyType({a.gpu: a for a in [
    Anatomy("a100-40gb-sxm", "GA100", chip_gpcs=8, chip_sms_per_gpc=16, gpcs=7,
            warp_schedulers_per_sm=4, tensor_cores_per_sm=4, register_file_per_sm_bytes=256 * KiB,
            max_shared_memory_per_sm_bytes=164 * KiB, shared_memory_bytes_per_clock_per_sm=128,
            l2_read_bytes_per_clock=5120, hbm_stacks=5,
            source=f"{SRC_A100_ANATOMY}; {SRC_SHARED_BANKS}"),
    Anatomy("a100-80gb-sxm", "GA100", chip_gpcs=8, chip_sms_per_gpc=16, gpcs=7,
            warp_schedulers_per_sm=4, tensor_cores_per_sm=4, register_file_per_sm_bytes=256 * KiB,
            max_shared_memory_per_sm_bytes=164 * KiB, shared_memory_bytes_per_clock_per_sm=128,
            l2_read_bytes_per_clock=5120, hbm_stacks=5,
            source=f"{SRC_A100_ANATOMY} (the 80GB A100 has the same chip, with HBM2e); "
                   f"{SRC_SHARED_BANKS}"),
    Anatomy("h100-sxm", "GH100", chip_gpcs=8, chip_sms_per_gpc=18, gpcs=8,
            warp_schedulers_per_sm=4, tensor_cores_per_sm=4, register_file_per_sm_bytes=256 * KiB,
            max_shared_memory_per_sm_bytes=228 * KiB, shared_memory_bytes_per_clock_per_sm=128,
            l2_read_bytes_per_clock=None, hbm_stacks=5,
            source=f"{SRC_H100_ANATOMY}; {SRC_SHARED_BANKS}"),
]})  # fmt: skip


def anatomy(key: str) -> Anatomy:
    """The anatomy row of GPU ``key``; ValueError lists the GPUs that have one."""
    if key not in ANATOMY:
        raise ValueError(
            f"gpu must be one of {', '.join(ANATOMY)} (those with anatomy data); got {key!r}"
        )
    return ANATOMY[key]


__all__ = [
    "ANATOMY",
    "Anatomy",
    "anatomy",
]
