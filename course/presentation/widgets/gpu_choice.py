"""The A100-or-H100 widget of lesson 10 (practice question 4): one job on two GPUs at stated prices.

``a100_or_h100()`` returns a :class:`course.presentation.widgets.base.Calculator`. Inputs: a model,
training or serving, the tokens to train or generate, the GPUs to run on, the two GPUs and their
prices per GPU-hour (the recorded Lambda on-demand prices by default), dtype, MFU, batch and PUE.
Output: time, cost and energy on each, and the price ratio at which each wins, from
:func:`course.calculators.gpu_systems.gpu_job`; nothing is computed here.
"""

from __future__ import annotations

import html
from typing import Any

from course.calculators import cloud, gpu_systems
from course.facts import units, validate
from course.facts.models import PRESETS
from course.presentation.widgets.base import (
    Calculator,
    dropdown,
    gpu_options,
    parse_number,
    parse_whole,
    text_box,
)

#: Calculator parameter -> the label of its control, so an error names what the learner sees.
LABELS = {
    "tokens": "tokens (trained or generated)",
    "gpus": "GPUs",
    "usd_per_gpu_hour_a": "first GPU $/GPU-hour",
    "usd_per_gpu_hour_b": "second GPU $/GPU-hour",
    "mfu": "MFU (training)",
    "batch": "batch (serving)",
    "seq_len": "sequence length (tokens)",
    "pue": "PUE",
}
#: Most GPUs the box accepts (100,000 at 1 kW each: 100 MW).
MAX_GPUS = 100_000
DTYPES = ("bf16", "fp16", "fp8", "tf32", "fp32")
#: Presets whose context holds the default sequence length (2,048 tokens).
MODELS = [k for k, c in PRESETS.items() if c.max_positions >= 2048]


def _price(instance: str) -> str:
    return f"{cloud.instance(instance).usd_per_gpu_hour:.2f}"


def job(v: dict[str, Any]) -> gpu_systems.GpuJob:
    """The calculator's result for the widget's values ``v`` (errors name the on-screen labels)."""
    config = PRESETS[v["model"]]
    return gpu_systems.gpu_job(
        config,
        tokens=parse_number(LABELS["tokens"], v["tokens"], minimum=1, maximum=1e18),
        gpus=parse_whole(LABELS["gpus"], v["gpus"], minimum=1, maximum=MAX_GPUS),
        workload=v["workload"],
        dtype=v["dtype"],
        gpu_a=v["gpu_a"],
        gpu_b=v["gpu_b"],
        usd_per_gpu_hour_a=parse_number(
            LABELS["usd_per_gpu_hour_a"], v["price_a"], minimum=1e-4, maximum=1e4
        ),
        usd_per_gpu_hour_b=parse_number(
            LABELS["usd_per_gpu_hour_b"], v["price_b"], minimum=1e-4, maximum=1e4
        ),
        batch=parse_whole(LABELS["batch"], v["batch"], minimum=1, maximum=10**5),
        seq_len=parse_whole(
            LABELS["seq_len"], v["seq_len"], minimum=1, maximum=config.max_positions
        ),
        mfu=parse_number(LABELS["mfu"], v["mfu"], minimum=1e-6, maximum=1),
        pue=parse_number(LABELS["pue"], v["pue"], minimum=1, maximum=validate.MAX_PUE),
    )


def _job_html(r: gpu_systems.GpuJob, _v: dict[str, Any]) -> str:
    a, b = html.escape(r.gpu_a), html.escape(r.gpu_b)
    rows = "".join(
        f"<tr><td>{name}</td><td>{gpus:,}</td><td>{units.fmt_seconds(t)}</td>"
        f"<td>{units.fmt_usd(usd)}</td><td>{j / units.KWH:,.0f} kWh</td></tr>"
        for name, gpus, t, usd, j in (
            (a, r.gpus_a, r.seconds_a, r.cost_a_usd, r.energy_a_joules),
            (b, r.gpus_b, r.seconds_b, r.cost_b_usd, r.energy_b_joules),
        )
    )
    return (
        f"<p>{r.workload.capitalize()} on {units.fmt_count(r.tokens)} tokens: the {b} is "
        f"<b>{r.speedup:.2f}x</b> the speed of the {a} per GPU, at <b>{r.price_ratio:.2f}x</b> "
        f"its price per GPU-hour, so the cheaper per token is <b>{html.escape(r.pick)}</b>. The "
        f"{b} wins while it costs less than {r.breakeven_price_ratio:.2f}x the {a}'s price per "
        f"GPU-hour; the {a} wins above that.</p>"
        "<table><tr><th>GPU</th><th>GPUs</th><th>time</th><th>cost</th><th>energy</th></tr>"
        f"{rows}</table>"
    )


def a100_or_h100(
    model: str = "llama-2-7b",
    workload: str = "training",
    tokens: str = "2e12",
    gpus: str = "64",
    gpu_a: str = "a100-80gb-sxm",
    gpu_b: str = "h100-sxm",
    price_a: str | None = None,
    price_b: str | None = None,
    dtype: str = "bf16",
    mfu: str = "0.4",
    batch: str = "1",
    seq_len: str = "2048",
    pue: str = "1.0",
) -> Calculator:
    """One job on two GPUs at stated prices: time, cost, energy and the price ratio of break-even.

    Defaults: Llama-2-7B's 2 trillion training tokens (Touvron et al. 2023) on 64 GPUs at 40 % MFU,
    priced at the recorded Lambda on-demand prices per GPU-hour of an 8x A100 80GB and an 8x H100
    SXM instance (``course.facts.data.cloud_instances``, dated there).
    """
    controls = {
        "model": dropdown("model", MODELS, model),
        "workload": dropdown("workload", list(gpu_systems.WORKLOADS), workload),
        "tokens": text_box(LABELS["tokens"], tokens),
        "gpus": text_box(LABELS["gpus"], gpus),
        "gpu_a": dropdown("first GPU", gpu_options(), gpu_a),
        "price_a": text_box(
            LABELS["usd_per_gpu_hour_a"], price_a or _price("lambda-8x-a100-80gb-sxm")
        ),
        "gpu_b": dropdown("second GPU", gpu_options(), gpu_b),
        "price_b": text_box(LABELS["usd_per_gpu_hour_b"], price_b or _price("lambda-8x-h100-sxm")),
        "dtype": dropdown("dtype", DTYPES, dtype),
        "mfu": text_box(LABELS["mfu"], mfu),
        "batch": text_box(LABELS["batch"], batch),
        "seq_len": text_box(LABELS["seq_len"], seq_len),
        "pue": text_box(LABELS["pue"], pue),
    }
    return Calculator("A100 or H100?", controls, job, LABELS, render=_job_html)


__all__ = ["LABELS", "a100_or_h100", "job"]
