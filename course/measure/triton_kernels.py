"""GPU kernels written in Triton, run on this CPU by Triton's interpreter (lesson 11).

Triton is the language PyTorch's compiler (``torch.compile``/Inductor) emits for GPUs. A Triton
kernel is written for one *program* (a block of the grid): ``tl.program_id(0)`` says which, and
``tl.arange`` gives the lanes of a block. With ``TRITON_INTERPRET=1`` set **before triton is
imported**, Triton runs the same source on CPU tensors with numpy, one program after another (so
it checks correctness, never speed); on a CUDA GPU the source compiles to native code unchanged.
:func:`setup` sets the variable (unless a GPU is present) and imports triton; on macOS or wherever
triton is missing, :func:`available` is False and the lesson says so and skips these cells.

Kernels, each with a torch reference and a checker:

- :func:`vector_add`: the grid, the program id, the mask for the last partial block;
- :func:`rmsnorm`: one read and one write of each row (fused), against the unfused torch version
  whose intermediates go back to memory (``course.calculators.kernel_traffic`` counts both);
- :func:`matmul`: a tiled ``tl.dot`` matmul (``kernel_traffic.tiled_matmul_traffic`` counts what
  one tile size moves per FLOP: blocking for reuse).
- :func:`row_max`: a reduction per row (exercise set 11's kernel);
- :func:`attention`: FlashAttention's forward pass, an online softmax over blocks of keys,
  checked against ``scaled_dot_product_attention``.

Triton is imported lazily. :func:`setup` also installs ``triton_guard``: on the interpreter a
load or store outside a kernel's tensors raises ``OutOfBounds`` instead of corrupting memory, and
``kernel_result`` (exercise set 11) tells a kernel's result from plain torch.
"""

from __future__ import annotations

import importlib
import inspect
import os
import platform
import sys
import textwrap
import time
from dataclasses import dataclass
from typing import Any

import torch

from course.facts import report, validate
from course.measure import gpu_guards, triton_guard
from course.measure.triton_guard import OutOfBounds, kernel_result

_STATE: dict[str, Any] = {}


def setup(device: str | None = None) -> str:
    """Import triton for ``device`` ("cuda" if present, else "cpu" under the interpreter).

    On a GPU older than the installed Triton supports (``gpu_guards.triton_unsupported``: a T4,
    compute capability 7.5, under Triton 3.3 and later) the kernels run on the interpreter too,
    and the status says why.

    Returns a one-line status. ``TRITON_INTERPRET=1`` must be in the environment before triton's
    first import; if triton was already imported without it on a machine with no GPU, say so.
    """
    if "ok" in _STATE:
        return _STATE["status"]
    device = device or ("cuda" if torch.cuda.is_available() else "cpu")
    unsupported = gpu_guards.triton_unsupported(device)
    if unsupported:  # a GPU older than this Triton supports (a T4 under Triton 3.3+)
        device = "cpu"
    if device == "cpu":
        os.environ["TRITON_INTERPRET"] = "1"
        _forget_compiled_triton()
    try:
        triton = importlib.import_module("triton")
        tl = importlib.import_module("triton.language")
    except Exception as err:  # noqa: BLE001 (no wheel for this OS, a broken install)
        _STATE.update(
            ok=False,
            status=(
                f"triton is not available here ({platform.system()}: {type(err).__name__}); the "
                "kernels below are skipped (triton ships Linux wheels only)"
            ),
        )
        return _STATE["status"]
    interpreted = os.environ.get("TRITON_INTERPRET") == "1"
    _STATE.update(ok=True, triton=triton, tl=tl, device=device, interpreted=interpreted)
    guard = triton_guard.install(triton)  # before any kernel runs: out-of-bounds lanes raise
    mode = "interpreter on the CPU" if interpreted else f"compiled for {device}"
    if interpreted and "guard on" in guard:
        mode += ", loads and stores bounds-checked"
    _STATE["status"] = f"triton {triton.__version__}: {mode}" + (
        f" ({unsupported})" if unsupported else ""
    )
    _build_kernels()
    return _STATE["status"]


def _forget_compiled_triton() -> None:
    """Drop a triton imported before ``TRITON_INTERPRET`` was set (torch's memory tools import
    ``torch._inductor``, which imports triton): its standard library's ``@triton.jit`` helpers
    (the combine functions of ``tl.sum`` and ``tl.max``) were built for compilation and refuse to
    run in the interpreter. The next import builds them again for the interpreter; torch keeps
    its own reference to the first import."""
    standard = sys.modules.get("triton.language.standard")
    if standard is None or type(getattr(standard, "_sum_combine", None)).__name__ != "JITFunction":
        return
    for name in [m for m in sys.modules if m == "triton" or m.startswith("triton.")]:
        if not name.startswith("triton._C"):  # native extensions load once per process
            del sys.modules[name]


def available() -> bool:
    """True when :func:`setup` imported triton."""
    setup()
    return bool(_STATE.get("ok"))


def modules() -> tuple[Any, Any]:
    """``(triton, triton.language)`` for writing a kernel in a notebook, or ``(None, None)``."""
    if not available():
        return None, None
    return _STATE["triton"], _STATE["tl"]


def device() -> str:
    setup()
    return _STATE.get("device", "cpu")


def _build_kernels() -> None:
    triton, tl = _STATE["triton"], _STATE["tl"]

    @triton.jit
    def add_kernel(x_ptr, y_ptr, out_ptr, n, BLOCK: tl.constexpr):
        pid = tl.program_id(axis=0)  # which block of the grid this program is
        offsets = pid * BLOCK + tl.arange(0, BLOCK)  # its BLOCK lanes
        mask = offsets < n  # the last block may hang over the end
        x = tl.load(x_ptr + offsets, mask=mask)
        y = tl.load(y_ptr + offsets, mask=mask)
        tl.store(out_ptr + offsets, x + y, mask=mask)

    @triton.jit
    def rmsnorm_kernel(x_ptr, w_ptr, out_ptr, cols, eps, BLOCK: tl.constexpr):
        row = tl.program_id(0)  # one program per row
        offs = tl.arange(0, BLOCK)
        mask = offs < cols
        x = tl.load(x_ptr + row * cols + offs, mask=mask, other=0.0)  # the one read
        w = tl.load(w_ptr + offs, mask=mask, other=0.0)
        rms = tl.sqrt(tl.sum(x * x, axis=0) / cols + eps)
        tl.store(out_ptr + row * cols + offs, x / rms * w, mask=mask)  # the one write

    @triton.jit
    def row_max_kernel(x_ptr, out_ptr, cols, BLOCK: tl.constexpr):
        row = tl.program_id(0)
        offs = tl.arange(0, BLOCK)
        x = tl.load(x_ptr + row * cols + offs, mask=offs < cols, other=-float("inf"))
        tl.store(out_ptr + row, tl.max(x, axis=0))

    @triton.jit
    def matmul_kernel(
        a_ptr,
        b_ptr,
        c_ptr,
        M,
        N,
        K,
        BM: tl.constexpr,
        BN: tl.constexpr,
        BK: tl.constexpr,
        K_TILES: tl.constexpr,
    ):
        pid_m = tl.program_id(0)
        pid_n = tl.program_id(1)
        rm = pid_m * BM + tl.arange(0, BM)
        rn = pid_n * BN + tl.arange(0, BN)
        acc = tl.zeros((BM, BN), dtype=tl.float32)
        for kt in range(K_TILES):  # walk K one tile at a time; each tile is reused BM or BN times
            rk = kt * BK + tl.arange(0, BK)
            a = tl.load(
                a_ptr + rm[:, None] * K + rk[None, :],
                mask=(rm[:, None] < M) & (rk[None, :] < K),
                other=0.0,
            )
            b = tl.load(
                b_ptr + rk[:, None] * N + rn[None, :],
                mask=(rk[:, None] < K) & (rn[None, :] < N),
                other=0.0,
            )
            acc += tl.dot(a, b)
        tl.store(
            c_ptr + rm[:, None] * N + rn[None, :], acc, mask=(rm[:, None] < M) & (rn[None, :] < N)
        )

    @triton.jit
    def attention_kernel(
        q_ptr,
        k_ptr,
        v_ptr,
        o_ptr,
        lse_ptr,
        visits_ptr,
        N,
        scale,
        D: tl.constexpr,
        BM: tl.constexpr,
        BN: tl.constexpr,
        CAUSAL: tl.constexpr,
        SKIP: tl.constexpr,
        KV_TILES: tl.constexpr,
    ):
        pid = tl.program_id(0)  # a block of BM queries: the outer loop is over queries (FA-2)
        head = tl.program_id(1)  # one (batch, head)
        base = head * N * D
        rm = pid * BM + tl.arange(0, BM)
        rd = tl.arange(0, D)
        q = tl.load(q_ptr + base + rm[:, None] * D + rd[None, :], mask=rm[:, None] < N, other=0.0)
        m = tl.full((BM,), float("-inf"), tl.float32)  # running max of each query's scores
        denom = tl.zeros((BM,), tl.float32)  # running sum of exp(score - m)
        acc = tl.zeros((BM, D), tl.float32)  # running sum of exp(score - m) x value
        hi = KV_TILES
        if CAUSAL and SKIP:  # key blocks wholly after this block's last query add nothing
            hi = tl.minimum(KV_TILES, ((pid + 1) * BM + BN - 1) // BN)
        visited = 0
        for t in range(0, hi):  # walk the keys one block at a time: no N x N matrix
            rn = t * BN + tl.arange(0, BN)
            kv = rn[:, None] * D + rd[None, :]
            k = tl.load(k_ptr + base + kv, mask=rn[:, None] < N, other=0.0)
            v = tl.load(v_ptr + base + kv, mask=rn[:, None] < N, other=0.0)
            s = tl.dot(q, tl.trans(k)) * scale
            keep = rn[None, :] < N
            if CAUSAL:
                keep = keep & (rn[None, :] <= rm[:, None])
            s = tl.where(keep, s, float("-inf"))
            m_new = tl.maximum(m, tl.max(s, 1))
            rescale = tl.exp(m - m_new)  # the old sums were taken against a smaller max
            p = tl.exp(s - m_new[:, None])  # every exponent <= 0: no overflow
            denom = denom * rescale + tl.sum(p, 1)
            acc = acc * rescale[:, None] + tl.dot(p, v)
            m = m_new
            visited += 1
        tl.store(
            o_ptr + base + rm[:, None] * D + rd[None, :], acc / denom[:, None], mask=rm[:, None] < N
        )  # divide once at the end, not at every block (FA-2)
        tl.store(lse_ptr + head * N + rm, m + tl.log(denom), mask=rm < N)
        tl.store(
            visits_ptr + head * tl.num_programs(0) + pid, visited
        )  # key blocks this program read

    _STATE.update(
        add=add_kernel,
        rmsnorm=rmsnorm_kernel,
        row_max=row_max_kernel,
        matmul=matmul_kernel,
        attention=attention_kernel,
    )


def _need() -> None:
    if not available():
        raise RuntimeError(_STATE["status"])


def _next_pow2(n: int) -> int:
    return 1 << (max(1, n) - 1).bit_length()


KERNELS = ("add", "rmsnorm", "row_max", "matmul", "attention")


def kernel(name: str) -> Any:
    """The ``@triton.jit`` kernel ``name`` (one of :data:`KERNELS`), to launch as
    ``kernel[grid](...)`` in a notebook; :func:`kernel_source` shows its text."""
    _need()
    return _STATE[validate.choice("kernel", name, KERNELS)]


def vector_add(
    x: torch.Tensor, y: torch.Tensor, block: int = 128, *, kernel: Any = None
) -> torch.Tensor:
    """``x + y`` by a Triton kernel: ``ceil(n / block)`` programs of ``block`` lanes each.
    ``kernel``: a kernel with the signature of ``add`` to launch instead (a learner's edit)."""
    _need()
    validate.positive_int("block", block, maximum=2**16)
    out = torch.empty_like(x)
    n = x.numel()
    grid = (-(-n // block),)
    (kernel or _STATE["add"])[grid](x, y, out, n, BLOCK=block)
    return out


def rmsnorm(
    x: torch.Tensor, weight: torch.Tensor, eps: float = 1e-6, *, kernel: Any = None
) -> torch.Tensor:
    """RMSNorm of each row of a 2-D ``x`` in one fused kernel (one program per row).
    ``kernel``: a kernel with the signature of ``rmsnorm`` to launch instead."""
    _need()
    rows, cols = x.shape
    out = torch.empty_like(x)
    (kernel or _STATE["rmsnorm"])[(rows,)](x, weight, out, cols, eps, BLOCK=_next_pow2(cols))
    return out


def rmsnorm_torch(x: torch.Tensor, weight: torch.Tensor, eps: float = 1e-6) -> torch.Tensor:
    """The unfused reference: four torch ops, each reading and writing a full tensor."""
    squares = x * x
    mean = squares.mean(dim=-1, keepdim=True)
    normed = x / torch.sqrt(mean + eps)
    return normed * weight


def row_max(x: torch.Tensor) -> torch.Tensor:
    """The maximum of each row of a 2-D tensor (one program per row)."""
    _need()
    rows, cols = x.shape
    out = torch.empty(rows, dtype=x.dtype, device=x.device)
    _STATE["row_max"][(rows,)](x, out, cols, BLOCK=_next_pow2(cols))
    return out


def matmul(
    a: torch.Tensor, b: torch.Tensor, block: int = 16, *, kernel: Any = None
) -> torch.Tensor:
    """``a @ b`` (float32) with square ``block`` x ``block`` tiles (``block`` >= 16 for tl.dot).
    ``kernel``: a kernel with the signature of ``matmul`` to launch instead."""
    _need()
    validate.positive_int("block", block, minimum=16, maximum=256)
    m, k = a.shape
    n = b.shape[1]
    c = torch.empty(m, n, dtype=torch.float32, device=a.device)
    grid = (-(-m // block), -(-n // block))
    (kernel or _STATE["matmul"])[grid](
        a, b, c, m, n, k, BM=block, BN=block, BK=block, K_TILES=-(-k // block)
    )
    return c


def attention(
    q: torch.Tensor,
    k: torch.Tensor,
    v: torch.Tensor,
    *,
    causal: bool = False,
    block: int = 16,
    skip: bool = True,
    kernel: Any = None,
) -> tuple[torch.Tensor, torch.Tensor]:
    """Softmax attention of (batch, heads, tokens, head_dim) float32 tensors in one pass over the
    keys, FlashAttention-style. The tiling and the online softmax are FlashAttention's (Dao et al.
    2022, alg. 1; the online softmax is Milakov and Gimelshein 2018's): for its ``block`` queries
    each program keeps a running max, a running sum of exponentials and a running weighted sum of
    values, rescaling the sums whenever the max grows, so that every exponent is <= 0 and nothing
    overflows however large the scores. The loop order is FlashAttention-2's (Dao 2023, alg. 1):
    one program per block of queries (the outer loop, run in parallel) walks the key blocks (the
    inner loop), and divides by the sum once at the end. With ``causal`` and ``skip`` a program
    stops at the last key block its queries can see (FlashAttention-2, section 3.1.1): about half
    the blocks are never read. Returns the output and each query's log-sum-exp of scores (what
    lesson 12's ring attention merges partial results with). ``kernel``: one with the signature of
    ``attention`` instead."""
    out, lse, _ = _attention(q, k, v, causal=causal, block=block, skip=skip, kernel=kernel)
    return out, lse


def _attention(q, k, v, *, causal, block, skip, kernel):
    _need()
    validate.positive_int("block", block, minimum=16, maximum=256)
    b, h, n, d = q.shape
    if d < 16 or d & (d - 1):
        raise ValueError(f"head_dim must be a power of two >= 16 (tl.dot), got {d}")
    q, k, v = (t.contiguous().float() for t in (q, k, v))
    out = torch.empty_like(q)
    lse = torch.empty(b, h, n, dtype=torch.float32, device=q.device)
    grid = (-(-n // block), b * h)
    visits = torch.zeros(grid[1], grid[0], dtype=torch.int32, device=q.device)
    (kernel or _STATE["attention"])[grid](
        q,
        k,
        v,
        out,
        lse,
        visits,
        n,
        d**-0.5,
        D=d,
        BM=block,
        BN=block,
        CAUSAL=bool(causal),
        SKIP=bool(skip),
        KV_TILES=-(-n // block),
    )
    return out, lse, visits


@dataclass(frozen=True)
class AttentionWork(report.Report):
    """One launch of the attention kernel, counted: the programs its grid launched (from the
    launch log), the key blocks they read (each program counts its own loop's turns), the key
    blocks a grid without skipping reads (programs x key blocks), and the wall time."""

    skip: bool
    programs: int
    key_blocks_visited: int
    key_blocks_without_skipping: int
    max_abs_error: float
    seconds: float

    @property
    def fraction_visited(self) -> float:
        return self.key_blocks_visited / self.key_blocks_without_skipping


def causal_work(
    tokens: int = 256, block: int = 16, heads: int = 2, head_dim: int = 16, seed: int = 0
) -> report.Table:
    """Causal attention of ``tokens`` queries with and without skipping the key blocks above the
    diagonal: for each, the programs launched, the key blocks visited (counted by the kernel), the
    largest difference from ``scaled_dot_product_attention`` and the seconds it took (on the
    interpreter, one program after another, so the time follows the blocks visited)."""
    _need()
    validate.positive_int("tokens", tokens, maximum=4096)
    g = torch.Generator().manual_seed(seed)
    dev = device()
    q, k, v = (torch.randn(1, heads, tokens, head_dim, generator=g).to(dev) for _ in range(3))
    ref = torch.nn.functional.scaled_dot_product_attention(q, k, v, is_causal=True)
    rows = []
    for skip in (False, True):
        t0 = _synced()
        with triton_guard.record() as log:
            out, _, visits = _attention(q, k, v, causal=True, block=block, skip=skip, kernel=None)
        seconds = _synced() - t0
        programs = sum(launch.programs for launch in log)
        rows.append(
            AttentionWork(
                skip,
                programs,
                int(visits.sum()),
                programs * -(-tokens // block),
                (out - ref).abs().max().item(),
                seconds,
            )
        )
    return report.Table(
        rows,
        title=f"Causal attention, {tokens} tokens in blocks of {block}, {heads} heads: the work",
        columns=(
            "skip",
            "programs",
            "key_blocks_visited",
            "key_blocks_without_skipping",
            "fraction_visited",
            "max_abs_error",
            "seconds",
        ),
        formats={"fraction_visited": "percent", "max_abs_error": "general"},
    )


def _synced() -> float:
    if device() == "cuda":
        torch.cuda.synchronize()
    return time.perf_counter()


def kernel_source(name: str) -> str:
    """The Triton source of one kernel (``"add"``, ``"rmsnorm"``, ``"row_max"``, ``"matmul"``,
    ``"attention"``), to read in the lesson: the same text runs on the interpreter and a GPU."""
    fn = kernel(name)
    return textwrap.dedent(inspect.getsource(getattr(fn, "fn", fn)))


@dataclass(frozen=True)
class KernelCheck:
    """A Triton kernel's result against torch's: largest absolute difference and whether it
    passes."""

    kernel: str
    shape: str
    max_abs_error: float
    tolerance: float
    matches: bool
    mode: str  # "interpreter (CPU)" or "compiled (cuda)"

    def __str__(self) -> str:
        verdict = "matches" if self.matches else "DIFFERS"
        return (
            f"{self.kernel} {self.shape}: largest difference from torch {self.max_abs_error:.2g} "
            f"(tolerance {self.tolerance:g}, {self.mode}): {verdict}"
        )


def check(name: str, triton_out: torch.Tensor, torch_out: torch.Tensor, tol: float) -> KernelCheck:
    """Compare a kernel's output with torch's reference."""
    err = (triton_out.float() - torch_out.float()).abs().max().item()
    mode = "interpreter (CPU)" if _STATE.get("interpreted") else f"compiled ({device()})"
    return KernelCheck(name, "x".join(map(str, torch_out.shape)), err, tol, err <= tol, mode)


def check_all(seed: int = 0) -> list[KernelCheck]:
    """Run each kernel on random inputs (odd sizes, so masks matter) and compare with torch."""
    _need()
    dev = device()
    g = torch.Generator().manual_seed(seed)
    x, y = (torch.randn(1000, generator=g).to(dev) for _ in range(2))
    m = torch.randn(37, 300, generator=g).to(dev)
    w = torch.randn(300, generator=g).to(dev)
    a, b = torch.randn(70, 50, generator=g).to(dev), torch.randn(50, 40, generator=g).to(dev)
    q, kk, vv = (torch.randn(1, 2, 50, 32, generator=g).to(dev) for _ in range(3))
    sdpa = torch.nn.functional.scaled_dot_product_attention(q, kk, vv, is_causal=True)
    att_tol = 1e-4 if _STATE.get("interpreted") else 5e-2  # TF32 tl.dot on a GPU, as the matmul
    return [
        check("vector add", vector_add(x, y), x + y, 1e-6),
        check("rmsnorm (fused)", rmsnorm(m, w), rmsnorm_torch(m, w), 1e-4),
        check("row max", row_max(m), m.max(dim=1).values, 0.0),
        check("matmul (tiled)", matmul(a, b), a @ b, matmul_tolerance()),
        check("attention (online softmax)", attention(q, kk, vv, causal=True)[0], sdpa, att_tol),
    ]


def matmul_tolerance() -> float:
    """Largest error :func:`check_all` accepts from the tiled matmul (70x50 @ 50x40, unit normal
    inputs): on the interpreter ``tl.dot`` computes in float32 (error about 1e-5), so 1e-4; on a
    GPU it uses TF32 tensor cores (10-bit mantissa, about 1e-3 relative per product), so 5e-2.
    Rounding the inputs to float16 on the interpreter gives about 1e-2: the check catches it."""
    return 1e-4 if _STATE.get("interpreted") else 5e-2


__all__ = [
    "AttentionWork",
    "KernelCheck",
    "OutOfBounds",
    "attention",
    "available",
    "causal_work",
    "check",
    "matmul_tolerance",
    "check_all",
    "kernel",
    "kernel_result",
    "kernel_source",
    "matmul",
    "modules",
    "rmsnorm",
    "rmsnorm_torch",
    "row_max",
    "setup",
    "vector_add",
]
