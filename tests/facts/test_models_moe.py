"""Mixtures of experts (lesson 12): total vs active parameters against the published configs."""

from __future__ import annotations

import pytest

from course.facts.models import MOE_PRESETS, PRESETS, active_param_count

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
