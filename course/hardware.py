"""The one registry of hardware numbers: GPUs, interconnects and DGX systems, each with its source.

Lessons and calculators never retype a spec: they look it up here (``GPUS["h100-sxm"]``).
Conventions, after ../shared/reference/FACTS.md:

- SI base units: bytes, bytes/s (GB/s = 1e9 bytes/s), FLOP/s (integer "OPS" for int8 likewise),
  watts, hertz.
- Memory and cache *capacities* are binary, as the hardware has them: an "80GB" H100 or A100 has
  80 GiB = 80 x 2**30 bytes of HBM (nvidia-smi shows 81,559 MiB on an H100 80GB, the rest reserved),
  and an "A100 40 MB" L2 has 40 MiB = 40,960 KiB (whitepapers give cache sizes in KB = KiB). The
  marketing name keeps NVIDIA's "80GB" (``name``); ``memory_bytes`` and ``l2_bytes`` are the binary
  bytes. Bandwidths stay decimal (3.35 TB/s = 3.35e12 bytes/s).
- ``dense_flops`` are peaks *without* 2:4 structured sparsity; ``sparse_flops`` are NVIDIA's headline
  figures with it (twice the dense). The source documents often quote the sparse figure as if it were
  dense: a lesson compares against ``dense_flops``.
- Tensor Core figures for fp16/bf16/fp8 are with fp32 accumulation where the datasheet distinguishes
  (consumer cards run fp16 accumulation at twice that; training uses fp32 accumulation).
- Peaks that follow from clock x units x FLOPs per clock are derived again in tests/test_hardware.py.

Used by lessons 01, 02, 04, 05, 08 and every calculator that needs a GPU.
"""

from __future__ import annotations

from dataclasses import dataclass
from types import MappingProxyType
from typing import Literal

from course.units import GB, GBIT_PER_S, GiB, KiB, MiB

#: dtype keys used in ``dense_flops``/``sparse_flops`` (``fp64_tc`` = FP64 on Tensor Cores).
DTYPES = ("fp64", "fp64_tc", "fp32", "tf32", "fp16", "bf16", "fp8", "int8")

FormFactor = Literal["SXM", "PCIe", "consumer"]

# Sources (document and date). Each GPU names the ones its numbers come from.
SRC_V100 = "NVIDIA Tesla V100 datasheet (2018), SXM2 32 GB column; Volta whitepaper (2017)"
SRC_A100 = (
    "NVIDIA A100 Tensor Core GPU datasheet (2021, 1758950-r4), SXM columns; "
    "NVIDIA A100 Tensor Core GPU Architecture whitepaper (2020)"
)
SRC_H100 = (
    "NVIDIA H100 Tensor Core GPU datasheet (2023), SXM and PCIe columns; "
    "NVIDIA H100 Tensor Core GPU Architecture whitepaper (2022)"
)
SRC_H200 = "NVIDIA H200 Tensor Core GPU datasheet (2024), SXM column"
SRC_L40S = "NVIDIA L40S datasheet (2023)"
SRC_3090 = "NVIDIA Ampere GA102 GPU Architecture whitepaper (2020), GeForce RTX 3090 column"
SRC_4090 = "NVIDIA Ada GPU Architecture whitepaper (2022), GeForce RTX 4090 column"


def _frozen(mapping: dict[str, float]) -> MappingProxyType:
    return MappingProxyType(dict(mapping))


@dataclass(frozen=True)
class GPU:
    """One GPU model as its datasheet states it. All numbers in SI base units."""

    key: str
    name: str
    architecture: str
    form_factor: FormFactor
    launch_year: int
    memory_bytes: float
    memory_type: str
    memory_bandwidth: float  # bytes/s, device memory (HBM/GDDR)
    dense_flops: MappingProxyType  # dtype -> FLOP/s, without sparsity
    sparse_flops: MappingProxyType  # dtype -> FLOP/s with 2:4 sparsity, where quoted
    sms: int
    cuda_cores: int  # FP32 cores
    tensor_cores: int
    boost_clock_hz: float
    tdp_watts: float
    l2_bytes: float
    l1_per_sm_bytes: float  # combined L1 cache / shared memory per SM
    nvlink_bandwidth: float  # bytes/s, all links, both directions (0 if none)
    host_link: str  # key in INTERCONNECTS
    source: str
    notes: str = ""

    def peak_flops(self, dtype: str, *, sparse: bool = False) -> float:
        """Peak FLOP/s for ``dtype`` (dense unless ``sparse``); ValueError if the GPU has none."""
        table = self.sparse_flops if sparse else self.dense_flops
        if dtype not in table:
            kind = "sparse" if sparse else "dense"
            have = ", ".join(table) or "none"
            raise ValueError(f"dtype {dtype!r} has no {kind} peak on {self.name}; it has: {have}")
        return table[dtype]

    @property
    def fp32_cores_per_sm(self) -> int:
        return self.cuda_cores // self.sms


@dataclass(frozen=True)
class Interconnect:
    """A link between chips or machines. ``bandwidth`` is per direction, in bytes/s."""

    key: str
    name: str
    bandwidth: float  # bytes/s, one direction
    connects: str
    source: str
    notes: str = ""

    @property
    def bidirectional_bandwidth(self) -> float:
        """Both directions together: the figure NVIDIA quotes for NVLink (600 / 900 GB/s)."""
        return 2 * self.bandwidth


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


def _gpu(**kw) -> GPU:
    kw["dense_flops"] = _frozen(kw["dense_flops"])
    kw["sparse_flops"] = _frozen(kw.get("sparse_flops", {}))
    return GPU(**kw)


T = 1e12  # TFLOP/s, local shorthand for the tables below

_A100_DENSE = {"fp64": 9.7 * T, "fp64_tc": 19.5 * T, "fp32": 19.5 * T, "tf32": 156 * T,
               "fp16": 312 * T, "bf16": 312 * T, "int8": 624 * T}  # fmt: skip
_A100_SPARSE = {"tf32": 312 * T, "fp16": 624 * T, "bf16": 624 * T, "int8": 1248 * T}
_H100_SXM_DENSE = {"fp64": 34 * T, "fp64_tc": 67 * T, "fp32": 67 * T, "tf32": 494.7 * T,
                   "fp16": 989.4 * T, "bf16": 989.4 * T, "fp8": 1978.9 * T,
                   "int8": 1978.9 * T}  # fmt: skip
_H100_SXM_SPARSE = {"tf32": 989.4 * T, "fp16": 1978.9 * T, "bf16": 1978.9 * T,
                    "fp8": 3957.8 * T, "int8": 3957.8 * T}  # fmt: skip

GPUS: MappingProxyType = MappingProxyType({g.key: g for g in [
    _gpu(key="v100-sxm2-32gb", name="NVIDIA V100 SXM2 32GB", architecture="Volta",
         form_factor="SXM", launch_year=2018, memory_bytes=32 * GiB, memory_type="HBM2",
         memory_bandwidth=900 * GB,
         dense_flops={"fp64": 7.8 * T, "fp32": 15.7 * T, "fp16": 125 * T},
         sms=80, cuda_cores=5120, tensor_cores=640, boost_clock_hz=1530e6, tdp_watts=300,
         l2_bytes=6 * MiB, l1_per_sm_bytes=128 * KiB, nvlink_bandwidth=300 * GB,
         host_link="pcie3", source=SRC_V100,
         notes="No TF32, BF16 or FP8; Tensor Cores do FP16 only. The 16 GB V100 launched in 2017."),
    _gpu(key="a100-40gb-sxm", name="NVIDIA A100 40GB SXM", architecture="Ampere",
         form_factor="SXM", launch_year=2020, memory_bytes=40 * GiB, memory_type="HBM2",
         memory_bandwidth=1555 * GB, dense_flops=_A100_DENSE, sparse_flops=_A100_SPARSE,
         sms=108, cuda_cores=6912, tensor_cores=432, boost_clock_hz=1410e6, tdp_watts=400,
         l2_bytes=40 * MiB, l1_per_sm_bytes=192 * KiB, nvlink_bandwidth=600 * GB,
         host_link="pcie4", source=SRC_A100,
         notes="HBM2, not HBM2e (seed 003 says HBM2e for both A100s). 64 FP32 cores per SM."),
    _gpu(key="a100-80gb-sxm", name="NVIDIA A100 80GB SXM", architecture="Ampere",
         form_factor="SXM", launch_year=2020, memory_bytes=80 * GiB, memory_type="HBM2e",
         memory_bandwidth=2039 * GB, dense_flops=_A100_DENSE, sparse_flops=_A100_SPARSE,
         sms=108, cuda_cores=6912, tensor_cores=432, boost_clock_hz=1410e6, tdp_watts=400,
         l2_bytes=40 * MiB, l1_per_sm_bytes=192 * KiB, nvlink_bandwidth=600 * GB,
         host_link="pcie4", source=SRC_A100,
         notes="The PCIe 80GB card has 1,935 GB/s and 300 W."),
    _gpu(key="h100-sxm", name="NVIDIA H100 SXM 80GB", architecture="Hopper",
         form_factor="SXM", launch_year=2022, memory_bytes=80 * GiB, memory_type="HBM3",
         memory_bandwidth=3350 * GB, dense_flops=_H100_SXM_DENSE, sparse_flops=_H100_SXM_SPARSE,
         sms=132, cuda_cores=16896, tensor_cores=528, boost_clock_hz=1980e6, tdp_watts=700,
         l2_bytes=50 * MiB, l1_per_sm_bytes=256 * KiB, nvlink_bandwidth=900 * GB,
         host_link="pcie5", source=SRC_H100,
         notes="Tensor Core peaks correspond to a 1,830 MHz clock; FP32/FP64 to 1,980 MHz."),
    _gpu(key="h100-pcie", name="NVIDIA H100 PCIe 80GB", architecture="Hopper",
         form_factor="PCIe", launch_year=2022, memory_bytes=80 * GiB, memory_type="HBM2e",
         memory_bandwidth=2000 * GB,
         dense_flops={"fp64": 26 * T, "fp64_tc": 51 * T, "fp32": 51 * T, "tf32": 378 * T,
                      "fp16": 756 * T, "bf16": 756 * T, "fp8": 1513 * T, "int8": 1513 * T},
         sparse_flops={"tf32": 756 * T, "fp16": 1513 * T, "bf16": 1513 * T, "fp8": 3026 * T,
                       "int8": 3026 * T},
         sms=114, cuda_cores=14592, tensor_cores=456, boost_clock_hz=1755e6, tdp_watts=350,
         l2_bytes=50 * MiB, l1_per_sm_bytes=256 * KiB, nvlink_bandwidth=600 * GB,
         host_link="pcie5", source=SRC_H100,
         notes="NVLink through a bridge between pairs of cards."),
    _gpu(key="h200-sxm", name="NVIDIA H200 SXM 141GB", architecture="Hopper",
         form_factor="SXM", launch_year=2024, memory_bytes=141 * GiB, memory_type="HBM3e",
         memory_bandwidth=4800 * GB, dense_flops=_H100_SXM_DENSE, sparse_flops=_H100_SXM_SPARSE,
         sms=132, cuda_cores=16896, tensor_cores=528, boost_clock_hz=1980e6, tdp_watts=700,
         l2_bytes=50 * MiB, l1_per_sm_bytes=256 * KiB, nvlink_bandwidth=900 * GB,
         host_link="pcie5", source=SRC_H200,
         notes="The H100 SXM chip with more and faster memory: same compute peaks. Sold as "
               "141GB; nvidia-smi reports about 140 GiB usable, so 141 GiB is stored."),
    _gpu(key="l40s", name="NVIDIA L40S", architecture="Ada Lovelace",
         form_factor="PCIe", launch_year=2023, memory_bytes=48 * GiB, memory_type="GDDR6",
         memory_bandwidth=864 * GB,
         dense_flops={"fp32": 91.6 * T, "tf32": 183 * T, "fp16": 362.05 * T, "bf16": 362.05 * T,
                      "fp8": 733 * T, "int8": 733 * T},
         sparse_flops={"tf32": 366 * T, "fp16": 733 * T, "bf16": 733 * T, "fp8": 1466 * T,
                       "int8": 1466 * T},
         sms=142, cuda_cores=18176, tensor_cores=568, boost_clock_hz=2520e6, tdp_watts=350,
         l2_bytes=96 * MiB, l1_per_sm_bytes=128 * KiB, nvlink_bandwidth=0,
         host_link="pcie4", source=SRC_L40S,
         notes="No NVLink. Seed 003's 'TF32 362' is the FP16 figure; TF32 is 183 dense."),
    _gpu(key="rtx-3090", name="NVIDIA GeForce RTX 3090", architecture="Ampere",
         form_factor="consumer", launch_year=2020, memory_bytes=24 * GiB, memory_type="GDDR6X",
         memory_bandwidth=936 * GB,
         dense_flops={"fp32": 35.6 * T, "tf32": 35.6 * T, "fp16": 71 * T, "bf16": 71 * T,
                      "int8": 284 * T},
         sparse_flops={"tf32": 71 * T, "fp16": 142 * T, "bf16": 142 * T, "int8": 568 * T},
         sms=82, cuda_cores=10496, tensor_cores=328, boost_clock_hz=1695e6, tdp_watts=350,
         l2_bytes=6 * MiB, l1_per_sm_bytes=128 * KiB, nvlink_bandwidth=112.5 * GB,
         host_link="pcie4", source=SRC_3090,
         notes="FP16/BF16 with FP32 accumulate; with FP16 accumulate FP16 is 142 dense."),
    _gpu(key="rtx-4090", name="NVIDIA GeForce RTX 4090", architecture="Ada Lovelace",
         form_factor="consumer", launch_year=2022, memory_bytes=24 * GiB, memory_type="GDDR6X",
         memory_bandwidth=1008 * GB,
         dense_flops={"fp32": 82.6 * T, "tf32": 82.6 * T, "fp16": 165.2 * T, "bf16": 165.2 * T,
                      "fp8": 330.3 * T, "int8": 660.6 * T},
         sparse_flops={"tf32": 165.2 * T, "fp16": 330.4 * T, "bf16": 330.4 * T,
                       "fp8": 660.6 * T, "int8": 1321.2 * T},
         sms=128, cuda_cores=16384, tensor_cores=512, boost_clock_hz=2520e6, tdp_watts=450,
         l2_bytes=72 * MiB, l1_per_sm_bytes=128 * KiB, nvlink_bandwidth=0,
         host_link="pcie4", source=SRC_4090,
         notes="FP16/BF16/FP8 with FP32 accumulate; FP16 accumulate doubles them. No NVLink."),
]})  # fmt: skip

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
    Interconnect("nvlink-c2c", "NVLink-C2C (Grace Hopper CPU to GPU)", 450 * GB, "CPU to GPU",
                 "NVIDIA Grace Hopper Superchip datasheet (2023): NVLink-C2C 900 GB/s total",
                 notes="450 GB/s per direction: 7x PCIe 5.0 x16, cache-coherent."),
    Interconnect("ib-hdr", "InfiniBand HDR (200 Gb/s port)", 200 * GBIT_PER_S, "node to node",
                 "NVIDIA ConnectX-6 / Quantum HDR product briefs (2019)"),
    Interconnect("ib-ndr", "InfiniBand NDR (400 Gb/s port)", 400 * GBIT_PER_S, "node to node",
                 "NVIDIA ConnectX-7 / Quantum-2 NDR product briefs (2021)"),
]})  # fmt: skip

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


#: FP32 cores ("CUDA cores") per SM by compute capability: the FP32 results per clock per SM in the
#: CUDA C++ Programming Guide's arithmetic-throughput table. Seed 004's "SMs x 128" holds only for
#: some: a 108-SM A100 (8.0) has 6,912 cores, not 13,824.
FP32_CORES_PER_SM = MappingProxyType(
    {(7, 0): 64, (7, 5): 64, (8, 0): 64, (8, 6): 128, (8, 7): 128, (8, 9): 128, (9, 0): 128}
)


def cuda_cores(sms: int, compute_capability: tuple[int, int]) -> int | None:
    """FP32 cores of a GPU from its SM count and compute capability (None where not tabulated)."""
    per_sm = FP32_CORES_PER_SM.get(tuple(compute_capability))
    return None if per_sm is None else sms * per_sm


def gpu(key_or_name: str) -> GPU:
    """Look up a GPU by key (``"h100-sxm"``) or exact name; ValueError lists the choices."""
    if isinstance(key_or_name, GPU):
        return key_or_name
    for g in GPUS.values():
        if key_or_name in (g.key, g.name):
            return g
    raise ValueError(f"gpu must be one of {', '.join(GPUS)}; got {key_or_name!r}")


__all__ = [
    "DTYPES",
    "GPU",
    "GPUS",
    "INTERCONNECTS",
    "SYSTEMS",
    "Interconnect",
    "System",
    "gpu",
    "FP32_CORES_PER_SM",
    "cuda_cores",
]


# ---------------------------------------------------------------------------------------------
# The inside of a GPU: what the anatomy and memory-pyramid diagrams of course/diagrams.py draw
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

#: The CPU-GPU link of Grace Hopper (GH200), the alternative to PCIe that the memory pyramid shows.
NVLINK_C2C = Interconnect(
    "nvlink-c2c", "NVLink-C2C (Grace Hopper)", 450 * GB, "CPU to GPU",
    "NVIDIA Grace Hopper Superchip Architecture whitepaper (2023): 900 GB/s bidirectional",
    notes="450 GB/s per direction; 7x PCIe 5.0 x16.",
)  # fmt: skip


def anatomy(key: str) -> Anatomy:
    """The anatomy row of GPU ``key``; ValueError lists the GPUs that have one."""
    if key not in ANATOMY:
        raise ValueError(
            f"gpu must be one of {', '.join(ANATOMY)} (those with anatomy data); got {key!r}"
        )
    return ANATOMY[key]


__all__ += ["ANATOMY", "Anatomy", "NVLINK_C2C", "anatomy"]
