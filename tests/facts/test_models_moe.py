"""Mixtures of experts (lesson 12): total vs active parameters against the published configs,
FLOPs from the active ones, all-to-all bytes and ring-attention memory."""

from __future__ import annotations

import pytest

from course.calculators import compute, context, moe
from course.facts.models import MOE_PRESETS, PRESETS, active_matmul_params, active_param_count

MIXTRAL = MOE_PRESETS["mixtral-8x7b"]
DEEPSEEK = MOE_PRESETS["deepseek-v3"]


def test_mixtral_total_and_active_match_the_paper():
    """Jiang et al. 2024, 'Mixtral of Experts': 47B parameters, 13B active per token. The
    released config.json (mistralai/Mixtral-8x7B-v0.1) gives exactly 46,702,792,704 (32 layers x
    (attention + 8 experts + router) + embeddings + head)."""
    assert MIXTRAL.params == 46_702_792_704
    assert round(MIXTRAL.params / 1e9, 1) == 46.7
    assert round(active_param_count(MIXTRAL) / 1e9, 1) == 12.9


def test_deepseek_v3_within_the_stated_tolerance():
    """DeepSeek-V3 report: 671B total, 37B activated per token. The course stands in plain
    attention for multi-head latent attention (MLA, low-rank Q and KV projections: 187M per layer
    against 206M here), so the total is within 0.5 % and the active count within 5 %."""
    assert DEEPSEEK.params == pytest.approx(671e9, rel=5e-3)
    assert active_param_count(DEEPSEEK) == pytest.approx(37e9, rel=0.05)


def test_dense_models_are_unchanged():
    for cfg in PRESETS.values():
        assert active_param_count(cfg) == cfg.params
        assert not cfg.is_moe


def test_flops_follow_the_active_parameters():
    """Forward FLOPs per token ~ 2 x active matmul weights (+ head + attention): Mixtral costs
    about what a 13B dense model does, not a 47B one."""
    f = compute.forward_flops_per_token(MIXTRAL, 1)
    head = 2 * MIXTRAL.hidden * MIXTRAL.vocab
    assert f == pytest.approx(2 * active_matmul_params(MIXTRAL) + head + 4 * 32 * 4096, rel=1e-12)
    acc = moe.moe_account(MIXTRAL, seq_len=1)
    assert acc.dense_equivalent_flops_per_token / acc.forward_flops_per_token == pytest.approx(
        3.6, rel=0.05
    )
    assert acc.weights_bytes == 2 * MIXTRAL.params


def test_all_to_all_bytes():
    """4,096 tokens x top-2 x 4,096 hidden x 2 B, 7/8 of them off-rank on 8 ranks."""
    a = moe.all_to_all_bytes(4096, 4096, experts_per_token=2, ranks=8, moe_layers=32)
    assert a.dispatch_bytes == 4096 * 2 * 4096 * 2 * 7 / 8
    assert a.per_step_bytes == 4 * 32 * a.dispatch_bytes
    assert moe.all_to_all_bytes(10, 8, ranks=1).dispatch_bytes == 0
    assert moe.all_to_all_bytes(10, 8, training=False).exchanges == 2


def test_ring_attention_memory_falls_with_ranks():
    one = context.ring_attention_bytes(8192, 1, heads=32, head_dim=128, materialize_scores=True)
    eight = context.ring_attention_bytes(8192, 8, heads=32, head_dim=128, materialize_scores=True)
    assert eight.scores_bytes == one.scores_bytes / 64
    assert eight.qkvo_bytes == one.qkvo_bytes / 8
    assert one.scores_bytes == one.one_device_scores_bytes == 32 * 8192**2 * 2
    with pytest.raises(ValueError, match="seq_len"):
        context.ring_attention_bytes(100, 3, heads=4, head_dim=8)
