"""Memory calculators: published figures and a real torch optimizer."""

from __future__ import annotations

import pytest
import torch

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
from course.facts.models import PRESETS
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
