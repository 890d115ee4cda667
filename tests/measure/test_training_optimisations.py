"""course.measure.training_optimisations (lesson 07): accumulation, recomputation, LoRA at init;
budgets kept."""

from __future__ import annotations

import math

import pytest
import torch

from course.calculators import finetune, memory
from course.measure import training_optimisations
from course.measure.step_memory import measure_training_step
from course.measure.torchmodels import build_model
from course.measure.training_optimisations import SWEEP_CONFIG


def test_accumulated_gradients_equal_one_large_batch_to_1e_6():
    # float64: rounding only; float32: within 1e-6 too
    assert training_optimisations.accumulation_matches(batch=8, micro_batches=4) < 1e-12
    assert (
        training_optimisations.accumulation_matches(batch=8, micro_batches=8, dtype=torch.float32)
        < 1e-6
    )


def test_accumulation_needs_micro_batches_that_divide_the_batch():
    with pytest.raises(ValueError, match="micro_batches"):
        training_optimisations.accumulation_matches(batch=8, micro_batches=3)


@pytest.mark.parametrize("mode", ["selective", "full"])
def test_recomputation_leaves_loss_and_gradients_unchanged(mode):
    torch.manual_seed(0)
    x = torch.randint(0, SWEEP_CONFIG.vocab, (2, 33))
    results = []
    for m in ("none", mode):
        model = training_optimisations._recompute_model(SWEEP_CONFIG, m, seed=0).double()
        loss = training_optimisations._loss(model, x[:, :-1], x[:, 1:])
        loss.backward()
        results.append((loss.item(), [p.grad.clone() for p in model.parameters()]))
    assert results[0][0] == pytest.approx(results[1][0], abs=1e-12)
    for a, b in zip(results[0][1], results[1][1], strict=True):
        assert torch.allclose(a, b, atol=1e-10)


def test_selective_and_full_recomputation_match_their_estimates_within_10_percent():
    for mode in memory.RECOMPUTE:
        m = measure_training_step(SWEEP_CONFIG, batch=2, seq_len=64, recompute=mode)
        est = training_optimisations.estimated_activations(
            SWEEP_CONFIG, batch=2, seq_len=64, recompute=mode
        )
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
    sweep = training_optimisations.recompute_sweep(batch=1, seq_len=32, budget_seconds=30)
    assert sweep.records and sweep.elapsed_seconds < 60
    for r in sweep.records:
        assert r.recompute in memory.RECOMPUTE and r.peak_bytes >= r.activations_bytes > 0
        assert math.isfinite(r.step_seconds) and r.step_seconds > 0


def test_accumulation_sweep_memory_grows_with_the_micro_batch():
    sweep = training_optimisations.accumulation_sweep(
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
    lora = training_optimisations.add_lora(base, rank=4, targets=("q", "v"))
    assert torch.allclose(lora(x), before)  # B starts at zero
    expected = finetune.lora_params(SWEEP_CONFIG, rank=4, targets=("q", "v"))
    assert training_optimisations.trainable_parameters(lora) == expected


def test_lora_step_keeps_far_fewer_gradients_and_states():
    full, lora = training_optimisations.lora_vs_full(batch=1, seq_len=16)
    assert full.trainable_params == SWEEP_CONFIG.params
    # AdamW: fp32 gradient + two fp32 moments = 12 bytes per trainable parameter
    assert full.gradients_and_states_bytes == 12 * full.trainable_params
    assert lora.gradients_and_states_bytes == 12 * lora.trainable_params
    assert lora.trainable_params < full.trainable_params / 10


def test_cpu_optimizer_step_reports_seconds_per_param():
    r = training_optimisations.cpu_optimizer_step(100_000, tensors=4)
    assert r.params == 100_000 and r.seconds_per_param == pytest.approx(r.step_seconds / 1e5)


def test_course_model_with_sdpa_equals_plain_matmul_attention():
    torch.manual_seed(0)
    model = build_model(SWEEP_CONFIG, device="cpu")
    x = torch.randint(0, SWEEP_CONFIG.vocab, (2, 16))
    plain = model(x)
    for block in model.blocks:
        block.attn.sdpa = True
    assert torch.allclose(model(x), plain, atol=1e-5)
