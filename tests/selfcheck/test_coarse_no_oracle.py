"""A graded release's public checks are no oracle (issue 35): a coarse range cannot be inverted
(it depends only on the value's decade, and every value of the decade shares it), and a known wrong
answer's bucket says nothing of where the right answer is (its offset comes from the salt). Before:
[-100, 100] only ever meant 0, [0.01, 100] only ever 1, and a shift other than 0 said the right
answer sat next to the wrong bucket (set 04 q4 came out as one of 15, 16, 17)."""

from __future__ import annotations

import random

import pytest

from course.selfcheck import coarse
from course.selfcheck.values import EXACT


@pytest.mark.parametrize("sig", [EXACT, 2, 4])
def test_every_value_of_a_decade_shares_its_range(sig):
    rng = random.Random(35)
    for k in range(-3, 12):
        for sign in (1, -1):
            values = [sign * rng.uniform(10**k, 10 ** (k + 1)) for _ in range(200)]
            if sig == EXACT:
                values = [round(v) for v in values if round(v) != 0]
            ranges = {tuple(coarse.coarse_range(v, sig)) for v in values}
            assert len(ranges) <= 2 if sig == EXACT and k <= 2 else len(ranges) == 1, (k, ranges)
            for v in values:
                lo, hi = coarse.coarse_range(v, sig)
                assert lo <= v <= hi


def test_zero_and_the_small_counts_share_one_range():
    shared = {tuple(coarse.coarse_range(n, EXACT)) for n in range(-99, 100)}
    assert shared == {(-100.0, 100.0)}  # 199 counts, zero among them: the range says none
    assert coarse.coarse_range(1, EXACT) == coarse.coarse_range(0, EXACT)


def test_a_wrong_buckets_offset_does_not_depend_on_the_right_answer():
    salt = "04_model_memory/q4/gpus/wrong"
    shifts = set()
    for right in range(1, 400):
        where = coarse.wrong_bucket(1000, right, EXACT, salt)
        if where is not None:
            shifts.add(where["shift"])
    assert len(shifts) == 1  # the same offset wherever the right answer is
    # a right answer next to the wrong one: no bucket (no hint), rather than a telling offset
    near = [r for r in range(900, 1100) if coarse.wrong_bucket(1000, r, EXACT, salt) is None]
    assert near and all(abs(r - 1000) < coarse.MIN_VALUES + 2 for r in near)


def test_a_wrong_bucket_never_holds_a_right_answer_and_still_catches_the_wrong_one():
    rng = random.Random(4)
    for _ in range(150):  # each match costs a slow hash
        right = rng.randrange(1, 10**6)
        wrong = right + rng.choice([-1, 1]) * rng.randrange(2, 5000)
        check = coarse.wrong_check(wrong, right, lambda _: EXACT, "s")
        if check is None:
            # dropped only where the widened bucket (at most 10x the 100 values) holds the right one
            assert abs(wrong - right) < 10 * coarse.MIN_VALUES
            continue
        assert coarse.wrong_matches(wrong, check, "s")
        for r in (right - 1, right, right + 1):
            assert not coarse.wrong_matches(r, check, "s")
