"""FLOPs of real torch code counted by ``torch.utils.flop_counter.FlopCounterMode``, and its traps.

The counter records the FLOPs of every matmul-like aten op that runs (2 per multiply-add), which
makes it the referee for the formulas of ``course.calculators.compute``. Three traps a learner meets
(lesson 05, each tested in tests/measure/test_flops.py):

1. **Fused attention on the CPU counts as 0.** ``F.scaled_dot_product_attention`` dispatches to a
   fused CPU kernel that has no FLOP formula; under ``sdpa_kernel(SDPBackend.MATH)`` it decomposes
   into two batched matmuls and is counted (:func:`sdpa_flops`). ``course.measure.torchmodels``
   writes attention as plain matmuls for this reason.
2. **A causal mask is never discounted.** The masked upper triangle is still multiplied and then
   thrown away, so the count equals the unmasked one (:func:`attention_block_flops`). Only kernels
   that skip masked tiles (FlashAttention) do half the work.
3. **The first layer needs no input gradient.** Backward is 2x forward for a layer whose input
   needs a gradient (dX and dW), 1x for the first layer of a network fed with data (dW only). For
   a deep transformer that is one small layer out of many; for a two-layer MLP 6N over-counts by a
   quarter (:func:`mlp_training_flops`).

 Used by lesson 05 and :mod:`course.measure.mfu`.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import torch
import torch.nn.functional as F
from torch import nn
from torch.nn.attention import SDPBackend, sdpa_kernel
from torch.utils.flop_counter import FlopCounterMode

from course.calculators import compute
from course.facts import validate
from course.facts.models import TransformerConfig
from course.measure.torchmodels import Attention, build_model


def count_flops(fn: Callable[[], object]) -> int:
    """FLOPs of one call of ``fn()`` as ``FlopCounterMode`` counts them (2 per multiply-add)."""
    with FlopCounterMode(display=False) as counter:
        fn()
    return int(counter.get_total_flops())


def _loss(out: torch.Tensor | tuple) -> torch.Tensor:
    return out[0].float().sum() + out[1].float().sum() if isinstance(out, tuple) else out.sum()


@dataclass(frozen=True)
class FlopCount:
    """Counted FLOPs of a model beside the formula's (``course.calculators.compute``)."""

    what: str
    counted_flops: int
    formula_flops: float

    @property
    def relative_error(self) -> float:
        """(counted - formula) / formula."""
        return (self.counted_flops - self.formula_flops) / self.formula_flops

    def __str__(self) -> str:
        return (
            f"{self.what}: counted {self.counted_flops:.4g} FLOPs, formula "
            f"{self.formula_flops:.4g} ({100 * self.relative_error:+.2f} %)"
        )


def transformer_flops(
    config: TransformerConfig,
    *,
    batch: int = 2,
    seq_len: int = 64,
    training: bool = True,
    device: str = "meta",
    seed: int = 0,
) -> FlopCount:
    """Count a forward (and backward, if ``training``) pass of ``config``'s model; formula beside.

    On ``"meta"`` nothing is allocated, so Llama-2-7B counts in seconds. The formula is
    :func:`course.calculators.compute.forward_flops` (x 3 with backward: every matmul's backward
    costs two of its forward, the embedding-fed first projection included because the embedding
    output requires grad).
    """
    b = validate.positive_int("batch", batch, maximum=4096)
    s = validate.positive_int("seq_len", seq_len, maximum=1 << 20)
    torch.manual_seed(seed)
    model = build_model(config, device=device)
    ids = torch.randint(0, config.vocab, (b, s), device=device)
    if training:
        counted = count_flops(lambda: _loss(model(ids)).backward())
    else:
        with torch.no_grad():
            counted = count_flops(lambda: model(ids))
    formula = compute.forward_flops(config, s, batch=b) * (3 if training else 1)
    what = f"{config.name} {'training step' if training else 'forward'}, batch {b} x {s} tokens"
    return FlopCount(what, counted, formula)


def sdpa_flops(
    *, batch: int = 2, heads: int = 4, seq_len: int = 128, head_dim: int = 32, math: bool
) -> int:
    """Counted FLOPs of one ``F.scaled_dot_product_attention`` call on the CPU.

    ``math=False``: torch's default dispatch (a fused CPU kernel: counted as 0 here).
    ``math=True``: under ``sdpa_kernel(SDPBackend.MATH)``, counted as Q K^T and scores x V,
    ``4 x batch x heads x seq_len^2 x head_dim``.
    """
    g = torch.Generator().manual_seed(0)
    q, k, v = (torch.randn(batch, heads, seq_len, head_dim, generator=g) for _ in range(3))

    def call() -> object:
        return F.scaled_dot_product_attention(q, k, v, is_causal=True)

    if not math:
        return count_flops(call)
    with sdpa_kernel(SDPBackend.MATH):
        return count_flops(call)


def attention_block_flops(config: TransformerConfig, *, causal: bool, seq_len: int = 64) -> int:
    """Counted forward FLOPs of one attention block of ``config`` with or without a causal mask."""
    c = config.replace(causal=causal)
    torch.manual_seed(0)
    block = Attention(c)
    x = torch.randn(1, seq_len, c.hidden)
    with torch.no_grad():
        return count_flops(lambda: block(x))


def mlp_training_flops(widths: tuple[int, ...] = (64, 256, 10), *, batch: int = 32) -> FlopCount:
    """A plain MLP fed with data (no input gradient): counted training FLOPs vs 6 x weights x batch.

    The first layer's backward computes only its weight gradient, so the count is
    ``6N - 2 x (first layer's weights)`` per example: 6N over-counts small networks.
    """
    layers: list[nn.Module] = []
    for a, b in zip(widths[:-1], widths[1:], strict=True):
        layers += [nn.Linear(a, b, bias=False), nn.ReLU()]
    torch.manual_seed(0)
    model = nn.Sequential(*layers[:-1])
    x = torch.randn(batch, widths[0])  # data: requires no gradient
    weights = sum(p.numel() for p in model.parameters())
    counted = count_flops(lambda: model(x).sum().backward())
    return FlopCount(f"MLP {widths}, batch {batch}, training step", counted, 6.0 * weights * batch)


__all__ = [
    "FlopCount",
    "attention_block_flops",
    "count_flops",
    "mlp_training_flops",
    "sdpa_flops",
    "transformer_flops",
]
