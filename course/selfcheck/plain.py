"""Answers as plain JSON data: what the learner's checker and the grader's sandboxed runner both
compare (numbers, strings, booleans, None, and lists and dicts of those; numpy and torch values
converted, their size bounded). Standard library only."""

from __future__ import annotations

import math

MAX_ELEMENTS = 200_000  # numbers in one answer (a 64 x 256 tensor is 16,384)


def to_plain(value, budget: list[int], depth: int = 0):
    """A plain JSON-able copy of ``value``; raises TypeError naming what is not plain data."""
    if depth > 6:
        raise TypeError("nested too deeply")
    if value is Ellipsis:
        raise TypeError("still `...`: not answered")
    if value is None or type(value) in (bool, str):
        return value
    if type(value) is int:
        if abs(value) >= 2**63:  # compared exactly as an int, so bounded like one
            digits = int(abs(value).bit_length() * 0.30103) + 1
            raise TypeError(f"a whole number beyond ±2**63 (about {digits:,} digits): refused")
        return value
    if type(value) is float:
        return value if math.isfinite(value) else repr(value)
    if isinstance(value, bool):  # numpy.bool_ is not a bool subclass, handled by .item below
        return bool(value)
    if isinstance(value, int | float) and not isinstance(value, bool):
        return to_plain(int(value) if isinstance(value, int) else float(value), budget, depth)
    if isinstance(value, str):
        return str(value)
    if isinstance(value, list | tuple):
        budget[0] -= len(value)
        if budget[0] < 0:
            raise TypeError(f"too large (more than {MAX_ELEMENTS:,} values)")
        return [to_plain(v, budget, depth + 1) for v in value]
    if isinstance(value, dict):
        out = {}
        for k, v in value.items():
            if not isinstance(k, str | int | float | bool) or k is None:
                raise TypeError(f"a dict key of type {type(k).__name__}")
            out[str(k)] = to_plain(v, budget, depth + 1)
        return out
    type_name = type(value).__module__ + "." + type(value).__qualname__
    if type_name.startswith(("numpy.", "torch.")):
        size = getattr(value, "size", None)
        size = size() if callable(size) and type_name.startswith("torch.") else size
        numel = value.numel() if hasattr(value, "numel") else size
        if isinstance(numel, int) and numel > budget[0]:
            raise TypeError(f"too large ({numel:,} values; at most {MAX_ELEMENTS:,})")
        if hasattr(value, "tolist") and getattr(value, "ndim", 0) != 0:
            return to_plain(value.tolist(), budget, depth + 1)
        if hasattr(value, "item"):
            return to_plain(value.item(), budget, depth + 1)
        if type_name in ("torch.dtype",):
            return str(value)
    raise TypeError(
        f"a {type(value).__name__}, not plain data (a number, string, bool, list, dict)"
    )
