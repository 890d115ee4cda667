"""Matrix-multiply throughput on this machine: pure Python, numpy and torch, by size, dtype,
threads.

Every measurement is an ``n x n @ n x n`` product, which costs ``2 n^3`` FLOPs (one multiply and one
add per term; ``course.calculators.compute.matmul_flops``). A record keeps the FLOPs beside the
seconds so a lesson can show FLOP/s, the rate, rather than seconds, which mix the rate with the
problem size (*GPU Infrastructure & Computational Requirements* times a 32 x 32 loop against a
1024 x 1024 BLAS call and calls the ratio a speed-up).

- :func:`time_matmul` times one point; :func:`matmul_sweep` times a grid of points inside a time
  budget, predicting each point's cost from the smaller sizes already measured and skipping
  what would not fit; :func:`thread_scaling` is the sweep over torch's thread count.
- Splitting those times into a fixed cost per call and a rate, and where two options cross, are
  calculations: ``course.calculators.overhead``.

On CUDA the dtypes ``tf32``, ``fp16`` and ``bf16`` use the Tensor Cores; ``fp32`` is measured
with TF32 switched off, so it runs on the CUDA cores. ``fp8_e4m3`` and ``fp8_e5m2`` multiply fp8
inputs with per-tensor scales into a bf16 product (``torch._scaled_mm``: Tensor Cores from Ada and
Hopper on, an upcasting fallback on the CPU); ``int8`` multiplies int8 inputs into an int32 product
(``torch._int_mm``), so its "FLOPs" are integer operations and its ``flop_per_s`` is integer
operations per second. Where torch cannot run a dtype on a device, the point is refused (and a
sweep skips it) with torch's reason; so is a dtype the GPU has no Tensor Cores for (tf32 and bf16
before compute capability 8.0, fp8 before 8.9: a T4), with ``gpu_guards``' reason. numpy's BLAS
has its own thread pool, which torch's setting does not reach: with ``threads`` given, numpy is
limited to the same count through threadpoolctl and its records say so; ``threads=None`` leaves
it at its default (records say ``None``).

Used by lessons 01, 02 (the compute roof) and 03 (throughput per dtype).
"""

from __future__ import annotations

import contextlib
import functools
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass

import numpy as np
import torch

from course.calculators.compute import matmul_flops
from course.facts import validate
from course.measure import gpu_guards
from course.measure.timing import Budget, Sweep, check_device, progress, time_call, usable_cores

LIBRARIES = ("python", "numpy", "torch")

#: dtype name -> torch dtype of the operands (``tf32`` stores fp32 and computes on TF32 Tensor
#: Cores, CUDA only; fp8 products come out in bf16, int8 products in int32).
TORCH_DTYPES = {
    "fp64": torch.float64,
    "fp32": torch.float32,
    "tf32": torch.float32,
    "fp16": torch.float16,
    "bf16": torch.bfloat16,
    "fp8_e4m3": torch.float8_e4m3fn,
    "fp8_e5m2": torch.float8_e5m2,
    "int8": torch.int8,
}
#: dtypes multiplied by torch's private scaled / integer GEMMs, which want sizes in multiples of 16
#: on CUDA (``torch._scaled_mm``: every dimension; ``torch._int_mm``: more than 16 rows).
SPECIAL_GEMM_DTYPES = ("fp8_e4m3", "fp8_e5m2", "int8")
NUMPY_DTYPES = {"fp64": np.float64, "fp32": np.float32, "fp16": np.float16}

#: Columns a matmul sweep shows as a table.
COLUMNS = (
    "library",
    "device",
    "dtype",
    "size",
    "threads",
    "seconds",
    "spread_seconds",
    "flop_per_s",
)


@dataclass(frozen=True)
class MatmulRecord:
    """One measured ``size x size`` matmul: the work, the median time per call and the rate.

    For ``dtype="int8"`` the operations are integer multiply-adds: ``flops`` counts integer
    operations and ``flop_per_s`` is integer operations per second (OP/s, not FLOP/s).
    """

    library: str  # "python", "numpy" or "torch"
    device: str  # "cpu", "cuda", "mps"
    dtype: str  # key of TORCH_DTYPES
    size: int  # n of the n x n matrices
    threads: int | None  # torch intra-op threads; None: numpy's own default, or Python (1)
    flops: float  # 2 n^3 (integer operations for int8)
    seconds: float  # median seconds per call
    spread_seconds: float  # interquartile range of the seconds per call
    repeats: int  # measurements the median is taken over
    flop_per_s: float  # flops / seconds (integer operations per second for int8)
    includes_transfer: bool = False  # True: host -> device copies and the copy back are timed too


def python_matmul(a: list[list[float]], b: list[list[float]]) -> list[list[float]]:
    """The schoolbook triple loop of *GPU Infrastructure & Computational Requirements*, on Python
    lists: one multiply-add at a time."""
    n, k, m = len(a), len(b), len(b[0])
    out = [[0.0] * m for _ in range(n)]
    for i in range(n):
        row, a_i = out[i], a[i]
        for j in range(m):
            total = 0.0
            for p in range(k):
                total += a_i[p] * b[p][j]
            row[j] = total
    return out


@contextlib.contextmanager
def _tf32(enabled: bool):
    """Allow or forbid TF32 Tensor Cores for CUDA fp32 matmuls, restoring the setting after.

    Uses ``torch.backends.cuda.matmul.fp32_precision`` ("tf32" / "ieee") where torch has it, the
    older ``allow_tf32`` flag otherwise (torch refuses a mix of the two APIs).
    """
    flags = torch.backends.cuda.matmul
    name, value = (
        ("fp32_precision", "tf32" if enabled else "ieee")
        if hasattr(flags, "fp32_precision")
        else ("allow_tf32", enabled)
    )
    before = getattr(flags, name)
    setattr(flags, name, value)
    try:
        yield
    finally:
        setattr(flags, name, before)


def _numpy_threads(threads: int | None):
    """Limit numpy's BLAS pool to ``threads`` (threadpoolctl); no limit for None."""
    if threads is None:
        return contextlib.nullcontext()
    from threadpoolctl import threadpool_limits

    return threadpool_limits(limits=threads, user_api="blas")


def numpy_blas() -> str:
    """numpy's BLAS library and its default thread count, e.g. 'openblas (2 threads)'."""
    from threadpoolctl import threadpool_info

    pools = [p for p in threadpool_info() if p.get("user_api") == "blas"]
    return (
        ", ".join(f"{p['internal_api']} ({p['num_threads']} threads)" for p in pools) or "unknown"
    )


def _check_point(library: str, dtype: str, device: str) -> None:
    validate.choice("library", library, LIBRARIES)
    validate.choice("dtype", dtype, tuple(TORCH_DTYPES))
    check_device(device)
    if library != "torch" and device != "cpu":
        raise ValueError(f"library {library!r} runs on the CPU only, got device {device!r}")
    if library == "python" and dtype != "fp64":
        raise ValueError(
            f"Python floats are fp64; dtype must be 'fp64' for library 'python', got {dtype!r}"
        )
    if library == "numpy" and dtype not in NUMPY_DTYPES:
        raise ValueError(f"numpy has no {dtype!r}; use one of {', '.join(NUMPY_DTYPES)}")
    if dtype == "tf32" and not device.startswith("cuda"):
        raise ValueError("tf32 is a CUDA Tensor Core mode; on the CPU use 'fp32'")
    if library == "torch":
        lacking = gpu_guards.matmul_dtype(dtype, device)
        if lacking:
            raise ValueError(f"{dtype!r} on {device!r} is not measured: {lacking}")
        reason = _unsupported(dtype, device)
        if reason:
            raise ValueError(f"torch cannot multiply {dtype!r} on {device!r} here: {reason}")


def _check_size(dtype: str, size: int) -> None:
    if dtype in SPECIAL_GEMM_DTYPES and (size < 32 or size % 16):
        raise ValueError(
            f"size must be a multiple of 16 and at least 32 for {dtype!r} "
            f"(torch's fp8 and int8 GEMMs on CUDA need it), got {size}"
        )


def _product(dtype: str, device: str) -> Callable[[torch.Tensor, torch.Tensor], torch.Tensor]:
    """The torch function that multiplies two operands of ``dtype`` (from :func:`_operands`)."""
    if dtype == "int8":  # int8 x int8 -> int32, torch's own integer GEMM
        return torch._int_mm
    if dtype in SPECIAL_GEMM_DTYPES:  # fp8 inputs, per-tensor scales of 1, bf16 product
        one = torch.ones((), device=device)
        return lambda a, b: torch._scaled_mm(
            a, b, scale_a=one, scale_b=one, out_dtype=torch.bfloat16
        )
    return torch.matmul


@functools.cache
def _unsupported(dtype: str, device: str) -> str:
    """Why torch cannot multiply ``dtype`` on ``device`` (tried once on 32 x 32), or '' if it
    can."""
    a, b = _operands("torch", dtype, 32, seed=0)
    try:
        _product(dtype, device)(a.to(device), b.to(device))
    except (RuntimeError, NotImplementedError, TypeError) as err:
        return str(err).strip().splitlines()[0][:160]
    return ""


def _operands(library: str, dtype: str, size: int, seed: int):
    gen = torch.Generator().manual_seed(seed)
    a, b = (torch.randn(size, size, generator=gen, dtype=torch.float64) for _ in range(2))
    if library == "python":
        return a.tolist(), b.tolist()
    if library == "numpy":
        return a.numpy().astype(NUMPY_DTYPES[dtype]), b.numpy().astype(NUMPY_DTYPES[dtype])
    if dtype == "int8":  # levels in -120..120: n products of two of them fit int32 up to n = 65536
        return tuple(x.clamp(-3, 3).mul(40).round().to(torch.int8) for x in (a, b))
    if dtype in SPECIAL_GEMM_DTYPES:  # torch._scaled_mm wants the second operand column-major
        return a.to(TORCH_DTYPES[dtype]), b.t().contiguous().to(TORCH_DTYPES[dtype]).t()
    return a.to(TORCH_DTYPES[dtype]), b.to(TORCH_DTYPES[dtype])


def matmul_callable(
    size: int,
    *,
    library: str = "torch",
    dtype: str = "fp32",
    device: str = "cpu",
    include_transfer: bool = False,
    seed: int = 0,
) -> Callable[[], object]:
    """A no-argument function that multiplies two seeded ``size x size`` matrices once.

    With ``include_transfer`` (torch on a GPU only) each call copies both inputs from host memory
    to the device and the product back: the cost of sending one small job to a GPU.
    ``fp8_e4m3``, ``fp8_e5m2`` and ``int8`` need a size that is a multiple of 16, at least 32.
    """
    n = validate.positive_int("size", size, maximum=65536)
    _check_point(library, dtype, device)
    _check_size(dtype, n)
    a, b = _operands(library, dtype, n, seed)
    if library == "python":
        return lambda: python_matmul(a, b)
    if library == "numpy":
        return lambda: a @ b
    mm = _product(dtype, device)
    if include_transfer:
        if device == "cpu":
            raise ValueError("include_transfer needs a GPU device ('cuda' or 'mps'), got 'cpu'")
        return lambda: mm(a.to(device), b.to(device)).to("cpu")
    a_dev, b_dev = a.to(device), b.to(device)  # .to keeps the column-major layout of fp8's b
    return lambda: mm(a_dev, b_dev)


def time_matmul(
    size: int,
    *,
    library: str = "torch",
    dtype: str = "fp32",
    device: str = "cpu",
    threads: int | None = None,
    min_run_time: float = 0.2,
    include_transfer: bool = False,
) -> MatmulRecord:
    """Time one ``size x size`` matmul (median of many calls) and return it as a record.

    ``dtype`` is a key of :data:`TORCH_DTYPES`; for ``int8`` the record's rate is integer
    operations per second.
    """
    fn = matmul_callable(
        size, library=library, dtype=dtype, device=device, include_transfer=include_transfer
    )
    pin = _numpy_threads(threads) if library == "numpy" else contextlib.nullcontext()
    with _tf32(dtype == "tf32"), pin:
        timing = time_call(fn, device=device, threads=threads, min_run_time=min_run_time)
    flops = matmul_flops(size, size, size)
    return MatmulRecord(
        library=library,
        device=device,
        dtype=dtype,
        size=size,
        threads=timing.threads if library == "torch" or (library == "numpy" and threads) else None,
        flops=flops,
        seconds=timing.median_seconds,
        spread_seconds=timing.iqr_seconds,
        repeats=timing.repeats,
        flop_per_s=flops / timing.median_seconds,
        includes_transfer=include_transfer,
    )


def _predict_call_seconds(done: list[MatmulRecord], size: int) -> float:
    """Seconds one call of ``size`` should take, from the largest smaller size measured.

    Scales the time by (size / measured)^3, doubled as a margin (rates fall at large sizes when the
    operands leave the caches; fp16/bf16 without hardware support fall ~3x per doubling here).
    """
    if not done:
        return 0.0
    last = max(done, key=lambda r: r.size)
    return 2.0 * last.seconds * (size / last.size) ** 3


def _groups(
    libraries: Sequence[str],
    dtypes: Sequence[str],
    devices: Sequence[str],
    threads: Sequence[int | None],
) -> tuple[list[tuple[str, str, str, int | None]], list[str]]:
    groups, skipped = [], []
    for library in libraries:
        for device in devices:
            for dtype in dtypes:
                try:
                    _check_point(library, dtype, device)
                except ValueError as exc:
                    skipped.append(f"{library}/{dtype}/{device}: {exc}")
                    continue
                # numpy and Python do not follow torch's thread setting: measure them once
                for t in threads if library == "torch" else threads[:1]:
                    groups.append((library, dtype, device, t))
    return groups, skipped


def matmul_sweep(
    sizes: Iterable[int],
    *,
    libraries: Sequence[str] = ("torch",),
    dtypes: Sequence[str] = ("fp32",),
    devices: Sequence[str] = ("cpu",),
    threads: Sequence[int | None] = (None,),
    budget_seconds: float = 10.0,
    min_run_time: float | None = None,
    include_transfer: bool = False,
    show_progress: bool | None = None,
) -> Sweep:
    """Time every (library, device, dtype, threads) group at each size, inside ``budget_seconds``
    seconds.

    Groups run one after another (numpy's and torch's thread pools slow each other when calls
    alternate), each with an equal share of the budget plus whatever earlier groups left over.
    Within a group sizes run smallest first; a size whose predicted cost (from the sizes measured
    before it) does not fit the group's share is skipped, with the reason in ``Sweep.skipped``.
    Combinations that cannot run (numpy bf16, Python fp32, tf32 on a CPU, fp8 or int8 where torch
    has no kernel for the device, sizes the fp8/int8 GEMMs refuse) are skipped up front, with the
    reason. ``dtypes`` are keys of :data:`TORCH_DTYPES`: fp64, fp32, tf32, fp16, bf16, fp8_e4m3,
    fp8_e5m2, int8. For int8 the records' ``flops`` count integer operations, so their
    ``flop_per_s`` is integer operations per second.
    """
    budget = Budget(budget_seconds)
    size_list = sorted({validate.positive_int("size", s, maximum=65536) for s in sizes})
    if not size_list:
        raise ValueError("sizes must name at least one matrix size")
    groups, skipped = _groups(libraries, dtypes, devices, threads)
    sweep = Sweep("Matrix multiply throughput", budget.seconds, skipped=skipped, columns=COLUMNS)
    bar = progress(
        len(groups) * len(size_list),
        desc="matmul sweep",
        budget_seconds=budget.seconds,
        show=show_progress,
    )
    with bar:
        for g, (library, dtype, device, t) in enumerate(groups):
            share = budget.remaining / (len(groups) - g)
            group_end = budget.elapsed + share
            # measuring time per point: half the share spread over the sizes, at most 0.2 s
            auto = min(0.2, max(0.01, share / (2 * len(size_list))))
            per_point = auto if min_run_time is None else min_run_time
            done: list[MatmulRecord] = []
            for size in size_list:
                try:
                    _check_size(dtype, size)
                except ValueError as exc:
                    skipped.append(f"{library}/{dtype}/{device} n={size}: {exc}")
                    bar.update(1)
                    continue
                left = group_end - budget.elapsed
                # warm-up + block-size estimate + at least one measured call ~ 3 calls
                predicted = 3 * _predict_call_seconds(done, size) + per_point
                if predicted > left or not budget.fits(predicted):
                    skipped.append(
                        f"{library}/{dtype}/{device} n={size}: predicted "
                        f"{predicted:.2g} s, {max(left, 0):.2g} s left"
                    )
                    bar.update(1)
                    continue
                record = time_matmul(
                    size,
                    library=library,
                    dtype=dtype,
                    device=device,
                    threads=t,
                    min_run_time=per_point,
                    include_transfer=include_transfer,
                )
                done.append(record)
                sweep.records.append(record)
                bar.update(1)
    sweep.elapsed_seconds = budget.elapsed
    return sweep


def thread_counts(max_threads: int | None = None) -> list[int]:
    """1, 2, 4, ... up to the usable cores (always including the maximum itself)."""
    top = validate.positive_int("max_threads", max_threads or usable_cores(), maximum=4096)
    counts = [1]
    while counts[-1] * 2 < top:
        counts.append(counts[-1] * 2)
    if top > 1:
        counts.append(top)
    return counts


def thread_scaling(
    size: int = 1024,
    *,
    threads: Sequence[int] | None = None,
    dtype: str = "fp32",
    device: str = "cpu",
    budget_seconds: float = 4.0,
) -> Sweep:
    """torch matmul throughput at one size for 1, 2, 4, ... threads (all usable cores by default).

    Speed-up = rate with N threads / rate with 1. On a shared machine another program can hold a
    core, which makes N threads *slower* than 1 (threads wait for each other): look at the spread.
    """
    counts = list(threads) if threads is not None else thread_counts()
    return matmul_sweep(
        [size], dtypes=(dtype,), devices=(device,), threads=counts, budget_seconds=budget_seconds
    )


__all__ = [
    "COLUMNS",
    "LIBRARIES",
    "NUMPY_DTYPES",
    "SPECIAL_GEMM_DTYPES",
    "TORCH_DTYPES",
    "MatmulRecord",
    "matmul_callable",
    "matmul_sweep",
    "numpy_blas",
    "python_matmul",
    "thread_counts",
    "thread_scaling",
    "time_matmul",
]
