"""FlopCounterMode against the formulas and its three traps (the MFU measurement:
tests/measure/test_mfu.py)."""

from __future__ import annotations

import pytest

from course.calculators import compute
from course.facts.models import PRESETS
from course.measure import flops

TINY = PRESETS["llama-2-7b"].replace(
    name="tiny-llama",
    layers=2,
    hidden=128,
    heads=4,
    kv_heads=4,
    ffn_hidden=344,
    vocab=1000,
    max_positions=128,
    source="",
)


@pytest.mark.parametrize("key", ["llama-2-7b", "llama-3-8b", "gpt2"])
def test_training_step_flops_of_real_models_match_the_formula_within_1_percent(key):
    """Counted on the meta device at full size (no memory), attention included."""
    count = flops.transformer_flops(PRESETS[key], batch=1, seq_len=256)
    assert abs(count.relative_error) < 0.01


def test_forward_flops_on_cpu_match_the_formula():
    count = flops.transformer_flops(TINY, batch=2, seq_len=64, training=False, device="cpu")
    assert abs(count.relative_error) < 0.01
    assert "forward" in str(count)


def test_trap_fused_cpu_sdpa_counts_zero_and_the_math_backend_counts_it():
    assert flops.sdpa_flops(math=False) == 0
    assert flops.sdpa_flops(math=True, batch=2, heads=4, seq_len=128, head_dim=32) == (
        4 * 2 * 4 * 128 * 128 * 32
    )


def test_trap_causal_mask_is_never_discounted():
    masked = flops.attention_block_flops(TINY, causal=True)
    full = flops.attention_block_flops(TINY, causal=False)
    assert masked == full
    per_token_full = compute.attention_flops_per_token(TINY.replace(layers=1), 64)
    assert per_token_full == 2 * compute.attention_flops_per_token(
        TINY.replace(layers=1), 64, causal=True
    )


def test_trap_first_layer_skips_its_input_gradient_so_6n_overcounts_a_small_mlp():
    count = flops.mlp_training_flops((64, 256, 10), batch=32)
    first = 64 * 256
    assert count.counted_flops == 6 * (64 * 256 + 256 * 10) * 32 - 2 * first * 32
    assert count.relative_error < -0.2
