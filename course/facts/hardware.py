"""The one registry of hardware numbers: GPUs, interconnects and DGX systems, each with its source.

Lessons and calculators never retype a spec: they look it up here (``GPUS["h100-sxm"]``).
Conventions, after ../shared/reference/FACTS.md:

- SI base units: bytes, bytes/s (GB/s = 1e9 bytes/s), FLOP/s (integer "OPS" for int8 likewise),
  watts, hertz.
- Memory and cache *capacities* are binary, as the hardware has them: an "80GB" H100 or A100 has
  80 GiB = 80 x 2**30 bytes of HBM fitted (nvidia-smi shows 81,559 MiB = 79.6 GiB on an H100 80GB and
  torch 79.2 GiB, the rest reserved by the driver),
  and an "A100 40 MB" L2 has 40 MiB = 40,960 KiB (whitepapers give cache sizes in KB = KiB). The
  marketing name keeps NVIDIA's "80GB" (``name``); ``memory_bytes`` and ``l2_bytes`` are the binary
  bytes. Bandwidths stay decimal (3.35 TB/s = 3.35e12 bytes/s).
- ``dense_flops`` are peaks *without* 2:4 structured sparsity; ``sparse_flops`` are NVIDIA's headline
  figures with it (twice the dense). The source documents often quote the sparse figure as if it were
  dense: a lesson compares against ``dense_flops``.
- Tensor Core figures for fp16/bf16/fp8 are with fp32 accumulation where the datasheet distinguishes
  (consumer cards run fp16 accumulation at twice that; training uses fp32 accumulation).
- Peaks that follow from clock x units x FLOPs per clock are derived again in tests/test_hardware.py.

Used by lessons 01, 02, 04, 05, 08 and every calculator that needs a GPU. Lesson 08 adds ``CPUS``
(Grace), ``MIG_PROFILES`` / :func:`mig_profiles`, ``SYSTEM_FABRICS`` (NVSwitch, compute NICs) and
``SUPERPODS`` (the DGX SuperPOD reference architecture), appended below the GPU table.
"""

from __future__ import annotations

from dataclasses import dataclass
from types import MappingProxyType
from typing import Literal

from course.facts.units import GB, GBIT_PER_S, GiB, KiB, MiB

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
SRC_B200 = (
    "NVIDIA DGX B200 datasheet (2024): 8 GPUs, 1,440 GB, 64 TB/s HBM3e, 72 PF FP8 training "
    "(sparse), 14.4 TB/s NVLink; NVIDIA HGX B200 datasheet (2024): per-GPU "
    "Tensor Core peaks (TF32 2.2, FP16/BF16 4.5, FP8/INT8 9 PFLOPS, all with sparsity), FP32 75 "
    "and FP64 37 TFLOPS, up to "
    "1,000 W per GPU; "
    "CUDA device query of a B200 (pytorch/ao PR 4002, 2026): 148 SMs, 126.5 MiB L2; "
    "Blackwell Tuning Guide: 256 KB combined L1/shared memory per SM"
)
SRC_GH200 = (
    "NVIDIA GH200 Grace Hopper Superchip datasheet (2023/2024): 72 Arm Neoverse V2 cores, up to "
    "480 GB LPDDR5X, NVLink-C2C 900 GB/s, 96 GB HBM3 at 4 TB/s or 144 GB HBM3e at 4.9 TB/s, "
    "module power configurable 450-1,000 W; NVIDIA Grace Hopper Superchip Architecture "
    "whitepaper (2023): the GPU is the H100 (GH100, 132 SMs)"
)


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
    #: Clock at which the datasheet's Tensor Core peaks are quoted, where it differs from
    #: ``boost_clock_hz`` (H100 SXM: 1,830 MHz, whitepaper); ``None``: the boost clock.
    tensor_clock_hz: float | None = None

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

    @property
    def tensor_core_clock_hz(self) -> float:
        """The clock the Tensor Core peaks are quoted at (``tensor_clock_hz``, else the boost clock)."""
        return self.boost_clock_hz if self.tensor_clock_hz is None else self.tensor_clock_hz

    def flops_per_clock_per_sm(self, dtype: str) -> float:
        """Dense peak of ``dtype`` per SM per clock, at the clock the datasheet quotes it at:
        the Tensor Core clock for Tensor Core dtypes, the boost clock for fp32/fp64 on CUDA cores."""
        clock = self.boost_clock_hz if dtype in ("fp32", "fp64") else self.tensor_core_clock_hz
        return self.peak_flops(dtype) / (self.sms * clock)


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
_B200_DENSE = {"fp64": 37 * T, "fp64_tc": 37 * T, "fp32": 75 * T, "tf32": 1100 * T,
               "fp16": 2250 * T, "bf16": 2250 * T, "fp8": 4500 * T, "int8": 4500 * T}  # fmt: skip
_B200_SPARSE = {"tf32": 2200 * T, "fp16": 4500 * T, "bf16": 4500 * T, "fp8": 9000 * T,
                "int8": 9000 * T}  # fmt: skip
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
         notes="HBM2, not HBM2e (*AI Infrastructure* says HBM2e for both A100s). 64 FP32 cores per SM."),
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
         tensor_clock_hz=1830e6,
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
         tensor_clock_hz=1830e6,
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
         notes="No NVLink. *AI Infrastructure*'s 'TF32 362' is the FP16 figure; TF32 is 183 dense."),
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
    # Rows below use binary memory sizes (a "180GB" B200 has 180 GiB), per FACTS.md.
    _gpu(key="b200", name="NVIDIA B200 (HGX/DGX B200)", architecture="Blackwell",
         form_factor="SXM", launch_year=2024, memory_bytes=180 * GiB, memory_type="HBM3e",
         memory_bandwidth=8000 * GB, dense_flops=_B200_DENSE, sparse_flops=_B200_SPARSE,
         sms=148, cuda_cores=148 * 128, tensor_cores=148 * 4,
         boost_clock_hz=75e12 / (2 * 148 * 128), tdp_watts=1000, l2_bytes=126.5 * MiB, l1_per_sm_bytes=256 * KiB,
         nvlink_bandwidth=1800 * GB, host_link="pcie5", source=SRC_B200,
         notes="NVLink 5: 18 links, 1.8 TB/s both ways. FP4 (9 PF dense per GPU) is not in DTYPES. "
               "Boost clock derived from the FP32 peak (75 TF = 18,944 cores x 2 x 1.98 GHz). "
               "NVIDIA's later HGX B200 spec table gives 7.7 TB/s (a 7,680-bit bus), the DGX "
               "datasheet 8 TB/s per GPU."),
    _gpu(key="gh200-96gb", name="NVIDIA GH200 (H100 96GB HBM3)", architecture="Hopper",
         form_factor="SXM", launch_year=2023, memory_bytes=96 * GiB, memory_type="HBM3",
         memory_bandwidth=4000 * GB, dense_flops=_H100_SXM_DENSE, sparse_flops=_H100_SXM_SPARSE,
         sms=132, cuda_cores=16896, tensor_cores=528, boost_clock_hz=1980e6, tdp_watts=1000,
         l2_bytes=50 * MiB, l1_per_sm_bytes=256 * KiB, nvlink_bandwidth=900 * GB,
         host_link="nvlink-c2c", source=SRC_GH200,
         notes="The GPU half of a Grace Hopper superchip; its CPU is a Grace (CPUS['grace']) with "
               "up to 480 GB LPDDR5X over NVLink-C2C. TDP is the whole module's (CPU + GPU + "
               "memory), configurable 450-1,000 W. *AI Infrastructure* draws it as an 80 GB H100: wrong."),
    _gpu(key="gh200-144gb", name="NVIDIA GH200 (H100 144GB HBM3e)", architecture="Hopper",
         form_factor="SXM", launch_year=2024, memory_bytes=144 * GiB, memory_type="HBM3e",
         memory_bandwidth=4900 * GB, dense_flops=_H100_SXM_DENSE, sparse_flops=_H100_SXM_SPARSE,
         sms=132, cuda_cores=16896, tensor_cores=528, boost_clock_hz=1980e6, tdp_watts=1000,
         l2_bytes=50 * MiB, l1_per_sm_bytes=256 * KiB, nvlink_bandwidth=900 * GB,
         host_link="nvlink-c2c", source=SRC_GH200,
         notes="The HBM3e variant of GH200 (2024): more and faster memory, same compute."),
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


# ---------------------------------------------------------------------------------------------
# CPUs next to GPUs: Grace (lesson 08, practice question 7 of *AI Infrastructure*)
# ---------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class CPU:
    """A CPU as its datasheet states it (only what the lessons use)."""

    key: str
    name: str
    cores: int
    core: str
    memory_bytes: float  # largest memory one CPU carries
    memory_type: str
    memory_bandwidth: float  # bytes/s
    gpu_link: str  # key in INTERCONNECTS: how it reaches its GPU
    source: str
    notes: str = ""


CPUS: MappingProxyType = MappingProxyType({c.key: c for c in [
    CPU("grace", "NVIDIA Grace CPU (in GH200)", cores=72, core="Arm Neoverse V2",
        memory_bytes=480 * GB, memory_type="LPDDR5X", memory_bandwidth=512 * GB,
        gpu_link="nvlink-c2c", source=SRC_GH200,
        notes="Up to 480 GB and up to 512 GB/s per Grace CPU. The Grace CPU Superchip (two Grace "
              "CPUs, 144 cores) carries up to 960 GB: *AI Infrastructure*'s '960 GB' is that, not one CPU."),
]})  # fmt: skip


# ---------------------------------------------------------------------------------------------
# Multi-Instance GPU (MIG) profiles (practice question 5 of *AI Infrastructure*)
# ---------------------------------------------------------------------------------------------

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
    compute_nic_bandwidth: float  # bytes/s per NIC, one direction
    compute_nic: str
    source: str
    notes: str = ""


SYSTEM_FABRICS: MappingProxyType = MappingProxyType({f.system: f for f in [
    SystemFabric("dgx-a100-640gb", nvswitches=6, nvswitch="NVSwitch (2nd generation)",
                 compute_nics=8, compute_nic_bandwidth=200 * GBIT_PER_S,
                 compute_nic="ConnectX-6 single-port HDR InfiniBand 200 Gb/s",
                 source="NVIDIA DGX A100 datasheet (2020) and User Guide",
                 notes="Plus 2 dual-port NICs for storage and the in-band network."),
    SystemFabric("dgx-h100", nvswitches=4, nvswitch="NVSwitch (3rd generation)",
                 compute_nics=8, compute_nic_bandwidth=400 * GBIT_PER_S,
                 compute_nic="ConnectX-7 NDR InfiniBand 400 Gb/s (in 4 OSFP cages, 2 per cage)",
                 source="NVIDIA DGX H100/H200 User Guide (2024); DGX H100 datasheet (2023)",
                 notes="*AI Infrastructure*'s '8x OSFP ports' are 4 OSFP cages of 2 x 400 Gb/s each; "
                       "storage and in-band management use 2 more dual-port NICs."),
    SystemFabric("dgx-h200", nvswitches=4, nvswitch="NVSwitch (3rd generation)",
                 compute_nics=8, compute_nic_bandwidth=400 * GBIT_PER_S,
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


#: FP32 cores ("CUDA cores") per SM by compute capability: the FP32 results per clock per SM in the
#: CUDA C++ Programming Guide's arithmetic-throughput table. *Computational Resources for ML*'s "SMs x 128" holds only for
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


def system(key_or_system: str | System) -> System:
    """Look up a GPU system (``"dgx-h100"``) by key; ValueError lists the choices."""
    if isinstance(key_or_system, System):
        return key_or_system
    if isinstance(key_or_system, str) and key_or_system in SYSTEMS:
        return SYSTEMS[key_or_system]
    raise ValueError(f"system must be one of {', '.join(SYSTEMS)}; got {key_or_system!r}")


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

#: The CPU-GPU link of Grace Hopper (GH200), the alternative to PCIe that the memory pyramid shows.
#: One row, in ``INTERCONNECTS`` (lesson 08's GH200 rows use it as their host link).
NVLINK_C2C = INTERCONNECTS["nvlink-c2c"]


def anatomy(key: str) -> Anatomy:
    """The anatomy row of GPU ``key``; ValueError lists the GPUs that have one."""
    if key not in ANATOMY:
        raise ValueError(
            f"gpu must be one of {', '.join(ANATOMY)} (those with anatomy data); got {key!r}"
        )
    return ANATOMY[key]


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
    memory_bandwidth: float  # bytes/s, all GPUs
    nvlink_bandwidth: float  # bytes/s, all GPUs, both directions
    dense_flops: MappingProxyType  # dtype -> FLOP/s for the rack, without sparsity
    average_watts: float  # facility planning figure per rack (an average over a scalable unit)
    cooling: str
    source: str
    notes: str = ""

    @property
    def per_gpu_memory_bandwidth(self) -> float:
        return self.memory_bandwidth / self.gpus

    @property
    def per_gpu_nvlink_bandwidth(self) -> float:
        return self.nvlink_bandwidth / self.gpus


RACKS: MappingProxyType = MappingProxyType({r.key: r for r in [
    Rack("gb200-nvl72", "NVIDIA GB200 NVL72", gpu_architecture="Blackwell", gpus=72, cpus=36,
         memory_bytes=13.4e12, memory_bandwidth=576e12, nvlink_bandwidth=130e12,
         dense_flops=_frozen({"fp4": 720e15, "fp8": 360e15, "int8": 360e15, "fp16": 180e15,
                              "bf16": 180e15, "tf32": 90e15}),
         average_watts=1.2e6 / 8, cooling="liquid", source=SRC_GB200_NVL72,
         notes="Dense = half of NVIDIA's sparse figures. 150 kW is the reference architecture's "
               "1.2 MW per 8-rack scalable unit divided evenly (switches and cooling included), "
               "not one rack's nameplate. Per GPU: 8 TB/s HBM and 1.8 TB/s NVLink, as the B200; "
               "5 PFLOP/s dense FP8, above the HGX B200's 4.5 (GB200's GPUs may draw more power)."),
]})  # fmt: skip


__all__ = [
    "ANATOMY",
    "Anatomy",
    "anatomy",
    "CPU",
    "CPUS",
    "cuda_cores",
    "DTYPES",
    "FP32_CORES_PER_SM",
    "GPU",
    "gpu",
    "GPUS",
    "Interconnect",
    "INTERCONNECTS",
    "MIG_COMPUTE_SLICES",
    "MIG_MEMORY_SLICES",
    "MIG_PROFILES",
    "mig_profiles",
    "MigProfile",
    "NVLINK_C2C",
    "Rack",
    "RACKS",
    "SuperPodArchitecture",
    "SUPERPODS",
    "System",
    "system",
    "SYSTEM_FABRICS",
    "SystemFabric",
    "SYSTEMS",
]
