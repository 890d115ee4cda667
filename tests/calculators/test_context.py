"""Context parallelism's calculators: the causal work per rank (contiguous against zig-zag, Llama 3
sec. 3.3.2) and the overlap condition of ring attention (Liu et al. 2023: block size at least
FLOP/s over bandwidth), and the fused kernel as the memory table's default."""

from __future__ import annotations

import pytest

from course.calculators import context


def test_zigzag_balances_causal_work_exactly_and_contiguous_does_not():
    """Llama 3 (sec. 3.3.2) gives rank i the chunks i and 2 CP - 1 - i "for better load
    balancing". Both layouts compute every (query, key <= query) pair once: s (s + 1) / 2."""
    s, p = 8192, 4
    zig = context.causal_balance(s, p, zigzag=True)
    flat = context.causal_balance(s, p, zigzag=False)
    assert sum(zig.pairs_per_rank) == sum(flat.pairs_per_rank) == s * (s + 1) // 2
    assert len(set(zig.pairs_per_rank)) == 1 and zig.max_over_mean == 1
    assert list(flat.pairs_per_rank) == sorted(flat.pairs_per_rank)  # the last rank works most
    assert flat.max_over_mean == pytest.approx((2 * p - 1) / p, rel=1e-3)  # 1.75 on 4 ranks


def test_causal_balance_by_hand_on_two_ranks():
    # 8 tokens, chunks of 2: chunk i holds 4i + 3 pairs (3, 7, 11, 15)
    assert context.causal_balance(8, 2, zigzag=False).pairs_per_rank == (10, 26)
    assert context.causal_balance(8, 2, zigzag=True).pairs_per_rank == (18, 18)
    with pytest.raises(ValueError, match="seq_len"):
        context.causal_balance(10, 3, zigzag=True)


def test_ring_overlap_is_liu_et_als_block_size_f_over_b():
    """Liu et al. 2023, sec. 3: with as many K/V heads as query heads in bf16 the transfer hides
    behind the compute when the block size is at least F / B."""
    kw = {"heads": 8, "head_dim": 64, "flop_per_s": 1e12, "link_bytes_per_s": 1e9}
    at = context.ring_overlap(2000, 2, **kw)  # blocks of 1,000 = F / B tokens
    assert at.min_block_tokens == pytest.approx(1e12 / 1e9)
    assert at.block_compute_seconds == pytest.approx(at.kv_transfer_seconds)
    assert at.transfer_hidden == "yes"
    below = context.ring_overlap(2000, 4, **kw)
    assert below.transfer_hidden == "no" and below.block_compute_seconds < below.kv_transfer_seconds
    gqa = context.ring_overlap(2000, 2, kv_heads=2, **kw)  # a quarter of the K/V to send
    assert gqa.min_block_tokens == pytest.approx(at.min_block_tokens / 4)
    with pytest.raises(ValueError, match="link_bytes_per_s"):
        context.ring_overlap(2000, 2, **{**kw, "link_bytes_per_s": 0})


def test_memory_table_defaults_to_a_fused_kernel():
    fused = context.ring_attention_bytes(8192, 8, heads=32, head_dim=128)
    naive = context.ring_attention_bytes(8192, 8, heads=32, head_dim=128, materialize_scores=True)
    assert fused.scores_bytes == 0
    assert naive.total_bytes - fused.total_bytes == naive.scores_bytes == 32 * 1024**2 * 2


def test_ring_attention_memory_falls_with_ranks():
    one = context.ring_attention_bytes(8192, 1, heads=32, head_dim=128, materialize_scores=True)
    eight = context.ring_attention_bytes(8192, 8, heads=32, head_dim=128, materialize_scores=True)
    assert eight.scores_bytes == one.scores_bytes / 64
    assert eight.qkvo_bytes == one.qkvo_bytes / 8
    assert one.scores_bytes == one.one_device_scores_bytes == 32 * 8192**2 * 2
    with pytest.raises(ValueError, match="seq_len"):
        context.ring_attention_bytes(100, 3, heads=4, head_dim=8)
