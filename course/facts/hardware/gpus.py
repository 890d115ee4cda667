"""GPUs as their datasheets state them: ``GPUS``, :func:`gpu`, and FP32 cores per SM.

Conventions: see the package docstring (``course/facts/hardware/__init__.py``).
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from types import MappingProxyType
from typing import Literal

from course.facts.units import GB, GiB, KiB, MiB

#: dtype keys used in ``dense_flop_per_s``/``sparse_flop_per_s`` (``fp64_tc`` = FP64 on Tensor Cores).
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
    memory_bandwidth_bytes_per_s: float  # bytes/s, device memory (HBM/GDDR)
    dense_flop_per_s: MappingProxyType  # dtype -> FLOP/s, without sparsity
    sparse_flop_per_s: MappingProxyType  # dtype -> FLOP/s with 2:4 sparsity, where quoted
    sms: int
    cuda_cores: int  # FP32 cores
    tensor_cores: int
    boost_clock_hz: float
    tdp_watts: float
    l2_bytes: float
    l1_per_sm_bytes: float  # combined L1 cache / shared memory per SM
    nvlink_bandwidth_bytes_per_s: float  # bytes/s, all links, both directions (0 if none)
    host_link: str  # key in INTERCONNECTS
    source: str
    notes: str = ""
    #: Clock at which the datasheet's Tensor Core peaks are quoted, where it differs from
    #: ``boost_clock_hz`` (H100 SXM: 1,830 MHz, whitepaper); ``None``: the boost clock.
    tensor_clock_hz: float | None = None

    def peak_flop_per_s(self, dtype: str, *, sparse: bool = False) -> float:
        """Peak FLOP/s for ``dtype`` (dense unless ``sparse``); ValueError if the GPU has none."""
        table = self.sparse_flop_per_s if sparse else self.dense_flop_per_s
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
        return self.peak_flop_per_s(dtype) / (self.sms * clock)


def _gpu(**kw) -> GPU:
    kw["dense_flop_per_s"] = _frozen(kw["dense_flop_per_s"])
    kw["sparse_flop_per_s"] = _frozen(kw.get("sparse_flop_per_s", {}))
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

_H100_SXM = _gpu(
    key="h100-sxm",
    name="NVIDIA H100 SXM 80GB",
    architecture="Hopper",
    form_factor="SXM",
    launch_year=2022,
    memory_bytes=80 * GiB,
    memory_type="HBM3",
    memory_bandwidth_bytes_per_s=3350 * GB,
    dense_flop_per_s=_H100_SXM_DENSE,
    sparse_flop_per_s=_H100_SXM_SPARSE,
    sms=132,
    cuda_cores=16896,
    tensor_cores=528,
    boost_clock_hz=1980e6,
    tdp_watts=700,
    l2_bytes=50 * MiB,
    l1_per_sm_bytes=256 * KiB,
    nvlink_bandwidth_bytes_per_s=900 * GB,
    host_link="pcie5",
    source=SRC_H100,
    tensor_clock_hz=1830e6,
    notes="Tensor Core peaks correspond to a 1,830 MHz clock; FP32/FP64 to 1,980 MHz.",
)


def _same_chip(chip: GPU, **changes) -> GPU:
    """A product built on ``chip``'s silicon: its SMs, cores, clocks, caches and peaks, with the
    fields that differ (memory, power, host link, name, source) given. H200 and GH200 are H100s."""
    return dataclasses.replace(chip, **changes)


GPUS: MappingProxyType = MappingProxyType({g.key: g for g in [
    _gpu(key="v100-sxm2-32gb", name="NVIDIA V100 SXM2 32GB", architecture="Volta",
         form_factor="SXM", launch_year=2018, memory_bytes=32 * GiB, memory_type="HBM2",
         memory_bandwidth_bytes_per_s=900 * GB,
         dense_flop_per_s={"fp64": 7.8 * T, "fp32": 15.7 * T, "fp16": 125 * T},
         sms=80, cuda_cores=5120, tensor_cores=640, boost_clock_hz=1530e6, tdp_watts=300,
         l2_bytes=6 * MiB, l1_per_sm_bytes=128 * KiB, nvlink_bandwidth_bytes_per_s=300 * GB,
         host_link="pcie3", source=SRC_V100,
         notes="No TF32, BF16 or FP8; Tensor Cores do FP16 only. The 16 GB V100 launched in 2017."),
    _gpu(key="a100-40gb-sxm", name="NVIDIA A100 40GB SXM", architecture="Ampere",
         form_factor="SXM", launch_year=2020, memory_bytes=40 * GiB, memory_type="HBM2",
         memory_bandwidth_bytes_per_s=1555 * GB, dense_flop_per_s=_A100_DENSE, sparse_flop_per_s=_A100_SPARSE,
         sms=108, cuda_cores=6912, tensor_cores=432, boost_clock_hz=1410e6, tdp_watts=400,
         l2_bytes=40 * MiB, l1_per_sm_bytes=192 * KiB, nvlink_bandwidth_bytes_per_s=600 * GB,
         host_link="pcie4", source=SRC_A100,
         notes="HBM2, not HBM2e (*AI Infrastructure* says HBM2e for both A100s). 64 FP32 cores per SM."),
    _gpu(key="a100-80gb-sxm", name="NVIDIA A100 80GB SXM", architecture="Ampere",
         form_factor="SXM", launch_year=2020, memory_bytes=80 * GiB, memory_type="HBM2e",
         memory_bandwidth_bytes_per_s=2039 * GB, dense_flop_per_s=_A100_DENSE, sparse_flop_per_s=_A100_SPARSE,
         sms=108, cuda_cores=6912, tensor_cores=432, boost_clock_hz=1410e6, tdp_watts=400,
         l2_bytes=40 * MiB, l1_per_sm_bytes=192 * KiB, nvlink_bandwidth_bytes_per_s=600 * GB,
         host_link="pcie4", source=SRC_A100,
         notes="The PCIe 80GB card has 1,935 GB/s and 300 W."),
    _H100_SXM,
    _gpu(key="h100-pcie", name="NVIDIA H100 PCIe 80GB", architecture="Hopper",
         form_factor="PCIe", launch_year=2022, memory_bytes=80 * GiB, memory_type="HBM2e",
         memory_bandwidth_bytes_per_s=2000 * GB,
         dense_flop_per_s={"fp64": 26 * T, "fp64_tc": 51 * T, "fp32": 51 * T, "tf32": 378 * T,
                      "fp16": 756 * T, "bf16": 756 * T, "fp8": 1513 * T, "int8": 1513 * T},
         sparse_flop_per_s={"tf32": 756 * T, "fp16": 1513 * T, "bf16": 1513 * T, "fp8": 3026 * T,
                       "int8": 3026 * T},
         sms=114, cuda_cores=14592, tensor_cores=456, boost_clock_hz=1755e6, tdp_watts=350,
         l2_bytes=50 * MiB, l1_per_sm_bytes=256 * KiB, nvlink_bandwidth_bytes_per_s=600 * GB,
         host_link="pcie5", source=SRC_H100,
         notes="NVLink through a bridge between pairs of cards."),
    _same_chip(_H100_SXM, key="h200-sxm", name="NVIDIA H200 SXM 141GB", launch_year=2024,
               memory_bytes=141 * GiB, memory_type="HBM3e", memory_bandwidth_bytes_per_s=4800 * GB,
               source=SRC_H200,
               notes="The H100 SXM chip with more and faster memory: same compute peaks. Sold as "
                     "141GB; nvidia-smi reports about 140 GiB usable, so 141 GiB is stored."),
    _gpu(key="l40s", name="NVIDIA L40S", architecture="Ada Lovelace",
         form_factor="PCIe", launch_year=2023, memory_bytes=48 * GiB, memory_type="GDDR6",
         memory_bandwidth_bytes_per_s=864 * GB,
         dense_flop_per_s={"fp32": 91.6 * T, "tf32": 183 * T, "fp16": 362.05 * T, "bf16": 362.05 * T,
                      "fp8": 733 * T, "int8": 733 * T},
         sparse_flop_per_s={"tf32": 366 * T, "fp16": 733 * T, "bf16": 733 * T, "fp8": 1466 * T,
                       "int8": 1466 * T},
         sms=142, cuda_cores=18176, tensor_cores=568, boost_clock_hz=2520e6, tdp_watts=350,
         l2_bytes=96 * MiB, l1_per_sm_bytes=128 * KiB, nvlink_bandwidth_bytes_per_s=0,
         host_link="pcie4", source=SRC_L40S,
         notes="No NVLink. *AI Infrastructure*'s 'TF32 362' is the FP16 figure; TF32 is 183 dense."),
    _gpu(key="rtx-3090", name="NVIDIA GeForce RTX 3090", architecture="Ampere",
         form_factor="consumer", launch_year=2020, memory_bytes=24 * GiB, memory_type="GDDR6X",
         memory_bandwidth_bytes_per_s=936 * GB,
         dense_flop_per_s={"fp32": 35.6 * T, "tf32": 35.6 * T, "fp16": 71 * T, "bf16": 71 * T,
                      "int8": 284 * T},
         sparse_flop_per_s={"tf32": 71 * T, "fp16": 142 * T, "bf16": 142 * T, "int8": 568 * T},
         sms=82, cuda_cores=10496, tensor_cores=328, boost_clock_hz=1695e6, tdp_watts=350,
         l2_bytes=6 * MiB, l1_per_sm_bytes=128 * KiB, nvlink_bandwidth_bytes_per_s=112.5 * GB,
         host_link="pcie4", source=SRC_3090,
         notes="FP16/BF16 with FP32 accumulate; with FP16 accumulate FP16 is 142 dense."),
    _gpu(key="rtx-4090", name="NVIDIA GeForce RTX 4090", architecture="Ada Lovelace",
         form_factor="consumer", launch_year=2022, memory_bytes=24 * GiB, memory_type="GDDR6X",
         memory_bandwidth_bytes_per_s=1008 * GB,
         dense_flop_per_s={"fp32": 82.6 * T, "tf32": 82.6 * T, "fp16": 165.2 * T, "bf16": 165.2 * T,
                      "fp8": 330.3 * T, "int8": 660.6 * T},
         sparse_flop_per_s={"tf32": 165.2 * T, "fp16": 330.4 * T, "bf16": 330.4 * T,
                       "fp8": 660.6 * T, "int8": 1321.2 * T},
         sms=128, cuda_cores=16384, tensor_cores=512, boost_clock_hz=2520e6, tdp_watts=450,
         l2_bytes=72 * MiB, l1_per_sm_bytes=128 * KiB, nvlink_bandwidth_bytes_per_s=0,
         host_link="pcie4", source=SRC_4090,
         notes="FP16/BF16/FP8 with FP32 accumulate; FP16 accumulate doubles them. No NVLink."),
    # Rows below use binary memory sizes (a "180GB" B200 has 180 GiB), as the package docstring says.
    _gpu(key="b200", name="NVIDIA B200 (HGX/DGX B200)", architecture="Blackwell",
         form_factor="SXM", launch_year=2024, memory_bytes=180 * GiB, memory_type="HBM3e",
         memory_bandwidth_bytes_per_s=8000 * GB, dense_flop_per_s=_B200_DENSE, sparse_flop_per_s=_B200_SPARSE,
         sms=148, cuda_cores=148 * 128, tensor_cores=148 * 4,
         boost_clock_hz=75e12 / (2 * 148 * 128), tdp_watts=1000, l2_bytes=126.5 * MiB, l1_per_sm_bytes=256 * KiB,
         nvlink_bandwidth_bytes_per_s=1800 * GB, host_link="pcie5", source=SRC_B200,
         notes="NVLink 5: 18 links, 1.8 TB/s both ways. FP4 (9 PF dense per GPU) is not in DTYPES. "
               "Boost clock derived from the FP32 peak (75 TF = 18,944 cores x 2 x 1.98 GHz). "
               "NVIDIA's later HGX B200 spec table gives 7.7 TB/s (a 7,680-bit bus), the DGX "
               "datasheet 8 TB/s per GPU."),
    _same_chip(_H100_SXM, key="gh200-96gb", name="NVIDIA GH200 (H100 96GB HBM3)", launch_year=2023,
               memory_bytes=96 * GiB, memory_type="HBM3", memory_bandwidth_bytes_per_s=4000 * GB,
               tdp_watts=1000, host_link="nvlink-c2c", source=SRC_GH200,
               notes="The GPU half of a Grace Hopper superchip; its CPU is a Grace (CPUS['grace']) with "
                     "up to 480 GB LPDDR5X over NVLink-C2C. TDP is the whole module's (CPU + GPU + "
                     "memory), configurable 450-1,000 W. *AI Infrastructure* draws it as an 80 GB H100: wrong."),
    _same_chip(_H100_SXM, key="gh200-144gb", name="NVIDIA GH200 (H100 144GB HBM3e)", launch_year=2024,
               memory_bytes=144 * GiB, memory_type="HBM3e", memory_bandwidth_bytes_per_s=4900 * GB,
               tdp_watts=1000, host_link="nvlink-c2c", source=SRC_GH200,
               notes="The HBM3e variant of GH200 (2024): more and faster memory, same compute."),
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


__all__ = [
    "DTYPES",
    "FormFactor",
    "GPU",
    "GPUS",
    "gpu",
    "FP32_CORES_PER_SM",
    "cuda_cores",
]
