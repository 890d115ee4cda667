"""Graded-release checks: form, units and a coarse range, never a value to find by search.

In a self-study release each numeric answer's public check is a salted hash of its rounding to the
question's precision: a loop over candidates recovers it (see ``benchmarks/brute_force.py``). A
graded class gets ``python -m teaching release --graded`` instead, whose checks hold for each number
only a *range* on a fixed grid, at least a decade wide and widened until it holds at least
:data:`MIN_VALUES` distinct values at the grader's precision (a small count gets a wider range than
a large float):

- the grid is ``{1, 3} x 10**k``: the range depends only on the value's sign and decade
  ``[10**k, 10**(k+1))`` (and the precision), never on where it sits in it, so every value of its
  decade shares it; a count below ``MIN_VALUES`` (zero included) gets ``[-100, 100]``, shared by
  all 199 of them. A float zero at a number of figures keeps ``[-1, 1]``, its own;
- the right answer is never hashed; the known *wrong* answers are, by bucket (each bucket holds
  ``MIN_VALUES`` values at the grader's precision; the buckets' offset comes from the salt, not
  from the right answer): searching them recovers a wrong value's bucket, not a right value to the
  grader's precision, and the published offset says nothing of where the right answer is. A
  hint states how the wrong value relates to the right one (twice it, a thousand times it): a
  bucket's steps are made 10 times coarser until, divided by that factor, it still leaves at
  least ``MIN_VALUES`` right answers (:func:`answer_candidates`); where the wider bucket would
  hold the right answer, the hint is dropped. (Coarser steps, not more of them: a bucket always
  holds 100 steps, so its published offset stays below 100 and its step a power of ten, and no
  digits of an answer can appear in them.)

A *shape* is the public form of one plain value: ``{"range": [lo, hi]}`` for a number, ``{"items":
[shape, ...]}`` for a list, ``{"keys": {name: shape}}`` for a dict, ``{"kind": kind}`` otherwise.
Standard library only: this module runs in the learner's kernel.
"""

from __future__ import annotations

import hashlib
import math

from course.selfcheck.values import (
    EXACT,
    canonical,
    digest,
    is_number,
    kind_of,
)

MIN_VALUES = 100  # a coarse check accepts at least this many values at the grader's precision
MAX_ITEMS = 64  # longer lists are checked for their length only
MAX_WIDENING = 6  # a known wrong answer's bucket steps are at most 10**6 of the grader's
_GRID = (1, 3)  # range ends: 1 or 3 times a power of ten


def _grid(i: int) -> float:
    """The ``i``-th grid point (``i`` = 2k is 10**k, 2k+1 is 3 * 10**k)."""
    k, j = divmod(i, 2)
    return float(_GRID[j] * 10.0**k) if k >= 0 else _GRID[j] / 10.0**-k


def _grid_index_below(x: float) -> int:
    """The largest ``i`` with ``_grid(i) <= x`` (``x > 0``)."""
    i = 2 * math.floor(math.log10(x)) - 2
    while _grid(i + 1) <= x:
        i += 1
    while _grid(i) > x:
        i -= 1
    return i


def values_between(lo: float, hi: float, sig) -> int:
    """How many distinct values at precision ``sig`` lie in ``[lo, hi]`` (``0 < lo < hi``)."""
    if sig == EXACT:
        return max(0, math.floor(hi) - math.ceil(lo) + 1)
    sig = int(sig)

    def index(x: float) -> int:  # position of x's rounding among all sig-figure numbers
        mantissa, exponent = f"{x:.{sig - 1}e}".split("e")
        return int(exponent) * 9 * 10 ** (sig - 1) + round(float(mantissa) * 10 ** (sig - 1))

    return index(hi) - index(lo) + 1


def _effective_sig(value, sig):
    """An ``exact`` float that is not whole compares by ``repr``: as fine as 15 figures."""
    if sig == EXACT and not float(value).is_integer():
        return 15
    return sig


def coarse_range(value, sig) -> list[float]:
    """The public range of a number: grid ends, a decade or more, ``MIN_VALUES`` values or more,
    the same for every value of its decade (see the module docstring)."""
    x = float(value)
    if not math.isfinite(x):
        return [x, x]
    sig = _effective_sig(x, sig)
    if sig == EXACT and abs(x) < MIN_VALUES:
        return [-float(MIN_VALUES), float(MIN_VALUES)]
    if x == 0:
        return [-1.0, 1.0]
    a = abs(x)
    i = _grid_index_below(a)
    lo_i = i - i % 2  # 10**k, the start of a's decade
    hi_i = lo_i + 2
    while values_between(_grid(lo_i), _grid(hi_i), sig) < MIN_VALUES:
        lo_i, hi_i = lo_i - 1, hi_i + 1
    lo, hi = _grid(lo_i), _grid(hi_i)
    return [lo, hi] if x > 0 else [-hi, -lo]


def shape_of(value, sig=None) -> dict:
    """The public shape of a plain value (see the module docstring); ``sig`` None: per number."""
    if is_number(value):
        if sig is None:  # the answer's default: whole numbers exactly, floats at 4 figures
            return {"range": coarse_range(value, EXACT if isinstance(value, int) else 4)}
        return {"range": coarse_range(value, sig)}
    if isinstance(value, list | tuple):
        if len(value) > MAX_ITEMS:
            return {"kind": "list", "len": len(value)}
        return {"items": [shape_of(v, sig) for v in value]}
    if isinstance(value, dict):
        return {"keys": {str(k): shape_of(v, sig) for k, v in value.items()}}
    return {"kind": kind_of(value)}


def _fmt(x: float) -> str:
    return f"{x:g}"


def shape_problems(value, shape: dict, where: str = "") -> list[str]:
    """Why ``value`` does not have ``shape`` (empty when it does): form, length, keys, range."""
    at = f" at {where}" if where else ""
    if "range" in shape:
        if not is_number(value):
            return [f"should be a number{at}, got {kind_of(value)}"]
        lo, hi = shape["range"]
        x = float(value)
        if not (lo <= x <= hi):  # also false for nan
            return [f"out of the expected range{at} ({_fmt(lo)} to {_fmt(hi)}): check its units"]
        return []
    if "items" in shape or shape.get("kind") == "list":
        if not isinstance(value, list | tuple):
            return [f"should be a list{at}, got {kind_of(value)}"]
        items = shape.get("items")
        n = len(items) if items is not None else shape.get("len")
        if n is not None and len(value) != n:
            return [f"should have {n} items{at}, got {len(value)}"]
        problems = []
        for j, (v, s) in enumerate(zip(value, items or [], strict=False)):
            problems += shape_problems(v, s, f"{where}[{j}]")
        return problems[:3]
    if "keys" in shape:
        if not isinstance(value, dict):
            return [f"should be a dict{at}, got {kind_of(value)}"]
        if sorted(map(str, value)) != sorted(shape["keys"]):
            return [f"needs exactly the keys {', '.join(sorted(shape['keys']))}{at}"]
        problems = []
        for k, s in shape["keys"].items():
            v = next(v for kk, v in value.items() if str(kk) == k)
            problems += shape_problems(v, s, f"{where}[{k}]" if where else k)
        return problems
    kind = shape.get("kind")
    if kind and kind_of(value) != kind and not (kind == "float" and kind_of(value) == "int"):
        return [f"should be {kind}{at}, got {kind_of(value)}"]
    return []


def _unit(x: float, sig) -> float:
    """One step of the grader's precision ``sig`` at ``x``'s magnitude (1 for whole numbers)."""
    if sig == EXACT:
        return 1.0
    exponent = int(canonical(x, int(sig)).split("e")[1])
    return 10.0 ** (exponent - int(sig) + 1)


def _shift_of(salt: str, width: int) -> int:
    """The buckets' offset: from the salt alone (the right answer's position never shows)."""
    return int.from_bytes(hashlib.sha256(f"{salt}/shift".encode()).digest()[:8], "big") % width


def wrong_bucket(wrong, right, sig, salt: str = "") -> dict | None:
    """Where a known wrong number is recognised in a graded release: a bucket of ``MIN_VALUES``
    values or more at the grader's precision ``sig`` (the right answer's) that holds it, or None.

    The bucket ``b`` of a learner's value ``v`` is ``(round(v / unit) - shift) // width``; only the
    wrong value's ``b`` is hashed. ``shift`` comes from the salt alone; None where the wrong
    value's bucket holds a value the grader accepts as right (the right answer within one and a
    half steps: a right answer never gets a wrong answer's hint; only a wrong value within 100 steps
    of the right one can; the bucket's steps are first made coarser until, divided by the hint's
    factor, it leaves ``MIN_VALUES`` right answers: :func:`answer_candidates`), or for a zero,
    infinite or non-number value.
    """
    if not is_number(wrong) or not is_number(right):
        return None
    w, r = float(wrong), float(right)
    if not (math.isfinite(w) and math.isfinite(r)) or w == 0:
        return None
    sig = _effective_sig(r, sig)
    unit = _unit(w, sig)
    r_unit = _unit(r, sig) if r != 0 else unit
    width = MIN_VALUES
    shift = _shift_of(salt, width)
    exponent = round(math.log10(unit))
    for k in range(MAX_WIDENING + 1):  # 10x coarser steps until the hint's factor leaves enough
        unit = 10.0 ** (exponent + k)
        n = round(w / unit)
        first = (n - shift) // width * width + shift  # the bucket: first .. first + width - 1
        if answer_candidates(first * unit, (first + width - 1) * unit, w, r, sig) >= MIN_VALUES:
            break
    else:
        return None
    low, high = (r - 1.5 * r_unit) / unit, (r + 1.5 * r_unit) / unit  # right, in steps of unit
    if not (high < first - 0.5 or low >= first + width - 0.5):
        return None
    return {"unit": unit, "width": width, "shift": shift, "bucket": (n - shift) // width}


def _count(lo: float, hi: float, sig) -> int:
    """Values at precision ``sig`` in ``[lo, hi]``, whatever the signs (one across zero counts
    at least ``MIN_VALUES`` at a number of figures)."""
    lo, hi = min(lo, hi), max(lo, hi)
    if sig == EXACT:
        return max(0, math.floor(hi) - math.ceil(lo) + 1)
    if lo > 0:
        return values_between(lo, hi, sig)
    if hi < 0:
        return values_between(-hi, -lo, sig)
    return MIN_VALUES


def answer_candidates(lo: float, hi: float, wrong: float, right: float, sig) -> int:
    """How many right answers (at the grader's precision ``sig``) a learner is left with who
    found that the known wrong value lies in ``[lo, hi]``, applies its hint's factor (right =
    value x right/wrong: "twice", "a thousand times"; a small offset, "one more", is a factor
    near 1) and keeps what the right answer's public range (:func:`coarse_range`) allows. A
    right answer of 0 has no factor: the bucket says nothing of it."""
    if right == 0:
        return MIN_VALUES
    factor = right / wrong
    a, b = sorted((lo * factor, hi * factor))
    low, high = coarse_range(right, sig)
    a, b = max(a, low), min(b, high)
    return _count(a, b, sig) if a <= b else 0


def bucket_of(value, where: dict) -> int | None:
    """The bucket of a learner's number (see :func:`wrong_bucket`), or None for a non-number."""
    if not is_number(value) or not math.isfinite(float(value)):
        return None
    return (round(float(value) / where["unit"]) - where["shift"]) // where["width"]


def wrong_check(wrong, right, sig_of, salt: str) -> dict | None:
    """The public form of a known wrong answer in a graded release, or None where it cannot have
    one.

    A number: ``{"unit", "width", "shift", "hash"}``. A dict: ``{"keys": {k: that}}`` for every key
    whose wrong value differs from the right one (each must match). ``sig_of(right_value)`` is the
    grader's precision.
    """
    if isinstance(wrong, dict) and isinstance(right, dict) and set(wrong) == set(right):
        keys = {}
        for k in sorted(wrong, key=str):
            if canonical(wrong[k], sig_of(right[k])) == canonical(right[k], sig_of(right[k])):
                continue
            one = wrong_check(wrong[k], right[k], sig_of, f"{salt}[{k}]")
            if one is None:
                return None
            keys[str(k)] = one
        return {"keys": keys} if keys else None
    where = wrong_bucket(wrong, right, sig_of(right), salt) if is_number(right) else None
    if where is None:
        return None
    bucket = where.pop("bucket")
    return {**where, "hash": [digest(str(bucket), salt)]}


def wrong_matches(value, check: dict, salt: str) -> bool:
    """Whether a learner's value falls in a known wrong answer's bucket(s) (graded release)."""
    if "keys" in check:
        if not isinstance(value, dict):
            return False
        plain = {str(k): v for k, v in value.items()}
        return all(
            k in plain and wrong_matches(plain[k], c, f"{salt}[{k}]")
            for k, c in check["keys"].items()
        )
    bucket = bucket_of(value, check)
    return bucket is not None and digest(str(bucket), salt) in check["hash"]
