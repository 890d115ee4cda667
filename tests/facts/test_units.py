"""Units: decimal vs binary prefixes and the display formatters."""

import math

import pytest

from course.facts import units


def test_gb_is_decimal_and_gib_is_binary():
    assert units.GB == 1_000_000_000
    assert units.GiB == 1_073_741_824
    assert units.GiB / units.GB == pytest.approx(1.073741824)


def test_llama2_7b_fp16_weights_read_13_5_gb_but_12_6_gib():
    # 6,738,415,616 parameters (Llama-2-7B, checked against a torch module in test_models) x 2
    # bytes.
    weights = 6_738_415_616 * 2
    assert units.fmt_bytes(weights) == "13.5 GB"
    assert units.fmt_bytes(weights, binary=True) == "12.6 GiB"


@pytest.mark.parametrize(
    ("value", "text"),
    [(512, "512.0 B"), (1536, "1.5 KB"), (3.35e12, "3.4 TB"), (2**30, "1.1 GB")],
)
def test_fmt_bytes_picks_the_largest_prefix_below_the_value(value, text):
    assert units.fmt_bytes(value) == text


def test_fmt_flop_rate_and_bandwidth():
    assert units.fmt_flop_rate(989.4e12) == "989.4 TFLOP/s"
    assert units.fmt_bandwidth(3.35e12, digits=2) == "3.35 TB/s"
    assert units.fmt_flops(6 * 175e9 * 300e9) == "315.0 ZFLOP"


@pytest.mark.parametrize(
    ("seconds", "text"),
    [
        (28.9e-3, "28.9 ms"),
        (2.5e-6, "2.5 µs"),
        (90, "1.5 min"),
        (7200, "2.0 h"),
        (3 * 86400, "3.0 days"),
        (0.0, "0 s"),
    ],
)
def test_fmt_seconds_uses_a_readable_unit(seconds, text):
    assert units.fmt_seconds(seconds) == text


def test_fmt_usd_watts_and_count():
    assert units.fmt_usd(8935.2) == "$8,935"
    assert units.fmt_usd(32.77) == "$32.77"
    assert units.fmt_watts(10_200) == "10.2 kW"
    assert units.fmt_count(6_738_415_616) == "6.74B"


def test_formatters_do_not_crash_on_non_finite_values():
    assert "inf" in units.fmt_bytes(math.inf)
    assert "nan" in units.fmt_seconds(math.nan)


def test_one_year_is_8760_hours():
    assert units.YEAR / units.HOUR == 8760
