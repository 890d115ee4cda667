"""The tensor-by-tensor estimate of one training step
(course.calculators.memory.step_activation_bytes and training_step_memory): its formulas by hand,
its bookkeeping, and the physics it must obey. The comparison with a real measurement is in
tests/measure/test_measure_memory.py."""

from __future__ import annotations

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from course.calculators import memory
from course.facts.models import PRESETS, TransformerConfig, matmul_params_per_layer

SMALL = TransformerConfig(
    name="t", layers=3, hidden=64, heads=4, kv_heads=2, ffn_hidden=160, vocab=300, max_positions=512
)
FIELDS = (
    "parameters_bytes",
    "gradients_bytes",
    "optimizer_states_bytes",
    "activations_bytes",
    "temporaries_bytes",
    "other_bytes",
)


def test_fp32_block_formula_by_hand():
    """40sbh + 16sbf + 4abs^2 + s^2 + 8sb + 8sd bytes per block (docstring of the function)."""
    s, b, h, f, a, d = 32, 2, 64, 160, 4, 16
    acts = memory.step_activation_bytes(SMALL, batch=b, seq_len=s)
    per_block = acts.attention_per_layer_bytes + acts.mlp_per_layer_bytes
    assert (
        per_block
        == 40 * s * b * h + 16 * s * b * f + 4 * a * b * s * s + s * s + 8 * s * b + 8 * s * d
    )
    assert acts.weight_copies_per_layer_bytes == 0
    head = 12 * s * b * h + 4 * s * b + 4 * s * b * SMALL.vocab
    assert acts.total_bytes == 3 * per_block + head


def test_bf16_autocast_block_formula_by_hand():
    """34sbh + 8sbf + 2abs^2 + s^2 + 8sb + 4sd, plus a 2-byte copy of every matmul weight."""
    s, b, h, f, a, d = 32, 2, 64, 160, 4, 16
    acts = memory.step_activation_bytes(SMALL, batch=b, seq_len=s, precision="bf16_autocast")
    per_block = acts.attention_per_layer_bytes + acts.mlp_per_layer_bytes
    assert (
        per_block
        == 34 * s * b * h + 8 * s * b * f + 2 * a * b * s * s + s * s + 8 * s * b + 4 * s * d
    )
    assert acts.weight_copies_per_layer_bytes == 2 * matmul_params_per_layer(SMALL)
    assert acts.head_weight_copy_bytes == 2 * SMALL.vocab * h


def test_checkpointing_keeps_only_each_blocks_fp32_input():
    acts = memory.step_activation_bytes(SMALL, batch=2, seq_len=32, checkpointing=True)
    assert acts.layers_bytes == SMALL.layers * 4 * 32 * 2 * SMALL.hidden


def test_autocast_does_not_halve_activation_memory():
    """The fp32 residual stream and norms, and per-projection input copies, stay: bf16 autocast
    keeps well over half of fp32's activations for a Llama-7B-shaped block."""
    fp32 = memory.step_activation_bytes(PRESETS["llama-2-7b"], batch=1, seq_len=2048)
    bf16 = memory.step_activation_bytes(
        PRESETS["llama-2-7b"], batch=1, seq_len=2048, precision="bf16_autocast"
    )
    ratio = bf16.layers_bytes / fp32.layers_bytes
    assert 0.5 < ratio < 1.0


def test_step_memory_fields_add_up_and_model_states_are_16_bytes_per_param():
    est = memory.training_step_memory(SMALL, batch=2, seq_len=64)
    assert est.total_bytes == pytest.approx(sum(getattr(est, f) for f in FIELDS))
    assert est.parameters_bytes == 4 * SMALL.params
    assert est.peak_phase == "start of backward"
    assert est.optimizer_states_bytes == 8 * SMALL.params  # AdamW's two fp32 moments
    assert est.gradients_bytes == 0  # no parameter gradient exists yet at that moment
    assert est.other_bytes == 2 * 8 * 2 * 64  # int64 inputs and targets


def test_peak_phase_follows_the_shape_of_the_workload():
    """Few tokens: the optimizer step (all gradients) is the peak. Long sequences with many heads:
    the attention softmax's backward. Checked against MemTracker in test_measure_memory.py."""
    wide = TransformerConfig(
        name="w",
        layers=2,
        hidden=256,
        heads=4,
        kv_heads=4,
        ffn_hidden=512,
        vocab=256,
        max_positions=512,
    )
    assert memory.training_step_memory(wide, batch=1, seq_len=16).peak_phase == "optimizer step"
    heads = TransformerConfig(
        name="a",
        layers=2,
        hidden=64,
        heads=8,
        kv_heads=2,
        ffn_hidden=96,
        vocab=64,
        max_positions=512,
    )
    phase = memory.training_step_memory(heads, batch=2, seq_len=200).peak_phase
    assert phase == "backward of block 2's attention"


def test_only_llama_style_configs_are_counted_tensor_by_tensor():
    with pytest.raises(ValueError, match="config must be a Llama-style decoder"):
        memory.training_step_memory(PRESETS["gpt2"], batch=1, seq_len=128)
    with pytest.raises(ValueError, match="precision"):
        memory.step_activation_bytes(SMALL, batch=1, seq_len=8, precision="fp16")


configs = st.builds(
    lambda layers, heads, group, head_dim, ffn, vocab: TransformerConfig(
        name="h",
        layers=layers,
        hidden=heads * head_dim,
        heads=heads,
        kv_heads=heads // group,
        ffn_hidden=ffn,
        vocab=vocab,
        max_positions=4096,
    ),
    st.integers(1, 8),
    st.sampled_from([2, 4, 8]),
    st.sampled_from([1, 2]),
    st.sampled_from([8, 16, 64]),
    st.integers(16, 2048),
    st.integers(16, 50_000),
)


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    config=configs,
    batch=st.integers(1, 8),
    seq_len=st.integers(1, 1024),
    precision=st.sampled_from(memory.STEP_PRECISIONS),
)
def test_checkpointing_never_raises_the_peak_and_model_states_are_a_floor(
    config, batch, seq_len, precision
):
    kw = dict(batch=batch, seq_len=seq_len, precision=precision)
    plain = memory.training_step_memory(config, **kw)
    ckpt = memory.training_step_memory(config, checkpointing=True, **kw)
    assert ckpt.total_bytes <= plain.total_bytes
    floor = 16 * config.params  # weights, gradients and both moments coexist at the step
    assert plain.total_bytes >= floor and ckpt.total_bytes >= floor


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(config=configs, batch=st.integers(1, 8), seq_len=st.integers(1, 512))
def test_more_tokens_never_need_less_memory(config, batch, seq_len):
    for precision in memory.STEP_PRECISIONS:
        small = memory.training_step_memory(
            config, batch=batch, seq_len=seq_len, precision=precision
        )
        more = memory.training_step_memory(
            config, batch=batch + 1, seq_len=seq_len, precision=precision
        )
        assert more.total_bytes >= small.total_bytes
