"""What this machine has: CPU, caches, memory, and the CUDA or Apple MPS devices torch can use.

Every lesson prints ``describe_machine()`` in its setup cell, so each measured figure says where it
was measured. Lesson 00 shows the whole of ``machine_info()`` and ``cuda_stack()`` (the
driver / toolkit / cuDNN "version triangle" of *Computational Resources for ML*). It reads
the OS and torch and computes nothing. Cache sizes come from the OS (Linux sysfs, macOS sysctl);
where the OS does not say, they are None.
"""

from __future__ import annotations

import ctypes
import os
import platform
import re
import shutil
import subprocess
import sys
from dataclasses import dataclass, field
from pathlib import Path

import psutil
import torch

from course.facts import gpu_support, report
from course.facts.units import fmt_bytes


@dataclass(frozen=True)
class CudaDevice:
    """One CUDA device as torch reports it (memory in bytes)."""

    index: int
    name: str
    memory_bytes: int
    sms: int
    compute_capability: tuple[int, int]
    l2_bytes: int | None


@dataclass(frozen=True)
class MachineInfo:
    """The machine at hand. Cache sizes in bytes, per core for L1/L2 (as the OS reports them)."""

    os: str
    python: str
    torch: str
    cpu_model: str
    logical_cores: int
    physical_cores: int | None
    usable_cores: int
    torch_threads: int
    caches: dict[str, int] = field(default_factory=dict)  # "L1d", "L2", "L3" -> bytes
    ram_bytes: int = 0
    cuda: tuple[CudaDevice, ...] = ()
    mps: bool = False
    cpu_capability: str = ""  # torch.backends.cpu.get_cpu_capability(): "AVX2", "AVX512", ...
    cpu_features: tuple[
        str, ...
    ] = ()  # matrix/vector features, e.g. ("AVX2", "AVX-512 BF16", "AMX-BF16")

    @property
    def accelerator(self) -> str:
        """'cuda', 'mps' or 'cpu': the best device torch can use here."""
        return "cuda" if self.cuda else "mps" if self.mps else "cpu"


def _read(path: Path) -> str | None:
    try:
        return path.read_text().strip()
    except OSError:
        return None


def _size_to_bytes(text: str) -> int | None:
    match = re.fullmatch(r"(\d+)\s*([KMG]?)i?B?", text.strip(), re.IGNORECASE)
    if not match:
        return None
    scale = {"": 1, "K": 2**10, "M": 2**20, "G": 2**30}[match.group(2).upper()]
    return int(match.group(1)) * scale


def _sysctl(name: str) -> str | None:
    if not shutil.which("sysctl"):
        return None
    try:
        out = subprocess.run(["sysctl", "-n", name], capture_output=True, text=True, timeout=5)
    except (OSError, subprocess.SubprocessError):
        return None
    if out.returncode != 0:
        return None
    return out.stdout.strip() or None


def cpu_caches() -> dict[str, int]:
    """Data/unified cache sizes of one core, in bytes, as the OS reports them ({} if it does
    not)."""
    caches: dict[str, int] = {}
    base = Path("/sys/devices/system/cpu/cpu0/cache")
    for index in sorted(base.glob("index*")):
        level, kind, size = (_read(index / name) for name in ("level", "type", "size"))
        if not (level and kind and size) or kind == "Instruction":
            continue
        label = f"L{level}d" if kind == "Data" else f"L{level}"
        if (nbytes := _size_to_bytes(size)) is not None:
            caches[label] = nbytes
    if not caches:  # macOS
        for label, key in (
            ("L1d", "hw.l1dcachesize"),
            ("L2", "hw.l2cachesize"),
            ("L3", "hw.l3cachesize"),
        ):
            value = _sysctl(key)
            if value and value.isdigit() and int(value) > 0:
                caches[label] = int(value)
    return caches


#: /proc/cpuinfo flag -> name, for the vector and matrix units that decide how fast a CPU multiplies
#: low-precision matrices (x86: Intel/AMD flag names; Arm Linux: the "Features" line).
X86_FEATURES = {
    "avx2": "AVX2",
    "avx512f": "AVX-512",
    "avx512_vnni": "AVX-512 VNNI",
    "avx512_bf16": "AVX-512 BF16",
    "avx512_fp16": "AVX-512 FP16",
    "amx_tile": "AMX",
    "amx_bf16": "AMX-BF16",
    "amx_int8": "AMX-INT8",
    "amx_fp16": "AMX-FP16",
}
ARM_FEATURES = {"asimd": "NEON", "sve": "SVE", "bf16": "BF16", "i8mm": "I8MM", "sme": "SME"}
#: Apple silicon: sysctl key -> name (1 when the core has the feature).
APPLE_FEATURES = {
    "hw.optional.arm.FEAT_BF16": "BF16",
    "hw.optional.arm.FEAT_I8MM": "I8MM",
    "hw.optional.arm.FEAT_SME": "SME",
}
#: Features with bf16 matrix or dot-product instructions (a bf16 matmul need not convert to fp32).
BF16_FEATURES = ("AVX-512 BF16", "AMX-BF16", "BF16", "SME")


def parse_cpu_flags(cpuinfo: str) -> tuple[str, ...]:
    """The features of :data:`X86_FEATURES` / :data:`ARM_FEATURES` named in a /proc/cpuinfo text."""
    for line in cpuinfo.splitlines():
        key, _, value = line.partition(":")
        if key.strip().lower() in ("flags", "features"):
            flags = set(value.split())
            table = X86_FEATURES if "avx2" in flags or "sse2" in flags else ARM_FEATURES
            return tuple(name for flag, name in table.items() if flag in flags)
    return ()


def cpu_features() -> tuple[str, ...]:
    """This CPU's vector/matrix features that matter for matmuls (Linux cpuinfo, macOS sysctl)."""
    found = parse_cpu_flags(_read(Path("/proc/cpuinfo")) or "")
    if found or platform.system() != "Darwin":
        return found
    return tuple(name for key, name in APPLE_FEATURES.items() if _sysctl(key) == "1")


def cpu_capability() -> str:
    """The widest instruction set torch's own CPU kernels use here ("AVX2", "AVX512",
    "DEFAULT"...)."""
    try:
        return str(torch.backends.cpu.get_cpu_capability())
    except (AttributeError, RuntimeError):
        return ""


def has_bf16_units(features: tuple[str, ...]) -> bool:
    """True when ``features`` include bf16 dot-product or matrix instructions."""
    return any(f in BF16_FEATURES for f in features)


def cpu_model() -> str:
    """The CPU's marketing name, from /proc/cpuinfo or sysctl; platform.processor() otherwise."""
    text = _read(Path("/proc/cpuinfo")) or ""
    for line in text.splitlines():
        if line.lower().startswith(("model name", "hardware")):
            return line.split(":", 1)[1].strip()
    return _sysctl("machdep.cpu.brand_string") or platform.processor() or platform.machine()


def _usable_cores() -> int:
    if hasattr(os, "sched_getaffinity"):
        return len(os.sched_getaffinity(0))
    return os.cpu_count() or 1


def cuda_devices() -> tuple[CudaDevice, ...]:
    """Every CUDA device torch sees (empty without a CUDA build or GPU)."""
    if not torch.cuda.is_available():
        return ()
    devices = []
    for i in range(torch.cuda.device_count()):
        p = torch.cuda.get_device_properties(i)
        devices.append(
            CudaDevice(
                index=i,
                name=p.name,
                memory_bytes=p.total_memory,
                sms=p.multi_processor_count,
                compute_capability=(p.major, p.minor),
                l2_bytes=getattr(p, "L2_cache_size", None),
            )
        )
    return tuple(devices)


def mps_available() -> bool:
    """True on Apple silicon with a torch build that supports the Metal (MPS) backend."""
    return bool(getattr(torch.backends, "mps", None) and torch.backends.mps.is_available())


def machine_info() -> MachineInfo:
    """Everything lessons say about the machine, read now."""
    return MachineInfo(
        os=f"{platform.system()} {platform.release()}",
        python=platform.python_version(),
        torch=torch.__version__,
        cpu_model=cpu_model(),
        logical_cores=os.cpu_count() or 1,
        physical_cores=psutil.cpu_count(logical=False),
        usable_cores=_usable_cores(),
        torch_threads=torch.get_num_threads(),
        caches=cpu_caches(),
        ram_bytes=psutil.virtual_memory().total,
        cuda=cuda_devices(),
        mps=mps_available(),
        cpu_capability=cpu_capability(),
        cpu_features=cpu_features(),
    )


def available_devices() -> list[str]:
    """Devices a measurement can run on here: always 'cpu', plus 'cuda' and/or 'mps'."""
    info = machine_info()
    return ["cpu"] + (["cuda"] if info.cuda else []) + (["mps"] if info.mps else [])


def describe_machine(info: MachineInfo | None = None) -> str:
    """Two lines for a lesson's setup cell: where it runs, and the CPU's vector/matrix features.

    'measured on: 2-core AMD EPYC, 24.6 GB RAM; no GPU (CPU only); torch 2.13.0' and
    'CPU features: AVX2 (torch kernels: AVX2)': whether the CPU has bf16 units (AVX-512 BF16, AMX,
    Arm BF16/SME) decides whether a bf16 matmul is faster or far slower than fp32 (lessons 01, 03).
    """
    info = info or machine_info()
    cpu = f"{info.usable_cores}-core {info.cpu_model}, {fmt_bytes(info.ram_bytes)} RAM"
    if info.cuda:
        gpus = ", ".join(f"{d.name} ({fmt_bytes(d.memory_bytes, binary=True)})" for d in info.cuda)
        accel = f"CUDA: {gpus}"
    elif info.mps:
        accel = "Apple GPU via MPS"
    else:
        accel = "no GPU (CPU only)"
    units = ", ".join(info.cpu_features) or "none reported"
    kernels = f" (torch kernels: {info.cpu_capability})" if info.cpu_capability else ""
    return f"measured on: {cpu}; {accel}; torch {info.torch}\nCPU features: {units}{kernels}"


@dataclass(frozen=True)
class DeviceTest:
    """The result of running a real computation on one device and checking it against the CPU."""

    device: str
    ok: bool
    max_rel_error: float
    detail: str

    def __str__(self) -> str:
        return f"[{'OK' if self.ok else 'FAIL'}] {self.device}: {self.detail}"


def verify_device(device: str, *, size: int = 256, rel_tol: float = 1e-3) -> DeviceTest:
    """Multiply two seeded random matrices on ``device`` and compare with float64 on the CPU.

    Unlike *Computational Resources for ML*'s script, which prints PASSED whenever no exception is
    raised, this waits for the device to finish (GPU work is asynchronous) and checks the numbers.
    The tolerance allows TF32 on Ampere and newer GPUs (10-bit mantissa, relative error ~1e-3 per
    product).
    """
    try:
        gen = torch.Generator().manual_seed(0)
        a, b = (torch.randn(size, size, generator=gen) for _ in range(2))
        expected = a.double() @ b.double()
        got = (a.to(device) @ b.to(device)).to("cpu")  # .to("cpu") waits for the device
        scale = expected.abs().max().item()
        err = ((got.double() - expected).abs().max() / scale).item()
    except Exception as exc:  # a broken driver shows up here: report it, don't crash the lesson
        return DeviceTest(device, False, float("nan"), f"{type(exc).__name__}: {exc}")
    ok = err <= rel_tol
    verdict = "correct" if ok else "WRONG"
    return DeviceTest(device, ok, err, f"{size}x{size} matmul {verdict} (max rel. error {err:.1e})")


def verify_devices() -> list[DeviceTest]:
    """``verify_device`` on every device torch can use here (see ``available_devices``)."""
    return [verify_device(d) for d in available_devices()]


@dataclass(frozen=True)
class CudaStack:
    """The 'version triangle' of *Computational Resources for ML*: driver, the CUDA runtime torch
    was built with, cuDNN; and the OS, whose driver numbering the minimums depend on."""

    torch_cuda: str | None  # CUDA version torch was compiled against (None: CPU or MPS build)
    cudnn: int | None
    driver: str | None  # NVIDIA driver version, from nvidia-smi or NVML
    driver_max_cuda: str | None  # newest CUDA the driver supports (nvidia-smi's "CUDA Version")
    arch_list: tuple[str, ...]  # architectures this torch build has kernels for (sm_80, ...)
    os_name: str = "linux"  # "linux" or "windows": the driver minimums differ
    torch_version: str | None = None  # e.g. "2.13.0": the release a command should reinstall

    def table(self) -> report.Table:
        """The stack as a newcomer reads it: one row per layer, its version, and what it is (a
        cuDNN version number such as 92000 written as 9.20.0; a missing layer says why)."""
        rows = [
            ("NVIDIA driver", self.driver or "none found", "the kernel module nvidia-smi reports"),
            (
                "newest CUDA the driver runs",
                self.driver_max_cuda or "-",
                "nvidia-smi's 'CUDA Version': a ceiling, not what is installed",
            ),
            ("torch", self.torch_version or "-", "the PyTorch release"),
            (
                "CUDA runtime torch was built with",
                self.torch_cuda or "none (a CPU-only or MPS build)",
                "torch.version.cuda",
            ),
            ("cuDNN", cudnn_version(self.cudnn), "torch.backends.cudnn.version()"),
            (
                "GPU architectures torch has kernels for",
                ", ".join(self.arch_list) or "none",
                "torch.cuda.get_arch_list()",
            ),
            ("operating system", self.os_name, "the driver minimums differ by OS"),
        ]
        return report.Table(
            [dict(layer=layer, version=version, what_it_is=what) for layer, version, what in rows],
            title="The CUDA stack on this machine",
        )

    def problems(self, devices: tuple[CudaDevice, ...] = ()) -> list[str]:
        """What would stop CUDA from working, in plain words (empty when all is consistent)."""
        found = []
        advice = self.driver_advice()
        if advice:
            found.append(advice)
        # Minor-version compatibility (CUDA 11+): only the major versions must agree.
        elif (
            self.torch_cuda
            and self.driver_max_cuda
            and _version(self.driver_max_cuda)[:1] < _version(self.torch_cuda)[:1]
        ):
            found.append(
                f"driver supports CUDA up to {self.driver_max_cuda}, but torch needs "
                f"CUDA {self.torch_cuda}: update the driver"
            )
        for d in devices:
            sm = f"sm_{d.compute_capability[0]}{d.compute_capability[1]}"
            if self.arch_list and not _arch_supported(sm, self.arch_list):
                found.append(f"{d.name} is {sm}; this torch build has kernels for {self.arch_list}")
        return found

    def driver_advice(self) -> str:
        """Why this torch build cannot use this driver's GPU, and the command that installs one
        that can ('' when they fit, or where the driver is unknown).

        A CUDA N.x build needs the minimum driver of CUDA N (``gpu_support.DRIVER_MINIMUMS``,
        NVIDIA's CUDA Toolkit release notes): PyPI's torch 2.13 on Linux is CUDA 13 (driver 580+),
        so a machine on a 550 or 570 driver gets ``torch.cuda.is_available() == False``; PyTorch's
        own index has the CUDA 12.6 build of the same release, which runs from 525.60.13 (Linux).
        """
        if self.driver is None:
            return ""
        driver = _version(self.driver)
        build = _build_for(driver, self.os_name)
        if self.torch_cuda is None:
            if build is None:
                return (
                    f"this machine has an NVIDIA driver ({self.driver}), older than any CUDA 12 "
                    f"build of torch needs ({_minimum_text(12, self.os_name)}): update the driver "
                    "to use the GPU; the lessons run on the CPU meanwhile"
                )
            return (
                f"this torch is a CPU-only build, but the machine has an NVIDIA driver "
                f"({self.driver}): to use the GPU, install the CUDA {build.cuda} build of the "
                "same release from PyTorch's index: "
                f"{install_command(build.index_url, self.torch_version)}"
            )
        major = _version(self.torch_cuda)[0]
        needed = gpu_support.driver_minimum(major, self.os_name)
        if needed is None or driver >= needed:
            return ""
        head = (
            f"driver {self.driver} is older than {gpu_support.fmt_version(needed)}, the oldest "
            f"that runs a CUDA {major}.x build such as this torch (CUDA {self.torch_cuda}; "
            "NVIDIA's CUDA Toolkit release notes), so torch cannot use the GPU"
        )
        if build is not None:
            return (
                f"{head}. Install the CUDA {build.cuda} build of the same release, which this "
                f"driver runs ({_minimum_text(_version(build.cuda)[0], self.os_name)}): "
                f"{install_command(build.index_url, self.torch_version)}; or update the driver to "
                f"{gpu_support.fmt_version(needed)} or newer"
            )
        return (
            f"{head}, nor a CUDA 12 build ({_minimum_text(12, self.os_name)}): update the driver, "
            "or install the CPU build: "
            f"{install_command(gpu_support.CPU_INDEX_URL, self.torch_version)}"
        )


def cudnn_version(number: int | None) -> str:
    """cuDNN's version number as a version: 92000 -> '9.20.0' (cuDNN 9 and later encode
    major x 10,000 + minor x 100 + patch), 8902 -> '8.9.2' (cuDNN 8: major x 1,000 + minor x 100 +
    patch; cudnn.h's CUDNN_VERSION); None -> 'none (no cuDNN in this build)'."""
    if number is None:
        return "none (no cuDNN in this build)"
    major, rest = divmod(int(number), 10_000 if number >= 10_000 else 1_000)
    return f"{major}.{rest // 100}.{rest % 100}"


def _minimum_text(cuda_major: int, os_name: str) -> str:
    needed = gpu_support.driver_minimum(cuda_major, os_name)
    return f"driver {gpu_support.fmt_version(needed)}+ on {os_name.title()}" if needed else "?"


def _build_for(driver: tuple[int, ...], os_name: str) -> gpu_support.TorchBuild | None:
    """The newest CUDA build of torch on PyTorch's index that ``driver`` runs (None: none)."""
    for build in (gpu_support.CUDA13_BUILD, gpu_support.CUDA12_BUILD):
        needed = gpu_support.driver_minimum(_version(build.cuda)[0], os_name)
        if needed is not None and driver >= needed:
            return build
    return None


def install_command(index_url: str, torch_version: str | None = None) -> str:
    """The pip command that replaces torch by the build on ``index_url`` (same release)."""
    wanted = f"torch=={torch_version}" if torch_version else "torch"
    return (
        f"`python -m pip uninstall -y torch && python -m pip install {wanted} "
        f"--index-url {index_url}`"
    )


def _version(text: str) -> tuple[int, ...]:
    return tuple(int(p) for p in re.findall(r"\d+", text))


def _arch_supported(sm: str, arch_list: tuple[str, ...]) -> bool:
    """A GPU runs a build's kernels for its own architecture, or a same-major one at or below it."""
    major, minor = int(sm[3:-1]), int(sm[-1])
    for arch in arch_list:
        m = re.fullmatch(r"(?:sm|compute)_(\d+?)(\d)a?", arch)
        if m and int(m.group(1)) == major and int(m.group(2)) <= minor:
            return True
    return False


def nvidia_smi(args: tuple[str, ...] = ()) -> str | None:
    """The output of ``nvidia-smi`` (None where it is not installed or fails)."""
    if not shutil.which("nvidia-smi"):
        return None
    try:
        out = subprocess.run(["nvidia-smi", *args], capture_output=True, text=True, timeout=20)
    except (OSError, subprocess.SubprocessError):
        return None
    return out.stdout if out.returncode == 0 else None


def nvml_driver_version() -> str | None:
    """The driver version from NVML (``libnvidia-ml.so.1``, ``nvml.dll``) through ctypes, for a
    machine whose ``nvidia-smi`` is missing from the PATH; None where NVML is absent or fails."""
    name = "nvml.dll" if sys.platform == "win32" else "libnvidia-ml.so.1"
    try:
        lib = ctypes.CDLL(name)
        if lib.nvmlInit_v2() != 0:
            return None
        buffer = ctypes.create_string_buffer(96)
        ok = lib.nvmlSystemGetDriverVersion(buffer, ctypes.c_uint(96)) == 0
        lib.nvmlShutdown()
    except (OSError, AttributeError):
        return None
    return buffer.value.decode() if ok else None


def driver_version(smi: str | None = None) -> str | None:
    """The NVIDIA driver version: from ``nvidia-smi``'s summary (``smi``: its text, read here if
    None), else from NVML; None on a machine without an NVIDIA driver."""
    smi = nvidia_smi() if smi is None else smi
    found = re.search(r"Driver Version:\s*([\d.]+)", smi or "")
    return found.group(1) if found else nvml_driver_version()


def os_name() -> str:
    """'windows' or 'linux', the two columns of NVIDIA's driver table (WSL, a Linux userland on
    the Windows driver, counts as Linux here)."""
    return "windows" if sys.platform == "win32" else "linux"


def cuda_stack() -> CudaStack:
    """Read the three versions that must agree for torch to use an NVIDIA GPU."""
    smi = nvidia_smi() or ""
    max_cuda = re.search(r"CUDA Version:\s*([\d.]+)", smi)
    has_cuda_build = torch.version.cuda is not None
    return CudaStack(
        torch_cuda=torch.version.cuda,
        cudnn=torch.backends.cudnn.version() if has_cuda_build else None,
        driver=driver_version(smi),
        driver_max_cuda=max_cuda.group(1) if max_cuda else None,
        arch_list=tuple(torch.cuda.get_arch_list()) if has_cuda_build else (),
        os_name=os_name(),
        torch_version=torch.__version__.split("+", 1)[0],
    )
