"""Format facts derived from bits (course.facts.dtypes) against what torch stores and reports."""

from __future__ import annotations

import math

import pytest
import torch

from course.facts import dtypes
from course.facts.dtypes import FLOAT_FORMATS, INT_FORMATS, float_format

WITH_TORCH = [f for f in FLOAT_FORMATS.values() if f.torch_dtype is not None]
INT_VIEW = {8: torch.uint8, 16: torch.int16, 32: torch.int32, 64: torch.int64}


def tdtype(fmt):
    return getattr(torch, fmt.torch_dtype)


def torch_value_of_pattern(fmt, pattern: int) -> float:
    """What torch reads from a raw bit pattern of this format."""
    width = INT_VIEW[fmt.bits]
    signed = torch.tensor([pattern], dtype=torch.int64)
    if width is not torch.uint8 and pattern >= 2 ** (fmt.bits - 1):
        signed -= 2**fmt.bits  # two's complement for the signed int views
    return signed.to(width).view(tdtype(fmt)).to(torch.float64).item()


@pytest.mark.parametrize("fmt", WITH_TORCH, ids=lambda f: f.key)
def test_derived_range_equals_torch_finfo(fmt):
    info = torch.finfo(tdtype(fmt))
    assert fmt.bits == info.bits
    assert fmt.max == info.max
    assert fmt.smallest_normal == info.smallest_normal
    expected_min = fmt.smallest_normal if fmt.encoding == "e8m0" else -fmt.max
    assert expected_min == info.min


@pytest.mark.parametrize("fmt", WITH_TORCH, ids=lambda f: f.key)
def test_eps_is_the_measured_gap_above_one(fmt):
    one = torch.tensor([1.0]).to(tdtype(fmt)).view(INT_VIEW[fmt.bits])
    next_up = (one + 1).view(tdtype(fmt)).to(torch.float64).item()
    assert fmt.eps == next_up - 1.0
    if fmt.key != "fp8_e5m2fnuz":
        assert fmt.eps == torch.finfo(tdtype(fmt)).eps


def test_torch_finfo_eps_of_e5m2fnuz_is_half_the_real_gap():
    # torch 2.13 reports eps = 2**-3 for float8_e5m2fnuz, but the format has 2 mantissa bits, the
    # gap above 1.0 measured from the bit patterns is 2**-2, and ml_dtypes' finfo says 2**-2 too. If
    # torch fixes this, fold the format back into the finfo comparison above.
    assert torch.finfo(torch.float8_e5m2fnuz).eps == 2**-3
    assert float_format("fp8_e5m2fnuz").eps == 2**-2


@pytest.mark.parametrize("fmt", [f for f in WITH_TORCH if f.bits <= 16], ids=lambda f: f.key)
def test_decode_matches_torch_for_every_bit_pattern(fmt):
    n = 2**fmt.bits
    raw = torch.arange(n, dtype=torch.int64)
    if fmt.bits > 8:
        raw = torch.where(raw >= n // 2, raw - n, raw)
    values = raw.to(INT_VIEW[fmt.bits]).view(tdtype(fmt)).to(torch.float64).tolist()
    for pattern, expected in enumerate(values):
        got = fmt.decode(pattern)
        assert (math.isnan(got) and math.isnan(expected)) or got == expected, (fmt.key, pattern)


@pytest.mark.parametrize("fmt", [f for f in WITH_TORCH if f.has_subnormals], ids=lambda f: f.key)
def test_smallest_subnormal_is_bit_pattern_one_and_half_of_it_rounds_to_zero(fmt):
    assert torch_value_of_pattern(fmt, 1) == fmt.smallest_subnormal
    half = torch.tensor([fmt.smallest_subnormal / 2], dtype=torch.float64).to(tdtype(fmt))
    assert half.to(torch.float64).item() == 0.0  # a tie, rounded to the even pattern 0


def test_fp8_minimums_match_the_fact_sheet():
    # Micikevicius et al. 2022, Table 1 (the reading's "~0.001" and "~1e-7" are wrong).
    e4m3, e5m2 = float_format("fp8_e4m3"), float_format("fp8_e5m2")
    assert (e4m3.smallest_normal, e4m3.smallest_subnormal, e4m3.max) == (2**-6, 2**-9, 448.0)
    assert (e5m2.smallest_normal, e5m2.smallest_subnormal, e5m2.max) == (2**-14, 2**-16, 57344.0)


def test_seed_004_lower_ends_are_neither_normal_nor_subnormal_minimums():
    rows = {r.key: r for r in dtypes.FLOAT_FAMILY_AS_WRITTEN}
    e4m3, e5m2 = float_format("fp8_e4m3"), float_format("fp8_e5m2")
    assert rows["fp8_e4m3"].low_as_written not in (e4m3.smallest_normal, e4m3.smallest_subnormal)
    # "~1e-7" for E5M2 is below its smallest subnormal (1.5e-5): such values round to zero.
    assert rows["fp8_e5m2"].low_as_written < e5m2.smallest_subnormal / 2


def test_tf32_is_19_bits_stored_in_32_with_fp32_range():
    tf32, fp32 = float_format("tf32"), float_format("fp32")
    assert (tf32.bits, tf32.bytes_stored) == (19, 4)
    assert tf32.smallest_normal == fp32.smallest_normal
    assert tf32.eps == 2**-10 == float_format("fp16").eps
    assert math.isclose(tf32.max, fp32.max, rel_tol=1e-3)


def test_fp4_e2m1_has_the_fifteen_values_of_the_mx_spec():
    # OCP Microscaling Formats (MX) v1.0, section 5.3.3: E2M1 magnitudes 0, 0.5, 1, 1.5, 2, 3, 4, 6.
    fp4 = float_format("fp4_e2m1")
    values = {fp4.decode(p) for p in range(16)}
    mags = {0.0, 0.5, 1.0, 1.5, 2.0, 3.0, 4.0, 6.0}
    assert values == mags | {-m for m in mags}
    assert len(values) == 15  # +0 and -0 are one value


def test_spacing_is_the_gap_to_the_next_pattern_for_every_positive_fp16():
    fp16 = float_format("fp16")
    top = 0x7BFF  # 65504, the largest finite
    for pattern in range(0, top):
        x = fp16.decode(pattern)
        assert fp16.decode(pattern + 1) - x == fp16.spacing(x), pattern


@pytest.mark.parametrize("key", ["fp32", "bf16", "fp16", "fp8_e4m3", "fp8_e5m2", "tf32"])
def test_spacing_at_one_is_eps(key):
    fmt = float_format(key)
    assert fmt.spacing(1.0) == fmt.eps
    assert fmt.spacing(-1.0) == fmt.eps


def test_bit_string_and_fields_of_known_values():
    fp16 = float_format("fp16")
    assert fp16.bit_string(0x3C00) == "0 01111 0000000000"  # 1.0
    assert fp16.fields(0xC100) == (1, 16, 256)  # -2.5 = -1.25 x 2**1
    assert fp16.decode(0xC100) == -2.5
    assert float_format("e8m0").bit_string(127) == "01111111"  # no sign, no mantissa: 2**0


@pytest.mark.parametrize("key", ["int8", "uint8", "int32"])
def test_int_formats_equal_torch_iinfo(key):
    fmt = INT_FORMATS[key]
    info = torch.iinfo(getattr(torch, fmt.torch_dtype))
    assert (fmt.min, fmt.max, fmt.bits) == (info.min, info.max, info.bits)


def test_int4_range_and_symmetric_levels():
    int4, int8 = dtypes.int_format("int4"), dtypes.int_format("int8")
    assert (int4.min, int4.max, int4.symmetric_max, int4.levels, int4.bytes_stored) == (
        -8,
        7,
        7,
        16,
        0.5,
    )
    assert int8.symmetric_max == 127


def test_decimal_digits_follow_mantissa_bits():
    assert math.isclose(float_format("fp32").decimal_digits, 7.22, abs_tol=0.01)
    assert math.isclose(float_format("fp16").decimal_digits, 3.31, abs_tol=0.01)
    assert math.isclose(float_format("bf16").decimal_digits, 2.41, abs_tol=0.01)


def test_loss_scale_needed_lifts_gradient_to_fp16_normal():
    scale = dtypes.loss_scale_needed(1e-9, "fp16")
    assert scale == 2**16  # GradScaler's default initial scale
    assert 1e-9 * scale >= float_format("fp16").smallest_normal > 1e-9 * scale / 2
    assert dtypes.loss_scale_needed(1e-3, "fp16") == 1.0
    assert dtypes.loss_scale_needed(1e-9, "bf16") == 1.0  # bf16 has fp32's range


def test_sum_stall_values():
    assert dtypes.sum_stall(1e-4, "fp16") == 0.25
    assert dtypes.sum_stall(1e-4, "bf16") == 2**-5
    assert dtypes.sum_stall(1.0, "fp32") == 2**24  # 16,777,216 + 1 == 16,777,216 in fp32
    assert float_format("fp32").spacing(2**24) == 2.0


@pytest.mark.parametrize(
    ("call", "name"),
    [
        (lambda: float_format("fp12"), "key"),
        (lambda: dtypes.int_format("int2"), "key"),
        (lambda: dtypes.loss_scale_needed(0.0), "smallest_gradient"),
        (lambda: dtypes.loss_scale_needed(1e-9, "fp7"), "key"),
        (lambda: dtypes.sum_stall(-1.0, "fp16"), "addend"),
        (lambda: float_format("fp16").fields(2**16), "pattern"),
        (lambda: float_format("fp16").fields(-1), "pattern"),
        (lambda: float_format("fp16").spacing(math.inf), "value"),
    ],
)
def test_bad_inputs_raise_value_error_naming_the_parameter(call, name):
    with pytest.raises(ValueError, match=name):
        call()


def test_plots_draw_every_field_and_the_whole_range():
    import matplotlib

    matplotlib.use("Agg")
    from course.presentation import plots

    fmts = [float_format(k) for k in dtypes.MAIN_FLOATS]
    ax = plots.bit_layouts(fmts)
    widths = sorted(p.get_width() for p in ax.patches)
    fields = [w for f in fmts for w in (f.sign_bits, f.exponent_bits, f.mantissa_bits) if w]
    assert widths == sorted(fields + [13])  # plus TF32's 13 stored-but-unused bits
    ax = plots.format_ranges(fmts)
    low, high = ax.get_xlim()
    assert low < float_format("fp32").smallest_subnormal and high > float_format("fp32").max
    assert len(ax.patches) == 2 * len(fmts)  # a subnormal and a normal bar each


def test_the_one_bytes_per_value_table_follows_from_the_formats_bits():
    """Every calculator reads bytes per value from ``dtypes.BYTES_PER_VALUE``, derived from bits:
    fp8 is an OCP fp8 format (E4M3 and E5M2 both take one byte), tf32 is stored as fp32."""
    assert dict(dtypes.BYTES_PER_VALUE) == {
        "fp32": 4,
        "tf32": 4,
        "fp16": 2,
        "bf16": 2,
        "fp8": 1,
        "int8": 1,
        "int4": 0.5,
    }
    for name, fmt in dtypes.DTYPE_FORMATS.items():
        info = dtypes.FLOAT_FORMATS.get(fmt) or dtypes.INT_FORMATS[fmt]
        assert dtypes.BYTES_PER_VALUE[name] == info.bytes_stored
    assert dtypes.FLOAT_FORMATS["fp8_e5m2"].bytes_stored == dtypes.BYTES_PER_VALUE["fp8"]
