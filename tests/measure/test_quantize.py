"""The transparent weight quantiser (course.measure.quantize): error bounds, packing, storage,
modules."""

from __future__ import annotations

import math

import pytest
import torch

from course.measure import quantize as Q


def weights(kind: str, shape=(48, 256), seed=0) -> torch.Tensor:
    gen = torch.Generator().manual_seed(seed)
    w = torch.randn(shape, generator=gen)
    if kind == "heavy_tailed":  # Student-t-like: a few large outliers per row
        w = w / torch.rand(shape, generator=gen).clamp_min(0.02)
    if kind == "zero_row":
        w[3] = 0.0
    if kind == "scaled":
        w = w * torch.logspace(-6, 3, shape[0])[:, None]  # rows over nine decades
    return w


CASES = [(bits, group) for bits in (8, 4) for group in (None, 64)]
KINDS = ["normal", "heavy_tailed", "zero_row", "scaled"]


@pytest.mark.parametrize(("bits", "group"), CASES)
@pytest.mark.parametrize("kind", KINDS)
def test_round_trip_error_is_at_most_half_a_step_per_channel(bits, group, kind):
    w = weights(kind)
    qw = Q.quantize(w, bits, group_size=group)
    err = (w - qw.dequantize()).abs()
    assert torch.all(err <= qw.step() * 0.5 * (1 + 1e-6))
    assert Q.quantization_error(w, qw).max_steps <= 0.5 + 1e-6


@pytest.mark.parametrize(("bits", "group"), CASES)
def test_levels_are_int8_within_symmetric_range_and_the_max_hits_qmax(bits, group):
    w = weights("normal")
    qw = Q.quantize(w, bits, group_size=group)
    top = Q.qmax(bits)
    assert qw.q.dtype == torch.int8
    assert int(qw.q.abs().max()) == top
    assert qw.q.min() >= -top and qw.q.max() <= top
    per_channel = Q.quantize(w, bits)
    assert torch.equal(
        per_channel.q.abs().amax(dim=1), torch.full((w.shape[0],), top, dtype=torch.int8)
    )


def test_int4_error_is_larger_than_int8_and_groups_help_with_outliers():
    w = weights("heavy_tailed")
    e8 = Q.quantization_error(w, Q.quantize(w, 8))
    e4 = Q.quantization_error(w, Q.quantize(w, 4))
    e4g = Q.quantization_error(w, Q.quantize(w, 4, group_size=32))
    assert e8.rms < e4.rms
    assert e4g.rms < e4.rms
    assert e8.sqnr_db > e4.sqnr_db


def test_sqnr_of_int8_on_gaussian_weights_is_near_theory():
    # Uniform rounding noise has variance step**2 / 12; with step = max|w| / 127 over a row of 4096
    # Gaussian values (max about 3.5 sigma) SQNR = 10 log10(12 * 127**2 / 3.5**2), about 42 dB.
    w = weights("normal", shape=(64, 4096))
    sqnr = Q.quantization_error(w, Q.quantize(w, 8)).sqnr_db
    assert 39 < sqnr < 45


def test_pack_unpack_int4_round_trip_and_half_size():
    q = torch.arange(-8, 8, dtype=torch.int8).repeat(3, 2)  # every int4 value, shape (3, 32)
    packed = Q.pack_int4(q)
    assert packed.dtype == torch.uint8
    assert packed.numel() * 2 == q.numel()
    assert torch.equal(Q.unpack_int4(packed), q)
    assert int(Q.pack_int4(torch.tensor([1, -1], dtype=torch.int8))) == 0xF1  # low nibble first


def test_storage_bytes_counts_levels_and_scales():
    w = weights("normal", shape=(32, 256))
    assert Q.quantize(w, 8).storage_bytes() == 32 * 256 + 32 * 4
    assert Q.quantize(w, 4, group_size=128).storage_bytes(scale_bytes=2) == 32 * 128 + 32 * 2 * 2


def test_int8_linear_matches_dequantized_weights_fused_and_fallback():
    torch.manual_seed(0)
    lin = torch.nn.Linear(256, 128)
    x = torch.randn(5, 7, 256)
    q = Q.Int8WeightOnlyLinear(lin, compute_dtype=torch.float32)
    w_hat = Q.quantize(lin.weight, 8).dequantize()
    expected = torch.nn.functional.linear(x, w_hat, lin.bias)
    got = q(x)
    assert got.shape == (5, 7, 128) and got.dtype == torch.float32
    torch.testing.assert_close(got, expected, rtol=1e-4, atol=1e-4)
    q.fused = False
    torch.testing.assert_close(q(x), expected, rtol=1e-4, atol=1e-4)


def test_quantize_linears_replaces_every_linear_and_shrinks_the_model_fourfold():
    torch.manual_seed(0)
    model = torch.nn.Sequential(
        torch.nn.Linear(512, 512), torch.nn.ReLU(), torch.nn.Sequential(torch.nn.Linear(512, 512))
    )
    qmodel = Q.quantize_linears(model)
    assert not any(isinstance(m, torch.nn.Linear) for m in qmodel.modules())
    assert sum(isinstance(m, Q.Int8WeightOnlyLinear) for m in qmodel.modules()) == 2
    assert isinstance(model[0], torch.nn.Linear)  # the original is untouched
    ratio = Q.serialized_bytes(model) / Q.serialized_bytes(qmodel)
    assert 3.5 < ratio < 4.0  # 4 bytes -> 1 byte per weight, plus scales and fp32 biases
    x = torch.randn(4, 512)
    y, yq = model(x), qmodel(x)
    assert ((y - yq).norm() / y.norm()) < 0.02


def test_torchao_int8_weight_only_shrinks_and_stays_close():
    if not Q.torchao_available():
        pytest.skip("torchao is not installed")
    torch.manual_seed(0)
    model = torch.nn.Sequential(torch.nn.Linear(512, 512)).eval()
    qmodel = Q.torchao_int8_weight_only(model)
    x = torch.randn(3, 512)
    with torch.inference_mode():
        y, yq = model(x), qmodel(x)
    assert ((y - yq.float()).norm() / y.norm()) < 0.02
    assert Q.serialized_bytes(qmodel) < 0.3 * Q.serialized_bytes(model)


@pytest.mark.parametrize(
    ("call", "name"),
    [
        (lambda: Q.quantize(torch.randn(4, 8), 3), "bits"),
        (lambda: Q.quantize(torch.randn(4, 8), 8, group_size=3), "group_size"),
        (lambda: Q.quantize(torch.randn(4, 8), 8, group_size=0), "group_size"),
        (lambda: Q.quantize(torch.randn(8), 8), "w must"),
        (lambda: Q.quantize(torch.arange(8).reshape(2, 4), 8), "w must"),
        (lambda: Q.pack_int4(torch.zeros(3, dtype=torch.int8)), "q must"),
        (lambda: Q.pack_int4(torch.tensor([9, 0], dtype=torch.int8)), "q must"),
        (lambda: Q.unpack_int4(torch.zeros(2, dtype=torch.int8)), "packed"),
        (lambda: Q.quantize(torch.randn(4, 8), 8).storage_bytes(scale_bytes=3), "scale_bytes"),
        (lambda: Q.quantization_error(torch.randn(4, 4), Q.quantize(torch.randn(4, 8))), "shape"),
    ],
)
def test_bad_inputs_raise_value_error_naming_the_parameter(call, name):
    with pytest.raises(ValueError, match=name):
        call()


def test_quant_error_prints_its_fields():
    w = weights("normal")
    text = str(Q.quantization_error(w, Q.quantize(w, 8)))
    assert (
        "SQNR" in text
        and "steps" in text
        and not math.isnan(Q.quantization_error(w, Q.quantize(w, 8)).rms)
    )


def test_benchmark_variants_returns_one_record_per_model_with_reference_error_zero():
    torch.manual_seed(0)
    model = torch.nn.Sequential(torch.nn.Linear(128, 128)).eval()
    variants = {
        "fp32": model,
        "bf16": Q.copy.deepcopy(model).bfloat16(),
        "int8": Q.quantize_linears(model),
    }
    recs = Q.benchmark_variants(variants, torch.randn(4, 128), min_run_time=0.02)
    assert [r.name for r in recs] == ["fp32", "bf16", "int8"]
    assert recs[0].relative_error == 0.0
    assert all(0 < r.relative_error < 0.05 for r in recs[1:])
    assert all(r.median_seconds > 0 and r.batch == 4 for r in recs)
    assert recs[0].serialized_bytes > recs[1].serialized_bytes > recs[2].serialized_bytes
    with pytest.raises(ValueError, match="variants"):
        Q.benchmark_variants({}, torch.randn(1, 128))


def test_course_int4_linear_multiplies_by_its_dequantised_weight():
    from course.measure.quantize import Int4WeightOnlyLinear, quantize

    torch.manual_seed(0)
    linear = torch.nn.Linear(64, 48)
    q = Int4WeightOnlyLinear(linear, group_size=16, compute_dtype=torch.float32)
    x = torch.randn(5, 64)
    w_hat = quantize(linear.weight, 4, group_size=16).dequantize()
    assert torch.allclose(q(x), x @ w_hat.T + linear.bias, atol=1e-5)
    assert q.weight_int4.numel() == 64 * 48 // 2  # two weights per byte


def test_scheme_errors_is_a_table_of_quantization_error_per_weight_and_scheme():
    torch.manual_seed(0)
    w = torch.randn(64, 256) * 0.02
    table = Q.scheme_errors({"gaussian": w})
    assert [(r["weights"], r["scheme"]) for r in table] == [
        ("gaussian", "int8 per channel"),
        ("gaussian", "int4 per channel"),
        ("gaussian", "int4 group 128"),
    ]
    direct = Q.quantization_error(w, Q.quantize(w, 4, group_size=128))
    assert table[2]["relative_rms"] == direct.relative_rms
    assert table.cell("relative_rms", 0.0059) == "0.59 %"  # the record's own formats
    assert table.cell("sqnr_db", 42.07) == "42.07"
