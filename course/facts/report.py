"""Results that print themselves: the shared base of every calculator's result object.

A calculator returns a frozen dataclass that also inherits :class:`Report`. Its fields hold SI
numbers (bytes, seconds, FLOPs, watts, USD) for code to use; printing it, or ending a notebook cell
with it, shows a small table with units::

    >>> model_state_bytes(7e9)          # in a notebook: an HTML table
    Model-state memory
      weights              14.0 GB  (13.0 GiB)
      ...

The unit of a field is read from its name (``*_bytes``, ``*_seconds``, ``*_flops``, ``*_watts``,
``*_usd`` ...), so naming a field well is all a result class has to do; ``_formats`` overrides the
guess where a name does not say it. Layer 1: standard library and ``course.facts.units`` only.
"""

from __future__ import annotations

import dataclasses
import html
import math
from collections.abc import Callable, Mapping
from typing import Any, ClassVar

from course.facts import units


def _fmt_bytes(value: float) -> str:
    dec = units.fmt_bytes(value)
    if not math.isfinite(value) or abs(value) < units.KiB:
        return dec
    return f"{dec} ({units.fmt_bytes(value, binary=True)})"


def _fmt_count(value: float) -> str:
    if isinstance(value, int) and not isinstance(value, bool):
        return f"{value:,}" if abs(value) < 1e6 else f"{value:,} ({units.fmt_count(value)})"
    if not math.isfinite(value):
        return str(value)
    return units.fmt_count(value)


def _fmt_percent(value: float) -> str:
    return f"{100 * value:.1f} %" if math.isfinite(value) else str(value)


def _fmt_number(value: Any) -> str:
    if isinstance(value, bool) or not isinstance(value, int | float):
        return str(value)
    if isinstance(value, int):
        return f"{value:,}"
    if not math.isfinite(value):
        return str(value)
    return f"{value:,.0f}" if abs(value) >= 1e4 else f"{value:,.4g}"


def _fmt_intensity(value: float) -> str:
    return f"{value:,.3g} FLOP/byte" if math.isfinite(value) else str(value)


def _fmt_energy(joules: float) -> str:
    return _fmt_number(joules / units.KWH) + " kWh" if math.isfinite(joules) else str(joules)


def _fmt_usd_per_hour(value: float) -> str:
    return units.fmt_usd(value) + "/h"


#: Formatter per unit kind. A result field's kind comes from ``_formats`` or its name's suffix.
FORMATTERS: Mapping[str, Callable[[Any], str]] = {
    "bytes": _fmt_bytes,
    "bandwidth": units.fmt_bandwidth,
    "flops": units.fmt_flops,
    "flop_rate": units.fmt_flop_rate,
    "seconds": units.fmt_seconds,
    "watts": units.fmt_watts,
    "usd": units.fmt_usd,
    "usd_per_hour": _fmt_usd_per_hour,
    "count": _fmt_count,
    "percent": _fmt_percent,
    "intensity": _fmt_intensity,
    "joules": _fmt_energy,
    "number": _fmt_number,
    "text": str,
}

# Longest suffix first: "_bytes_per_s" must win over "_per_s" and "_bytes".
_SUFFIXES: tuple[tuple[str, str], ...] = (
    ("_bytes_per_s", "bandwidth"),
    ("_flop_per_s", "flop_rate"),
    ("_flops_per_s", "flop_rate"),
    ("_usd_per_hour", "usd_per_hour"),
    ("_flop_per_byte", "intensity"),
    ("_bytes", "bytes"),
    ("_flops", "flops"),
    ("_seconds", "seconds"),
    ("_watts", "watts"),
    ("_usd", "usd"),
    ("_joules", "joules"),
    ("_fraction", "percent"),
    ("_efficiency", "percent"),
    ("_params", "count"),
    ("_tokens", "count"),
)


def unit_kind(field_name: str) -> str:
    """The unit kind a field name implies: ``"weights_bytes"`` -> ``"bytes"``; else ``"number"``."""
    for suffix, kind in _SUFFIXES:
        if field_name.endswith(suffix) or field_name == suffix[1:]:
            return kind
    return "number"


# Suffixes that only name a unit, so the table's label can drop them ("weights_bytes" -> "weights").
_UNIT_ONLY = {
    "bandwidth",
    "flop_rate",
    "usd_per_hour",
    "intensity",
    "bytes",
    "flops",
    "seconds",
    "watts",
    "usd",
    "joules",
}


def _label(field_name: str, kind: str) -> str:
    for suffix, k in _SUFFIXES:
        if (
            k == kind
            and k in _UNIT_ONLY
            and field_name.endswith(suffix)
            and len(field_name) > len(suffix)
        ):
            field_name = field_name[: -len(suffix)]
            break
    return field_name.replace("_", " ")


class Report:
    """Mixin for frozen dataclasses: ``str()`` is a text table, ``_repr_html_`` an HTML one.

    Subclasses may set ``_title`` (the table's heading) and ``_formats`` (field -> unit kind in
    :data:`FORMATTERS`) where a field's name does not imply its unit. Fields declared with
    ``field(repr=False)`` are left out of the table.
    """

    _title: ClassVar[str] = ""
    _formats: ClassVar[Mapping[str, str]] = {}

    def rows(self) -> list[tuple[str, str]]:
        """(label, formatted value) for each shown field, in declaration order."""
        out = []
        for f in dataclasses.fields(self):  # type: ignore[arg-type]
            if not f.repr:
                continue
            kind = self._formats.get(f.name) or unit_kind(f.name)
            value = getattr(self, f.name)
            if isinstance(value, str) or value is None:
                text = str(value)
            else:
                text = FORMATTERS[kind](value)
            out.append((_label(f.name, kind), text))
        return out

    def title(self) -> str:
        return self._title or type(self).__name__

    def __str__(self) -> str:
        rows = self.rows()
        width = max((len(label) for label, _ in rows), default=0)
        lines = [self.title()]
        lines += [f"  {label:<{width}}  {text}" for label, text in rows]
        return "\n".join(lines)

    def _repr_html_(self) -> str:
        body = "".join(
            f"<tr><td style='text-align:left'>{html.escape(label)}</td>"
            f"<td style='text-align:right'>{html.escape(text)}</td></tr>"
            for label, text in self.rows()
        )
        return (
            f"<table><caption style='text-align:left'><b>{html.escape(self.title())}</b>"
            f"</caption>{body}</table>"
        )


__all__ = ["FORMATTERS", "Report", "unit_kind"]
