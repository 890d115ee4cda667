"""The buy-vs-rent widget of lesson 09: own a system or rent the same hours in the cloud?

``buy_vs_rent_calculator()`` returns a :class:`course.presentation.widgets.base.Calculator`. Inputs:
the purchase price, the instance rented instead (its recorded on-demand price and the date it was
seen fill the hourly rate, which the learner can overwrite with today's), reserved and spot rates,
the spot overhead (checkpoints and re-done work), lifetime, utilisation, power, electricity price,
PUE, hosting and staff per year. Output: which option is cheapest over the lifetime, break-even
months against each rent option, a bar of each option's cost components, and the calculator's table.

Every number comes from ``course.calculators.cloud.own_vs_rent``; nothing is computed here. The
defaults answer practice question 9 of *AI Infrastructure* (a startup training continuously): a DGX
H100 (10.2 kW, ``course.facts.hardware``) bought at *AI Infrastructure*'s unsourced ~$35,000 per
H100 x 8 against a p5.48xlarge.
"""

from __future__ import annotations

import html
from dataclasses import dataclass
from typing import Any

from course.calculators import cloud
from course.claims import ai_infrastructure
from course.facts import hardware, units
from course.presentation.plots import PALETTE
from course.presentation.widgets.base import (
    Calculator,
    dropdown,
    parse_number,
    parse_optional,
    parse_percent,
    parse_whole,
    text_box,
)

PARTS = ("purchase", "electricity", "hosting", "staff", "rent")


#: Calculator parameter -> the label of its control, so an error names what the learner sees.
LABELS = {
    "purchase_usd": "purchase $",
    "on_demand_usd_per_hour": "on-demand $/h (all rented instances)",
    "reserved_usd_per_hour": "reserved $/h (blank: none)",
    "spot_usd_per_hour": "spot $/h (blank: none)",
    "lifetime_years": "lifetime (years)",
    "power_watts": "power (W)",
    "usd_per_kwh": "electricity $/kWh",
    "pue": "PUE",
    "hosting_usd_per_year": "hosting $/year",
    "staff_usd_per_year": "staff $/year",
    "gpus": "GPUs bought",
}
_RATE = {"minimum": 0, "maximum": 1e6, "strict_min": True}  # cloud.own_vs_rent's limits
_PER_YEAR = {"minimum": 0, "maximum": 1e10}


@dataclass(frozen=True)
class BuyVsRent:
    """The widget's result: the TCO comparison and the rental it compares with."""

    tco: cloud.OwnVsRent
    rented: cloud.RentedMatch


def result(v: dict[str, Any]) -> BuyVsRent:
    """The calculators' result for the widget's values ``v``; errors name the on-screen labels."""
    rented = cloud.rent_to_match(
        v["instance"], parse_whole(LABELS["gpus"], v["gpus"], minimum=1, maximum=100_000)
    )
    tco = cloud.own_vs_rent(
        parse_number(LABELS["purchase_usd"], v["purchase"], minimum=0, maximum=cloud.MAX_USD),
        parse_number(LABELS["on_demand_usd_per_hour"], v["on_demand"], **_RATE),
        reserved_usd_per_hour=parse_optional(
            LABELS["reserved_usd_per_hour"], v["reserved"], **_RATE
        ),
        spot_usd_per_hour=parse_optional(LABELS["spot_usd_per_hour"], v["spot"], **_RATE),
        spot_overhead_fraction=parse_percent(
            "spot overhead %", v["spot_overhead"], allow_zero=True, maximum=1000
        ),
        lifetime_years=parse_number(LABELS["lifetime_years"], v["years"], minimum=0.01, maximum=50),
        utilisation=parse_number(
            "utilisation %", v["utilisation"], minimum=100 * cloud.MIN_UTILISATION, maximum=100
        )
        / 100,
        power_watts=parse_number(LABELS["power_watts"], v["power"], minimum=0, maximum=1e10),
        usd_per_kwh=parse_number(LABELS["usd_per_kwh"], v["usd_per_kwh"], minimum=0, maximum=1e3),
        pue=parse_number(LABELS["pue"], v["pue"], minimum=1, maximum=10),
        hosting_usd_per_year=parse_number(
            LABELS["hosting_usd_per_year"], v["hosting"], **_PER_YEAR
        ),
        staff_usd_per_year=parse_number(LABELS["staff_usd_per_year"], v["staff"], **_PER_YEAR),
    )
    return BuyVsRent(tco, rented)


def _bars_html(r: cloud.OwnVsRent) -> str:
    """One horizontal bar per option, stacked by cost component, on a common scale."""
    options = r.components()
    scale = max(sum(parts.values()) for parts in options.values()) or 1.0
    colours = dict(zip(PARTS, PALETTE, strict=False))
    rows = []
    for option, parts in options.items():
        segments = "".join(
            f'<div title="{option}: {part}" style="width:{100 * value / scale:.2f}%;'
            f'background:{colours[part]};height:18px"></div>'
            for part, value in parts.items()
            if value > 0
        )
        total = units.fmt_usd(sum(parts.values()))
        rows.append(
            f'<div style="display:flex;align-items:center;margin:3px 0">'
            f'<span style="width:90px">{option}</span>'
            f'<div style="display:flex;flex:1;max-width:520px;background:#eee">{segments}</div>'
            f'<span style="margin-left:8px">{total}</span></div>'
        )
    legend = " &nbsp; ".join(f'<span style="color:{colours[p]}">&#9632;</span> {p}' for p in PARTS)
    return "".join(rows) + f'<div style="font-size:90%">{legend}</div>'


def _months(m: float | None) -> str:
    if m is None:
        return "-"
    return "never" if m == float("inf") else f"{m:,.1f} months"


def _html(answer: BuyVsRent, v: dict[str, Any]) -> str:
    r, rented = answer.tco, answer.rented
    inst = cloud.instance(v["instance"])
    head = (
        f"<p>Over {r.lifetime_years:g} years at {100 * r.utilisation:.0f} % utilisation "
        f"({r.hours_used:,.0f} hours used) the cheapest option is <b>{r.cheapest}</b>. "
        f"Owning costs {units.fmt_usd(r.own_per_hour_used_usd)} per hour used.</p>"
        f"<p>Break-even against on-demand: <b>{_months(r.breakeven_months_on_demand)}</b>; "
        f"against reserved: {_months(r.breakeven_months_reserved)}; against spot: "
        f"{_months(r.breakeven_months_spot)}.</p>"
        f"<p><i>Owning {rented.gpus_owned:,} GPUs against renting {rented.instances:,} x "
        f"{html.escape(inst.name)} ({inst.provider}, {inst.gpus} GPU{'s' if inst.gpus > 1 else ''} "
        f"each: {rented.gpus_rented:,} GPUs; on-demand price recorded {html.escape(inst.as_of)}"
        f").</i></p>"
    )
    return head + _bars_html(r) + r._repr_html_()


def _instance_options() -> list[tuple[str, str]]:
    """Instances with a sourced on-demand price (the others have nothing to compare)."""
    return [
        (f"{i.provider} {i.name} ({i.gpus} GPU{'s' if i.gpus > 1 else ''})", key)
        for key, i in cloud.INSTANCES.items()
        if i.usd_per_hour is not None
    ]


def buy_vs_rent_calculator(
    instance: str = "aws-p5.48xlarge",
    purchase: str | None = None,
    years: str = "3",
    utilisation: str = "100",
    power: str | None = None,
    usd_per_kwh: str = "0.10",
    pue: str = "1.5",
    hosting: str = "0",
    staff: str = "0",
    reserved: str = "",
    spot: str = "",
    spot_overhead: str = "10",
    gpus: str | None = None,
) -> Calculator:
    """Buy vs rent: purchase and running costs against on-demand, reserved and spot rent.

    Defaults: a DGX H100 (8 x H100, 10,200 W from ``course.facts.hardware``) at *AI
    Infrastructure*'s unsourced purchase figure (8 x ~$35,000 = $280,000, the midpoint of its
    "$30,000-$40,000") against the recorded p5.48xlarge on-demand price; $0.10/kWh (the readings'
    figure); PUE 1.5 (a typical enterprise datacentre, lesson 08). Utilisation, PUE and overhead are
    typed in percent (utilisation, overhead) or as a ratio (PUE). Blank reserved/spot rates leave
    those options out.
    """
    dgx = hardware.SYSTEMS["dgx-h100"]
    if purchase is None:
        purchase = f"{ai_infrastructure.purchase_usd_as_written(dgx.gpu, dgx.gpus):,.0f}"
    if power is None:
        power = f"{dgx.max_power_watts:,.0f}"
    if gpus is None:
        gpus = str(dgx.gpus)
    instance_box = dropdown("instance rented instead", _instance_options(), instance)
    gpus_box = text_box(LABELS["gpus"], gpus)
    on_demand_box = text_box(LABELS["on_demand_usd_per_hour"], "")

    def follow_instance(_change=None) -> None:  # the recorded price of enough instances
        try:
            owned = parse_whole(LABELS["gpus"], gpus_box.value, minimum=1, maximum=100_000)
        except ValueError:
            return  # the GPUs box shows its own message
        price = cloud.rent_to_match(instance_box.value, owned).on_demand_usd_per_hour
        on_demand_box.value = f"{price:.6g}"

    follow_instance()
    instance_box.observe(follow_instance, names="value")
    gpus_box.observe(follow_instance, names="value")
    controls = {
        "instance": instance_box,
        "gpus": gpus_box,
        "on_demand": on_demand_box,
        "reserved": text_box(LABELS["reserved_usd_per_hour"], reserved),
        "spot": text_box(LABELS["spot_usd_per_hour"], spot),
        "spot_overhead": text_box("spot overhead %", spot_overhead),
        "purchase": text_box("purchase $", purchase),
        "years": text_box("lifetime (years)", years),
        "utilisation": text_box("utilisation %", utilisation),
        "power": text_box("power (W)", power),
        "usd_per_kwh": text_box("electricity $/kWh", usd_per_kwh),
        "pue": text_box("PUE", pue),
        "hosting": text_box("hosting $/year", hosting),
        "staff": text_box("staff $/year", staff),
    }
    return Calculator("Buy vs rent", controls, result, render=_html)


__all__ = ["LABELS", "BuyVsRent", "buy_vs_rent_calculator", "result"]
