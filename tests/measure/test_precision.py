"""Precision measurements (course.measure.precision): rounding, bit patterns, sums, training.

Matmul throughput per dtype (fp8, int8) is tested with the matmul sweep in
tests/measure/test_matmul.py.
"""

from __future__ import annotations

import math

import pytest
import torch

from course.facts import dtypes
from course.measure import precision as P

SMALL = P.TrainConfig(hidden=32, layers=2, batch=64, steps=12, seed=3)


def test_round_mantissa_to_7_bits_is_exactly_bfloat16():
    gen = torch.Generator().manual_seed(0)
    x = torch.randn(20000, generator=gen) * torch.logspace(-30, 30, 20000)
    # exact ties: bf16 keeps 7 of fp32's 23 mantissa bits, so bit 15 set and bits 0..14 clear is a
    # tie
    tie_bits = torch.arange(1, 200, dtype=torch.int32) << 16 | (1 << 15)
    ties = tie_bits.view(torch.float32)  # subnormal ties
    normal_ties = (tie_bits | (100 << 23)).view(torch.float32)
    for values in (x, ties, -ties, normal_ties, -normal_ties):
        assert torch.equal(P.round_mantissa(values, 7), values.bfloat16().float())


def test_round_mantissa_keeps_23_bits_and_tf32_rounds_to_10():
    x = torch.tensor([1.0 + 2**-11, 1.0 + 3 * 2**-11, math.pi])
    assert torch.equal(P.round_mantissa(x, 23), x)
    tf32 = P.round_mantissa(x, 10)
    assert tf32[0].item() == 1.0  # a tie, to even
    assert tf32[1].item() == 1.0 + 2 * 2**-10  # a tie, to even (upwards)
    assert abs(tf32[2].item() - math.pi) <= dtypes.float_format("tf32").spacing(math.pi) / 2


@pytest.mark.parametrize("key", ["fp32", "bf16", "fp16", "fp8_e4m3", "fp8_e5m2"])
@pytest.mark.parametrize("value", [1.0, -2.5, 0.1, 300.0, 1e-3])
def test_bit_pattern_decodes_to_what_torch_stores(key, value):
    pattern = P.bit_pattern(value, key)
    stored = torch.tensor([value]).to(P.torch_dtype(key)).to(torch.float64).item()
    assert dtypes.float_format(key).decode(pattern) == stored


def test_known_bit_patterns():
    assert P.bit_pattern(1.0, "fp16") == 0x3C00
    assert P.bit_pattern(65504.0, "fp16") == 0x7BFF
    assert P.bit_pattern(1.0, "tf32") == 0x3F800000 >> 13
    assert P.bit_pattern(448.0, "fp8_e4m3") == 0x7E


def test_running_sum_stalls_where_the_format_says_and_fp32_does_not():
    for key in ("fp16", "bf16"):
        sums = P.running_sum(1e-4, 10_000, key, every=500)
        assert sums[-1].item() == dtypes.sum_stall(1e-4, key)
        assert len(sums) == 20
    exact = P.running_sum(1e-4, 10_000, "fp32", every=10_000)
    assert abs(exact[-1].item() - 1.0) < 1e-3


@pytest.fixture(scope="module")
def runs():
    batches = P.make_batches(SMALL)
    return {p: P.train(p, SMALL, batches=batches) for p in P.PRECISIONS}


def test_training_returns_well_formed_records_with_finite_losses(runs):
    for precision, run in runs.items():
        assert run.precision == precision and run.device == "cpu"
        assert [r.step for r in run.records] == list(range(SMALL.steps))
        assert all(math.isfinite(r.loss) and r.loss > 0 for r in run.records)
        assert all(r.seconds > 0 for r in run.records)
        assert run.step_seconds > 0 and run.peak_bytes is None
        assert run.saved_bytes > 0


def test_training_learns_in_every_precision_from_the_same_start(runs):
    first = {p: r.losses[0] for p, r in runs.items()}
    assert math.isclose(first["bf16"], first["fp32"], rel_tol=0.02)  # same weights, same batch
    assert math.isclose(first["fp16"], first["fp32"], rel_tol=0.02)
    for run in runs.values():
        assert run.losses[-1] < run.losses[0]


def test_autocast_keeps_fewer_bytes_for_backward_than_fp32(runs):
    assert runs["bf16"].saved_bytes < runs["fp32"].saved_bytes
    assert runs["fp16"].saved_bytes == runs["bf16"].saved_bytes  # both 2-byte activations


def test_fp16_uses_a_grad_scaler_and_others_do_not(runs):
    assert runs["fp16"].records[0].scale == 2.0**16  # GradScaler's default initial scale
    assert all(
        r.scale == 1.0 and not r.skipped for r in runs["fp32"].records + runs["bf16"].records
    )
    unscaled = P.train("fp16", SMALL, loss_scaling=False)
    assert all(r.scale == 1.0 for r in unscaled.records)


def test_activation_gradients_are_unchanged_by_power_of_two_scaling_in_fp32():
    model = P.make_model(SMALL)
    x, y = P.make_batches(SMALL)[0]
    plain = P.activation_gradients(model, x, y)
    scaled = P.activation_gradients(model, x, y, scale=2.0**16)
    # one gradient per output of each Linear: (hidden x layers + classes) per example
    assert plain.numel() == SMALL.batch * (SMALL.hidden * SMALL.layers + SMALL.classes)
    assert torch.equal(plain, scaled)
    assert all(p.grad is None for p in model.parameters())  # the probe leaves no gradients behind


def test_loss_scaling_loses_fewer_fp16_gradients_than_none():
    cfg = P.TrainConfig(hidden=64, layers=3, batch=256, steps=1, seed=0)
    model = P.make_model(cfg)
    x, y = P.make_batches(cfg)[0]
    ref = P.activation_gradients(model, x, y)
    plain = P.underflow_fractions(ref, P.activation_gradients(model, x, y, precision="fp16"))
    scaled = P.underflow_fractions(
        ref, P.activation_gradients(model, x, y, precision="fp16", scale=2.0**16), scale=2.0**16
    )
    for stats in (plain, scaled):
        assert all(0.0 <= v <= 1.0 for v in stats.values())
    # the scaled line counts the gradients as the scaled backward pass sees them (issue 9)
    assert scaled["below_normal"] < plain["below_normal"]
    assert scaled["below_normal"] == float(
        ((ref * 2.0**16).abs() < 2.0**-14)[ref != 0].float().mean()
    )
    assert scaled["zero_in_low_precision"] <= plain["zero_in_low_precision"]


@pytest.mark.skipif(not torch.cuda.is_available(), reason="needs a CUDA GPU (defect 1 of issue 8)")
def test_activation_gradients_on_cuda_come_back_on_the_cpu_for_plots():
    model = P.make_model(SMALL, device="cuda")
    x, y = P.make_batches(SMALL, "cuda")[0]
    grads = P.activation_gradients(model, x, y, precision="fp16", scale=2.0**16)
    assert grads.device.type == "cpu"
    grads.numpy()  # what lesson 03's histogram does


@pytest.mark.parametrize(
    ("call", "name"),
    [
        (lambda: P.train("fp8"), "precision"),
        (lambda: P.TrainConfig(batch=0), "batch"),
        (lambda: P.TrainConfig(lr=-1.0), "lr"),
        (lambda: P.running_sum(1e-4, 0, "fp16"), "n"),
        (lambda: P.running_sum(1e-4, 10, "fp8_e4m3"), "key"),
        (lambda: P.round_mantissa(torch.ones(2), 24), "mantissa_bits"),
        (lambda: P.round_mantissa(torch.ones(2, dtype=torch.float16), 7), "x must"),
        (lambda: P.bit_pattern(math.nan, "fp16"), "value"),
        (lambda: P.bit_pattern(1.0, "int8"), "key"),
        (lambda: P.underflow_fractions(torch.ones(3), torch.ones(4)), "other"),
    ],
)
def test_bad_inputs_raise_value_error_naming_the_parameter(call, name):
    with pytest.raises(ValueError, match=name):
        call()


@pytest.mark.parametrize("key", ["fp32", "bf16", "fp16", "fp8_e4m3", "fp8_e5m2"])
def test_pattern_one_is_the_smallest_subnormal_and_patterns_round_trip(key):
    fmt = dtypes.float_format(key)
    assert P.pattern_value(1, key) == fmt.smallest_subnormal
    for value in (1.0, -2.5, 0.1, fmt.max, -fmt.smallest_normal):
        assert P.pattern_value(P.bit_pattern(value, key), key) == P.stored_value(value, key)


def test_stored_value_shows_rounding_saturation_and_underflow():
    assert P.stored_value(0.1, "fp16") == 0.0999755859375
    assert P.stored_value(1e-7, "fp8_e5m2") == 0.0  # below half the smallest subnormal (1.5e-5)
    assert P.stored_value(0.001, "fp8_e4m3") == 2**-9  # rounds up to the smallest subnormal
    assert P.stored_value(1e5, "fp8_e5m2") == math.inf
    assert P.stored_value(70000.0, "fp16") == math.inf
    with pytest.raises(ValueError, match="pattern"):
        P.pattern_value(256, "fp8_e4m3")


def test_large_activations_make_the_fp16_scaler_skip_steps_but_not_bf16():
    batches = [(x * 1000, y) for x, y in P.make_batches(SMALL)]
    fp16 = P.train("fp16", SMALL, batches=batches)
    bf16 = P.train("bf16", SMALL, batches=batches)
    assert fp16.skipped_steps > 0
    assert fp16.records[-1].scale < 2.0**16  # the scaler backed off
    assert bf16.skipped_steps == 0 and all(math.isfinite(v) for v in bf16.losses)
