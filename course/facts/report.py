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
guess where a name does not say it.

A function that returns several rows returns a :class:`Table`: a list of rows (dicts or
dataclasses) that shows itself the same way, one column per field, each cell formatted by the unit
its column's name ends in, and hands itself to pandas with ``to_pandas()``.
"""

from __future__ import annotations

import dataclasses
import html
import math
import re
from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import Any, ClassVar

from course.facts import units


def _fmt_bytes(value: float, digits: int | None = 1) -> str:
    dec = units.fmt_bytes(value, digits=digits)
    if not math.isfinite(value) or abs(value) < units.KiB:
        return dec
    return f"{dec} ({units.fmt_bytes(value, binary=True, digits=digits)})"


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


def _fmt_hertz(value: float) -> str:
    if not math.isfinite(value):
        return str(value)
    return f"{value / 1e9:,.2f} GHz" if abs(value) >= 1e9 else f"{value / 1e6:,.0f} MHz"


def _fmt_ratio(value: float) -> str:
    if not math.isfinite(value):
        return str(value)
    return f"{value:,.2f}x" if abs(value) < 10 else f"{value:,.1f}x"


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
    "hertz": _fmt_hertz,
    "ratio": _fmt_ratio,
    "number": _fmt_number,
    "general": lambda v: f"{v:.4g}" if isinstance(v, int | float) else str(v),  # 3.403e+38
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
    ("_hz", "hertz"),
    ("_ratio", "ratio"),
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
    "hertz",
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
        shown = [f.name for f in dataclasses.fields(self) if f.repr]  # type: ignore[arg-type]
        intervals = {interval_column(name) for name in shown} & set(shown)
        for name in shown:
            if name in intervals:  # printed beside its percentile (interval_column)
                continue
            kind = self._formats.get(name) or unit_kind(name)
            value = getattr(self, name)
            if isinstance(value, str) or value is None:
                text = str(value)
            else:
                text = FORMATTERS[kind](value)
            ci = getattr(self, interval_column(name), "") if interval_column(name) else ""
            out.append((_label(name, kind), f"{text} {ci}" if ci else text))
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


def _fmt_percent_cell(value: float) -> str:
    """A share in a table cell: two decimals below 1 % (0.59 %), where one would round it away."""
    if math.isfinite(value) and 0 < abs(value) < 0.01:
        return f"{100 * value:.2f} %"
    return _fmt_percent(value)


#: Formatter per unit kind in a :class:`Table`'s cells, where it differs from :data:`FORMATTERS`.
#: A column of datasheet figures keeps the digits each carries (3.35 TB/s, not 3.4), and a
#: computed one three significant figures (:func:`course.facts.units.significant_decimals`).
CELL_FORMATTERS: Mapping[str, Callable[[Any], str]] = {
    **FORMATTERS,
    "bytes": lambda v: _fmt_bytes(v, digits=None),
    "bandwidth": lambda v: units.fmt_bandwidth(v, digits=None),
    "flops": lambda v: units.fmt_flops(v, digits=None),
    "flop_rate": lambda v: units.fmt_flop_rate(v, digits=None),
    "watts": lambda v: units.fmt_watts(v, digits=None),
    "percent": _fmt_percent_cell,
    "intensity": lambda v: f"{v:,.3g}" if math.isfinite(v) else str(v),
}


#: A sampled percentile's column: ``ttft_p99_seconds``, ``p99_wait_seconds``.
_PERCENTILE = re.compile(r"(^|_)p\d+(\.\d+)?_(.+_)?seconds$")


def _field(row: Any, column: str) -> Any:
    if isinstance(row, Mapping):
        return row.get(column)
    return getattr(row, column, None)


def interval_column(column: str) -> str:
    """The field that holds a sampled percentile's interval: ``ttft_p99_seconds`` ->
    ``ttft_p99_ci``, ``p99_wait_seconds`` -> ``p99_wait_ci`` (its text, ``"[8.0 ms, 9.1 ms]"`` or
    ``"(n too small: 140 < 368)"``); tables and reports print it beside the percentile."""
    return column.removesuffix("_seconds") + "_ci" if _PERCENTILE.search(column) else ""


def _row_columns(row: Any) -> list[str]:
    if isinstance(row, Mapping):
        return list(row)
    if dataclasses.is_dataclass(row):
        return [f.name for f in dataclasses.fields(row) if f.repr]
    return []


class Table(list):
    """Rows that print themselves: a ``list`` of dicts (or dataclass records) shown as a table.

    Each cell is formatted by the unit its column's name ends in (``step_seconds`` -> ``12.3 ms``,
    ``weights_bytes`` -> ``14.0 GB (13.0 GiB)``; :func:`unit_kind`); ``formats`` (column -> unit
    kind) overrides the guess. ``columns`` picks and orders the columns (default: every field of the
    rows, in order of appearance); ``note`` is a line printed under the table; ``missing`` (column
    -> text) says what a ``None`` means in a column (default ``-``). Being a list, a
    table is indexed, iterated and compared as the rows it holds; ``to_pandas()`` is a DataFrame.
    """

    def __init__(
        self,
        rows: Iterable[Any] = (),
        *,
        title: str = "",
        columns: Sequence[str] = (),
        formats: Mapping[str, str] | None = None,
        note: str = "",
        missing: Mapping[str, str] | None = None,
    ):
        super().__init__(rows)
        self.title = title
        self.formats = dict(formats or {})
        self.note = note
        self.missing = dict(missing or {})
        self._chosen = tuple(columns)

    @property
    def columns(self) -> list[str]:
        if self._chosen:
            return list(self._chosen)
        seen: dict[str, None] = {}
        for row in self:
            seen.update(dict.fromkeys(_row_columns(row)))
        return list(seen)

    def _kinds(self) -> dict[str, str]:
        """Column -> unit kind where it is set: the rows' own ``Report._formats``, then
        ``formats``, which wins."""
        inherited: dict[str, str] = {}
        for kind in dict.fromkeys(type(row) for row in self):
            inherited.update(getattr(kind, "_formats", {}))
        return inherited | self.formats

    def _cell(self, column: str, value: Any, kinds: Mapping[str, str]) -> str:
        if value is None:
            return self.missing.get(column, "-")
        if isinstance(value, str | bool) or not isinstance(value, int | float):
            return str(value)
        return CELL_FORMATTERS[kinds.get(column) or unit_kind(column)](value)

    def cell(self, column: str, value: Any) -> str:
        """One cell as text, formatted by the unit its column's name implies (or ``formats``, or
        the rows' own ``_formats`` where they are :class:`Report` records)."""
        return self._cell(column, value, self._kinds())

    def _with_interval(self, row: Any, column: str, kinds: Mapping[str, str], cols) -> str:
        """A cell; a percentile's cell followed by its interval where the row carries one
        (:func:`interval_column`) and no column shows it, so no table prints a measured
        percentile without it."""
        text = self._cell(column, _field(row, column), kinds)
        ci_column = interval_column(column)
        ci = _field(row, ci_column) if ci_column and ci_column not in cols else None
        return f"{text} {ci}" if ci else text

    def text_rows(self) -> list[list[str]]:
        """The formatted cells, one list per row, in :attr:`columns` order; a percentile's cell
        carries its interval where the row holds one."""
        cols, kinds = self.columns, self._kinds()
        return [[self._with_interval(row, c, kinds, cols) for c in cols] for row in self]

    def where(self, **conditions: Any) -> Table:
        """The rows whose fields equal the given values: ``table.where(gpus=8)``."""
        rows = [r for r in self if all(_field(r, k) == v for k, v in conditions.items())]
        return Table(
            rows, title=self.title, columns=self._chosen, formats=self.formats, missing=self.missing
        )

    def to_pandas(self):
        """The rows as a ``pandas.DataFrame`` (SI numbers, unformatted), one column per field."""
        import pandas

        cols = self.columns
        return pandas.DataFrame([[_field(r, c) for c in cols] for r in self], columns=cols)

    def __str__(self) -> str:
        cols = self.columns
        table = [[c.replace("_", " ") for c in cols], *self.text_rows()]
        widths = [max(len(row[i]) for row in table) for i in range(len(cols))]
        lines = [self.title] if self.title else []
        lines += [
            "  ".join(cell.rjust(w) for cell, w in zip(row, widths, strict=True)) for row in table
        ]
        return "\n".join(lines + ([self.note] if self.note else []))

    def __repr__(self) -> str:
        return str(self)

    def _repr_html_(self) -> str:
        head = "".join(f"<th>{html.escape(c.replace('_', ' '))}</th>" for c in self.columns)
        body = "".join(
            "<tr>" + "".join(f"<td>{html.escape(cell)}</td>" for cell in row) + "</tr>"
            for row in self.text_rows()
        )
        caption = (
            f"<caption style='text-align:left'><b>{html.escape(self.title)}</b></caption>"
            if self.title
            else ""
        )
        note = f"<p style='font-size:smaller'>{html.escape(self.note)}</p>" if self.note else ""
        return f"<table>{caption}<tr>{head}</tr>{body}</table>{note}"


__all__ = ["CELL_FORMATTERS", "FORMATTERS", "Report", "Table", "interval_column", "unit_kind"]
