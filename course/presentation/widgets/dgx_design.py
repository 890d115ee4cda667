"""The DGX design calculator of lesson 08 (practice question 8): change the inputs, see it move.

``dgx_design_calculator()`` returns a :class:`course.presentation.widgets.base.Calculator` over
:func:`course.calculators.cluster.dgx_design`: a model, a token budget, a deadline in days, the DGX
system, the compute dtype, the MFU you expect, activation recomputation, systems per rack,
electricity price, PUE and (optionally) a price per system. The output is a one-paragraph
summary (GPUs, systems, SUs, switches, racks, power, days, energy and cost) and the calculator's
full table. A bad value shows the calculator's message in red.
"""

from __future__ import annotations

import html
from typing import Any

from course.calculators import cluster, facility, memory
from course.claims import ai_infrastructure
from course.facts import hardware, units
from course.facts.data.cloud_instances import PURCHASE_USD_PER_GPU_AS_WRITTEN
from course.facts.models import PRESETS
from course.presentation.widgets.base import (
    Calculator,
    dropdown,
    parse_number,
    parse_whole,
    text_box,
)
from course.presentation.widgets.mig_explorer import DECODERS

#: Compute dtypes offered, where the system's GPU has them.
DTYPES = ("bf16", "fp16", "fp8", "tf32")


def system_price_as_written(system: str) -> str:
    """The price box's text for ``system``: *AI Infrastructure*'s purchase price of its GPUs
    (:func:`course.claims.ai_infrastructure.purchase_usd_as_written`), "0" where it gives none."""
    card = hardware.SYSTEMS[system]
    if card.gpu not in PURCHASE_USD_PER_GPU_AS_WRITTEN:
        return "0"
    return f"{ai_infrastructure.purchase_usd_as_written(card.gpu, card.gpus):.0f}"


def design(v: dict[str, Any]) -> cluster.DgxDesign:
    """The calculator's result for the widget's values ``v`` (errors name the on-screen labels)."""
    return cluster.dgx_design(
        PRESETS[v["model"]],
        tokens=parse_number(
            "training tokens", v["tokens"], minimum=0, maximum=1e15, strict_min=True
        ),
        days=parse_number("deadline (days)", v["days"], minimum=0, maximum=36_500, strict_min=True),
        system=v["system"],
        dtype=v["dtype"],
        mfu=parse_number("MFU", v["mfu"], minimum=0.001, maximum=1),
        recompute=v["recompute"],
        systems_per_rack=parse_whole(
            "systems per rack", v["systems_per_rack"], minimum=1, maximum=64
        ),
        usd_per_kwh=parse_number("electricity ($/kWh)", v["usd_per_kwh"], minimum=0, maximum=1e3),
        pue=parse_number("PUE", v["pue"], minimum=1, maximum=10),
        usd_per_system=parse_number(
            "price per system ($)", v["usd_per_system"], minimum=0, maximum=1e12
        ),
    )


def _design_html(d: cluster.DgxDesign, _v: dict[str, Any]) -> str:
    summary = (
        f"<p><b>{d.gpus:,} GPUs</b> in <b>{d.systems:,} {html.escape(d.system)}</b> "
        f"({d.sus} SU of 32; layout {d.tensor_parallel} tensor x {d.pipeline_parallel} pipeline "
        f"x {d.data_parallel} data), {d.leaf_switches} leaf + {d.spine_switches} spine + "
        f"{d.core_switches} core switches, <b>{d.racks} racks</b>. "
        f"Training takes <b>{d.training_seconds / units.DAY:,.1f} days</b> at "
        f"{d.mfu:.0%} MFU, drawing {units.fmt_watts(d.facility_power_watts)} at the facility; "
        f"energy {d.energy_joules / units.KWH:,.0f} kWh = {units.fmt_usd(d.electricity_usd)}"
        + (f"; systems {units.fmt_usd(d.hardware_usd)}" if d.hardware_usd else "")
        + ".</p>"
    )
    return summary + d._repr_html_()


def _dtypes(system: str) -> list[str]:
    """The compute dtypes the system's GPU has a dense peak for (no fp8 on an A100)."""
    card = hardware.gpu(hardware.SYSTEMS[system].gpu)
    return [d for d in DTYPES if d in card.dense_flop_per_s]


def dgx_design_calculator(
    model: str = "gpt-3-175b",
    tokens: str = "300e9",
    days: str = "30",
    system: str = "dgx-h100",
    dtype: str = "bf16",
    mfu: str = "0.4",
    recompute: str = "selective",
    systems_per_rack: int = 4,
    usd_per_kwh: str = "0.10",
    pue: str = str(facility.PUE_INDUSTRY_AVERAGE),
    usd_per_system: str | None = None,
) -> Calculator:
    """Design a DGX cluster to train ``model`` on ``tokens`` in ``days``.

    Defaults: *AI Infrastructure*'s question 8 with GPT-3's data (175B parameters, 300B tokens;
    Brown et al. 2020), a 30-day deadline on DGX H100 at 40 % MFU in bf16, $0.10/kWh, the
    industry-average PUE. The price per system starts at *AI Infrastructure*'s purchase price of
    its GPUs (:func:`system_price_as_written`), as lesson 10's worked answer prices it, and follows
    the system while it has not been edited.
    """
    system_box = dropdown("DGX system", [(s.name, k) for k, s in hardware.SYSTEMS.items()], system)
    dtype_box = dropdown(
        "compute dtype", _dtypes(system), dtype if dtype in _dtypes(system) else _dtypes(system)[0]
    )

    def follow_system(change) -> None:  # each system's GPU has its own list of dtypes
        available = _dtypes(change["new"])
        keep = dtype_box.value if dtype_box.value in available else available[0]
        dtype_box.options = available
        dtype_box.value = keep
        if price_box.value == system_price_as_written(change["old"]):  # not edited: follow
            price_box.value = system_price_as_written(change["new"])

    price = system_price_as_written(system) if usd_per_system is None else usd_per_system
    price_box = text_box("price per system ($)", price)
    system_box.observe(follow_system, names="value")
    controls = {
        "model": dropdown("model", DECODERS, model),
        "tokens": text_box("training tokens", tokens),
        "days": text_box("deadline (days)", days),
        "system": system_box,
        "dtype": dtype_box,
        "mfu": text_box("MFU", mfu),
        "recompute": dropdown("activation recomputation", list(memory.RECOMPUTE), recompute),
        "systems_per_rack": text_box("systems per rack", str(systems_per_rack)),
        "usd_per_kwh": text_box("electricity ($/kWh)", usd_per_kwh),
        "pue": text_box("PUE", pue),
        "usd_per_system": price_box,
    }
    return Calculator("Design a DGX cluster", controls, design, render=_design_html)


__all__ = ["DTYPES", "dgx_design_calculator", "design", "system_price_as_written"]
