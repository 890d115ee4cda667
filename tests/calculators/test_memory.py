"""Memory calculators: published figures and a real torch optimizer."""

from __future__ import annotations

import pytest
import torch
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from course.calculators import memory
from course.calculators.memory import (
    activation_bytes_per_layer,
    gpus_needed,
    inference_memory,
    kv_cache_bytes,
    model_state_bytes,
    training_memory,
    weights_bytes,
)
from course.facts.hardware import GPUS
from course.facts.models import PRESETS, TransformerConfig, matmul_params_per_layer
from course.facts.units import GB, GiB
from course.measure.torchmodels import build_model

# GPT-3 175B shape (Brown et al. 2020, Table 2.1), as Korthikanti et al. 2022 use it.
S, H, A = 2048, 12288, 96


def test_weights_of_7b_in_fp16_are_14_gb_and_13_gib():
    """7e9 parameters x 2 bytes (fp16) = 14 GB = 13.04 GiB for the weights alone."""
    assert weights_bytes(7e9, "fp16") == 14 * GB
    assert weights_bytes(7e9, "int4") == 3.5 * GB
    assert weights_bytes(7e9, "fp16") / GiB == pytest.approx(13.04, abs=0.01)


def test_mixed_precision_adam_is_16_bytes_per_param_as_in_zero():
    """Rajbhandari et al. 2019, sec. 3.1: 2 (fp16 weights) + 2 (fp16 grads) + K=12 (fp32 master,
    momentum, variance) = 16 bytes/param; 7.5B params -> 120 GB."""
    m = model_state_bytes(7.5e9)
    assert m.bytes_per_param == 16
    assert m.total_bytes == 120 * GB
    assert m.master_weights_bytes + m.optimizer_states_bytes == 12 * 7.5e9


def test_18_bytes_per_param_needs_fp32_gradients():
    """HF 'efficient training on one GPU' / Bekman: 6 (fp32 + fp16 weights) + 4 (fp32 grads) +
    8 (Adam) = 18, the figure seed 003 quotes."""
    m = model_state_bytes(1e9, precision="mixed_fp32_grads")
    assert m.bytes_per_param == 18
    assert m.weights_bytes + m.master_weights_bytes == 6e9


@pytest.mark.parametrize(
    ("precision", "optimizer", "per_param"),
    [
        ("fp32", "adam", 16),  # 4 weights + 4 grads + 8 Adam moments
        ("fp32", "sgd", 8),  # 4 + 4
        ("fp32", "sgd_momentum", 12),  # 4 + 4 + 4 momentum
        ("mixed", "sgd", 8),  # 2 + 2 + 4 master
        ("mixed", "adam_8bit", 10),  # 2 + 2 + 4 + 2 (Dettmers et al. 2022: 1 + 1 byte moments)
        ("fp32", "adamw", 16),
    ],
)
def test_bytes_per_param_of_optimizer_and_precision(precision, optimizer, per_param):
    assert model_state_bytes(1e6, precision=precision, optimizer=optimizer).bytes_per_param == (
        per_param
    )


@pytest.mark.parametrize(
    ("optimizer", "expected_state_bytes_per_param"),
    [
        (lambda ps: torch.optim.Adam(ps), 8),
        (lambda ps: torch.optim.SGD(ps, lr=0.1, momentum=0.9), 4),
    ],
    ids=["adam", "sgd_momentum"],
)
def test_optimizer_state_bytes_match_real_torch_optimizer(
    optimizer, expected_state_bytes_per_param
):
    """Measured: after one step, torch's fp32 Adam keeps exp_avg and exp_avg_sq (8 B/param) and
    SGD with momentum one buffer (4 B/param); the calculator's optimizer-state rows agree."""
    cfg = PRESETS["llama-2-7b"].replace(
        layers=1, hidden=32, heads=2, kv_heads=2, ffn_hidden=64, vocab=50, max_positions=16
    )
    model = build_model(cfg, device="cpu")
    opt = optimizer(model.parameters())
    model(torch.randint(0, 50, (1, 4))).sum().backward()
    opt.step()
    measured = sum(
        t.numel() * t.element_size()
        for state in opt.state.values()
        for t in state.values()
        if torch.is_tensor(t) and t.dim() > 0  # leave out Adam's scalar step counters
    )
    name = "adam" if expected_state_bytes_per_param == 8 else "sgd_momentum"
    calc = model_state_bytes(cfg.params, precision="fp32", optimizer=name)
    assert measured == calc.optimizer_states_bytes == expected_state_bytes_per_param * cfg.params


def test_korthikanti_activation_formula_for_gpt3_layer():
    """Korthikanti et al. 2022, eq. (1)/Table 2: s*b*h*(34 + 5*a*s/h) bytes per layer; for GPT-3
    175B the attention term 5as/h is 80."""
    assert 5 * A * S / H == 80
    assert activation_bytes_per_layer(S, 1, H, A) == S * H * (34 + 80)


def test_selective_recomputation_saves_70_percent_for_gpt3_and_65_for_mt_nlg():
    """Korthikanti et al. 2022, sec. 4 ("selective activation recomputation"): selective
    recomputation cuts activation memory by 70 % for GPT-3 (a=96, s=2048, h=12288) and 65 % for
    MT-NLG (a=128, h=20480)."""
    for heads, hidden, saving in [(96, 12288, 0.70), (128, 20480, 0.65)]:
        full = activation_bytes_per_layer(S, 1, hidden, heads)
        selective = activation_bytes_per_layer(S, 1, hidden, heads, recompute="selective")
        assert 1 - selective / full == pytest.approx(saving, abs=0.005)


def test_sequence_parallel_and_selective_cut_activations_about_5x():
    """Korthikanti et al. 2022, abstract: ~5x less activation memory than tensor parallelism
    alone. GPT-3 at t=8: (10 + 24/8 + 80/8) / (34/8) = 5.4x."""
    tp_only = activation_bytes_per_layer(S, 1, H, A, tensor_parallel=8)
    both = activation_bytes_per_layer(
        S, 1, H, A, tensor_parallel=8, sequence_parallel=True, recompute="selective"
    )
    assert tp_only == S * H * (10 + 3 + 10)
    assert both == S * H * 34 / 8
    assert tp_only / both == pytest.approx(5.41, abs=0.01)


def test_table2_rows_for_tensor_and_sequence_parallel():
    sbh = S * 4 * H
    t = 4
    assert activation_bytes_per_layer(S, 4, H, A, tensor_parallel=t, sequence_parallel=True) == (
        pytest.approx(sbh / t * (34 + 80))
    )
    assert activation_bytes_per_layer(S, 4, H, A, tensor_parallel=t, recompute="selective") == (
        pytest.approx(sbh * (10 + 24 / t))
    )
    assert activation_bytes_per_layer(S, 4, H, A, tensor_parallel=t, recompute="full") == 2 * sbh


def test_tensor_parallel_must_divide_heads():
    with pytest.raises(ValueError, match="tensor_parallel must divide heads"):
        activation_bytes_per_layer(S, 1, H, A, tensor_parallel=5)


def test_kv_cache_of_opt_13b_is_800_kb_per_token():
    """Kwon et al. 2023 (vLLM), sec. 3: OPT-13B needs 2 x 5120 x 40 x 2 B = 800 KB per token."""
    assert kv_cache_bytes(40, 40, 128, 1) == 819_200


def test_kv_cache_of_llama2_7b_at_4096_tokens_is_2_gib_and_gqa_shrinks_70b():
    """2 x 32 layers x 32 heads x 128 x 4096 tokens x 2 B = 2 GiB; Llama-2-70B's 8 KV heads make
    its cache 8x smaller per layer than 64 full heads would."""
    assert kv_cache_bytes(32, 32, 128, 4096) == 2 * GiB
    gqa = kv_cache_bytes(80, 8, 128, 4096, batch=2)
    assert kv_cache_bytes(80, 64, 128, 4096, batch=2) == 8 * gqa


def test_inference_memory_of_llama2_7b_adds_kv_cache_to_weights():
    cfg = PRESETS["llama-2-7b"]
    m = inference_memory(cfg, dtype="fp16", seq_len=4096, batch=1)
    assert m.weights_bytes == 2 * cfg.params
    assert m.kv_cache_bytes == 2 * GiB
    assert m.total_bytes == m.weights_bytes + m.kv_cache_bytes
    with_overhead = inference_memory(cfg, seq_len=4096, overhead_fraction=0.2)
    assert with_overhead.total_bytes == pytest.approx(1.2 * m.total_bytes)


def test_int4_weights_keep_a_16_bit_kv_cache_by_default():
    cfg = PRESETS["mistral-7b"]
    m = inference_memory(cfg, dtype="int4", seq_len=1000)
    assert m.kv_cache_bytes == kv_cache_bytes(32, 8, 128, 1000, bytes_per_value=2)
    assert m.weights_bytes == cfg.params / 2


def test_inference_memory_from_a_bare_count_refuses_a_context():
    assert inference_memory(7e9).total_bytes == 14e9
    with pytest.raises(ValueError, match="needs a TransformerConfig"):
        inference_memory(7e9, seq_len=100)


def test_training_memory_adds_layers_activations_and_fp32_logits():
    cfg = PRESETS["llama-2-7b"]
    m = training_memory(cfg, batch=2, seq_len=1024, recompute="selective")
    assert m.activations_bytes == 32 * 1024 * 2 * 4096 * 34
    assert m.logits_bytes == 4 * 1024 * 2 * 32000
    states = model_state_bytes(cfg.params)
    assert m.total_bytes == states.total_bytes + m.activations_bytes + m.logits_bytes


def test_training_7b_needs_112_gb_of_model_states_not_the_seeds_80():
    """*GPU Infrastructure*: "80GB+" to train 7B; model states alone are 7e9 x 16 B = 112 GB
    (Rajbhandari et al. 2019, ZeRO, sec. 3.1: 2 + 2 + 12 bytes per parameter)."""
    assert training_memory(7e9).total_bytes == 112 * GB


def test_gpus_needed_corrects_the_seeds_gpu_table():
    """*Computational Resources for ML*'s GPU table: 80 GB cannot hold 70B in fp16 (140 GB): it
    takes 2 x 80 GB."""
    a100 = GPUS["a100-80gb-sxm"]
    assert gpus_needed(140e9, a100, usable_fraction=1.0) == 2
    assert gpus_needed(350e9, "a100-80gb-sxm") == 5  # seed 003: GPT-3 inference on 5x A100
    assert gpus_needed(26e9, "rtx-4090") == 2  # 13B fp16 does not fit in 24 GB
    assert gpus_needed(0, "h100-sxm") == 1


def test_results_print_with_units_in_gb_and_gib():
    text = str(model_state_bytes(7e9))
    assert "112.0 GB (104.3 GiB)" in text
    assert "<table>" in training_memory(7e9)._repr_html_()


@pytest.mark.parametrize(
    ("call", "message"),
    [
        (lambda: weights_bytes(-1, "fp16"), "params must be"),
        (lambda: weights_bytes(7e9, "fp12"), "dtype must be one of"),
        (lambda: model_state_bytes(7e9, optimizer="lion"), "optimizer must be one of"),
        (lambda: activation_bytes_per_layer(0, 1, 64, 4), "seq_len must be an integer >= 1"),
        (lambda: activation_bytes_per_layer(8, 1, 64, 4, recompute="some"), "recompute must be"),
        (lambda: kv_cache_bytes(32, 8, 128, -5), "tokens must be an integer >= 0"),
        (lambda: gpus_needed(1e9, "h100"), "gpu must be one of"),
        (lambda: gpus_needed(1e9, "h100-sxm", usable_fraction=0), "usable_fraction"),
        (lambda: training_memory(7e9, seq_len=128), "activations need a TransformerConfig"),
        (lambda: weights_bytes(10**400, "fp16"), "params must be a finite number"),
    ],
)
def test_bad_inputs_raise_value_error_naming_the_parameter(call, message):
    with pytest.raises(ValueError, match=message):
        call()


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
    the attention softmax's backward. Checked against MemTracker in test_step_memory.py."""
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


def test_korthikanti_16_bit_figure_is_unchanged():
    # Table 2, no recomputation, t = 1: s*b*h*(34 + 5*a*s/h)
    s, b, h, a = 2048, 1, 4096, 32
    assert memory.activation_bytes_per_layer(s, b, h, a) == pytest.approx(
        s * b * h * (34 + 5 * a * s / h)
    )


@pytest.mark.parametrize(
    ("recompute", "sp", "t", "expected"),
    [
        ("none", False, 1, lambda s, b, h, a, t: s * b * h * (66 + 9 * a * s / h)),
        ("none", False, 4, lambda s, b, h, a, t: s * b * h * (18 + 48 / t + 9 * a * s / (h * t))),
        ("none", True, 4, lambda s, b, h, a, t: s * b * h * (66 + 9 * a * s / h) / t),
        ("selective", False, 4, lambda s, b, h, a, t: s * b * h * (18 + 48 / t)),
        ("full", False, 1, lambda s, b, h, a, t: 4 * s * b * h),
    ],
)
def test_fp32_activations_double_the_values_and_keep_one_byte_masks(recompute, sp, t, expected):
    s, b, h, a = 1024, 2, 2048, 16
    got = memory.activation_bytes_per_layer(
        s, b, h, a, tensor_parallel=t, sequence_parallel=sp, recompute=recompute, bytes_per_value=4
    )
    assert got == pytest.approx(expected(s, b, h, a, t))


def test_training_memory_fp32_counts_fp32_activations():
    config = PRESETS["llama-2-7b"]
    fp32 = memory.training_memory(config, batch=1, seq_len=4096, precision="fp32")
    mixed = memory.training_memory(config, batch=1, seq_len=4096, precision="mixed")
    ratio = fp32.activations_bytes / mixed.activations_bytes
    assert 1.8 < ratio < 2.0  # values double, the 1-byte dropout masks (sbh and a*s^2*b) do not
    assert fp32.logits_bytes == mixed.logits_bytes  # the loss works in fp32 either way


def test_bytes_per_value_must_be_2_or_4():
    with pytest.raises(ValueError, match="bytes_per_value"):
        memory.activation_bytes_per_layer(128, 1, 256, 4, bytes_per_value=3)
