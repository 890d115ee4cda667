"""Context parallelism: the memory of ring attention per rank against sequence length.

Ring attention (Liu, Zaharia, Abbeel 2023, "Ring Attention with Blockwise Transformers for
Near-Infinite Context", https://arxiv.org/abs/2310.01889) splits a sequence of ``seq_len`` tokens
over ``ranks`` ranks. Each keeps its own block of queries, keys, values and output, and the K/V
blocks travel round the ring: at each of ``ranks`` steps a rank attends its queries to the block it
holds while receiving the next one. Partial results merge by the log-sum-exp rule, so a rank only
ever holds a (s/p) x (s/p) block of scores and one running log-sum-exp per query and head. Attention
memory per rank falls as 1/p for the blocks and 1/p^2 for the scores. Used by lesson 12.

Also: :func:`causal_balance`, the causal work per rank with a contiguous split against the zig-zag
one (Llama 3, sec. 3.3.2), and :func:`ring_overlap`, whether a block's attention compute hides
the transfer of the next K/V block (Liu et al. 2023: block size at least FLOP/s over bandwidth).
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


def _layer_shape(seq_len, ranks, heads, head_dim, kv_heads, batch, bytes_per_value) -> tuple:
    """The checked shape of one attention layer split over a ring: ``(s, p, h, d, kv, b, bytes,
    n = s / p)``; ``seq_len`` must divide by ``ranks``."""
    s = validate.positive_int("seq_len", seq_len, maximum=10**9)
    p = validate.positive_int("ranks", ranks, maximum=10**5)
    h = validate.positive_int("heads", heads, maximum=10**4)
    d = validate.positive_int("head_dim", head_dim, maximum=10**5)
    kv = validate.positive_int("kv_heads", h if kv_heads is None else kv_heads, maximum=h)
    b = validate.positive_int("batch", batch, maximum=10**6)
    v = validate.number("bytes_per_value", bytes_per_value, minimum=0.125, maximum=8)
    if s % p:
        raise ValueError(f"seq_len must be divisible by ranks, got seq_len={s}, ranks={p}")
    return s, p, h, d, kv, b, v, s // p


def ring_attention_bytes(
    seq_len: int,
    ranks: int,
    *,
    heads: int,
    head_dim: int,
    kv_heads: int | None = None,
    batch: int = 1,
    bytes_per_value: float = 2,
    materialize_scores: bool = False,
) -> RingAttentionMemory:
    """Bytes one rank holds for one attention layer under ring attention over ``ranks`` ranks.

    Q and O: ``batch x heads x s/p x head_dim``; K and V (and the K/V block in flight):
    ``batch x kv_heads x s/p x head_dim`` each; scores ``batch x heads x (s/p)^2`` only when
    ``materialize_scores`` (as the course's demo does; the default is a fused kernel such as
    FlashAttention, which never stores them); the log-sum-exp ``batch x
    heads x s/p`` in fp32. No block is in flight on one rank. ``seq_len`` must divide by ``ranks``.
    """
    s, p, h, d, kv, b, v, n = _layer_shape(
        seq_len, ranks, heads, head_dim, kv_heads, batch, bytes_per_value
    )
    validate.choice("materialize_scores", materialize_scores, (True, False))
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


@dataclass(frozen=True)
class CausalBalance(Report):
    """Causal attention's work per rank: (query, key) pairs with the key not after the query."""

    _title = "Causal attention work per rank"

    layout: str  # "contiguous" (rank r: tokens r*s/p ...) or "zigzag" (chunks r and 2p-1-r)
    pairs_per_rank: tuple  # score pairs each rank computes, rank 0 first
    max_over_mean: float  # the slowest rank against the average: 1 is balanced


def causal_balance(seq_len: int, ranks: int, *, zigzag: bool) -> CausalBalance:
    """Score pairs each rank computes in causal attention over a sequence split on ``ranks``.

    The sequence is cut in ``2 ranks`` chunks of ``c`` tokens; chunk ``i`` holds ``c^2 i +
    c(c+1)/2`` pairs (every earlier token, and itself). Contiguous: rank r holds chunks 2r and
    2r+1, so the last rank does most of the work. Zig-zag (Llama 3, sec. 3.3.2: "the i-th CP rank
    received both the i-th and the (2 x CP - 1 - i)-th chunks"): chunks r and 2p-1-r, the same
    ``c^2 (2p-1) + c(c+1)`` pairs on every rank. ``seq_len`` must divide by ``2 ranks``.
    """
    s = validate.positive_int("seq_len", seq_len, maximum=10**9)
    p = validate.positive_int("ranks", ranks, maximum=10**5)
    validate.choice("zigzag", zigzag, (True, False))
    if s % (2 * p):
        raise ValueError(f"seq_len must be divisible by 2 x ranks, got seq_len={s}, ranks={p}")
    c = s // (2 * p)

    def chunk(i: int) -> int:
        return c * c * i + c * (c + 1) // 2

    held = [(r, 2 * p - 1 - r) if zigzag else (2 * r, 2 * r + 1) for r in range(p)]
    pairs = tuple(chunk(a) + chunk(b) for a, b in held)
    return CausalBalance(
        layout="zigzag" if zigzag else "contiguous",
        pairs_per_rank=pairs,
        max_over_mean=max(pairs) / (sum(pairs) / p),
    )


@dataclass(frozen=True)
class RingOverlap(Report):
    """One ring step: a block's attention compute against receiving the next K/V block."""

    _title = "Ring attention: compute against transfer, one step"
    _formats = {"block_tokens": "number", "min_block_tokens": "number"}

    block_tokens: int  # seq_len / ranks
    block_compute_seconds: float  # forward FLOPs of one block pair / flop_per_s
    kv_transfer_seconds: float  # one K/V block / link_bytes_per_s
    transfer_hidden: str  # "yes" when the compute takes at least as long as the transfer
    min_block_tokens: float  # the block size from which the transfer is hidden


def ring_overlap(
    seq_len: int,
    ranks: int,
    *,
    heads: int,
    head_dim: int,
    flop_per_s: float,
    link_bytes_per_s: float,
    kv_heads: int | None = None,
    batch: int = 1,
    bytes_per_value: float = 2,
) -> RingOverlap:
    """Whether ring attention hides its K/V exchange behind compute (forward, one layer).

    Per step a rank computes one block pair, ``4 b h n^2 d`` FLOPs (Q K^T and the weighted sum of
    V, 2 FLOPs per multiply-add, ``n = seq_len / ranks``), while it receives one K/V block,
    ``2 b kv_heads n d`` values. Hidden when ``4 b h n^2 d / F >= 2 b kv n d bytes / B``, that is
    ``n >= kv bytes F / (2 h B)``: with ``kv = h`` in bf16 Liu et al.'s condition, block size at
    least ``F / B`` (Ring Attention, 2023, sec. 3). An estimate at peak rates: real kernels reach
    a fraction of ``flop_per_s``, which makes hiding easier, not harder.
    """
    _, _, h, d, kv, b, v, n = _layer_shape(
        seq_len, ranks, heads, head_dim, kv_heads, batch, bytes_per_value
    )
    f = validate.number("flop_per_s", flop_per_s, minimum=0, strict_min=True, maximum=1e20)
    bw = validate.number(
        "link_bytes_per_s", link_bytes_per_s, minimum=0, strict_min=True, maximum=1e15
    )
    compute = 4 * b * h * n * n * d / f
    transfer = 2 * b * kv * n * d * v / bw
    return RingOverlap(
        block_tokens=n,
        block_compute_seconds=compute,
        kv_transfer_seconds=transfer,
        transfer_hidden="yes" if compute >= transfer else "no",
        min_block_tokens=kv * v * f / (2 * h * bw),
    )


__all__ = [
    "CausalBalance",
    "RingAttentionMemory",
    "RingOverlap",
    "causal_balance",
    "ring_attention_bytes",
    "ring_overlap",
]
