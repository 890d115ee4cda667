"""What an NVIDIA GPU and its driver must have for a torch build and for each CUDA branch of the
lessons: the one table of driver minimums and the one table of features by compute capability.

``course check`` reads :data:`DRIVER_MINIMUMS` to tell a driver too old for the installed torch
build and names the build to install instead (:data:`CUDA12_BUILD`); the guards in
``course.measure.gpu_guards`` read :data:`FEATURES` and :data:`TRITON_MIN_CAPABILITY` to skip what a
card lacks (a T4, compute capability 7.5, on Colab and Kaggle) and say why. Standard library
only.
"""

from __future__ import annotations

from dataclasses import dataclass
from types import MappingProxyType

DRIVER_SOURCE = (
    "NVIDIA CUDA Toolkit Release Notes, section 'CUDA Driver', table 'CUDA Toolkit and Minimum "
    "Required Driver Version for CUDA Minor Version Compatibility' (CUDA 12.x: >= 525.60.13 on "
    "Linux, >= 528.33 on Windows; CUDA 13.x: >= 580), and NVIDIA's CUDA Compatibility guide, "
    "'Minor Version Compatibility', Table 1 (CUDA 13.x >= 580, CUDA 12.x >= 525, CUDA 11.x >= 450)"
)

#: CUDA major version -> {"linux" | "windows": oldest driver that runs any build of that major},
#: by minor-version compatibility (:data:`DRIVER_SOURCE`). The CUDA 12.0 notes gave 527.41 for
#: Windows; the notes from 12.4 on give 528.33, the figure used here.
DRIVER_MINIMUMS: MappingProxyType[int, MappingProxyType[str, tuple[int, ...]]] = MappingProxyType(
    {
        12: MappingProxyType({"linux": (525, 60, 13), "windows": (528, 33)}),
        13: MappingProxyType({"linux": (580,), "windows": (580,)}),
    }
)


@dataclass(frozen=True)
class TorchBuild:
    """One CUDA build of torch on PyTorch's own package index."""

    tag: str  # the index's folder, e.g. "cu126"
    cuda: str  # the CUDA version it carries

    @property
    def index_url(self) -> str:
        return f"https://download.pytorch.org/whl/{self.tag}"


TORCH_BUILDS_SOURCE = (
    "PyTorch RELEASE.md, 'Release Compatibility Matrix', row 2.13: stable CUDA 12.6 and 13.0 "
    "(experimental 13.2); PyPI's Linux wheel of torch 2.13 is the CUDA 13.0 build"
)
#: The CUDA 12 build of the pinned torch on PyTorch's index: what a driver from 525.60.13 up to
#: (not including) 580 runs (:data:`TORCH_BUILDS_SOURCE`).
CUDA12_BUILD = TorchBuild(tag="cu126", cuda="12.6")
#: The build PyPI serves on Linux (and PyTorch's index as cu130).
CUDA13_BUILD = TorchBuild(tag="cu130", cuda="13.0")
CPU_INDEX_URL = "https://download.pytorch.org/whl/cpu"


@dataclass(frozen=True)
class Feature:
    """A hardware feature some CUDA branch of a lesson uses, and the first compute capability that
    has it (``since``). ``without`` says what happens on an older card, ``source`` where that is
    stated."""

    name: str
    since: tuple[int, int]
    without: str
    source: str


#: The one table of what a card lacks below a compute capability (a T4 is 7.5: it has fp16 and
#: int8 Tensor Cores and nothing below).
FEATURES: MappingProxyType[str, Feature] = MappingProxyType(
    {
        "tf32": Feature(
            name="TF32 Tensor Cores",
            since=(8, 0),
            without="torch's TF32 switch has no effect, so a 'tf32' matmul would time fp32 on the "
            "CUDA cores",
            source="NVIDIA A100 Tensor Core GPU Architecture whitepaper (2020): TF32 is new in "
            "Ampere's third-generation Tensor Cores",
        ),
        "bf16": Feature(
            name="bf16 Tensor Cores",
            since=(8, 0),
            without="torch still multiplies bf16, without Tensor Cores, so a bf16 timing would "
            "show emulation, not the card's 16-bit rate (use fp16: Tensor Cores from 7.0 run it)",
            source="NVIDIA A100 whitepaper (bf16 is new in Ampere's Tensor Cores); torch."
            "cuda.is_bf16_supported(including_emulation=False) is True from compute capability 8.0",
        ),
        "fp8": Feature(
            name="FP8 Tensor Cores",
            since=(8, 9),
            without="torch._scaled_mm refuses fp8 operands",
            source="NVIDIA Ada Lovelace (compute capability 8.9) and Hopper (9.0) architecture "
            "whitepapers: FP8 Tensor Cores; torch._scaled_mm requires compute capability 8.9+",
        ),
        "flash_attention": Feature(
            name="FlashAttention-2 kernel of torch's scaled_dot_product_attention",
            since=(8, 0),
            without="torch uses its memory-efficient or math attention backend instead",
            source="PyTorch aten/src/ATen/native/transformers/cuda/sdp_utils.cpp: 'Flash attention "
            "only supports gpu architectures in the range [sm80, sm121]'",
        ),
    }
)

TRITON_SOURCE = (
    "Triton README, 'Compatibility': 'NVIDIA GPUs (Compute Capability 8.0+)', since triton-lang/"
    "triton#5066 (Nov 2024: MMAv1 removed, tl.dot on older GPUs falls back to FMA), first released "
    "in Triton 3.3 (triton-lang/triton-windows#28: 'Turing is supported until Triton 3.2'); "
    "maintainers in triton-lang/triton#10918 (2026-07): sm75 'is not currently supported. It may "
    "work at times'. Triton 3.2 and earlier supported compute capability 7.0+"
)
#: (oldest Triton version, oldest compute capability it supports), newest first.
TRITON_MIN_CAPABILITY: tuple[tuple[tuple[int, int], tuple[int, int]], ...] = (
    ((3, 3), (8, 0)),
    ((0, 0), (7, 0)),
)

NVLINK_NOTE = (
    "NVLink is a property of the board and the server, not of the compute capability: a T4 has "
    "none (PCIe 3.0 x16 only; NVIDIA T4 datasheet), and GPUs that have it are linked only where "
    "the server wires them. `nvidia-smi topo -m` shows NV# between two GPUs joined by NVLink"
)


def triton_min_capability(triton_version: tuple[int, ...]) -> tuple[int, int]:
    """The oldest compute capability ``triton_version`` supports (:data:`TRITON_SOURCE`)."""
    for first_version, capability in TRITON_MIN_CAPABILITY:
        if tuple(triton_version[:2]) >= first_version:
            return capability
    return TRITON_MIN_CAPABILITY[-1][1]


def driver_minimum(cuda_major: int, os_name: str) -> tuple[int, ...] | None:
    """The oldest driver that runs a CUDA ``cuda_major`` build on ``os_name`` ("linux" or
    "windows"); None for a major or OS the table does not hold."""
    return DRIVER_MINIMUMS.get(cuda_major, {}).get(os_name)


def fmt_version(version: tuple[int, ...]) -> str:
    """(525, 60, 13) -> '525.60.13'."""
    return ".".join(map(str, version))
