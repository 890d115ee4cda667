"""Every widget under every input a person can type (issue: "Widgets under any input").

The widgets are discovered from ``course.presentation.widgets`` (every exported builder that returns
a ``Calculator``), and so are their inputs: every text box gets the values below, every menu every
choice, in each workload (toggle) and with each menu choice that enables a greyed-out box. After
each change the widget must show either

- a message in red that names an on-screen label (and no parameter name of the code), or
- a result (``calc.result``, the calculator's own object) that respects every constraint the
  calculator knows: :data:`CONSTRAINTS` below, one function per widget;

never a traceback (the change raises) and never the previous result (the output is reset to a
sentinel before each change). Menus offer only choices that work: each choice gives a result at
the widget's other defaults. Runtime: about 40 s on the 2-core course VM for the grid, plus the
hypothesis test (bounded by ``max_examples``).
"""

from __future__ import annotations

import inspect
import math
import re
from collections.abc import Callable
from dataclasses import fields, is_dataclass
from typing import Any

import ipywidgets
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from course.calculators import cloud, compute
from course.facts import hardware, units
from course.facts.models import PRESETS
from course.presentation import widgets
from course.presentation.widgets.base import Calculator

#: What people type: zero, negatives, infinities, not-a-number, overflow, underflow, empty, words,
#: a huge integer, a fraction where a whole number is wanted, a large exponent, separators.
TYPED = [
    "0",
    "-1",
    "inf",
    "-inf",
    "nan",
    "1e308",
    "1e-300",
    "",
    "abc",
    "9" * 400,
    "2.5",
    "1e20",
    "1,000",
    " 7 ",
    "-0",
    "1e-9",
    "0.999",
    "12345678901234567890",
]
SENTINEL = "<p>stale sentinel</p>"
#: A name from the code (``usd_per_hour``, ``seq_len``) in a message the learner reads.
CODE_NAME = re.compile(r"\b[a-z][a-z0-9]*_[a-z0-9_]+\b")
#: Calculator parameter names that are plain words but not on-screen labels.
BARE_NAMES = ("seconds", "sus", "gpus", "tokens", "config", "efficiency", "utilisation")


def _builders() -> dict[str, Callable[[], Calculator]]:
    found = {}
    for name in widgets.__all__:
        obj = getattr(widgets, name)
        if inspect.isfunction(obj) and inspect.signature(obj).return_annotation in (
            Calculator,
            "Calculator",
        ):
            found[name] = obj
    return found


BUILDERS = _builders()


def _options(control) -> list:
    return [o[1] if isinstance(o, tuple) else o for o in control.options]


def _is_menu(control) -> bool:
    return isinstance(control, ipywidgets.widgets.widget_selection._Selection)


def _contexts(builder) -> list[dict[str, Any]]:
    """Settings of the menus under which each greyed-out box becomes active (plus the defaults)."""
    calc = builder()
    contexts: list[dict[str, Any]] = [{}]
    for name, control in calc.controls.items():
        if not isinstance(control, ipywidgets.ToggleButtons):
            continue
        contexts += [{name: o} for o in _options(control) if o != control.value]
    disabled = {
        n for n, c in calc.controls.items() if isinstance(c, ipywidgets.Text) and c.disabled
    }
    for name, control in calc.controls.items():
        if not _is_menu(control) or isinstance(control, ipywidgets.ToggleButtons):
            continue
        for option in _options(control):
            probe = builder()
            probe.controls[name].value = option
            enabled = {n for n in disabled if not probe.controls[n].disabled}
            if enabled:
                contexts.append({name: option})
                disabled -= enabled
    return contexts


def _cases():
    for wname, builder in BUILDERS.items():
        for context in _contexts(builder):
            calc = builder()
            for key, value in context.items():
                calc.controls[key].value = value
            for name, control in calc.controls.items():
                if name in context or control.disabled:
                    continue
                if isinstance(control, ipywidgets.Text):
                    values = TYPED
                elif _is_menu(control):
                    values = _options(control)
                else:
                    continue
                tag = ",".join(f"{k}={v}" for k, v in context.items())
                yield pytest.param(wname, context, name, values, id=f"{wname}[{tag}].{name}")


def _set(calc: Calculator, name: str, value) -> None:
    """Change one control as a person would; the output is first replaced by a sentinel."""
    calc.output.value = SENTINEL
    calc.result = SENTINEL
    control = calc.controls[name]
    if control.value == value:
        calc.update()
    else:
        control.value = value


def _labels(calc: Calculator) -> list[str]:
    return [c.description for c in calc.controls.values() if getattr(c, "description", "")]


def check_message(calc: Calculator, where: str) -> None:
    message = calc.error
    assert message, where
    assert any(label in message for label in _labels(calc)), (
        f"{where}: no on-screen label: {message}"
    )
    shown = CODE_NAME.findall(
        re.sub(r"[,;] got .*", "", message, flags=re.S)
    )  # the input echoed back is the user's
    assert not shown, f"{where}: names {shown} from the code: {message}"
    if not any(message.startswith(label) for label in _labels(calc)):
        first = message.split(" ", 1)[0]
        assert first not in BARE_NAMES, f"{where}: starts with a parameter name: {message}"
    assert "Traceback" not in calc.output.value


def _finite_fields(result, where: str, allow_inf: tuple[str, ...] = ()) -> None:
    for f in fields(result):
        value = getattr(result, f.name)
        if isinstance(value, float) and f.name not in allow_inf:
            assert math.isfinite(value), f"{where}: {f.name} = {value}"


# ----------------------------------------------------------------- constraints, one per widget


def _roofline(calc: Calculator, where: str) -> None:
    r, v = calc.result, calc.values()
    _finite_fields(r, where, allow_inf=("intensity_flop_per_byte",))  # no bytes: infinite
    assert r.seconds >= max(r.compute_seconds, r.memory_seconds) * (1 - 1e-12), where
    peak = hardware.gpu(v["gpu"]).peak_flop_per_s(v["dtype"])
    assert r.attainable_flop_per_s <= peak * (1 + 1e-9), where


def _decode(calc: Calculator, where: str) -> None:
    r = calc.result
    _finite_fields(r, where)
    assert r.step_seconds > 0 and r.tokens_per_s > 0, where


def _fit(calc: Calculator, where: str) -> None:
    a = calc.result
    _finite_fields(a.report, where)
    config = PRESETS.get(calc.values()["model"])
    if config is not None:
        assert a.seq_len <= config.max_positions, f"{where}: beyond the context window"
    assert math.isclose(sum(a.parts.values()), a.report.total_bytes, rel_tol=1e-9), where
    card = hardware.gpu(calc.values()["gpu"])
    usable = a.gpus_needed * card.memory_bytes * a.usable_fraction
    assert a.report.total_bytes <= usable * (1 + 1e-9), f"{where}: {a.gpus_needed} GPUs too few"
    assert a.fits == (a.gpus_needed <= a.gpus_have), where


def _cost(calc: Calculator, where: str) -> None:
    r = calc.result
    _finite_fields(r, where)
    if calc.values()["mode"] == "inference":
        s = r.serving
        card = hardware.gpu(calc.values()["gpu"])
        held = s.weights_bytes + s.kv_cache_bytes
        assert held <= s.gpus_per_replica * card.memory_bytes * 0.9 * (1 + 1e-9), (
            f"{where}: {s.gpus_per_replica} GPUs cannot hold {units.fmt_bytes(held)}"
        )
        config = PRESETS[calc.values()["model"]]
        assert s.context_tokens <= config.max_positions, f"{where}: beyond the context window"


def _layout(calc: Calculator, where: str) -> None:
    r, v = calc.result, calc.values()
    _finite_fields(r, where)
    whole = {
        k: int(float(str(v[k]).replace(",", "")))
        for k in (
            "gpus_per_node",
            "nodes",
            "data_parallel",
            "tensor_parallel",
            "pipeline_parallel",
            "seq_len",
        )
    }
    assert r.n_gpus == whole["gpus_per_node"] * whole["nodes"], where
    assert whole["data_parallel"] * whole["tensor_parallel"] * whole["pipeline_parallel"] == (
        r.n_gpus
    ), where
    assert whole["tensor_parallel"] <= whole["gpus_per_node"], where
    assert PRESETS[v["model"]].heads % whole["tensor_parallel"] == 0, where
    assert (r.fits == "yes") == (r.memory_per_gpu_bytes <= r.gpu_memory_bytes), where
    assert whole["seq_len"] <= PRESETS[v["model"]].max_positions, f"{where}: beyond the window"
    assert r.step_seconds < 1e6 * units.YEAR, f"{where}: a step of {r.step_seconds} s"


def _mig(calc: Calculator, where: str) -> None:
    a = calc.result
    assert a.layout.memory_slices_used <= 8 and a.layout.compute_slices_used <= 7, where
    table = {p.name: p for p in hardware.mig_profiles(calc.values()["gpu"])}
    for placed in a.holding:
        assert table[placed.split("@")[0]].memory_bytes >= a.fit.needed_bytes, where
    config = PRESETS[calc.values()["model"]]
    assert a.seq_len <= config.max_positions, f"{where}: beyond the context window"


def _dgx(calc: Calculator, where: str) -> None:
    d = calc.result
    assert d.gpus == d.tensor_parallel * d.pipeline_parallel * d.data_parallel, where
    per_system = hardware.SYSTEMS[calc.values()["system"]].gpus
    assert d.systems * per_system >= d.gpus, where
    assert d.racks * int(float(calc.values()["systems_per_rack"].replace(",", ""))) >= d.systems, (
        where
    )
    assert d.sus * 32 >= d.systems, where
    days = float(calc.values()["days"].replace(",", ""))
    assert d.training_seconds <= days * units.DAY * (1 + 1e-9), f"{where}: misses the deadline"


def _buy_vs_rent(calc: Calculator, where: str) -> None:
    r, rented = calc.result.tco, calc.result.rented
    totals = {option: sum(parts.values()) for option, parts in r.components().items()}
    cheapest = "own" if r.cheapest == "buy" else r.cheapest  # components() says "own"
    assert totals[cheapest] == min(totals.values()), where
    assert rented.gpus_rented >= rented.gpus_owned, f"{where}: rents fewer GPUs than it owns"
    assert rented.gpus_rented - rented.gpus_owned < cloud.instance(calc.values()["instance"]).gpus
    assert rented.on_demand_usd_per_hour is not None, f"{where}: no recorded price"


def _techniques(calc: Calculator, where: str) -> None:
    assert calc.result.rows, f"{where}: no technique listed"


def _occupancy(calc: Calculator, where: str) -> None:
    """Resident warps within the SM's limit, blocks the minimum of the four limits."""
    r = calc.result
    assert 0 < r.resident_warps <= r.max_warps, where
    assert r.resident_blocks == min(
        r.blocks_limit_by_blocks,
        r.blocks_limit_by_warps,
        r.blocks_limit_by_registers,
        r.blocks_limit_by_smem,
    ), where
    assert r.occupancy_fraction == r.resident_warps / r.max_warps, where


def _pod_power(calc: Calculator, where: str) -> None:
    """Both readings: the size as GPUs (rounded up to whole systems) and as systems; cost from
    the facility's average draw over a year."""
    r = calc.result
    per_system = hardware.SYSTEMS[calc.values()["system"]].gpus
    assert r.as_systems.systems == r.pod_size, where
    assert r.as_gpus.gpus >= r.pod_size > r.as_gpus.gpus - per_system, where
    for e in (r.as_gpus, r.as_systems):
        _finite_fields(e, where)
        assert e.facility_power_watts >= 0 and e.cost_per_year_usd >= 0, where
        assert e.energy_per_year_joules == e.facility_power_watts * units.YEAR, where


def _cores(calc: Calculator, where: str) -> None:
    """Tensor Cores never slower than CUDA cores; both floors at least FLOPs / peak."""
    r = calc.result
    assert r.precision in compute.precisions_on(calc.values()["gpu"]), where
    assert r.cuda_core_seconds >= r.matmul_flops / r.cuda_core_flop_per_s * (1 - 1e-12), where
    if r.tensor_core_seconds is not None:
        assert r.tensor_core_seconds <= r.cuda_core_seconds * (1 + 1e-12), where
        assert r.tensor_over_cuda >= 1, where


def _gpu_choice(calc: Calculator, where: str) -> None:
    """Each side's cost is its GPU-hours at its price; the cheaper one is the pick."""
    r = calc.result
    _finite_fields(r, where)
    assert r.gpus_a >= 1 and r.gpus_b >= 1, where
    assert r.seconds_a > 0 and r.seconds_b > 0, where
    cheaper = r.gpu_a if r.cost_a_usd <= r.cost_b_usd else r.gpu_b
    if not math.isclose(r.cost_a_usd, r.cost_b_usd, rel_tol=1e-9):
        assert r.pick == cheaper, where
    assert (r.price_ratio < r.breakeven_price_ratio) == (r.cost_b_usd < r.cost_a_usd) or (
        math.isclose(r.price_ratio, r.breakeven_price_ratio, rel_tol=1e-9)
    ), where


def _grace_hopper(calc: Calculator, where: str) -> None:
    """Every byte is in HBM or streamed; a step is no faster than either read."""
    for s in calc.result.steps:
        _finite_fields(s, where)
        assert s.offloaded_bytes >= 0, where
        assert s.needed_bytes - s.offloaded_bytes <= s.gpu_usable_bytes * (1 + 1e-9), where
        assert s.step_seconds >= max(s.gpu_read_seconds, s.link_seconds), where
    config = PRESETS[calc.values()["model"]]
    seq_len = int(float(str(calc.values()["seq_len"]).replace(",", "")))
    assert seq_len <= config.max_positions, f"{where}: beyond the context window"


def _cpu_or_gpu(calc: Calculator, where: str) -> None:
    """Times positive; the faster is the quicker; the crossover, if any, a power of two where the
    second device is quicker."""
    r = calc.result
    _finite_fields(r, where)
    assert r.seconds_a > 0 and r.seconds_b > 0, where
    assert r.faster == (r.device_a if r.seconds_a <= r.seconds_b else r.device_b), where
    if r.crossover_size is not None:
        assert r.crossover_size & (r.crossover_size - 1) == 0, where


CONSTRAINTS: dict[str, Callable[[Calculator, str], None]] = {
    "cpu_or_gpu": _cpu_or_gpu,
    "pod_power_calculator": _pod_power,
    "tensor_vs_cuda_cores": _cores,
    "a100_or_h100": _gpu_choice,
    "grace_hopper_calculator": _grace_hopper,
    "roofline_explorer": _roofline,
    "decode_speed_calculator": _decode,
    "will_it_fit": _fit,
    "how_long_and_how_much": _cost,
    "layout_chooser": _layout,
    "mig_explorer": _mig,
    "dgx_design_calculator": _dgx,
    "buy_vs_rent_calculator": _buy_vs_rent,
    "technique_table": _techniques,
    "occupancy_calculator": _occupancy,
}


def check(calc: Calculator, wname: str, where: str) -> None:
    """A message naming a label, or a result within every constraint; never stale."""
    assert calc.output.value != SENTINEL and calc.result is not SENTINEL, f"{where}: stale"
    if calc.error is not None:
        assert calc.result is None, f"{where}: an error with a result kept"
        check_message(calc, where)
        return
    assert calc.result is not None, where
    if is_dataclass(calc.result):
        assert "nan" not in str(calc.result).lower().replace("nano", ""), where
    for number in re.findall(r"[\d,.]{25,}", calc.output.value):  # no 300-digit "years"
        raise AssertionError(f"{where}: unreadable number {number[:40]}...")
    CONSTRAINTS[wname](calc, where)


def test_every_widget_is_discovered_and_has_constraints():
    assert set(BUILDERS) == set(CONSTRAINTS)
    assert len(BUILDERS) >= 9


@pytest.mark.parametrize("wname", list(BUILDERS))
def test_defaults_give_a_result(wname):
    calc = BUILDERS[wname]()
    assert calc.error is None, calc.error
    check(calc, wname, f"{wname} defaults")


def _restore(calc: Calculator, baseline: dict[str, Any], first: str) -> None:
    """Put every control back to ``baseline`` (the changed one first: menus adapt others)."""
    for key in [first, *baseline]:
        control = calc.controls[key]
        if control.value != baseline[key]:
            control.value = baseline[key]


@pytest.mark.parametrize("wname,context,name,values", list(_cases()))
def test_every_input(wname, context, name, values):
    calc = BUILDERS[wname]()
    for key, setting in context.items():
        calc.controls[key].value = setting
    baseline = calc.values()
    menu = _is_menu(calc.controls[name])
    for value in values:
        _restore(calc, baseline, name)
        where = f"{wname}{context}.{name}={str(value)[:24]!r}"
        _set(calc, name, value)  # a traceback here fails the test
        check(calc, wname, where)
        if menu:  # menus offer only choices that work
            assert calc.error is None, f"{where}: menu choice fails: {calc.error}"


def _menu_pairs():
    for wname, builder in BUILDERS.items():
        calc = builder()
        menus = [n for n, c in calc.controls.items() if _is_menu(c)]
        for first in menus:
            for second in menus:
                if first != second:
                    yield pytest.param(wname, first, second, id=f"{wname}.{first}>{second}")


@pytest.mark.parametrize("wname,first,second", list(_menu_pairs()))
def test_every_pair_of_menu_choices_works(wname, first, second):
    """Choose one menu, then another (A100 after fp8, gpt2 after TP 8): still a result."""
    calc = BUILDERS[wname]()
    baseline = calc.values()
    for a in _options(calc.controls[first]):
        _restore(calc, baseline, first)
        calc.controls[first].value = a
        for b in _options(calc.controls[second]):
            where = f"{wname}.{first}={a}, then {second}={b}"
            _set(calc, second, b)
            check(calc, wname, where)
            assert calc.error is None, f"{where}: {calc.error}"


def test_text_boxes_are_wide_enough_for_their_defaults():
    for wname, builder in BUILDERS.items():
        for name, control in builder().controls.items():
            if isinstance(control, ipywidgets.Text) and len(control.value) > 8:
                width = control.layout.width or ""
                assert width.endswith("em") and float(width[:-2]) >= len(control.value), (
                    f"{wname}.{name}: {control.value!r} in a box of width {width!r}"
                )


def test_bad_input_after_a_good_one_never_keeps_the_old_result():
    for wname, builder in BUILDERS.items():
        calc = builder()
        for name, control in calc.controls.items():
            if isinstance(control, ipywidgets.Text) and not control.disabled:
                good = calc.output.value
                control.value = "nan"
                assert calc.output.value != good and calc.result is None, f"{wname}.{name}"
                assert calc.error is not None, f"{wname}.{name}: nan accepted"
                break


_typed = st.one_of(
    st.sampled_from(TYPED),
    st.floats(allow_nan=True, allow_infinity=True).map(repr),
    st.integers(min_value=-(10**30), max_value=10**30).map(str),
    st.text(max_size=12),
)


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(data=st.data())
def test_random_values_in_random_boxes(data):
    """Several boxes changed at once, in any widget: still a message or a valid result."""
    wname = data.draw(st.sampled_from(sorted(BUILDERS)))
    calc = BUILDERS[wname]()
    boxes = [n for n, c in calc.controls.items() if isinstance(c, ipywidgets.Text)]
    menus = [n for n, c in calc.controls.items() if _is_menu(c)]
    for name in data.draw(st.lists(st.sampled_from(menus), max_size=2)) if menus else []:
        calc.controls[name].value = data.draw(st.sampled_from(_options(calc.controls[name])))
    for name in data.draw(st.lists(st.sampled_from(boxes), min_size=1, max_size=3)):
        value = data.draw(_typed)
        _set(calc, name, value)
        check(calc, wname, f"{wname}.{name}={value!r}")


# ----------------------------------------------------------------- parsing and messages


def test_parse_number_accepts_what_people_type():
    assert widgets.parse_number("x", " 2,000 ") == 2000.0
    assert widgets.parse_number("x", "1.5e12") == 1.5e12
    with pytest.raises(ValueError, match="x must be a number"):
        widgets.parse_number("x", "two")


def test_widget_errors_use_the_on_screen_label_and_formatted_numbers():
    calc = widgets.roofline_explorer()
    calc.controls["bytes_moved"].value = "-5000000"
    assert calc.error.startswith(calc.controls["bytes_moved"].description + " must be")
    assert "-5,000,000" in calc.error and "-5000000" not in calc.error.replace("'", "")


def test_friendly_message_relabels_only_a_leading_parameter_name():
    labels = {"seq_len": "sequence length (tokens)", "batch": "batch size"}
    assert (
        widgets.friendly_message("seq_len must be <= 4096, got 100000", labels)
        == "sequence length (tokens) must be <= 4,096, got 100,000"
    )
    assert widgets.friendly_message("the batch is 1000", labels) == "the batch is 1,000"
    assert widgets.friendly_message("x must be like 2e12 on fp16, got '2.5'", labels) == (
        "x must be like 2e12 on fp16, got '2.5'"
    )
    assert widgets.friendly_message("n in 1..100,000", labels) == "n in 1..100,000"
    # a message that already names a control by its label is left alone, even if a key prefixes it
    both = {"spot": "spot $/h", "spot_overhead": "spot overhead %"}
    message = "spot overhead % must be >= 0, got -5"
    assert widgets.friendly_message(message, both) == message
    assert widgets.friendly_message("spot must be > 0", both) == "spot $/h must be > 0"
