"""Fine-tuning calculators: LoRA's trainable parameters and memory, and gradient accumulation.

- :func:`lora_params`: LoRA (Hu et al. 2021, "LoRA: Low-Rank Adaptation of Large Language Models",
  sec. 4) freezes a weight ``W`` (``d_in x d_out``) and trains ``B A`` with ``A``: ``d_in x r`` and
  ``B``: ``r x d_out``, so each adapted matrix adds ``r x (d_in + d_out)`` trainable parameters.
  Check (the paper's Table 4): GPT-3 175B with rank 8 on W_q and W_v trains 37.7 M parameters,
  rank 1 trains 4.7 M.
- :func:`lora_memory`: frozen weights stored in ``base_dtype`` (no gradients, no optimizer states;
  int4 is QLoRA, Dettmers et al. 2023) plus mixed-precision Adam on the adapters only (16 B/param,
  ``course.calculators.memory.model_state_bytes``), against full fine-tuning's 16 B/param on every
  weight. Activations are the same for both (the frozen layers still pass gradients back), so they
  are added to both when a sequence length is given.
- :func:`accumulation_steps`: how many micro-batches to accumulate so that
  ``micro_batch x data_parallel x steps`` equals a target global batch.

 Used by lesson 07 and its exercise set.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from course.calculators.memory import (
    BYTES_PER_VALUE,
    MAX_BATCH,
    RECOMPUTE,
    activation_bytes_per_layer,
    model_state_bytes,
)
from course.facts import validate
from course.facts.models import TransformerConfig, checked_config
from course.facts.report import Report

#: Matrices of a transformer layer LoRA can adapt (names as in Llama's checkpoints, without _proj).
LORA_TARGETS = ("q", "k", "v", "o", "gate", "up", "down")


def _targets(targets: object, config: TransformerConfig) -> tuple[str, ...]:
    if isinstance(targets, str) or not isinstance(targets, Sequence) or not targets:
        raise ValueError(f"targets must be a non-empty sequence of {LORA_TARGETS}, got {targets!r}")
    out = []
    for t in targets:
        validate.choice("targets", t, LORA_TARGETS)
        if t == "gate" and not config.gated_mlp:
            raise ValueError(f"targets: {config.name!r} has no gated MLP, so no 'gate' matrix")
        if t not in out:
            out.append(t)
    return tuple(out)


def lora_targets(config: TransformerConfig) -> tuple[str, ...]:
    """Every matrix of ``config``'s layers LoRA can adapt: :data:`LORA_TARGETS` less ``gate``
    where the MLP is not gated (GPT-2, GPT-3, BERT have only ``up`` and ``down``)."""
    c = checked_config(config)
    return tuple(t for t in LORA_TARGETS if t != "gate" or c.gated_mlp)


def _matrix_shape(config: TransformerConfig, target: str) -> tuple[int, int]:
    h, q, kv, f = (
        config.hidden,
        config.heads * config.head_dim,
        config.kv_heads * config.head_dim,
        config.ffn_hidden,
    )
    return {
        "q": (h, q),
        "k": (h, kv),
        "v": (h, kv),
        "o": (q, h),
        "gate": (h, f),
        "up": (h, f),
        "down": (f, h),
    }[target]


def lora_params(
    config: TransformerConfig, *, rank: int = 8, targets: Sequence[str] = ("q", "v")
) -> int:
    """Trainable parameters LoRA adds: ``rank x (d_in + d_out)`` per targeted matrix per layer.

    GPT-3 175B (96 layers, d_model 12,288), rank 8 on ``("q", "v")``: 96 x 2 x 8 x 24,576 =
    37,748,736 (Hu et al. 2021, Table 4: 37.7 M).
    """
    c = checked_config(config)
    r = validate.positive_int("rank", rank, maximum=c.hidden)
    chosen = _targets(targets, c)
    return c.layers * sum(r * sum(_matrix_shape(c, t)) for t in chosen)


@dataclass(frozen=True)
class FineTuneMemory(Report):
    """Memory of LoRA fine-tuning against full fine-tuning (one device, no sharding)."""

    _title = "LoRA vs full fine-tuning"

    params: int
    trainable_params: int
    trainable_fraction: float
    lora_frozen_weights_bytes: float  # base weights in base_dtype, no gradients or states
    lora_adapter_states_bytes: float  # adapters with mixed-precision Adam: 16 B/param
    activations_bytes: float  # same for both (0 when no seq_len is given)
    lora_total_bytes: float
    full_states_bytes: float  # every weight with mixed-precision Adam: 16 B/param
    full_total_bytes: float
    saved_fraction: float  # 1 - lora_total / full_total


def lora_memory(
    config: TransformerConfig,
    *,
    rank: int = 8,
    targets: Sequence[str] = ("q", "v"),
    base_dtype: str = "bf16",
    batch: int = 1,
    seq_len: int | None = None,
    recompute: str = "none",
) -> FineTuneMemory:
    """Memory of LoRA (frozen ``base_dtype`` weights + adapters with Adam) vs full fine-tuning.

    ``base_dtype="int4"`` is QLoRA's 4-bit base (0.5 B/param; its NF4 scales add about 0.5 %).
    With ``seq_len`` the Korthikanti et al. 2022 activations of ``batch`` sequences (with
    ``recompute`` "none", "selective" or "full") are added to both sides, plus the fp32 logits;
    without it only weights and states are compared. Full fine-tuning here is mixed-precision
    Adam, 16 B/param (ZeRO's accounting).
    """
    c = checked_config(config)
    trainable = lora_params(c, rank=rank, targets=targets)
    base = BYTES_PER_VALUE[validate.choice("base_dtype", base_dtype, BYTES_PER_VALUE)]
    b = validate.positive_int("batch", batch, maximum=MAX_BATCH)
    mode = validate.choice("recompute", recompute, RECOMPUTE)
    activations = 0.0
    if seq_len is not None:
        s = validate.positive_int("seq_len", seq_len, maximum=10**8)
        per_layer = activation_bytes_per_layer(s, b, c.hidden, c.heads, recompute=mode)
        activations = c.layers * per_layer + (4.0 * s * b * c.vocab if c.lm_head else 0.0)
    n = c.params
    frozen = n * base
    adapters = model_state_bytes(trainable, precision="mixed", optimizer="adam").total_bytes
    full = model_state_bytes(n, precision="mixed", optimizer="adam").total_bytes
    lora_total, full_total = frozen + adapters + activations, full + activations
    return FineTuneMemory(
        params=n,
        trainable_params=trainable,
        trainable_fraction=trainable / n,
        lora_frozen_weights_bytes=frozen,
        lora_adapter_states_bytes=adapters,
        activations_bytes=activations,
        lora_total_bytes=lora_total,
        full_states_bytes=full,
        full_total_bytes=full_total,
        saved_fraction=1 - lora_total / full_total,
    )


@dataclass(frozen=True)
class Accumulation(Report):
    """Micro-batches to accumulate per optimizer step to reach a global batch."""

    _title = "Gradient accumulation"

    global_batch: int  # sequences per optimizer step
    micro_batch: int  # sequences per forward/backward on one device
    data_parallel: int  # devices, each with its own micro-batch
    steps: int  # micro-batches accumulated per optimizer step on each device
    tokens_per_step: int  # global_batch x seq_len (0 when no seq_len is given)


def accumulation_steps(
    global_batch: int, micro_batch: int, *, data_parallel: int = 1, seq_len: int | None = None
) -> Accumulation:
    """``steps = global_batch / (micro_batch x data_parallel)``, which must be a whole number.

    Accumulating ``steps`` micro-batches (summing their gradients, each loss divided by ``steps``)
    gives the gradient of one batch ``steps`` times larger, for the memory of one micro-batch; the
    time per sample stays that of the micro-batch (tests/measure/test_training_optimisations.py
    checks the gradient to 1e-6). Example: a global batch of 512 sequences, micro-batches of 4 on 8
    GPUs: 16 steps.
    """
    g = validate.positive_int("global_batch", global_batch, maximum=10**9)
    m = validate.positive_int("micro_batch", micro_batch, maximum=g)
    dp = validate.positive_int("data_parallel", data_parallel, maximum=10**6)
    per_round = m * dp
    if g % per_round:
        low, high = (g // per_round) * per_round, (g // per_round + 1) * per_round
        raise ValueError(
            f"global_batch must be a multiple of micro_batch x data_parallel = {per_round:,}, "
            f"got {g:,} (nearest: {low:,} or {high:,})"
        )
    tokens = 0
    if seq_len is not None:
        tokens = g * validate.positive_int("seq_len", seq_len, maximum=10**8)
    return Accumulation(g, m, dp, g // per_round, tokens)


__all__ = [
    "Accumulation",
    "FineTuneMemory",
    "LORA_TARGETS",
    "lora_targets",
    "accumulation_steps",
    "lora_memory",
    "lora_params",
]
