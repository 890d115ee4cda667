"""Plain answer values: canonical forms, salted hashes, and the comparison both checkers share.

An answer reaches a checker as plain JSON data (numbers, strings, booleans, None, lists and dicts of
those). Two values *match* when their canonical forms agree:

- a number with ``sig`` significant figures: ``f"{x:.{sig-1}e}"``; the learner's value also matches
  when it is one unit of the last figure above or below (so a value on a rounding boundary is not
  failed): ``1.2349`` and ``1.2351`` both match ``1.235`` at 4 figures;
- an exact number (``sig: exact``): an int itself (never through a float; beyond ±2**63 refused),
  a whole float as that integer, else ``repr``;
- a string: stripped and lower-cased; a boolean: ``true``/``false``;
- a list (an array): the JSON of its canonical leaves (no neighbouring roundings).

The learner's public check compares salted PBKDF2 hashes of canonical forms (the value itself never
ships); the trusted checker compares the forms directly. Both use :func:`candidates`, so they agree.
Standard library only: this module runs in the learner's kernel.
"""

from __future__ import annotations

import hashlib
import json
import math

HASH_ITERATIONS = 20_000  # ~10 ms per hash: slows brute force of a public check, not a learner
EXACT = "exact"
MAX_INT = 2**63  # whole-number answers at or beyond ±2**63 are refused, with a reason


def _short(n: int) -> str:
    return f"about {int(abs(n).bit_length() * 0.30103) + 1:,} digits"


def int_problem(value, depth: int = 0) -> str:
    """Why a plain value holds a whole number too large to compare ('' when none does)."""
    if isinstance(value, int) and not isinstance(value, bool):
        return (
            f"a whole number beyond ±2**63 ({_short(value)}): refused"
            if abs(value) >= MAX_INT
            else ""
        )
    if depth < 12 and isinstance(value, list | tuple):
        return next((p for v in value if (p := int_problem(v, depth + 1))), "")
    if depth < 12 and isinstance(value, dict):
        return next((p for v in value.values() if (p := int_problem(v, depth + 1))), "")
    return ""


def is_number(x) -> bool:
    return isinstance(x, int | float) and not isinstance(x, bool)


def _sci(x: float, sig: int) -> str:
    return f"{x:.{sig - 1}e}"


def canonical(value, sig: int | str = EXACT) -> str:
    """The canonical text of a plain value (see the module docstring)."""
    if value is None or isinstance(value, bool):
        return json.dumps(value)
    if isinstance(value, int) and not isinstance(value, bool) and sig == EXACT:
        if abs(value) >= MAX_INT:
            raise TypeError(f"a whole number beyond ±2**63: {_short(value)}")
        return str(value)  # compared as an int, never through a float
    if is_number(value):
        if isinstance(value, int) and abs(value) >= MAX_INT:
            raise TypeError(f"a whole number beyond ±2**63: {_short(value)}")
        x = float(value)
        if math.isnan(x) or math.isinf(x):
            return repr(x)
        if sig == EXACT:
            return str(int(x)) if x.is_integer() and abs(x) < 2**63 else repr(x)
        return _sci(x, int(sig))
    if isinstance(value, str):
        return value.strip().lower()
    if isinstance(value, list | tuple):
        return "[" + ",".join(canonical(v, sig) for v in value) + "]"
    if isinstance(value, dict):
        items = sorted((str(k), canonical(v, sig)) for k, v in value.items())
        return "{" + ",".join(f"{json.dumps(k)}:{v}" for k, v in items) + "}"
    raise TypeError(f"not a plain value: {type(value).__name__}")


def candidates(value, sig: int | str = EXACT) -> list[str]:
    """Canonical forms a learner's value may take: itself and, for a rounded number, its
    neighbours."""
    first = canonical(value, sig)
    if sig == EXACT or not is_number(value) or not math.isfinite(float(value)) or value == 0:
        return [first]
    x = float(value)
    exponent = int(first.split("e")[1])
    unit = 10.0 ** (exponent - int(sig) + 1)
    return [first, _sci(x + unit, int(sig)), _sci(x - unit, int(sig))]


def digest(text: str, salt: str) -> str:
    """Salted, slow hash of a canonical form (hex, 32 characters)."""
    raw = hashlib.pbkdf2_hmac("sha256", text.encode(), salt.encode(), HASH_ITERATIONS)
    return raw.hex()[:32]


def matches(got, expected, sig: int | str = EXACT) -> bool:
    """Whether a learner's plain value matches the expected one (trusted side; no hashing)."""
    try:
        want = canonical(expected, sig)
        return want in candidates(got, sig)
    except (TypeError, ValueError, OverflowError):
        return False


def hash_matches(got, hashes: list[str], salt: str, sig: int | str = EXACT) -> bool:
    """Whether a learner's value matches one of ``hashes`` (public side: the value never ships)."""
    try:
        forms = candidates(got, sig)
    except (TypeError, ValueError, OverflowError):
        return False
    return any(digest(form, salt) in hashes for form in forms)


def kind_of(value) -> str:
    """The form of a plain value: bool, int, float, str, list, dict or none."""
    if value is None:
        return "none"
    if isinstance(value, bool):
        return "bool"
    if isinstance(value, int):
        return "int"
    if isinstance(value, float):
        return "float"
    if isinstance(value, str):
        return "str"
    if isinstance(value, list | tuple):
        return "list"
    if isinstance(value, dict):
        return "dict"
    return type(value).__name__


def form_problem(value, kind: str) -> str:
    """Why ``value`` does not have the form ``kind`` ('' when it does). Ints count as floats."""
    got = kind_of(value)
    if kind == "float" and got in ("int", "float"):
        return ""
    if kind == "int" and got == "float" and float(value).is_integer():
        return "should be a whole number (an int), not a float"
    if got == kind:
        return ""
    names = {
        "int": "a whole number (int)",
        "float": "a number",
        "bool": "True or False",
        "str": "a string",
        "list": "a list",
        "dict": "a dict",
        "none": "None",
    }
    return f"should be {names.get(kind, kind)}, got {names.get(got, got)}"


def plain_problem(value, *, depth: int = 0, max_depth: int = 6) -> str:
    """Why ``value`` is not plain JSON data ('' when it is)."""
    if depth > max_depth:
        return "nested too deeply"
    if value is None or isinstance(value, bool | int | float | str):
        return ""
    if isinstance(value, list):
        for v in value:
            if p := plain_problem(v, depth=depth + 1, max_depth=max_depth):
                return p
        return ""
    if isinstance(value, dict):
        for k, v in value.items():
            if not isinstance(k, str):
                return "a dict key that is not a string"
            if p := plain_problem(v, depth=depth + 1, max_depth=max_depth):
                return p
        return ""
    return f"not plain data: {type(value).__name__}"
