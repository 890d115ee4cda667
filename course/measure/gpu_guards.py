"""The one place that decides whether this machine's GPU has what a lesson's CUDA branch uses.

Each guard returns ``""`` when the branch can run as written (or the device is not a CUDA GPU:
CPU and MPS branches have their own checks) and otherwise one sentence saying what the card lacks,
from which compute capability it exists, and what happens without it. Lessons print that sentence
and skip or substitute; ``matmul`` and ``kernels`` skip a dtype with it; ``triton_kernels`` runs
Triton on its interpreter with it. The facts (minimum compute capabilities and their sources) are
in ``course.facts.gpu_support``. A T4 (Colab, Kaggle: compute capability 7.5, 15 GB) lacks TF32,
bf16 and FP8 Tensor Cores, torch's FlashAttention kernel, NVLink, and the support of Triton 3.3+.
It reads torch (tests fake ``torch.cuda.get_device_capability`` and friends).
"""

from __future__ import annotations

import re

import torch

from course.facts import gpu_support
from course.measure import devices, topology

#: matmul dtype names (``course.measure.matmul.TORCH_DTYPES``) -> the feature they need on CUDA.
DTYPE_FEATURES = {"tf32": "tf32", "bf16": "bf16", "fp8_e4m3": "fp8", "fp8_e5m2": "fp8"}


def capability(device: str = "cuda") -> tuple[int, int] | None:
    """The compute capability of ``device`` ("cuda", "cuda:1"); None where it is not a CUDA GPU
    torch can use."""
    dev = torch.device(device)
    if dev.type != "cuda" or not torch.cuda.is_available():
        return None
    major, minor = torch.cuda.get_device_capability(dev)
    return int(major), int(minor)


def _card(device: str, cc: tuple[int, int]) -> str:
    name = torch.cuda.get_device_name(torch.device(device))
    return f"{name} (compute capability {cc[0]}.{cc[1]})"


def lacks(feature: str, device: str = "cuda") -> str:
    """Why ``device`` cannot use ``feature`` (a key of ``gpu_support.FEATURES``), or ``""``."""
    if feature not in gpu_support.FEATURES:
        raise ValueError(
            f"feature must be one of {', '.join(gpu_support.FEATURES)}, got {feature!r}"
        )
    cc = capability(device)
    wanted = gpu_support.FEATURES[feature]
    if cc is None or cc >= wanted.since:
        return ""
    since = f"{wanted.since[0]}.{wanted.since[1]}"
    card = _card(device, cc)
    return f"{card} has no {wanted.name} (compute capability {since}+): {wanted.without}"


def matmul_dtype(dtype: str, device: str = "cuda") -> str:
    """Why a ``dtype`` matmul on ``device`` would not measure what its name says, or ``""``."""
    feature = DTYPE_FEATURES.get(dtype)
    return lacks(feature, device) if feature else ""


def tensor_core_dtype(device: str = "cuda") -> str:
    """The 16-bit dtype that runs on this GPU's Tensor Cores: bf16 from Ampere on, fp16 before."""
    return "fp16" if lacks("bf16", device) else "bf16"


def triton_unsupported(device: str = "cuda", triton_version: str | None = None) -> str:
    """Why the installed Triton should not compile for ``device`` (its README's minimum compute
    capability is higher), or ``""``. ``triton_version`` defaults to the installed one."""
    cc = capability(device)
    if cc is None:
        return ""
    if triton_version is None:
        try:
            from importlib.metadata import version

            triton_version = version("triton")
        except Exception:  # noqa: BLE001 (no triton: triton_kernels reports that itself)
            return ""
    parsed = tuple(int(p) for p in re.findall(r"\d+", triton_version)[:2])
    oldest = gpu_support.triton_min_capability(parsed)
    if cc >= oldest:
        return ""
    return (
        f"{_card(device, cc)} is below the compute capability {oldest[0]}.{oldest[1]} that Triton "
        f"{triton_version} supports (tl.dot has no Tensor Core path there): the kernels run on "
        "Triton's interpreter on the CPU instead, which checks them but does not time them"
    )


def gpu_link(a: int = 0, b: int = 1, topo_text: str | None = None) -> str:
    """How GPUs ``a`` and ``b`` are joined: "NVLink (NV4)" or "PCIe (PHB: ...)", from
    ``nvidia-smi topo -m`` (``topo_text`` for tests); "" where it cannot be read."""
    text = topo_text if topo_text is not None else devices.nvidia_smi(("topo", "-m"))
    rows = {row.device: row for row in topology.parse_topo(text or "")}
    row = rows.get(f"GPU{a}")
    code = row.links.get(f"GPU{b}", "") if row else ""
    if not code:
        return ""
    if code.startswith("NV"):
        return f"NVLink ({code})"
    meaning = topology.LINK_MEANING.get(code, "")
    return f"PCIe ({code}: {meaning})" if meaning else f"PCIe ({code})"


def no_nvlink(a: int = 0, b: int = 1, topo_text: str | None = None) -> str:
    """Why traffic between GPUs ``a`` and ``b`` does not use NVLink, or ``""`` when it does (or
    the topology cannot be read)."""
    link = gpu_link(a, b, topo_text)
    if not link or link.startswith("NVLink"):
        return ""
    return (
        f"GPU{a} and GPU{b} are joined by {link}, not NVLink: NCCL moves their bytes over PCIe, "
        f"at a fraction of NVLink's bandwidth. {gpu_support.NVLINK_NOTE}"
    )


def report(device: str = "cuda") -> list[str]:
    """Every guard that fires on ``device``: what this GPU lacks, one sentence each (empty on a
    card that has everything the lessons use, or without a CUDA GPU). The NVLink line, about the
    first two GPUs, comes with the first GPU's report only."""
    found = [lacks(feature, device) for feature in gpu_support.FEATURES]
    found.append(triton_unsupported(device))
    first = torch.device(device).index in (None, 0)
    if first and capability(device) is not None and torch.cuda.device_count() > 1:
        found.append(no_nvlink())
    return [line for line in found if line]
