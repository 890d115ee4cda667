"""Lesson 07's measurements (course/measure/training.py, attention.py, serving.py): equivalences
as unit tests (accumulation, recomputation, LoRA at init, fused vs naive attention), records well
formed, budgets respected. Speeds are never asserted."""

from __future__ import annotations

import math
import os

import pytest
import torch

from course.calculators import finetune, memory
from course.measure import attention, serving, training
from course.measure.memory import measure_training_step
from course.measure.torchmodels import build_model
from course.measure.training import SWEEP_CONFIG


def test_accumulated_gradients_equal_one_large_batch_to_1e_6():
    # float64: rounding only; float32: within 1e-6 too
    assert training.accumulation_matches(batch=8, micro_batches=4) < 1e-12
    assert training.accumulation_matches(batch=8, micro_batches=8, dtype=torch.float32) < 1e-6


def test_accumulation_needs_micro_batches_that_divide_the_batch():
    with pytest.raises(ValueError, match="micro_batches"):
        training.accumulation_matches(batch=8, micro_batches=3)


@pytest.mark.parametrize("mode", ["selective", "full"])
def test_recomputation_leaves_loss_and_gradients_unchanged(mode):
    torch.manual_seed(0)
    x = torch.randint(0, SWEEP_CONFIG.vocab, (2, 33))
    results = []
    for m in ("none", mode):
        model = training._recompute_model(SWEEP_CONFIG, m, seed=0).double()
        loss = training._loss(model, x[:, :-1], x[:, 1:])
        loss.backward()
        results.append((loss.item(), [p.grad.clone() for p in model.parameters()]))
    assert results[0][0] == pytest.approx(results[1][0], abs=1e-12)
    for a, b in zip(results[0][1], results[1][1], strict=True):
        assert torch.allclose(a, b, atol=1e-10)


def test_selective_and_full_recomputation_match_their_estimates_within_10_percent():
    for mode in memory.RECOMPUTE:
        m = measure_training_step(SWEEP_CONFIG, batch=2, seq_len=64, recompute=mode)
        est = training.estimated_activations(SWEEP_CONFIG, batch=2, seq_len=64, recompute=mode)
        assert m.recompute == mode
        assert m.activations_bytes == pytest.approx(est, rel=0.10), mode


def test_recomputation_order_none_selective_full_in_measured_activations():
    acts = [
        measure_training_step(SWEEP_CONFIG, batch=2, seq_len=128, recompute=mode).activations_bytes
        for mode in memory.RECOMPUTE
    ]
    assert acts[0] > acts[1] > acts[2]


@pytest.mark.serial  # times itself against its budget: alone
def test_recompute_sweep_records_are_well_formed_and_in_budget():
    sweep = training.recompute_sweep(batch=1, seq_len=32, budget_seconds=30)
    assert sweep.records and sweep.elapsed_seconds < 60
    for r in sweep.records:
        assert r.recompute in memory.RECOMPUTE and r.peak_bytes >= r.activations_bytes > 0
        assert math.isfinite(r.step_seconds) and r.step_seconds > 0


def test_accumulation_sweep_memory_grows_with_the_micro_batch():
    sweep = training.accumulation_sweep(
        global_batch=4, micro_batches=(1, 4), seq_len=16, budget_seconds=30
    )
    peaks = [r.peak_bytes for r in sweep.records]
    assert len(peaks) == 2 and peaks[0] < peaks[1]
    assert [r.accumulation_steps for r in sweep.records] == [4, 1]


def test_lora_starts_equal_to_the_base_model_and_trains_only_adapters():
    torch.manual_seed(0)
    base = build_model(SWEEP_CONFIG, device="cpu")
    x = torch.randint(0, SWEEP_CONFIG.vocab, (2, 8))
    before = base(x)
    lora = training.add_lora(base, rank=4, targets=("q", "v"))
    assert torch.allclose(lora(x), before)  # B starts at zero
    expected = finetune.lora_params(SWEEP_CONFIG, rank=4, targets=("q", "v"))
    assert training.trainable_parameters(lora) == expected


def test_lora_step_keeps_far_fewer_gradients_and_states():
    full, lora = training.lora_vs_full(batch=1, seq_len=16)
    assert full.trainable_params == SWEEP_CONFIG.params
    # AdamW: fp32 gradient + two fp32 moments = 12 bytes per trainable parameter
    assert full.gradients_and_states_bytes == 12 * full.trainable_params
    assert lora.gradients_and_states_bytes == 12 * lora.trainable_params
    assert lora.trainable_params < full.trainable_params / 10


def test_cpu_optimizer_step_reports_seconds_per_param():
    r = training.cpu_optimizer_step(100_000, tensors=4)
    assert r.params == 100_000 and r.seconds_per_param == pytest.approx(r.step_seconds / 1e5)


def test_fused_attention_equals_naive_attention():
    q, k, v = attention._qkv(2, 4, 64, 16, seed=0)
    assert torch.allclose(
        attention.naive_attention(q, k, v), attention.fused_attention(q, k, v), atol=1e-5
    )


def test_course_model_with_sdpa_equals_plain_matmul_attention():
    torch.manual_seed(0)
    model = build_model(SWEEP_CONFIG, device="cpu")
    x = torch.randint(0, SWEEP_CONFIG.vocab, (2, 16))
    plain = model(x)
    for block in model.blocks:
        block.attn.sdpa = True
    assert torch.allclose(model(x), plain, atol=1e-5)


def test_naive_attention_holds_the_scores_and_sdpa_does_not():
    naive = attention.measure_attention("naive", 512, min_run_time=0.01)
    fused = attention.measure_attention("sdpa", 512, min_run_time=0.01)
    assert naive.peak_bytes >= naive.scores_bytes  # 4 heads x 512^2 x 4 B = 4 MiB
    assert fused.peak_bytes < naive.scores_bytes / 2


def test_attention_sweep_skips_what_does_not_fit():
    sweep = attention.attention_sweep((64, 128, 65536), budget_seconds=5)
    assert {r.kind for r in sweep.records} == {"naive", "sdpa"}
    assert any("65536" in s for s in sweep.skipped)  # 64 GiB of naive scores: refused


def test_serve_variants_reports_sizes_errors_and_int4_reason():
    config = serving.SERVE_CONFIG.replace(
        layers=1, hidden=128, heads=2, kv_heads=2, ffn_hidden=256, vocab=256
    )
    sweep = serving.serve_variants(config, batches=(1,), budget_seconds=30)
    sizes = {r.variant: r.weights_bytes for r in sweep.records}
    assert sizes["bf16"] < 0.6 * sizes["fp32"]
    assert sizes["int8"] < sizes["bf16"]
    assert sizes["int4"] < sizes["int8"]  # torchao's int4 where it runs, else the course's
    for r in sweep.records:
        assert r.relative_error < (0.2 if r.variant == "int4" else 0.05) and r.tokens_per_s > 0


def test_course_int4_linear_multiplies_by_its_dequantised_weight():
    from course.measure.quantize import Int4WeightOnlyLinear, quantize

    torch.manual_seed(0)
    linear = torch.nn.Linear(64, 48)
    q = Int4WeightOnlyLinear(linear, group_size=16, compute_dtype=torch.float32)
    x = torch.randn(5, 64)
    w_hat = quantize(linear.weight, 4, group_size=16).dequantize()
    assert torch.allclose(q(x), x @ w_hat.T + linear.bias, atol=1e-5)
    assert q.weight_int4.numel() == 64 * 48 // 2  # two weights per byte


def test_batch_sweep_records():
    model = serving.serve_model(
        serving.SERVE_CONFIG.replace(layers=1, hidden=64, heads=2, kv_heads=2, ffn_hidden=128)
    )
    sweep = serving.batch_sweep(model, batches=(1, 4), budget_seconds=10)
    assert [r.batch for r in sweep.records] == [1, 4]
    assert all(r.tokens_per_s == pytest.approx(r.batch / r.step_seconds) for r in sweep.records)


def test_compile_overhead_reports_compile_time_and_matching_calls():
    # one small compiled function: tens of seconds cold, a few warm (torch's on-disk cache)
    result = serving.compile_overhead(batches=(2, 64), hidden=16)
    if " " in os.path.dirname(torch.__file__):  # Inductor's C++ build does not quote its paths
        assert result.failure and "space" in result.failure and not result.records
        return
    assert result.failure is None
    assert result.compile_seconds > 0 and [r.batch for r in result.records] == [2, 64]
    for r in result.records:
        assert r.speedup == pytest.approx(r.eager_seconds / r.compiled_seconds)
