"""Context parallelism: the memory of ring attention per rank against sequence length.

Ring attention (Liu, Zaharia, Abbeel 2023, "Ring Attention with Blockwise Transformers for
Near-Infinite Context", https://arxiv.org/abs/2310.01889) splits a sequence of ``seq_len`` tokens
over ``ranks`` ranks. Each keeps its own block of queries, keys, values and output, and the K/V
blocks travel round the ring: at each of ``ranks`` steps a rank attends its queries to the block it
holds while receiving the next one. Partial results merge by the log-sum-exp rule, so a rank only
ever holds a (s/p) x (s/p) block of scores and one running log-sum-exp per query and head. Attention
memory per rank falls as 1/p for the blocks and 1/p^2 for the scores. Used by lesson 12.
"""

from __future__ import annotations

from dataclasses import dataclass

from course.facts import validate
from course.facts.report import Report


@dataclass(frozen=True)
class RingAttentionMemory(Report):
    """One attention layer's forward tensors on one rank of a ring."""

    _title = "Ring attention memory per rank (one layer)"
    _formats = {"block_tokens": "number"}

    ranks: int
    block_tokens: int  # seq_len / ranks
    qkvo_bytes: float  # this rank's Q, K, V and output blocks
    kv_in_flight_bytes: float  # the next K/V block being received
    scores_bytes: float  # one block of scores (0 with a fused kernel that never stores them)
    softmax_stats_bytes: float  # the running log-sum-exp per query and head, fp32
    total_bytes: float
    one_device_scores_bytes: float  # the full s x s scores on one device, for comparison


def ring_attention_bytes(
    seq_len: int,
    ranks: int,
    *,
    heads: int,
    head_dim: int,
    kv_heads: int | None = None,
    batch: int = 1,
    bytes_per_value: float = 2,
    materialize_scores: bool = True,
) -> RingAttentionMemory:
    """Bytes one rank holds for one attention layer under ring attention over ``ranks`` ranks.

    Q and O: ``batch x heads x s/p x head_dim``; K and V (and the K/V block in flight):
    ``batch x kv_heads x s/p x head_dim`` each; scores ``batch x heads x (s/p)^2`` when the block
    is materialised (as the course's demo does; FlashAttention does not); the log-sum-exp ``batch x
    heads x s/p`` in fp32. No block is in flight on one rank. ``seq_len`` must divide by ``ranks``.
    """
    s = validate.positive_int("seq_len", seq_len, maximum=10**9)
    p = validate.positive_int("ranks", ranks, maximum=10**5)
    h = validate.positive_int("heads", heads, maximum=10**4)
    d = validate.positive_int("head_dim", head_dim, maximum=10**5)
    kv = validate.positive_int("kv_heads", h if kv_heads is None else kv_heads, maximum=h)
    b = validate.positive_int("batch", batch, maximum=10**6)
    v = validate.number("bytes_per_value", bytes_per_value, minimum=0.125, maximum=8)
    validate.choice("materialize_scores", materialize_scores, (True, False))
    if s % p:
        raise ValueError(f"seq_len must be divisible by ranks, got seq_len={s}, ranks={p}")
    n = s // p
    qo = 2 * b * h * n * d * v
    kv_block = 2 * b * kv * n * d * v
    flight = kv_block if p > 1 else 0.0
    scores = b * h * n * n * v if materialize_scores else 0.0
    stats = b * h * n * 4.0
    return RingAttentionMemory(
        ranks=p,
        block_tokens=n,
        qkvo_bytes=qo + kv_block,
        kv_in_flight_bytes=flight,
        scores_bytes=scores,
        softmax_stats_bytes=stats,
        total_bytes=qo + kv_block + flight + scores + stats,
        one_device_scores_bytes=b * h * s * s * v,
    )


__all__ = ["RingAttentionMemory", "ring_attention_bytes"]
