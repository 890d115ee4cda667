"""The trusted checker: scores, hints and caps, on plain values (fast: no sandbox)."""

from __future__ import annotations

import pytest
from teaching.grading import check, spec

from course.selfcheck import values
from course.selfcheck.plain import to_plain


def _question(**answers) -> spec.Question:
    return spec.Question(
        name="q1",
        points=2,
        answers=tuple(spec._answer(k, v, "test") for k, v in answers.items()),
        hint="general hint",
        wrong=(spec.Wrong("x", "x * 1000", "that is in ms"),),
        checks=(spec.Check("y > 0", "y is positive"),),
    )


def test_the_trusted_checker_scores_hints_and_caps():
    q = _question(x={}, y={"expect": "none"})
    key = {"x": {"value": 0.0289}, "y": {"value": 1.0}}
    extras = {"q1/wrong/0": 28.9}
    right = check.check_question(q, {"x": {"value": 0.02890001}, "y": {"value": 5.0}}, key, extras)
    assert (right.score, right.failures) == (2, [])
    wrong = check.check_question(q, {"x": {"value": 28.9}, "y": {"value": -1.0}}, key, extras)
    assert wrong.score == 0
    assert wrong.failures == ["x: wrong value", "check failed: y is positive"]
    assert wrong.hints == ["that is in ms"]
    blank = check.check_question(q, {"x": {"error": "still `...`: not answered"}}, key, extras)
    assert (blank.score, blank.reason) == (0, "not answered")


def test_exact_ints_are_compared_as_ints_and_huge_ones_refused():
    big = 2**60 + 1  # a float cannot tell it from 2**60
    assert values.matches(big, big) and not values.matches(big, 2**60)
    assert values.matches(10**10, 1e10)  # a whole float is its integer
    assert values.int_problem([1, {"x": 10**400}]).startswith("a whole number beyond ±2**63")
    assert values.int_problem([1, 2**63 - 1]) == ""
    with pytest.raises(TypeError, match="beyond ±2\\*\\*63"):
        to_plain([10**400], [100])  # refused in the sandbox already
    assert not values.matches(10**400, 1e308, 4)  # no OverflowError: no match
    q = _question(x={"expr": "x"})
    result = check.check_question(q, {"x": {"value": -(10**400)}}, {"x": {"value": 3}}, {})
    assert result.score == 0 and "beyond ±2**63" in result.reason
