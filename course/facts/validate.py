"""Input checks shared by every calculator: one clear ``ValueError`` per bad argument.

A calculator calls these at its top, so a bad value fails at once with a message that names the
parameter, the value it got and the range it allows, e.g.
``ValueError: batch must be an integer >= 1, got 0``. Widgets show that sentence instead of a
traceback.
"""

from __future__ import annotations

import math
from collections.abc import Iterable
from numbers import Integral, Real

#: Largest GPU count any calculator accepts (the largest clusters hold about 10^5).
MAX_GPUS = 10**8
#: Largest power usage effectiveness accepted (1 is the IT load alone; old sites run near 2).
MAX_PUE = 10.0
#: Largest power accepted, watts (10 GW: more than any datacenter campus).
MAX_WATTS = 1e10
#: Largest electricity price accepted, USD per kWh (retail prices are 0.05-0.50).
MAX_USD_PER_KWH = 1e3
#: Longest prompt, answer or context accepted, tokens (the longest served contexts hold about 10^7).
MAX_TOKENS = 10**8


def _is_real(value: object) -> bool:
    return isinstance(value, Real) and not isinstance(value, bool)


def positive_int(name: str, value: object, *, minimum: int = 1, maximum: int | None = None) -> int:
    """An integer >= ``minimum`` (and <= ``maximum`` if given; bools are refused: ``True`` is not
    a GPU count)."""
    allowed = f">= {minimum}" + ("" if maximum is None else f" and <= {maximum:,}")
    if (
        not isinstance(value, Integral)
        or isinstance(value, bool)
        or value < minimum
        or (maximum is not None and value > maximum)
    ):
        raise ValueError(f"{name} must be an integer {allowed}, got {value!r}")
    return int(value)


def number(
    name: str,
    value: object,
    *,
    minimum: float | None = None,
    maximum: float | None = None,
    strict_min: bool = False,
) -> float:
    """A finite real number within the given range (``strict_min`` makes the minimum exclusive)."""
    low = "" if minimum is None else (f"> {minimum:g}" if strict_min else f">= {minimum:g}")
    high = "" if maximum is None else f"<= {maximum:g}"
    allowed = " and ".join(p for p in (low, high) if p) or "finite"
    try:  # float() of a huge int overflows: that is a bad value, not a crash
        x = float(value) if _is_real(value) else math.nan
    except OverflowError:
        x = math.nan
    if not math.isfinite(x):
        raise ValueError(f"{name} must be a finite number ({allowed}), got {value!r}")
    too_low = minimum is not None and (x <= minimum if strict_min else x < minimum)
    too_high = maximum is not None and x > maximum
    if too_low or too_high:
        raise ValueError(f"{name} must be {allowed}, got {value!r}")
    return x


def positive(name: str, value: object) -> float:
    """A finite number > 0 (sizes, bandwidths, peaks, prices per unit)."""
    return number(name, value, minimum=0, strict_min=True)


def non_negative(name: str, value: object) -> float:
    """A finite number >= 0 (hours, costs and rates that may be zero)."""
    return number(name, value, minimum=0)


def fraction(name: str, value: object, *, allow_zero: bool = False) -> float:
    """A number in (0, 1] (or [0, 1] with ``allow_zero``): utilisation, MFU, usable memory."""
    return number(name, value, minimum=0, maximum=1, strict_min=not allow_zero)


def choice(name: str, value: object, allowed: Iterable[object]) -> object:
    """One of a fixed set of values (dtype names, optimizer names, ZeRO stages)."""
    options = list(allowed)
    if not any(type(value) is type(o) and value == o for o in options):
        shown = ", ".join(repr(o) for o in options)
        raise ValueError(f"{name} must be one of {shown}; got {value!r}")
    return value


def pue(value: object, name: str = "pue") -> float:
    """Power usage effectiveness: facility power / IT power, in [1, MAX_PUE]."""
    return number(name, value, minimum=1, maximum=MAX_PUE)


def usd_per_kwh(value: object, name: str = "usd_per_kwh") -> float:
    """An electricity price in [0, MAX_USD_PER_KWH] USD per kWh."""
    return number(name, value, minimum=0, maximum=MAX_USD_PER_KWH)


def watts(name: str, value: object) -> float:
    """A power in [0, MAX_WATTS] watts."""
    return number(name, value, minimum=0, maximum=MAX_WATTS)
