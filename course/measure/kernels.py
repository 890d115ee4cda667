"""Small kernels with known FLOPs and bytes, measured for the roofline; and batching measured.

Each :class:`KernelSpec` states its work by formula: FLOPs (a multiply-add counts 2) and the
*least* bytes it must move between memory and the processor (read every input once, write every
output once), so its arithmetic intensity = FLOPs / bytes is a property of the kernel, not of the
machine. :func:`measure_kernels` times them and returns FLOP/s beside the intensity: the points a
roofline plot places under this machine's measured roofs (lesson 02).

Caches can make a kernel move fewer bytes from *main memory* than the formula says (a small
matrix that stays in L2 is not re-read from DRAM), so small kernels may sit above the DRAM roof:
that is the memory hierarchy at work, not an error.

:func:`batching_sweep` measures the lever of LLM decoding: one weight matrix applied to a batch of
``batch`` vectors. At batch 1 it is a matrix-vector product (every weight read for 2 FLOPs); each
extra vector reuses the weights already read, so FLOP/s grows with the batch until compute, not
memory, is the limit.

Used by lesson 02.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

import torch

from course.facts import validate
from course.measure import gpu_guards
from course.measure.timing import Budget, Sweep, check_device, progress, time_call

#: dtype name -> (torch dtype, bytes per element)
DTYPES = {
    "fp32": (torch.float32, 4),
    "fp64": (torch.float64, 8),
    "bf16": (torch.bfloat16, 2),
    "fp16": (torch.float16, 2),
}

COLUMNS = (
    "name",
    "device",
    "dtype",
    "flops",
    "bytes_moved",
    "intensity_flop_per_byte",
    "seconds",
    "flop_per_s",
    "bytes_per_s",
)


@dataclass(frozen=True)
class KernelSpec:
    """A kernel: its name, its work by formula, and how to build it (``build(device, dtype)``)."""

    name: str
    flops: float
    bytes_moved: float  # least bytes moved to/from memory, for the dtype it is built with
    build: Callable[[str, torch.dtype], Callable[[], object]]
    dtype: str = "fp32"
    batch: int | None = None  # vectors processed at once, where the kernel has a batch

    @property
    def intensity(self) -> float:
        """Arithmetic intensity, FLOPs per byte."""
        return self.flops / self.bytes_moved


@dataclass(frozen=True)
class KernelRecord:
    """One kernel measured: its FLOPs and bytes by formula, its median time, FLOP/s and bytes/s."""

    name: str
    device: str
    dtype: str
    flops: float
    bytes_moved: float
    intensity_flop_per_byte: float
    seconds: float  # median per call
    spread_seconds: float  # interquartile range per call
    repeats: int
    flop_per_s: float
    bytes_per_s: float  # bytes_moved / seconds: the bandwidth the formula implies
    threads: int | None = None
    batch: int | None = None


def _randn(*shape: int, device: str, dtype: torch.dtype, seed: int) -> torch.Tensor:
    gen = torch.Generator().manual_seed(seed)
    return torch.randn(*shape, generator=gen).to(device=device, dtype=dtype)


def _operands(
    first: tuple[int, ...], second: tuple[int, ...], device: str, dtype: torch.dtype
) -> tuple[torch.Tensor, torch.Tensor]:
    """Two seeded random operands of the given shapes (seeds 1 and 2), on ``device``."""
    return (
        _randn(*first, device=device, dtype=dtype, seed=1),
        _randn(*second, device=device, dtype=dtype, seed=2),
    )


def _dtype(dtype: str) -> tuple[torch.dtype, int]:
    return DTYPES[validate.choice("dtype", dtype, tuple(DTYPES))]


def vector_add(n: int, dtype: str = "fp32") -> KernelSpec:
    """``z = x + y`` for n-vectors: n FLOPs; reads 2n, writes n values."""
    n = validate.positive_int("n", n, maximum=2**31)
    _, size = _dtype(dtype)

    def build(device: str, dt: torch.dtype):
        x, y = _operands((n,), (n,), device, dt)
        z = torch.empty_like(x)
        return lambda: torch.add(x, y, out=z)

    return KernelSpec(f"vector add n={n:,}", float(n), 3.0 * n * size, build, dtype)


def dot(n: int, dtype: str = "fp32") -> KernelSpec:
    """``x . y`` for n-vectors: 2n FLOPs; reads 2n values."""
    n = validate.positive_int("n", n, maximum=2**31)
    _, size = _dtype(dtype)

    def build(device: str, dt: torch.dtype):
        x, y = _operands((n,), (n,), device, dt)
        return lambda: torch.dot(x, y)

    return KernelSpec(f"dot n={n:,}", 2.0 * n, 2.0 * n * size, build, dtype)


def matvec(n: int, dtype: str = "fp32") -> KernelSpec:
    """``W x`` for an n x n matrix: 2n^2 FLOPs; reads n^2 + n, writes n values."""
    n = validate.positive_int("n", n, maximum=2**16)
    _, size = _dtype(dtype)

    def build(device: str, dt: torch.dtype):
        w, x = _operands((n, n), (n,), device, dt)
        return lambda: torch.mv(w, x)

    return KernelSpec(f"matvec n={n:,}", 2.0 * n * n, (n * n + 2.0 * n) * size, build, dtype)


def matmul(n: int, dtype: str = "fp32") -> KernelSpec:
    """``A B`` for n x n matrices: 2n^3 FLOPs; reads 2n^2, writes n^2 values."""
    n = validate.positive_int("n", n, maximum=2**16)
    _, size = _dtype(dtype)

    def build(device: str, dt: torch.dtype):
        a, b = _operands((n, n), (n, n), device, dt)
        return lambda: a @ b

    return KernelSpec(f"matmul n={n:,}", 2.0 * n**3, 3.0 * n * n * size, build, dtype)


def batched_matvec(hidden: int, batch: int, dtype: str = "fp32") -> KernelSpec:
    """``X W^T`` with W hidden x hidden and X batch x hidden: one decoding step of a linear layer.

    2 * batch * hidden^2 FLOPs; reads hidden^2 weights + batch * hidden inputs, writes batch *
    hidden outputs. Batch 1 is a matrix-vector product; the weights are read once for all rows.
    """
    h = validate.positive_int("hidden", hidden, maximum=2**16)
    b = validate.positive_int("batch", batch, maximum=2**20)
    _, size = _dtype(dtype)

    def build(device: str, dt: torch.dtype):
        w, x = _operands((h, h), (b, h), device, dt)
        return lambda: torch.nn.functional.linear(x, w)

    flops = 2.0 * b * h * h
    moved = (h * h + 2.0 * b * h) * size
    return KernelSpec(f"linear hidden={h:,} batch={b}", flops, moved, build, dtype, batch=b)


def mlp_forward(batch: int, hidden: int, dtype: str = "fp32") -> KernelSpec:
    """A transformer MLP block's forward: Linear(h, 4h) -> GELU -> Linear(4h, h), no bias.

    FLOPs: 2 * batch * (h * 4h + 4h * h) = 16 * batch * h^2 (the GELU's few FLOPs per value are
    left out). Bytes: the 8h^2 weights, the input and output (batch * h each) and the hidden
    activations written and read back (2 * batch * 4h).
    """
    b = validate.positive_int("batch", batch, maximum=2**20)
    h = validate.positive_int("hidden", hidden, maximum=2**15)
    _, size = _dtype(dtype)

    def build(device: str, dt: torch.dtype):
        with torch.random.fork_rng(devices=[]):  # seeded weights, global RNG left as it was
            torch.manual_seed(0)
            mlp = torch.nn.Sequential(
                torch.nn.Linear(h, 4 * h, bias=False),
                torch.nn.GELU(),
                torch.nn.Linear(4 * h, h, bias=False),
            )
        mlp = mlp.to(device=device, dtype=dt).eval()
        x = _randn(b, h, device=device, dtype=dt, seed=2)

        def run():
            with torch.no_grad():
                return mlp(x)

        return run

    flops = 16.0 * b * h * h
    moved = (8.0 * h * h + 2.0 * b * h + 8.0 * b * h) * size
    return KernelSpec(f"MLP forward batch={b} hidden={h:,}", flops, moved, build, dtype, batch=b)


def roofline_kernels(dtype: str = "fp32") -> list[KernelSpec]:
    """The default set for lesson 02: streaming kernels, matvec, matmuls, and a small MLP."""
    return [
        vector_add(4_000_000, dtype),
        dot(4_000_000, dtype),
        matvec(2048, dtype),
        matmul(64, dtype),
        matmul(256, dtype),
        matmul(1024, dtype),
        mlp_forward(64, 512, dtype),
    ]


def measure_kernels(
    specs: Sequence[KernelSpec],
    *,
    device: str = "cpu",
    threads: int | None = None,
    budget_seconds: float = 6.0,
    show_progress: bool | None = None,
) -> Sweep:
    """Time each kernel (median of repeats) within ``budget_seconds``; records hold FLOP/s and
    bytes/s."""
    check_device(device)
    budget = Budget(budget_seconds)
    sweep = Sweep(f"Kernels on {device}", budget.seconds, columns=COLUMNS)
    if not specs:
        raise ValueError("specs must list at least one kernel")
    per_point = min(0.2, max(0.01, budget.seconds / (3 * len(specs))))
    with progress(
        len(specs), desc="kernels", budget_seconds=budget.seconds, show=show_progress
    ) as bar:
        for spec in specs:
            if not budget.fits(2 * per_point):
                sweep.skipped.append(f"{spec.name}: {budget.remaining:.2g} s of budget left")
                bar.update(1)
                continue
            fn = spec.build(device, _dtype(spec.dtype)[0])
            timing = time_call(fn, device=device, threads=threads, min_run_time=per_point)
            t = timing.median_seconds
            sweep.records.append(
                KernelRecord(
                    spec.name,
                    device,
                    spec.dtype,
                    spec.flops,
                    spec.bytes_moved,
                    spec.intensity,
                    t,
                    timing.iqr_seconds,
                    timing.repeats,
                    spec.flops / t,
                    spec.bytes_moved / t,
                    timing.threads,
                    spec.batch,
                )
            )
            bar.update(1)
    sweep.elapsed_seconds = budget.elapsed
    return sweep


def batching_sweep(
    hidden: int = 2048,
    batches: Sequence[int] = (1, 2, 4, 8, 16, 32, 64, 128, 256),
    *,
    dtype: str = "fp32",
    device: str = "cpu",
    threads: int | None = None,
    budget_seconds: float = 5.0,
    show_progress: bool | None = None,
) -> Sweep:
    """One hidden x hidden linear layer applied to 1, 2, 4, ... vectors at once (see module doc).

    A 16-bit ``dtype`` the GPU has no Tensor Cores for (bf16 before compute capability 8.0) is
    refused with ``gpu_guards``' reason: ``gpu_guards.tensor_core_dtype(device)`` names the one it
    has."""
    lacking = gpu_guards.matmul_dtype(dtype, device)
    if lacking:
        raise ValueError(f"dtype {dtype!r} on {device!r} is not measured: {lacking}")
    specs = [batched_matvec(hidden, b, dtype) for b in sorted(set(batches))]
    sweep = measure_kernels(
        specs,
        device=device,
        threads=threads,
        budget_seconds=budget_seconds,
        show_progress=show_progress,
    )
    sweep.title = f"Batching: linear layer {hidden} x {hidden} on {device}"
    return sweep


__all__ = [
    "COLUMNS",
    "DTYPES",
    "KernelRecord",
    "KernelSpec",
    "batched_matvec",
    "batching_sweep",
    "dot",
    "matmul",
    "matvec",
    "measure_kernels",
    "mlp_forward",
    "roofline_kernels",
    "vector_add",
]
