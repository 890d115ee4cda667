"""Precision on a real machine: bit patterns, rounding, failure modes and mixed-precision training.

The pure facts about formats live in ``course.facts.dtypes``; this module does the torch side:

- ``bit_pattern`` / ``round_mantissa``: what torch actually stores (TF32 emulated by rounding fp32).
- ``running_sum``: summing many small numbers in a low-precision accumulator, one addition at a
  time.
- ``train``: a small, seeded classification MLP trained in fp32, under ``torch.autocast`` with bf16,
  or with fp16 and a ``torch.amp.GradScaler``; it returns per-step records (loss, seconds, scale)
  and the bytes autograd holds for the backward pass.
- ``activation_gradients``: the gradients flowing between layers (what underflows in fp16).

Matmul throughput per dtype (fp8 and int8 included) is measured by ``course.measure.matmul``.

Measurements are real and bounded (seconds, not minutes, on 2 CPU cores); on a CUDA GPU the same
functions time the GPU (synchronising it around each step) and report peak GPU memory.
Used by lesson 03 (data types and precision).
"""

from __future__ import annotations

import contextlib
import math
import time
from collections.abc import Sequence
from dataclasses import dataclass, field

import torch

from course.facts import validate
from course.facts.dtypes import float_format

#: course dtype key -> torch dtype, for the formats torch can compute with.
TORCH_DTYPES = {
    "fp64": torch.float64,
    "fp32": torch.float32,
    "bf16": torch.bfloat16,
    "fp16": torch.float16,
    "fp8_e4m3": torch.float8_e4m3fn,
    "fp8_e5m2": torch.float8_e5m2,
    "fp8_e4m3fnuz": torch.float8_e4m3fnuz,
    "fp8_e5m2fnuz": torch.float8_e5m2fnuz,
    "e8m0": torch.float8_e8m0fnu,
}
_INT_OF_WIDTH = {8: torch.uint8, 16: torch.int16, 32: torch.int32, 64: torch.int64}

PRECISIONS = ("fp32", "bf16", "fp16")


def torch_dtype(key: str) -> torch.dtype:
    """The torch dtype of a course dtype key (ValueError for formats torch cannot store)."""
    return TORCH_DTYPES[validate.choice("key", key, TORCH_DTYPES)]


def round_mantissa(x: torch.Tensor, mantissa_bits: int) -> torch.Tensor:
    """Round fp32 values to ``mantissa_bits`` mantissa bits (round to nearest, ties to even),
    keeping the fp32 exponent: ``mantissa_bits=10`` emulates TF32 inputs, ``7`` gives exactly bf16's
    values.

    Finite inputs only. NVIDIA's hardware conversion to TF32 may break ties differently.
    """
    validate.positive_int("mantissa_bits", mantissa_bits, minimum=0, maximum=23)
    if x.dtype != torch.float32:
        raise ValueError(f"x must be a float32 tensor, got {x.dtype}")
    shift = 23 - mantissa_bits
    if shift == 0:
        return x.clone()
    bits = x.view(torch.int32)
    lsb = (bits >> shift) & 1  # the last kept bit decides ties (to even)
    rounded = (bits + ((1 << (shift - 1)) - 1) + lsb) & ~((1 << shift) - 1)
    return rounded.view(torch.float32)


def bit_pattern(value: float, key: str) -> int:
    """The bit pattern torch stores for ``value`` in format ``key``, as a non-negative integer.

    ``tf32`` is emulated: fp32 rounded to 10 mantissa bits, keeping the top 19 of 32 bits.
    """
    x = torch.tensor([validate.number("value", value)], dtype=torch.float64)
    if key == "tf32":
        pattern = round_mantissa(x.float(), 10).view(torch.int32).item() & 0xFFFFFFFF
        return pattern >> 13
    fmt = float_format(key)
    stored = x.to(torch_dtype(key))
    return stored.view(_INT_OF_WIDTH[fmt.bits]).item() & (2**fmt.bits - 1)


def stored_value(value: float, key: str) -> float:
    """The number torch actually stores when ``value`` is cast to format ``key`` (as a float)."""
    x = torch.tensor([validate.number("value", value)], dtype=torch.float64)
    return x.to(torch_dtype(key)).to(torch.float64).item()


def pattern_value(pattern: int, key: str) -> float:
    """The number torch reads from the raw bit pattern ``pattern`` of format ``key``: pattern 1
    is the smallest positive (subnormal) value, a measurement ``torch.finfo`` does not offer."""
    fmt = float_format(key)
    pattern = validate.positive_int("pattern", pattern, minimum=0, maximum=2**fmt.bits - 1)
    signed = pattern - 2**fmt.bits if fmt.bits > 8 and pattern >= 2 ** (fmt.bits - 1) else pattern
    raw = torch.tensor([signed], dtype=torch.int64).to(_INT_OF_WIDTH[fmt.bits])
    return raw.view(torch_dtype(key)).to(torch.float64).item()


def running_sum(addend: float, n: int, key: str, *, every: int = 1) -> torch.Tensor:
    """Add ``addend`` to an accumulator ``n`` times, one addition at a time, *in format ``key``*,
    and return the partial sums (as float64, every ``every``-th one, the last one always included).

    This is what a naive loop does; ``torch.sum`` does better because it accumulates in fp32 and in
    a tree (pairwise), which is the point of the comparison.
    """
    dtype = torch_dtype(validate.choice("key", key, ("fp64", "fp32", "bf16", "fp16")))
    validate.number("addend", addend)
    n = validate.positive_int("n", n, maximum=10**6)
    every = validate.positive_int("every", every)
    step = torch.tensor(addend, dtype=dtype)
    acc = torch.zeros((), dtype=dtype)
    out = []
    for i in range(1, n + 1):
        acc = acc + step
        if i % every == 0 or i == n:
            out.append(acc.item())
    return torch.tensor(out, dtype=torch.float64)


# --- a small, real training run -------------------------------------------------------------------


@dataclass(frozen=True)
class TrainConfig:
    """A seeded toy task: classify Gaussian inputs by the argmax of a fixed random "teacher" MLP.

    Big enough to train visibly in a few seconds on 2 CPU cores; ``steps`` batches are drawn up
    front so that timing excludes data generation.
    """

    in_features: int = 64
    hidden: int = 128
    layers: int = 3  # hidden layers of the student MLP
    classes: int = 10
    batch: int = 256
    steps: int = 60
    lr: float = 3e-3
    seed: int = 0

    def __post_init__(self) -> None:
        for name in ("in_features", "hidden", "layers", "batch", "steps"):
            validate.positive_int(name, getattr(self, name), maximum=10**6)
        validate.positive_int("classes", self.classes, minimum=2, maximum=10**6)
        validate.positive("lr", self.lr)
        validate.positive_int("seed", self.seed, minimum=0)


def make_batches(cfg: TrainConfig, device: str = "cpu") -> list[tuple[torch.Tensor, torch.Tensor]]:
    """``cfg.steps`` seeded (inputs, labels) batches of the teacher task, on ``device``."""
    gen = torch.Generator().manual_seed(cfg.seed + 1)
    teacher = torch.nn.Sequential(
        torch.nn.Linear(cfg.in_features, 64), torch.nn.Tanh(), torch.nn.Linear(64, cfg.classes)
    )
    with torch.no_grad():
        for p in teacher.parameters():
            p.copy_(torch.randn(p.shape, generator=gen) / math.sqrt(p.shape[-1]))
        out = []
        for _ in range(cfg.steps):
            x = torch.randn(cfg.batch, cfg.in_features, generator=gen)
            out.append((x.to(device), teacher(x).argmax(dim=1).to(device)))
    return out


def make_model(cfg: TrainConfig, device: str = "cpu") -> torch.nn.Sequential:
    """The student MLP (Linear + ReLU x ``layers``, then a Linear to the classes), seeded, in
    fp32."""
    torch.manual_seed(cfg.seed)
    mods: list[torch.nn.Module] = []
    width = cfg.in_features
    for _ in range(cfg.layers):
        mods += [torch.nn.Linear(width, cfg.hidden), torch.nn.ReLU()]
        width = cfg.hidden
    mods.append(torch.nn.Linear(width, cfg.classes))
    return torch.nn.Sequential(*mods).to(device)


@dataclass(frozen=True)
class StepRecord:
    step: int
    loss: float
    seconds: float  # wall time of this step (forward, backward, optimizer)
    scale: float  # GradScaler's loss scale used in this step (1.0 without one)
    skipped: bool  # True when the scaler found inf/NaN gradients and skipped the update


@dataclass(frozen=True)
class TrainRun:
    """A finished run: one record per step, plus memory measured on the first step."""

    precision: str
    device: str
    config: TrainConfig
    records: tuple[StepRecord, ...]
    saved_bytes: int  # bytes autograd kept for backward, parameters excluded (activations, casts)
    peak_bytes: int | None  # peak GPU memory allocated (None on CPU: torch does not track it)
    model: torch.nn.Module = field(repr=False, compare=False)

    @property
    def losses(self) -> list[float]:
        return [r.loss for r in self.records]

    @property
    def step_seconds(self) -> float:
        """Median seconds per step, the first (warm-up) step excluded when there are others."""
        times = sorted(r.seconds for r in (self.records[1:] or self.records))
        return times[len(times) // 2]

    @property
    def skipped_steps(self) -> int:
        return sum(r.skipped for r in self.records)


class _SavedBytes:
    """Counts distinct tensors autograd saves for backward, excluding the model's parameters."""

    def __init__(self, params: Sequence[torch.Tensor]):
        self.exclude = {p.untyped_storage().data_ptr() for p in params}
        self.seen: set[int] = set()
        self.bytes = 0

    def pack(self, t: torch.Tensor) -> torch.Tensor:
        ptr = t.untyped_storage().data_ptr()
        if ptr not in self.exclude and ptr not in self.seen:
            self.seen.add(ptr)
            self.bytes += t.untyped_storage().nbytes()
        return t


def train(
    precision: str = "fp32",
    cfg: TrainConfig | None = None,
    *,
    device: str = "cpu",
    loss_scaling: bool = True,
    batches: list[tuple[torch.Tensor, torch.Tensor]] | None = None,
) -> TrainRun:
    """Train the seeded MLP with AdamW and return per-step records.

    ``precision``: ``"fp32"`` (no autocast), ``"bf16"`` (``torch.autocast`` with bfloat16, no loss
    scaling needed) or ``"fp16"`` (autocast with float16 and, if ``loss_scaling``, a
    ``torch.amp.GradScaler``). Weights, gradients and optimizer state stay fp32 in all three (that
    is what "mixed" precision means); autocast runs matmuls in the low-precision dtype and keeps
    reductions such as the softmax in the loss in fp32.
    """
    precision = validate.choice("precision", precision, PRECISIONS)
    cfg = cfg or TrainConfig()
    batches = batches if batches is not None else make_batches(cfg, device)
    model = make_model(cfg, device)
    opt = torch.optim.AdamW(model.parameters(), lr=cfg.lr)
    amp = precision != "fp32"
    scaler = torch.amp.GradScaler(device, enabled=precision == "fp16" and loss_scaling)
    cuda = device.startswith("cuda")
    if cuda:
        torch.cuda.reset_peak_memory_stats(device)
    counter = _SavedBytes(list(model.parameters()))
    records = []
    for step, (x, y) in enumerate(batches[: cfg.steps]):
        if cuda:
            torch.cuda.synchronize(device)
        start = time.perf_counter()
        scale = scaler.get_scale() if scaler.is_enabled() else 1.0
        hooks = torch.autograd.graph.saved_tensors_hooks(counter.pack, lambda t: t)
        autocast = torch.autocast(device.split(":")[0], dtype=torch_dtype(precision), enabled=amp)
        with hooks if step == 0 else contextlib.nullcontext(), autocast:
            loss = torch.nn.functional.cross_entropy(model(x).float(), y)
        opt.zero_grad(set_to_none=True)
        scaler.scale(loss).backward()
        scaler.step(opt)
        scaler.update()
        if cuda:
            torch.cuda.synchronize(device)
        seconds = time.perf_counter() - start
        skipped = scaler.is_enabled() and scaler.get_scale() < scale
        records.append(StepRecord(step, loss.item(), seconds, float(scale), bool(skipped)))
    peak = torch.cuda.max_memory_allocated(device) if cuda else None
    return TrainRun(precision, device, cfg, tuple(records), counter.bytes, peak, model)


def activation_gradients(
    model: torch.nn.Module,
    x: torch.Tensor,
    y: torch.Tensor,
    *,
    precision: str = "fp32",
    scale: float = 1.0,
) -> torch.Tensor:
    """The gradients of the loss with respect to every Linear layer's output, flattened into one
    fp32 tensor and divided by ``scale`` again, from one backward pass in ``precision``
    (autocast for bf16/fp16) with the loss multiplied by ``scale`` (loss scaling).

    These are the values that underflow in fp16: with a loss averaged over a batch of B examples
    they are about 1/B of the per-example gradient (Micikevicius et al. 2018, Figure 3).
    """
    precision = validate.choice("precision", precision, PRECISIONS)
    validate.positive("scale", scale)
    caught: list[torch.Tensor] = []

    def on_forward(_mod, _inp, out):
        out.register_hook(lambda g: caught.append(g.detach().float().flatten()))

    handles = [
        m.register_forward_hook(on_forward)
        for m in model.modules()
        if isinstance(m, torch.nn.Linear)
    ]
    try:
        model.zero_grad(set_to_none=True)
        device_type = x.device.type
        with torch.autocast(device_type, dtype=torch_dtype(precision), enabled=precision != "fp32"):
            loss = torch.nn.functional.cross_entropy(model(x).float(), y)
        (loss * scale).backward()
    finally:
        for h in handles:
            h.remove()
        model.zero_grad(set_to_none=True)
    return torch.cat(caught).cpu() / scale  # on the CPU, so plots and numpy can read it


def underflow_fractions(
    reference: torch.Tensor, other: torch.Tensor, key: str = "fp16", *, scale: float = 1.0
) -> dict:
    """Of the non-zero entries of ``reference`` (fp32 gradients): the fraction that, multiplied by
    the loss scale ``scale`` as the backward pass sees them, lies below the format's smallest
    normal (stored with fewer significant bits) or below half its smallest subnormal (they round
    to zero), and the fraction that ``other`` (the same gradients computed in low precision with
    that scale) actually has as exactly zero."""
    if reference.shape != other.shape:
        raise ValueError(f"other must have the shape of reference {tuple(reference.shape)}")
    fmt = float_format(key)
    nonzero = reference != 0
    n = max(int(nonzero.sum()), 1)
    mags = reference[nonzero].abs().double() * validate.positive("scale", scale)
    return {
        "below_normal": float((mags < fmt.smallest_normal).sum()) / n,
        "below_half_subnormal": float((mags < fmt.smallest_subnormal / 2).sum()) / n,
        "zero_in_low_precision": float(((other == 0) & nonzero).sum()) / n,
    }


__all__ = [
    "PRECISIONS",
    "TORCH_DTYPES",
    "StepRecord",
    "TrainConfig",
    "TrainRun",
    "activation_gradients",
    "bit_pattern",
    "make_batches",
    "pattern_value",
    "stored_value",
    "make_model",
    "round_mantissa",
    "running_sum",
    "torch_dtype",
    "train",
    "underflow_fractions",
]
