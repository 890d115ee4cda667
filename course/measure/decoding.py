"""Serving a small model on this machine: weight precision, batch size, and ``torch.compile``.

- :func:`serve_variants` builds one small Llama-style decoder and serves it in fp32, bf16, int8
  weight-only (torchao's ``Int8WeightOnlyConfig`` where torchao imports, else
  ``course.measure.quantize.quantize_linears``) and int4 weight-only (torchao's
  ``Int4WeightOnlyConfig``; where it cannot run here, torchao's own reason is recorded and the
  course's transparent int4, ``course.measure.quantize.Int4WeightOnlyLinear``, is measured instead).
  For each it records the weights' bytes, the time of one decode step (one new token per sequence)
  at each batch, the tokens/s that gives, and how far the logits moved from fp32.
- :func:`batch_sweep` measures latency per step and tokens/s against the batch size.
- :func:`compile_overhead` compiles one small function once (``torch.compile``, shapes dynamic so
  one compilation serves every batch), reports the compile time separately, and times eager
  against compiled calls at a small batch (per-call overhead dominates) and a large one (the
  matmuls dominate, and compiling them buys little).

The "decode step" here feeds one token per sequence with no KV cache, which reads every weight
once per step like real decoding does. Used by lesson 07.
"""

from __future__ import annotations

import copy
import os
import time
from dataclasses import dataclass

import torch
from torch import nn

from course.facts import validate
from course.facts.models import TransformerConfig
from course.measure.quantize import (
    QuietTorchao,
    quantize_linears,
    serialized_bytes,
    torchao_available,
    torchao_int8_weight_only,
)
from course.measure.step_memory import DEMO_CONFIG
from course.measure.timing import Budget, Sweep, progress, time_call
from course.measure.torchmodels import build_model

#: The model lesson 07 serves: 4 layers, hidden 384, 6 heads, SwiGLU 1,024, vocabulary 2,048:
#: 8.6 M parameters, 34 MB in fp32, so a decode step reads more weights than most CPU caches hold.
SERVE_CONFIG = DEMO_CONFIG.replace(
    name="serve-llama",
    layers=4,
    hidden=384,
    heads=6,
    kv_heads=6,
    ffn_hidden=1024,
    vocab=2048,
    max_positions=512,
    source="course demo: lesson 07's served decoder",
)

VARIANTS = ("fp32", "bf16", "int8", "int4")


def serve_model(config: TransformerConfig = SERVE_CONFIG, *, seed: int = 0) -> nn.Module:
    """The fp32 model, randomly initialised (seeded), in eval mode."""
    with torch.random.fork_rng(devices=[]):
        torch.manual_seed(seed)
        return build_model(config, device="cpu").eval()


def _torchao_int4(model: nn.Module) -> nn.Module:
    with QuietTorchao():
        import torchao.quantization as tq

        model = copy.deepcopy(model)
        tq.quantize_(model, tq.Int4WeightOnlyConfig(group_size=32))
    return model


def make_variant(model: nn.Module, name: str) -> tuple[nn.Module | None, str]:
    """``(model, how)`` for variant ``name``; ``(None, reason)`` where it cannot run here."""
    validate.choice("variant", name, VARIANTS)
    bf16 = copy.deepcopy(model).to(torch.bfloat16)
    if name == "fp32":
        return model, "fp32 weights and activations"
    if name == "bf16":
        return bf16, "bf16 weights and activations"
    if name == "int8":
        if torchao_available():
            return torchao_int8_weight_only(bf16), "torchao Int8WeightOnlyConfig, bf16 activations"
        return quantize_linears(bf16), "course.measure.quantize int8 weight-only, bf16 activations"
    return _int4(bf16)


def torchao_int4_reason(model: nn.Module) -> str | None:
    """None when torchao's ``Int4WeightOnlyConfig`` runs a forward pass here, else torchao's
    (or torch's) own reason why not."""
    if not torchao_available():
        return "torchao is not installed"
    try:
        quantized = _torchao_int4(model)
        with torch.inference_mode():
            quantized(torch.zeros(1, 1, dtype=torch.long))
    except Exception as exc:  # torchao raises ImportError, NotImplementedError, RuntimeError...
        return f"{type(exc).__name__}: {exc}"
    return None


def _int4(bf16: nn.Module) -> tuple[nn.Module, str]:
    reason = torchao_int4_reason(bf16)
    if reason is None:
        return _torchao_int4(bf16), "torchao Int4WeightOnlyConfig (group 32), bf16 activations"
    how = (
        "course.measure.quantize int4 (group 32, dequantised in torch every call), bf16 "
        f"activations; torchao's int4 cannot run here: {reason}"
    )
    return quantize_linears(bf16, bits=4, group_size=32), how


@dataclass(frozen=True)
class ServeRecord:
    """One variant at one batch: weights, decode-step time, tokens/s, error of the logits."""

    variant: str
    batch: int
    weights_bytes: int  # torch.save(state_dict) size: weights + scales
    step_seconds: float  # one decode step (one token per sequence), median
    iqr_seconds: float
    tokens_per_s: float  # batch / step_seconds
    relative_error: float  # ||logits - fp32 logits|| / ||fp32 logits||


def _tokens(vocab: int, batch: int, seed: int = 0) -> torch.Tensor:
    return torch.randint(0, vocab, (batch, 1), generator=torch.Generator().manual_seed(seed))


def serve_variants(
    config: TransformerConfig = SERVE_CONFIG,
    *,
    variants: tuple[str, ...] = VARIANTS,
    batches: tuple[int, ...] = (1, 16),
    budget_seconds: float = 10.0,
    seed: int = 0,
) -> Sweep:
    """Each variant's weight bytes and decode-step time at each batch (skips say why).

    Every variant is measured at the first batch; the other batches only while the budget lasts.
    """
    budget = Budget(budget_seconds)
    sweep = Sweep("Serving one model at four weight precisions (decode steps)", budget_seconds)
    base = serve_model(config, seed=seed)
    reference = {}
    with torch.inference_mode():
        for b in batches:
            reference[b] = base(_tokens(config.vocab, b, seed)).float()
    per_point = 0.0
    with progress(len(variants), desc="precisions", budget_seconds=budget_seconds) as bar:
        for name in variants:
            model, how = make_variant(base, name)
            if model is None:
                sweep.skipped.append(f"{name}: {how}")
                bar.update()
                continue
            if "cannot run here" in how:
                sweep.skipped.append(
                    f"{name} via torchao: {how.split('cannot run here: ')[1]}; "
                    "measured with course.measure.quantize's int4 instead"
                )
            size = serialized_bytes(model)
            for b in batches:
                if b != batches[0] and not budget.fits(per_point):  # first batch always
                    sweep.skipped.append(f"{name} batch {b}: would not fit the budget")
                    continue
                start = budget.elapsed
                x = _tokens(config.vocab, b, seed)
                with torch.inference_mode():
                    y = model(x).float()
                    t = time_call(lambda m=model, x=x: m(x), min_run_time=0.05)
                error = float((y - reference[b]).norm() / reference[b].norm())
                sweep.records.append(
                    ServeRecord(
                        name, b, size, t.median_seconds, t.iqr_seconds, b / t.median_seconds, error
                    )
                )
                per_point = budget.elapsed - start
            bar.update()
    sweep.elapsed_seconds = budget.elapsed
    return sweep


@dataclass(frozen=True)
class BatchRecord:
    """One batch size: latency of a decode step and the throughput it gives."""

    batch: int
    step_seconds: float  # latency every sequence sees per token, median
    iqr_seconds: float
    tokens_per_s: float


def batch_sweep(
    model: nn.Module | None = None,
    *,
    batches: tuple[int, ...] = (1, 2, 4, 8, 16, 32, 64),
    vocab: int = SERVE_CONFIG.vocab,
    budget_seconds: float = 6.0,
) -> Sweep:
    """Latency per decode step and tokens/s against the batch size (the served fp32 model)."""
    model = serve_model() if model is None else model
    budget = Budget(budget_seconds)
    sweep = Sweep("Batching: latency and throughput of decode steps", budget_seconds)
    cost = 0.0
    with (
        progress(len(batches), desc="batch sizes", budget_seconds=budget_seconds) as bar,
        torch.inference_mode(),
    ):
        for b in batches:
            if not budget.fits(cost):
                sweep.skipped.append(f"batch {b}: would not fit the budget")
            else:
                start = budget.elapsed
                x = _tokens(vocab, b)
                t = time_call(lambda x=x: model(x), min_run_time=0.1)
                sweep.records.append(
                    BatchRecord(b, t.median_seconds, t.iqr_seconds, b / t.median_seconds)
                )
                cost = budget.elapsed - start
            bar.update()
    sweep.elapsed_seconds = budget.elapsed
    return sweep


@dataclass(frozen=True)
class CompileRecord:
    """Eager against compiled calls of one function at one batch."""

    batch: int
    eager_seconds: float  # median per call
    compiled_seconds: float  # median per call, after compilation
    speedup: float  # eager / compiled
    eager_iqr_seconds: float
    compiled_iqr_seconds: float


@dataclass(frozen=True)
class CompileResult:
    """Compile time (first call, paid once) and per-call times at each batch."""

    compile_seconds: float
    records: list[CompileRecord]
    backend: str
    failure: str | None = None  # why nothing compiled (the lesson prints it), else None


class SmallMLP(nn.Module):
    """``x + down(gelu(up(norm(x))))``: a transformer MLP block, small enough that eager PyTorch
    spends most of a call on per-operator overhead at a small batch."""

    def __init__(self, hidden: int = 64, ffn: int = 256):
        super().__init__()
        self.norm = nn.LayerNorm(hidden)
        self.up, self.down = nn.Linear(hidden, ffn), nn.Linear(ffn, hidden)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return x + self.down(torch.nn.functional.gelu(self.up(self.norm(x))))


def compile_overhead(
    batches: tuple[int, ...] = (4, 4096), *, hidden: int = 64, seed: int = 0
) -> CompileResult:
    """Compile :class:`SmallMLP` once (dynamic batch), then time eager vs compiled per batch.

    The first compiled call pays for tracing and code generation (``compile_seconds``: tens of
    seconds on a busy 2-core machine the first time; torch caches the generated code on disk,
    so a second run compiles faster). Inference only, under ``torch.no_grad``.
    """
    with torch.random.fork_rng(devices=[]):
        torch.manual_seed(seed)
        model = SmallMLP(hidden).eval()
    compiled = torch.compile(model, dynamic=True)
    x0 = torch.randn(batches[0], hidden)
    with torch.no_grad():
        start = time.perf_counter()
        try:
            compiled(x0)
        except torch._dynamo.exc.BackendCompilerFailed as exc:
            return CompileResult(time.perf_counter() - start, [], "inductor", _compile_failure(exc))
        compile_seconds = time.perf_counter() - start
        records = []
        for b in batches:
            x = torch.randn(b, hidden)
            if not torch.allclose(compiled(x), model(x), atol=1e-5, rtol=1e-4):
                raise RuntimeError("compiled and eager outputs differ")
            e = time_call(lambda x=x: model(x), min_run_time=0.1)
            c = time_call(lambda x=x: compiled(x), min_run_time=0.1)
            records.append(
                CompileRecord(
                    b,
                    e.median_seconds,
                    c.median_seconds,
                    e.median_seconds / c.median_seconds,
                    e.iqr_seconds,
                    c.iqr_seconds,
                )
            )
    return CompileResult(compile_seconds, records, "inductor")


def _compile_failure(exc: Exception) -> str:
    """One line on why Inductor could not build its C++ here."""
    where = os.path.dirname(torch.__file__)
    if " " in where:
        return (
            f"Inductor's C++ build passes torch's folder ({where}) to the compiler unquoted, "
            "and that path contains a space: install the course in a path without spaces to "
            "measure torch.compile"
        )
    first = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
    return f"Inductor could not build its C++ code here ({first[:200]})"


__all__ = [
    "BatchRecord",
    "CompileRecord",
    "CompileResult",
    "SERVE_CONFIG",
    "ServeRecord",
    "SmallMLP",
    "VARIANTS",
    "batch_sweep",
    "compile_overhead",
    "make_variant",
    "serve_model",
    "serve_variants",
    "torchao_int4_reason",
]
