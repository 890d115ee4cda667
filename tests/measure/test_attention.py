"""course.measure.attention (lesson 07): fused and naive attention agree; speeds never asserted."""

from __future__ import annotations

import torch

from course.measure import attention


def test_fused_attention_equals_naive_attention():
    q, k, v = attention._qkv(2, 4, 64, 16, seed=0)
    assert torch.allclose(
        attention.naive_attention(q, k, v), attention.fused_attention(q, k, v), atol=1e-5
    )


def test_naive_attention_holds_the_scores_and_sdpa_does_not():
    naive = attention.measure_attention("naive", 512, min_run_time=0.01)
    fused = attention.measure_attention("sdpa", 512, min_run_time=0.01)
    assert naive.peak_bytes >= naive.scores_bytes  # 4 heads x 512^2 x 4 B = 4 MiB
    assert fused.peak_bytes < naive.scores_bytes / 2


def test_attention_sweep_skips_what_does_not_fit():
    sweep = attention.attention_sweep((64, 128, 65536), budget_seconds=5)
    assert {r.kind for r in sweep.records} == {"naive", "sdpa"}
    assert any("65536" in s for s in sweep.skipped)  # 64 GiB of naive scores: refused
