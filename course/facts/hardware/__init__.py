"""The one registry of hardware numbers, split by kind, each number with its source.

Lessons and calculators never retype a spec: they look it up here (``GPUS["h100-sxm"]``).
Conventions:

- SI base units: bytes, bytes/s (GB/s = 1e9 bytes/s), FLOP/s (integer "OPS" for int8 likewise),
  watts, hertz.
- Memory and cache *capacities* are binary, as the hardware has them: an "80GB" H100 or A100 has
  80 GiB = 80 x 2**30 bytes of HBM fitted (nvidia-smi shows 81,559 MiB = 79.6 GiB on an H100 80GB and
  torch 79.2 GiB, the rest reserved by the driver),
  and an "A100 40 MB" L2 has 40 MiB = 40,960 KiB (whitepapers give cache sizes in KB = KiB). The
  marketing name keeps NVIDIA's "80GB" (``name``); ``memory_bytes`` and ``l2_bytes`` are the binary
  bytes. Bandwidths stay decimal (3.35 TB/s = 3.35e12 bytes/s).
- ``dense_flop_per_s`` are peaks *without* 2:4 structured sparsity; ``sparse_flop_per_s`` are NVIDIA's headline
  figures with it (twice the dense). The source documents often quote the sparse figure as if it were
  dense: a lesson compares against ``dense_flop_per_s``.
- Tensor Core figures for fp16/bf16/fp8 are with fp32 accumulation where the datasheet distinguishes
  (consumer cards run fp16 accumulation at twice that; training uses fp32 accumulation).
- Peaks that follow from clock x units x FLOPs per clock are derived again in tests/facts/test_hardware_gpus.py.



Modules, by kind: ``gpus`` (``GPUS``, :func:`gpu`, FP32 cores per SM), ``interconnects`` (PCIe, NVLink,
InfiniBand), ``cpus`` (Grace), ``mig`` (Multi-Instance GPU profiles), ``systems`` (DGX servers, their
fabric, the DGX SuperPOD and rack-scale systems such as GB200 NVL72) and ``anatomy`` (the inside of a
GPU, for the diagrams). This package re-exports every public name, so ``hardware.gpu("h100-sxm")`` and
``from course.facts.hardware import GPUS`` read the same as before the split.
"""

from course.facts.hardware.anatomy import (
    ANATOMY,
    SRC_A100_ANATOMY,
    SRC_H100_ANATOMY,
    SRC_SHARED_BANKS,
    Anatomy,
    anatomy,
)
from course.facts.hardware.cpus import CPU, CPUS
from course.facts.hardware.gpus import (
    DTYPES,
    FP32_CORES_PER_SM,
    GPU,
    GPUS,
    SRC_3090,
    SRC_4090,
    SRC_A100,
    SRC_B200,
    SRC_GH200,
    SRC_H100,
    SRC_H200,
    SRC_L40S,
    SRC_V100,
    FormFactor,
    cuda_cores,
    gpu,
)
from course.facts.hardware.interconnects import INTERCONNECTS, NVLINK_C2C, Interconnect
from course.facts.hardware.mig import (
    MIG_COMPUTE_SLICES,
    MIG_MEMORY_SLICES,
    MIG_PROFILES,
    SRC_MIG_A100_40,
    SRC_MIG_A100_80,
    SRC_MIG_GUIDE,
    SRC_MIG_H100,
    MigProfile,
    mig_profiles,
)
from course.facts.hardware.systems import (
    RACKS,
    SRC_GB200_NVL72,
    SUPERPODS,
    SYSTEM_FABRICS,
    SYSTEMS,
    Rack,
    SuperPodArchitecture,
    System,
    SystemFabric,
    system,
)

__all__ = [
    "FormFactor",
    "SRC_3090",
    "SRC_4090",
    "SRC_A100",
    "SRC_A100_ANATOMY",
    "SRC_B200",
    "SRC_GB200_NVL72",
    "SRC_GH200",
    "SRC_H100",
    "SRC_H100_ANATOMY",
    "SRC_H200",
    "SRC_L40S",
    "SRC_MIG_A100_40",
    "SRC_MIG_A100_80",
    "SRC_MIG_GUIDE",
    "SRC_MIG_H100",
    "SRC_SHARED_BANKS",
    "SRC_V100",
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
