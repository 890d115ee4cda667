"""Grading's small parts in course.selfcheck: canonical values and hashes, and plain-data
extraction (fast: no torch, no full run). The checker, extraction, gradebook and spec have their own
test_grading_<module>.py."""

from __future__ import annotations

import pytest

from course.selfcheck import values
from course.selfcheck.plain import to_plain


def test_a_value_on_a_rounding_boundary_is_not_failed():
    expected = 1.2345  # 4 figures: "1.234e+00" or "1.235e+00" depending on float rounding
    for got in (1.23449, 1.23451, 1.2345, 1.2346):
        assert values.matches(got, expected, 4), got
    assert not values.matches(1.240, expected, 4)
    assert values.matches(13476831232, 13476831232.0)  # exact: int and whole float agree
    assert not values.matches(13476831233, 13476831232)


def test_public_hash_checks_agree_with_the_trusted_comparison_and_hide_the_value():
    salt = "set/q1/x"
    digest = values.digest(values.canonical(28.888888, 4), salt)
    assert "28.89" not in digest and "2.889" not in digest
    assert values.hash_matches(28.8889, [digest], salt, 4)
    assert values.hash_matches(28.8901, [digest], salt, 4) == values.matches(28.8901, 28.888888, 4)
    assert not values.hash_matches(14.44, [digest], salt, 4)


def test_only_plain_data_leaves_the_sandbox():
    class Sneaky:
        def __eq__(self, other):
            return True

    class Anything(float):
        def __eq__(self, other):
            return True

    assert to_plain({"a": [1, 2.5, "x", None, True]}, [100]) == {"a": [1, 2.5, "x", None, True]}
    plain = to_plain(Anything(2.0), [100])
    assert type(plain) is float and plain == 2.0
    with pytest.raises(TypeError, match="not plain data"):
        to_plain(Sneaky(), [100])
    with pytest.raises(TypeError, match="not answered"):
        to_plain({"fp32": ...}, [100])
    with pytest.raises(TypeError, match="too large"):
        to_plain(list(range(1000)), [10])
