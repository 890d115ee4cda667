"""course.facts.validate: a bad value fails with a ValueError naming the label, the value and the
allowed range; a good one comes back as a plain int or float."""

from __future__ import annotations

import math
from fractions import Fraction

import numpy as np
import pytest

from course.facts import validate


def test_positive_int_refuses_bools_floats_and_values_out_of_range():
    assert validate.positive_int("gpus", np.int64(8)) == 8  # numpy integers are integers
    assert type(validate.positive_int("gpus", np.int64(8))) is int
    for bad in (True, 2.0, "8", 0):
        with pytest.raises(ValueError, match=r"^gpus must be an integer >= 1, got "):
            validate.positive_int("gpus", bad)
    with pytest.raises(ValueError, match=r"tp must be an integer >= 1 and <= 8, got 16"):
        validate.positive_int("tp", 16, maximum=8)


def test_number_names_its_range_and_refuses_what_is_not_finite():
    assert validate.number("x", Fraction(1, 4)) == 0.25  # any real number, returned as float
    for bad in (math.nan, math.inf, "1", None, 10**400):  # 10**400 overflows float(): bad value
        with pytest.raises(ValueError, match=r"x must be a finite number \(finite\)"):
            validate.number("x", bad)
    with pytest.raises(ValueError, match=r"x must be > 0 and <= 1, got 0"):
        validate.number("x", 0, minimum=0, maximum=1, strict_min=True)
    assert validate.number("x", 0, minimum=0) == 0.0  # inclusive unless strict_min


def test_fraction_positive_and_non_negative_bounds():
    assert validate.fraction("mfu", 1) == 1.0
    with pytest.raises(ValueError, match=r"mfu must be > 0 and <= 1, got 0"):
        validate.fraction("mfu", 0)
    assert validate.fraction("share", 0, allow_zero=True) == 0.0
    with pytest.raises(ValueError, match=r"share must be >= 0 and <= 1, got 1.5"):
        validate.fraction("share", 1.5, allow_zero=True)
    with pytest.raises(ValueError, match=r"size must be > 0"):
        validate.positive("size", 0)
    assert validate.non_negative("hours", 0) == 0.0


def test_choice_compares_type_and_value():
    assert validate.choice("dtype", "bf16", ("fp32", "bf16")) == "bf16"
    with pytest.raises(ValueError, match=r"stage must be one of 0, 1, 2, 3; got True"):
        validate.choice("stage", True, (0, 1, 2, 3))  # True == 1, but it is not a ZeRO stage
    with pytest.raises(ValueError, match=r"dtype must be one of 'fp32', 'bf16'; got 'fp8'"):
        validate.choice("dtype", "fp8", ("fp32", "bf16"))


def test_physical_ranges_accept_published_values_and_refuse_impossible_ones():
    # Uptime Institute Global Data Center Survey 2024: average PUE 1.56; hyperscalers report ~1.1.
    assert validate.pue(1.56) == 1.56 and validate.pue(1.1) == 1.1
    with pytest.raises(ValueError, match=r"pue must be >= 1 and <= 10"):
        validate.pue(0.9)  # below 1 the facility would make power
    assert validate.usd_per_kwh(0.0) == 0.0
    with pytest.raises(ValueError, match=r"usd_per_kwh must be >= 0"):
        validate.usd_per_kwh(-0.1)
    assert validate.watts("tdp_watts", 700) == 700.0  # H100 SXM TDP, datasheet
    with pytest.raises(ValueError, match=r"tdp_watts must be >= 0 and <= 1e\+10"):
        validate.watts("tdp_watts", 2e10)
