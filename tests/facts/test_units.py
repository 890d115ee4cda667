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


@pytest.mark.parametrize(
    ("bytes_per_s", "text"),
    [
        (3.35e12, "3.35 TB/s"),  # H100 SXM HBM3, NVIDIA H100 datasheet (2023)
        (2.039e12, "2.039 TB/s"),  # A100 80GB SXM HBM2e, NVIDIA A100 datasheet (2021)
        (4.8e12, "4.8 TB/s"),  # H200 SXM HBM3e, NVIDIA H200 datasheet (2024)
        (900e9, "900.0 GB/s"),  # H100 SXM NVLink 4, H100 datasheet
        (0.1e12 + 0.2e12, "300.0 GB/s"),  # float noise is not a digit the figure carries
        (3.3456e12, "3.35 TB/s"),  # a measured rate: three significant figures
        (12.3456e9, "12.3 GB/s"),
    ],
)
def test_significant_mode_keeps_the_digits_a_published_figure_carries(bytes_per_s, text):
    assert units.fmt_bandwidth(bytes_per_s, digits=None) == text


def test_significant_mode_for_flop_rates_bytes_and_watts():
    # H100 SXM dense Tensor Core peaks (H100 whitepaper 2022): bf16 989.4, fp8 1,978.9 TFLOP/s.
    assert units.fmt_flop_rate(989.4e12, digits=None) == "989.4 TFLOP/s"
    assert units.fmt_flop_rate(1978.9e12, digits=None) == "1.98 PFLOP/s"  # 5 digits: 3 shown
    assert units.fmt_flop_rate(1.979e15, digits=None) == "1.979 PFLOP/s"  # sparse, datasheet
    assert units.fmt_bytes(80 * units.GB, digits=None) == "80.0 GB"
    assert units.fmt_bytes(2**31, binary=True, digits=None) == "2.0 GiB"
    assert units.fmt_watts(700, digits=None) == "700.0 W"
    assert units.fmt_watts(10_200, digits=None) == "10.2 kW"


def test_significant_decimals_counts_digits_after_the_prefix():
    assert units.significant_decimals(3.35) == 2
    assert units.significant_decimals(989.4) == 1
    assert units.significant_decimals(1.979) == 3
    assert units.significant_decimals(1.9789) == 2  # five figures: not carried, three shown
    assert units.significant_decimals(0.30000000000000004) == 1
    assert units.significant_decimals(math.nan) == 1
