"""Units and their display: the only place numbers are turned into text.

Everything in `course` computes in SI base units (bytes, FLOPs, seconds, bytes/s, FLOP/s, watts,
USD). This module holds the constants to build those numbers (``7 * GB``) and the formatters that
show them (``fmt_bytes(7e9)``). Decimal prefixes are powers of 1000 (GB = 1e9 bytes, as on GPU
datasheets); binary prefixes are powers of 1024 (GiB = 2**30 bytes, what ``torch``/``nvidia-smi``
and most operating systems report). Every formatter says which it uses.

Used by every lesson (lesson 00 introduces GB vs GiB).
"""

from __future__ import annotations

import math

# Decimal (SI) byte prefixes: datasheets quote memory and bandwidth in these.
KB = 10**3
MB = 10**6
GB = 10**9
TB = 10**12
PB = 10**15

# Binary (IEC) byte prefixes: operating systems and torch.cuda report these.
KiB = 2**10
MiB = 2**20
GiB = 2**30
TiB = 2**40

# FLOP counts and rates (1 FLOP = one floating-point add or multiply; a fused multiply-add is 2).
KFLOP = 1e3
MFLOP = 1e6
GFLOP = 1e9
TFLOP = 1e12
PFLOP = 1e15
EFLOP = 1e18
ZFLOP = 1e21  # GPT-3 was trained with ~315 ZFLOP (3.15e23 FLOPs)

# Time.
MICROSECOND = 1e-6
MILLISECOND = 1e-3
MINUTE = 60.0
HOUR = 3600.0
DAY = 86400.0
YEAR = 365 * DAY  # 8,760 hours: the convention of energy bills and *AI Infrastructure*

# Power and energy.
KW = 1e3
MW = 1e6
KWH = 3.6e6  # joules in one kilowatt-hour

# Network links are quoted in bits per second; memory in bytes per second.
BITS_PER_BYTE = 8
GBIT_PER_S = 1e9 / BITS_PER_BYTE  # bytes/s in 1 Gb/s

_DECIMAL = [("PB", PB), ("TB", TB), ("GB", GB), ("MB", MB), ("KB", KB)]
_BINARY = [("TiB", TiB), ("GiB", GiB), ("MiB", MiB), ("KiB", KiB)]


def significant_decimals(value: float, *, figures: int = 3, carried: int = 4) -> int:
    """Decimals that show ``value`` (already scaled to its prefix) without losing a digit.

    A figure that is exact in at most ``carried`` significant digits keeps them all (a datasheet's
    3.35 TB/s, 1.979 PFLOP/s, 80.0 GB); any other value (a measurement, a quotient) is shown to
    ``figures`` significant figures. Never fewer than one decimal, so columns keep the style
    ``80.0 GB``; float noise (0.1 + 0.2) is not a digit the value carries.
    """
    if not math.isfinite(value) or value == 0:
        return 1
    whole = max(1, math.floor(math.log10(abs(value))) + 1)  # digits before the point
    for places in range(1, max(1, carried - whole) + 1):
        if abs(round(value, places) - value) <= 1e-9 * abs(value):
            return places
    return max(1, figures - whole)


def _scaled(value: float, steps: list[tuple[str, float]], unit: str, digits: int | None) -> str:
    if not math.isfinite(value):
        return f"{value} {unit}".strip()
    prefix, size = next(((p, s) for p, s in steps if abs(value) >= s), ("", 1))
    scaled = value / size
    places = significant_decimals(scaled) if digits is None else digits
    return f"{scaled:,.{places}f} {prefix}{unit}".rstrip()


def fmt_bytes(n_bytes: float, *, binary: bool = False, digits: int | None = 1) -> str:
    """Bytes for display: decimal prefixes (GB = 1e9) by default, binary (GiB = 2**30) if asked.

    ``digits`` is the decimals after the prefix; ``None`` keeps a figure's significant digits
    (:func:`significant_decimals`), as table cells do. So for every formatter below.
    """
    if binary:
        steps = [(p[:-1], s) for p, s in _BINARY]  # "GiB" -> prefix "Gi" + unit "B"
        return _scaled(n_bytes, steps, "B", digits)
    return _scaled(n_bytes, [(p[:-1], s) for p, s in _DECIMAL], "B", digits)


def fmt_bandwidth(bytes_per_s: float, *, digits: int | None = 1) -> str:
    """Bytes per second with decimal prefixes (GB/s = 1e9 bytes/s, as datasheets quote it)."""
    return fmt_bytes(bytes_per_s, digits=digits) + "/s"


_FLOP_STEPS = [
    ("Z", ZFLOP),
    ("E", EFLOP),
    ("P", PFLOP),
    ("T", TFLOP),
    ("G", GFLOP),
    ("M", MFLOP),
    ("K", KFLOP),
]


def fmt_flops(flops: float, *, digits: int | None = 1) -> str:
    """A FLOP count for display (decimal prefixes: 1 TFLOP = 1e12 FLOPs)."""
    return _scaled(flops, _FLOP_STEPS, "FLOP", digits)


def fmt_flop_rate(flop_per_s: float, *, digits: int | None = 1) -> str:
    """A FLOP rate for display, e.g. ``989.4 TFLOP/s``."""
    return _scaled(flop_per_s, _FLOP_STEPS, "FLOP", digits) + "/s"


def fmt_seconds(seconds: float) -> str:
    """A duration for display, from nanoseconds to years, in the most readable unit."""
    if seconds == 0:
        return "0 s"  # no wait at all, not "0 ns"
    if not math.isfinite(seconds):
        return f"{seconds} s"
    s = abs(seconds)
    for limit, scale, unit in [
        (1e-6, 1e-9, "ns"),
        (1e-3, 1e-6, "µs"),
        (1.0, 1e-3, "ms"),
        (MINUTE, 1.0, "s"),
        (HOUR, MINUTE, "min"),
        (2 * DAY, HOUR, "h"),
        (YEAR, DAY, "days"),
    ]:
        if s < limit:
            return f"{seconds / scale:,.3g} {unit}" if s < 1 else f"{seconds / scale:,.1f} {unit}"
    years = seconds / YEAR
    return f"{years:,.1f} years" if abs(years) < 1e6 else f"{years:.2e} years"


def fmt_watts(watts: float, *, digits: int | None = 1) -> str:
    """Power for display: W, kW or MW."""
    return _scaled(watts, [("M", MW), ("k", KW)], "W", digits)


def fmt_usd(usd: float) -> str:
    """US dollars for display: cents below $100, whole dollars above."""
    if not math.isfinite(usd):
        return f"${usd}"
    if abs(usd) < 100:
        return f"${usd:,.2f}"
    return f"${usd:,.0f}"


def fmt_count(n: float) -> str:
    """A large count (parameters, tokens) for display: 6.74B, 175.0B, 1.4T."""
    for prefix, size in [("T", 1e12), ("B", 1e9), ("M", 1e6), ("K", 1e3)]:
        if abs(n) >= size:
            return f"{n / size:,.2f}{prefix}"
    return f"{n:,.0f}"
