"""course.presentation.findings._common, the helpers every findings module shares: a ratio's
outcome against its noise, a timing compared with a baseline, ratios and lists in words."""

from types import SimpleNamespace

import pytest

from course.presentation.findings import _common


@pytest.mark.parametrize(
    ("ratio", "spread", "expected"),
    [
        (3.0, 0.0, "faster"),
        (0.3, 0.0, "slower"),
        (1.05, 0.0, "same"),
        (0.95, 0.02, "same"),
        (1.3, 0.6, "noisy"),
        (3.0, 0.6, "faster"),
        (float("nan"), 0.0, "noisy"),
    ],
)
def test_outcome_classifies_ratio_against_its_noise(ratio, spread, expected):
    assert _common.outcome(ratio, spread) == expected


def test_times_never_rounds_a_real_difference_to_one():
    assert _common.times(0.58) == "0.58×"
    assert _common.times(3.14) == "3.1×"
    assert _common.times(40.2) == "40×"
    assert _common.by_factor(0.025) == "40× slower"


def test_a_new_timing_is_compared_with_its_baseline_by_the_same_rule():
    # twice as fast, tight spreads; the same difference inside a 60 % spread; a broken timing
    assert _common.compare_seconds(2.0, 0.02, 1.0, 0.01) == "faster"
    assert _common.compare_seconds(1.0, 0.01, 2.0, 0.02) == "slower"
    assert _common.compare_seconds(1.0, 0.4, 0.8, 0.2) == "noisy"
    assert _common.compare_seconds(0.0, 0.0, 1.0, 0.0) == "noisy"
    assert _common.noisy(1.0, 0.3) and not _common.noisy(1.0, 0.2)
    assert _common.noisy(float("nan"), 0.0)


def test_records_are_read_alike_as_mappings_and_objects():
    as_dict = {"seconds": 2.0, "spread_seconds": 0.5}
    as_object = SimpleNamespace(median_seconds=2.0, iqr_seconds=0.5)
    assert _common.relative_spread(as_dict) == _common.relative_spread(as_object) == 0.25
    assert _common.relative_spread({"seconds": 2.0}) == 0.0
    assert _common.get(as_object, "missing", "x") == "x"


def test_names_are_joined_as_a_sentence_lists_them():
    assert _common.join([]) == ""
    assert _common.join(["numpy"]) == "numpy"
    assert _common.join(["numpy", "torch"]) == "numpy and torch"
    assert _common.join(["a", "b", "c"]) == "a, b and c"
