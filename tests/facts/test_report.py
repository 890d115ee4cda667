"""Results that print themselves (course.facts.report): the unit read from a name, Report, Table."""

import importlib
import pkgutil
import typing
from dataclasses import dataclass

import pytest

import course
from course.facts import report, units
from course.facts.report import Table


@pytest.mark.parametrize(
    ("name", "kind"),
    [
        ("weights_bytes", "bytes"),
        ("read_bytes_per_s", "bandwidth"),  # the longest suffix wins over "_bytes" and "_per_s"
        ("flop_per_s", "flop_rate"),  # a column named by its unit alone
        ("step_seconds", "seconds"),
        ("price_usd_per_hour", "usd_per_hour"),
        ("arithmetic_flop_per_byte", "intensity"),
        ("mfu_fraction", "percent"),
        ("boost_clock_hz", "hertz"),
        ("tensor_over_fp32_ratio", "ratio"),
        ("gpus", "number"),
    ],
)
def test_unit_kind_reads_the_unit_from_the_name(name, kind):
    assert report.unit_kind(name) == kind


def test_table_formats_each_cell_by_its_column_and_keeps_si_numbers():
    rows = [
        {"gpus": 8, "step_seconds": 0.0123, "weights_bytes": 2 * units.GiB, "note": "a"},
        {"gpus": 16, "step_seconds": 2.5, "weights_bytes": 512 * units.MiB, "note": None},
    ]
    table = Table(rows, title="Two layouts")
    assert table == rows and table[1]["gpus"] == 16  # still the list of rows it was given
    assert table.columns == ["gpus", "step_seconds", "weights_bytes", "note"]
    assert table.text_rows() == [
        ["8", units.fmt_seconds(0.0123), "2.15 GB (2.0 GiB)", "a"],
        ["16", units.fmt_seconds(2.5), "536.9 MB (512.0 MiB)", "-"],
    ]
    text = str(table).splitlines()
    assert text[0] == "Two layouts" and "step seconds" in text[1]
    assert "<caption" in table._repr_html_() and "12.3 ms" in table._repr_html_()


def test_clock_rates_print_in_ghz_or_mhz():
    table = Table([{"boost_clock_hz": 1.98e9, "memory_clock_hz": 1.593e9 / 2}])
    assert table.text_rows() == [["1.98 GHz", "796 MHz"]]


def test_table_columns_pick_the_order_and_formats_override_the_name():
    table = Table([{"a": 0.25, "b": 1}], columns=("b", "a"), formats={"a": "percent"})
    assert table.text_rows() == [["1", "25.0 %"]]
    small = Table([{"trainable_fraction": 0.0059}, {"trainable_fraction": 0.25}])
    assert small.text_rows() == [["0.59 %"], ["25.0 %"]]  # a small share keeps its digits
    threads = Table([{"threads": None}, {"threads": 2}], missing={"threads": "default"})
    assert threads.text_rows() == [["default"], ["2"]]
    assert threads.where(threads=None).text_rows() == [["default"]]


def test_table_reads_dataclass_records_and_filters_them():
    @dataclass(frozen=True)
    class Rec:
        library: str
        seconds: float

    table = Table([Rec("numpy", 1e-3), Rec("torch", 2e-3)], note="medians")
    assert table.columns == ["library", "seconds"]
    assert table.where(library="torch") == [Rec("torch", 2e-3)]
    assert str(table).endswith("medians")


def test_a_table_of_report_records_formats_their_cells_as_the_records_do():
    """A record that prints itself with ``_formats`` prints its row the same way in a Table;
    the Table's own ``formats`` still win."""

    @dataclass(frozen=True)
    class Share(report.Report):
        _formats = {"accepted": "percent"}
        accepted: float
        tokens: float

    row = Share(0.7, 2.0)
    assert ("accepted", "70.0 %") in [(label.split()[0], text) for label, text in row.rows()]
    assert Table([row]).text_rows() == [["70.0 %", "2"]]
    assert Table([row], formats={"accepted": "number"}).text_rows() == [["0.7", "2"]]


def test_table_to_pandas_holds_the_unformatted_numbers():
    pytest.importorskip("pandas")
    frame = Table([{"gpus": 8, "step_seconds": 0.5}]).to_pandas()
    assert list(frame.columns) == ["gpus", "step_seconds"]
    assert frame.loc[0, "step_seconds"] == 0.5


def test_table_cells_keep_a_datasheets_significant_digits():
    # NVIDIA H100 datasheet (2023) and whitepaper (2022), SXM: 80 GiB HBM3 at 3.35 TB/s, 989.4
    # TFLOP/s dense bf16, 700 W; A100 80GB datasheet (2021): 2,039 GB/s; H200 datasheet: 4.8 TB/s.
    from course.facts.hardware import gpus

    rows = [
        {
            "gpu": g.name,
            "memory_bytes": g.memory_bytes,
            "memory_bytes_per_s": g.memory_bandwidth_bytes_per_s,
            "bf16_flop_per_s": g.dense_flop_per_s["bf16"],
            "tdp_watts": g.tdp_watts,
        }
        for g in map(gpus.gpu, ("h100-sxm", "a100-80gb-sxm", "h200-sxm"))
    ]
    cells = Table(rows).text_rows()
    assert cells[0][2:] == ["3.35 TB/s", "989.4 TFLOP/s", "700.0 W"]
    assert cells[0][1] == "85.9 GB (80.0 GiB)"  # 80 GiB: the decimal view keeps three figures
    assert cells[1][2:4] == ["2.039 TB/s", "312.0 TFLOP/s"]
    assert cells[2][2] == "4.8 TB/s"


def _report_classes() -> list[type]:
    """Every Report subclass the course defines (its modules imported)."""
    for info in pkgutil.walk_packages(course.__path__, "course."):
        importlib.import_module(info.name)
    found, todo = [], [report.Report]
    while todo:
        for sub in todo.pop().__subclasses__():
            if sub.__module__.startswith("course."):
                found.append(sub)
            todo.append(sub)
    return found


def test_every_format_override_changes_what_prints():
    """``_formats`` names only fields whose name alone would print them otherwise: not the kind
    the name's suffix already gives, not "text" for a ``str`` field (printed as itself anyway)."""
    noop = [
        f"{cls.__module__}.{cls.__name__}.{name}: {kind}"
        for cls in _report_classes()
        for name, kind in cls.__dict__.get("_formats", {}).items()
        if kind == report.unit_kind(name)
        or (kind == "text" and typing.get_type_hints(cls).get(name) is str)
    ]
    assert not noop, f"format overrides that restate the default (delete them): {noop}"
