"""FLOP formulas checked against torch's FlopCounterMode on real models; roofline; time and cost."""

from __future__ import annotations

import math

import pytest
import torch
import torch.nn.functional as F
from torch.utils.flop_counter import FlopCounterMode

from course.calculators import compute
from course.calculators.compute import (
    arithmetic_intensity,
    attainable_flop_per_s,
    attention_flops_per_token,
    critical_intensity,
    forward_flops,
    forward_flops_per_token,
    inference_flops,
    matmul_bytes,
    matmul_flops,
    mfu,
    roofline_seconds,
    training_flops,
    training_flops_with_attention,
    training_seconds,
    weights_read_seconds,
)
from course.facts.hardware import GPUS, gpu
from course.facts.models import PRESETS
from course.facts.units import DAY, GB
from course.measure.torchmodels import build_model

SMALL = dict(layers=2, hidden=128, heads=4, ffn_hidden=344, vocab=1000, max_positions=64)
# Llama-style with GQA, Llama-2 style (MHA), GPT-2 style, BERT encoder with pooler.
SMALL_CONFIGS = {
    "llama-3-8b": PRESETS["llama-3-8b"].replace(kv_heads=2, **SMALL),
    "llama-2-7b": PRESETS["llama-2-7b"].replace(kv_heads=4, **SMALL),
    "gpt2": PRESETS["gpt2"].replace(kv_heads=4, **SMALL),
    "bert-base": PRESETS["bert-base"].replace(kv_heads=4, **SMALL),
}
BATCH, SEQ = 2, 32


def _scalar(out):
    return out[0].sum() + out[1].sum() if isinstance(out, tuple) else out.sum()


def _count(key: str) -> tuple[int, int]:
    """(forward FLOPs, forward+backward FLOPs) measured by FlopCounterMode on CPU."""
    torch.manual_seed(0)
    cfg = SMALL_CONFIGS[key]
    model = build_model(cfg, device="cpu")
    ids = torch.randint(0, cfg.vocab, (BATCH, SEQ))
    with FlopCounterMode(display=False) as fwd:
        model(ids)
    with FlopCounterMode(display=False) as both:
        _scalar(model(ids)).backward()
    return fwd.get_total_flops(), both.get_total_flops()


@pytest.fixture(scope="module")
def measured() -> dict[str, tuple[int, int]]:
    return {key: _count(key) for key in SMALL_CONFIGS}


@pytest.mark.parametrize("key", list(SMALL_CONFIGS))
def test_forward_flops_match_flop_counter_on_a_real_model(key, measured):
    """Tolerance 1e-9 (relative): the formula counts exactly the matrix multiplies (2 FLOPs per
    multiply-add: every linear layer, the LM head, Q K^T and scores x V over the full square, the
    pooler), and FlopCounterMode counts exactly those too - it has no formula for norms, softmax,
    activations, residual adds or embedding lookups, which the formula also leaves out. So the two
    must agree to rounding, not to within a few percent."""
    cfg = SMALL_CONFIGS[key]
    assert measured[key][0] == pytest.approx(forward_flops(cfg, SEQ, batch=BATCH), rel=1e-9)


@pytest.mark.parametrize("key", list(SMALL_CONFIGS))
def test_forward_plus_backward_is_three_times_forward_on_a_real_model(key, measured):
    """Backward of each matmul costs two matmuls of the same size (gradient w.r.t. the input and
    w.r.t. the weight), so training = 3 x forward: the basis of 6N = 3 x 2N (Kaplan et al. 2020).
    Exact here too (tolerance 1e-9): even the first layer's input gradient is computed, because
    the embedding weights that produce it require grad."""
    fwd, both = measured[key]
    cfg = SMALL_CONFIGS[key]
    assert both == pytest.approx(3 * fwd, rel=1e-9)
    tokens = BATCH * SEQ
    assert both == pytest.approx(training_flops_with_attention(cfg, tokens, SEQ), rel=1e-9)


def test_six_n_d_undercounts_a_small_model_by_its_lm_head_and_attention(measured):
    """6 x N_nonembedding x D leaves out the LM head and attention, which dominate a tiny model."""
    cfg = SMALL_CONFIGS["llama-2-7b"]
    six_nd = training_flops(cfg.non_embedding_params, BATCH * SEQ)
    assert six_nd < measured["llama-2-7b"][1]


def test_flop_counter_counts_zero_for_fused_cpu_sdpa_so_the_builder_uses_matmuls():
    """DESIGN.md sec. 7: FlopCounterMode has no formula for the fused CPU SDPA kernel. If this
    test ever fails, torch learned to count it and the builder could use SDPA again."""
    q = k = v = torch.randn(1, 2, 16, 8)
    with FlopCounterMode(display=False) as fused:
        F.scaled_dot_product_attention(q, k, v)
    with FlopCounterMode(display=False) as explicit:
        (q @ k.transpose(-2, -1)).softmax(-1) @ v
    assert fused.get_total_flops() == 0
    assert explicit.get_total_flops() == 2 * (2 * 2 * 16 * 16 * 8)


def test_llama2_7b_forward_is_about_2n_per_token_at_short_context():
    """Kaplan et al. 2020: forward ~ 2N + 2 n_layer n_ctx d per token; at n_ctx=128 the attention
    term is ~1 % of 2N."""
    cfg = PRESETS["llama-2-7b"]
    per_token = forward_flops_per_token(cfg, 128)
    assert per_token == pytest.approx(2 * cfg.params, rel=0.02)
    assert attention_flops_per_token(cfg, 4096, causal=True) == 2 * 32 * 4096 * 4096


def test_forward_flops_on_meta_llama2_7b_match_flop_counter():
    """The full-size Llama-2-7B, FLOP-counted on the meta device (no memory used)."""
    cfg = PRESETS["llama-2-7b"]
    model = build_model(cfg)
    ids = torch.zeros(1, 64, dtype=torch.long, device="meta")
    with FlopCounterMode(display=False) as fc:
        model(ids)
    assert fc.get_total_flops() == pytest.approx(forward_flops(cfg, 64), rel=1e-9)


def test_gpt3_training_compute_is_3_14e23_flops():
    """Brown et al. 2020, Table D.1: GPT-3 175B took 3.14e23 FLOPs on 300B tokens; 6ND = 3.15e23."""
    assert training_flops(175e9, 300e9) == pytest.approx(3.14e23, rel=0.005)
    with_attention = training_flops_with_attention(PRESETS["gpt-3-175b"], 300e9, 2048)
    assert with_attention == pytest.approx(3.14e23, rel=0.05)


def test_7b_flops_per_token_correct_seed_000():
    """Kaplan et al. 2020 (6N and 2N): ~4.2e10 FLOPs per training token and 1.4e10 per inference
    token for 7B, not seed 000's 1e21."""
    assert training_flops(7e9, 1) == 4.2e10
    assert inference_flops(7e9, 1) == 1.4e10


def test_gpt3_on_1024_a100s_at_140_tflops_takes_34_days():
    """Narayanan et al. 2021, sec. 5.1: 8TP/(nX) with T=300B, P=175B, n=1024, X=140 TFLOP/s
    gives about 34 days."""
    seconds = training_seconds(175e9, 300e9, 1024, 312e12, mfu=140 / 312, recompute=True)
    assert seconds / DAY == pytest.approx(33.9, abs=0.1)


def test_critical_intensity_of_h100_is_about_295_flop_per_byte():
    h100 = GPUS["h100-sxm"]
    ridge = critical_intensity(h100.dense_flop_per_s["bf16"], h100.memory_bandwidth_bytes_per_s)
    assert ridge == pytest.approx(989.4e12 / 3.35e12)
    assert round(ridge) == 295


def test_roofline_picks_the_larger_time_and_names_the_bound():
    decode = roofline_seconds(2 * 7e9, 14e9, 989.4e12, 3.35e12)  # one token, batch 1
    assert decode.bound == "memory"
    assert decode.seconds == decode.memory_seconds == pytest.approx(14e9 / 3.35e12)
    big_matmul = roofline_seconds(
        matmul_flops(8192, 8192, 8192), matmul_bytes(8192, 8192, 8192), 989.4e12, 3.35e12
    )
    assert big_matmul.bound == "compute"
    assert big_matmul.attainable_flop_per_s == pytest.approx(989.4e12)


def test_attainable_is_bandwidth_times_intensity_below_the_ridge():
    assert attainable_flop_per_s(10, 989.4e12, 3.35e12) == pytest.approx(33.5e12)
    assert attainable_flop_per_s(1e6, 989.4e12, 3.35e12) == 989.4e12
    assert arithmetic_intensity(2e9, 1e9) == 2


def test_4096_cubed_matmul_is_137_gflop():
    """*Computational Resources for ML* says "137 billion multiply-adds": 4096^3 = 68.7e9
    multiply-adds = 137 GFLOP."""
    assert matmul_flops(4096, 4096, 4096) == pytest.approx(137.4e9, rel=1e-3)


def test_13b_fp16_weights_take_29_ms_to_read_at_900_gb_s():
    """*GPU Infrastructure* says ~15 ms: 26 GB / 900 GB/s = 28.9 ms, not ~15 ms."""
    assert weights_read_seconds(13e9, "fp16", 900 * GB) == pytest.approx(28.9e-3, abs=0.05e-3)


def test_mfu_inverts_training_seconds():
    seconds = training_seconds(7e9, 1e12, 64, 989.4e12, mfu=0.45)
    tokens_per_s = 1e12 / seconds
    assert mfu(7e9, tokens_per_s, 64, 989.4e12) == pytest.approx(0.45)


def test_gpt2_dense_flops_are_2x_non_embedding_params_less_norms_and_biases_plus_lm_head():
    """GPT-2 small: N_nonembedding = 85,056,000 = 12 x 12 x 768^2 matmul weights + 38,400 norm
    parameters + 82,944 biases; only the matmul weights (and the tied LM head) cost 2 FLOPs per
    token."""
    cfg = PRESETS["gpt2"]
    norms, biases = 25 * 2 * 768, 12 * (3 * 768 + 768 + 3072 + 768)
    assert cfg.non_embedding_params == 85_056_000 == 12 * 12 * 768**2 + norms + biases
    dense = forward_flops_per_token(cfg, 1) - attention_flops_per_token(cfg, 1)
    assert dense == 2 * 12 * 12 * 768**2 + 2 * 50257 * 768


@pytest.mark.parametrize(
    ("call", "message"),
    [
        (lambda: forward_flops_per_token("llama", 128), "config must be a TransformerConfig"),
        (lambda: training_seconds(7e9, 1e12, 0, 1e15), "n_gpus must be an integer >= 1"),
        (lambda: training_seconds(7e9, 1e12, 8, 1e15, mfu=1.5), "mfu must be"),
        (lambda: roofline_seconds(0, 0, 1e15, 1e12), "no work"),
        (lambda: critical_intensity(1e15, 0), "bandwidth_bytes_per_s must be"),
        (lambda: matmul_flops(0, 1, 1), "m must be an integer >= 1"),
    ],
)
def test_bad_inputs_raise_value_error_naming_the_parameter(call, message):
    with pytest.raises(ValueError, match=message):
        call()


def test_decode_step_compute_bound_batch_is_the_ridge_in_tokens():
    # H100 SXM bf16: 989.4e12 FLOP/s / 3.35e12 B/s = 295 FLOP/byte; 2 bytes per weight and
    # 2 FLOPs per weight per token -> ridge batch = 295.
    step = compute.decode_step(7e9, "bf16", "h100-sxm")
    card = gpu("h100-sxm")
    assert math.isclose(
        step.compute_bound_batch,
        card.dense_flop_per_s["bf16"] / card.memory_bandwidth_bytes_per_s,
        rel_tol=1e-12,
    )
    at_ridge = compute.decode_step(7e9, "bf16", "h100-sxm", batch=296)
    assert at_ridge.bound == "compute" and step.bound == "memory"


def test_decode_step_int4_weights_compute_in_fp16():
    step = compute.decode_step(7e9, "int4", "a100-80gb-sxm")
    assert step.compute_dtype == "fp16" and step.weights_bytes == 3.5e9


def test_tensor_cores_against_cuda_cores_on_an_h100_match_the_datasheet():
    """NVIDIA H100 datasheet (SXM): FP16 Tensor Core 989.4 TFLOP/s dense, 1,978.9 with sparsity;
    FP32 67 TFLOP/s, which is 16,896 FP32 cores x 2 FLOPs x 1.98 GHz (whitepaper): 14.8x."""
    r = compute.core_paths("h100-sxm", "fp16", 4096, 4096, 4096)
    assert r.tensor_core_dense_flop_per_s == pytest.approx(989.4e12)
    assert r.tensor_core_sparse_flop_per_s == pytest.approx(1978.9e12)
    assert r.cuda_core_flop_per_s == pytest.approx(16_896 * 2 * 1.98e9, rel=0.01)
    assert r.tensor_over_cuda == pytest.approx(989.4 / 67, rel=1e-3)
    # 4096^3: 137.4 GFLOP; compute-bound on both paths (intensity 1,365 FLOP/byte)
    assert r.matmul_flops == pytest.approx(137.4e9, rel=1e-3)
    assert r.tensor_core_seconds == pytest.approx(137.4e9 / 989.4e12, rel=1e-3)
    assert r.cuda_core_seconds == pytest.approx(137.4e9 / 67e12, rel=1e-3)
    assert r.tensor_core_bound == r.cuda_core_bound == "compute"


def test_fp64_uses_the_fp64_units_and_fp32_has_no_tensor_core_path():
    """A100 datasheet: FP64 9.7 TFLOP/s, FP64 Tensor Core 19.5; FP32 19.5 (CUDA cores only: an
    FP32 matmul reaches Tensor Cores only as TF32, 156 dense)."""
    fp64 = compute.core_paths("a100-80gb-sxm", "fp64")
    assert (fp64.tensor_core_dense_flop_per_s, fp64.cuda_core_flop_per_s) == (19.5e12, 9.7e12)
    fp32 = compute.core_paths("a100-80gb-sxm", "fp32")
    assert fp32.tensor_core_seconds is None and fp32.tensor_over_cuda is None
    assert compute.core_paths("a100-80gb-sxm", "tf32").tensor_over_cuda == pytest.approx(8.0)
    assert "fp8" not in compute.precisions_on("a100-80gb-sxm")  # no FP8 Tensor Cores
    assert "fp64" not in compute.precisions_on("l40s")  # no FP64 peak in its datasheet
    with pytest.raises(ValueError, match="precision"):
        compute.core_paths("a100-80gb-sxm", "fp8")


def test_a_skinny_matmul_is_memory_bound_on_tensor_cores_but_not_on_cuda_cores():
    """A matrix-vector product (n = 1) has an intensity of about 1 FLOP/byte in bf16: under both
    ridges, so both paths wait for HBM and take the same time."""
    r = compute.core_paths("h100-sxm", "bf16", 8192, 1, 8192)
    assert r.tensor_core_bound == r.cuda_core_bound == "memory"
    assert r.tensor_core_seconds == r.cuda_core_seconds == pytest.approx(r.matmul_bytes / 3.35e12)


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
