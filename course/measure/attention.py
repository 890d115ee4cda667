"""Naive attention against ``scaled_dot_product_attention``: peak memory and time vs sequence
length.

Naive attention (``softmax(q k^T / sqrt(d)) v`` written out, as ``course.measure.torchmodels`` does
by default) materialises ``batch x heads x s x s`` scores and keeps the softmax output for the
backward pass. ``torch.nn.functional.scaled_dot_product_attention`` picks a fused kernel
(FlashAttention on CUDA from compute capability 8.0, the memory-efficient kernel on older cards
such as a T4: ``gpu_guards.lacks("flash_attention")``; a flash kernel on the CPU too) that works
tile by tile and keeps only the output and a per-row log-sum-exp. :func:`attention_sweep` runs
forward + backward of one causal attention call both ways for growing ``seq_len`` and records the
peak tensor memory (torch's ``MemTracker``, which works on the CPU) and the median time, beside
the score bytes ``course.calculators.memory.attention_scores_bytes`` predicts.
Used by lesson 07; the H100 reference run did the same inside a 12-layer training step
(``course.facts.data.reference``, ``attention_memory``).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import torch
import torch.nn.functional as F
from torch.distributed._tools.mem_tracker import MemTracker

from course.calculators import memory
from course.facts import validate
from course.measure.timing import Budget, Sweep, progress, time_call

KINDS = ("naive", "sdpa")
#: Largest naive score matrix :func:`attention_sweep` will allocate (bytes): 1 GiB.
MAX_SCORES_BYTES = 2**30


def naive_attention(q: torch.Tensor, k: torch.Tensor, v: torch.Tensor) -> torch.Tensor:
    """Causal attention written out: the full score matrix exists in memory."""
    s = q.shape[-2]
    scores = (q @ k.transpose(-2, -1)) / math.sqrt(q.shape[-1])
    mask = torch.ones(s, s, dtype=torch.bool, device=q.device).triu(1)
    return scores.masked_fill(mask, float("-inf")).softmax(dim=-1) @ v


def fused_attention(q: torch.Tensor, k: torch.Tensor, v: torch.Tensor) -> torch.Tensor:
    """Causal ``scaled_dot_product_attention`` (torch picks the fused kernel)."""
    return F.scaled_dot_product_attention(q, k, v, is_causal=True)


_FUNCTIONS = {"naive": naive_attention, "sdpa": fused_attention}


@dataclass(frozen=True)
class AttentionRecord:
    """One attention call, forward + backward, at one sequence length."""

    kind: str  # "naive" or "sdpa"
    seq_len: int
    peak_bytes: int  # MemTracker's peak of tensors made during forward + backward
    scores_bytes: float  # batch x heads x s^2 x 4: what naive attention must hold (calculated)
    median_seconds: float
    iqr_seconds: float


def _qkv(batch: int, heads: int, seq_len: int, head_dim: int, seed: int):
    g = torch.Generator().manual_seed(seed)
    return [
        torch.randn(batch, heads, seq_len, head_dim, generator=g, requires_grad=True)
        for _ in range(3)
    ]


def measure_attention(
    kind: str,
    seq_len: int,
    *,
    batch: int = 1,
    heads: int = 4,
    head_dim: int = 32,
    seed: int = 0,
    min_run_time: float = 0.1,
) -> AttentionRecord:
    """Peak memory and time of forward + backward of one causal attention call (fp32, CPU)."""
    validate.choice("kind", kind, KINDS)
    s = validate.positive_int("seq_len", seq_len, maximum=65536)
    fn = _FUNCTIONS[kind]
    q, k, v = _qkv(batch, heads, s, head_dim, seed)

    def step() -> None:
        fn(q, k, v).sum().backward()
        for t in (q, k, v):
            t.grad = None

    tracker = MemTracker()
    tracker.track_external(q, k, v)
    with tracker:
        step()
    peak = tracker.get_tracker_snapshot("peak").get(torch.device("cpu"), {})
    inputs = 3 * q.numel() * q.element_size()
    peak_bytes = int(peak.get("Total", 0)) - inputs  # the inputs exist either way
    t = time_call(step, min_run_time=min_run_time)
    scores = memory.attention_scores_bytes(batch, heads, s, bytes_per_value=4)
    return AttentionRecord(kind, s, peak_bytes, scores, t.median_seconds, t.iqr_seconds)


def attention_sweep(
    seq_lens: tuple[int, ...] = (128, 256, 512, 1024, 2048),
    *,
    batch: int = 1,
    heads: int = 4,
    head_dim: int = 32,
    budget_seconds: float = 8.0,
) -> Sweep:
    """Both kinds at each sequence length, shortest first, inside ``budget_seconds`` seconds.

    The first two lengths are always measured; a later length is skipped when its predicted cost
    (the last length's, times the square of the length ratio: attention is quadratic) would not
    fit what is left of the budget, or when naive attention's scores would exceed
    ``MAX_SCORES_BYTES``.
    """
    budget = Budget(budget_seconds)
    sweep = Sweep(
        f"Attention forward + backward: batch {batch}, {heads} heads of {head_dim}, fp32",
        budget_seconds,
    )
    cost, last = 0.0, None
    with progress(len(seq_lens), desc="attention", budget_seconds=budget_seconds) as bar:
        for s in seq_lens:
            scores = memory.attention_scores_bytes(batch, heads, s, bytes_per_value=4)
            predicted = cost * (s / last) ** 2 if last else 0.0  # attention is quadratic in s
            if scores > MAX_SCORES_BYTES:
                sweep.skipped.append(
                    f"seq_len {s}: naive scores would need "
                    f"{scores / 2**30:.1f} GiB (limit {MAX_SCORES_BYTES / 2**30:g})"
                )
            elif len(sweep.records) >= 4 and not budget.fits(predicted):  # two lengths always
                sweep.skipped.append(f"seq_len {s}: would not fit the budget")
            else:
                start = budget.elapsed
                for kind in KINDS:
                    sweep.records.append(
                        measure_attention(kind, s, batch=batch, heads=heads, head_dim=head_dim)
                    )
                cost, last = budget.elapsed - start, s
            bar.update()
    sweep.elapsed_seconds = budget.elapsed
    return sweep


__all__ = [
    "AttentionRecord",
    "KINDS",
    "MAX_SCORES_BYTES",
    "attention_sweep",
    "fused_attention",
    "measure_attention",
    "naive_attention",
]
