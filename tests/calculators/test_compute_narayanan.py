"""training_flops_with_attention against Narayanan et al. 2021, sec. 5.1 (eq. 3 and the 72 form)."""

import pytest

from course.calculators.compute import forward_flops_per_token, training_flops_with_attention
from course.facts.models import PRESETS


def narayanan(batch, s, layers, h, vocab, *, recompute):
    if recompute:  # eq. 3: layers 4x their forward, LM head 3x
        return 96 * batch * s * layers * h**2 * (1 + s / (6 * h) + vocab / (16 * layers * h))
    return 72 * batch * s * layers * h**2 * (1 + s / (6 * h) + vocab / (12 * layers * h))


@pytest.mark.parametrize("recompute", [True, False])
def test_gpt3_175b_iteration_matches_narayanan_sec_5_1(recompute):
    cfg = PRESETS["gpt-3-175b"]  # l = 96, h = 12,288, V = 50,257 (Brown et al. 2020, Table 2.1)
    batch, s = 1536, 2048  # Narayanan et al. Table 1's GPT-3 runs use batch 1,536, seq 2,048
    expected = narayanan(batch, s, cfg.layers, cfg.hidden, cfg.vocab, recompute=recompute)
    got = training_flops_with_attention(cfg, batch * s, s, recompute=recompute)
    assert got == pytest.approx(expected, rel=2e-3)  # the paper leaves out biases and norms


def test_recomputation_reruns_the_layers_forward_but_not_the_lm_head():
    cfg, s = PRESETS["gpt-3-175b"], 2048
    extra = training_flops_with_attention(
        cfg, 1, s, recompute=True
    ) - training_flops_with_attention(cfg, 1, s)
    head_forward = 2 * cfg.hidden * cfg.vocab
    assert extra == pytest.approx(forward_flops_per_token(cfg, s) - head_forward, rel=1e-12)
