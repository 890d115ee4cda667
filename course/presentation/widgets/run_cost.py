"""The "How long and how much" widget of lesson 05: a workload and GPUs -> time, cost, energy, CO2.

``how_long_and_how_much()`` returns a :class:`course.presentation.widgets.base.Calculator` with two
modes:

- **training**: a model (preset, or a parameter count), training tokens, GPU type and count, MFU,
  price per GPU-hour, electricity price, PUE and grid intensity -> wall-clock time, GPU-hours,
  cost, energy and CO2 (``course.calculators.energy.run_footprint``: 6 x params x tokens FLOPs);
- **inference**: requests per second, prompt and output tokens, batch, efficiency -> GPUs needed,
  time to first token, cost per million output tokens (``course.calculators.inference.serving``),
  with the electricity and CO2 of those GPUs.

A small table and a bar of the cost components (GPU time, electricity) show the answer. Every number
comes from ``course.calculators.energy``, ``course.calculators.inference`` and
``course.facts.hardware``; the widget only reads the controls, checks them (a bad value shows a
message in red naming the control's label) and formats.
"""

from __future__ import annotations

import html
from dataclasses import dataclass
from typing import Any

import ipywidgets as widgets

from course.calculators import energy, inference
from course.calculators.memory import params_of
from course.facts import hardware, units
from course.facts.models import PRESETS, TransformerConfig
from course.facts.units import KWH
from course.presentation.widgets.base import (
    CUSTOM,
    Calculator,
    dropdown,
    gpu_options,
    parse_number,
    parse_whole,
    stacked_bar_html,
    text_box,
)

#: control name -> (on-screen label, minimum, maximum, minimum excluded)
LIMITS: dict[str, tuple[str, float, float, bool]] = {
    "params": ("parameters (custom size)", 0, 1e15, True),
    "tokens": ("training tokens", 0, 1e15, True),
    "n_gpus": ("GPUs", 1, 1e8, False),
    "mfu": ("MFU (0-1)", 0, 1, True),
    "usd_per_gpu_hour": ("price per GPU-hour ($)", 0, 1e6, False),
    "usd_per_kwh": ("electricity price ($/kWh)", 0, 1e3, False),
    "pue": ("PUE (>= 1)", 1, 10, False),
    "grid_g_per_kwh": ("grid intensity (gCO2/kWh)", 0, energy.MAX_GRID_G_PER_KWH, False),
    "requests_per_s": ("requests per second", 0, 1e9, True),
    "prompt_tokens": ("prompt tokens", 1, 1e8, False),
    "output_tokens": ("output tokens", 1, 1e8, False),
    "batch": ("batch per replica", 1, 1e6, False),
    "efficiency": ("efficiency (0-1)", 0, 1, True),
}
WHOLE = {"n_gpus", "prompt_tokens", "output_tokens", "batch"}
#: Compute dtypes offered (where the GPU has them: no bf16 on a V100).
DTYPES = ("bf16", "fp16", "fp8", "fp32")


def _value(v: dict[str, Any], name: str) -> float | int:
    """The control ``name``'s value as a number, checked against its range (label in the error)."""
    label, low, high, strict = LIMITS[name]
    if name in WHOLE:
        return parse_whole(label, v[name], minimum=int(low), maximum=int(high))
    return parse_number(label, v[name], minimum=low, maximum=high, strict_min=strict)


@dataclass(frozen=True)
class Inference:
    """The inference mode's result: the serving estimate and its cost per million tokens."""

    serving: inference.Serving
    footprint: inference.ServingFootprint


def _models(mode: str) -> list[str]:
    """Training takes any preset or a bare parameter count; serving, a decoder (it generates)."""
    if mode == "training":
        return [*PRESETS, CUSTOM]
    return [key for key, config in PRESETS.items() if config.causal]


def dtypes_of(gpu: str) -> list[str]:
    """Compute dtypes the GPU has a dense peak for, in the order the menu offers them."""
    return [d for d in DTYPES if d in hardware.gpu(gpu).dense_flop_per_s]


def _bar_html(parts: dict[str, float]) -> str:
    """A horizontal bar of cost components (USD), each labelled with its share."""
    if sum(parts.values()) <= 0:
        return "<p><i>Costs are zero at these prices.</i></p>"
    return stacked_bar_html(parts, units.fmt_usd, shares=True)


def _rows_html(rows: list[tuple[str, str]]) -> str:
    body = "".join(
        f"<tr><td style='text-align:left'>{html.escape(a)}</td>"
        f"<td style='text-align:right'><b>{html.escape(b)}</b></td></tr>"
        for a, b in rows
    )
    return f"<table>{body}</table>"


def _model(v: dict[str, Any]) -> TransformerConfig | float:
    if v["model"] == CUSTOM:
        return params_of(LIMITS["params"][0], _value(v, "params"))
    return PRESETS[v["model"]]


def _training(v: dict[str, Any]) -> energy.RunFootprint:
    model = _model(v)
    params = model.params if isinstance(model, TransformerConfig) else model
    return energy.run_footprint(
        params,
        _value(v, "tokens"),
        hardware.gpu(v["gpu"]),
        _value(v, "n_gpus"),
        mfu=_value(v, "mfu"),
        dtype=v["dtype"],
        usd_per_gpu_hour=_value(v, "usd_per_gpu_hour"),
        usd_per_kwh=_value(v, "usd_per_kwh"),
        pue=_value(v, "pue"),
        grid_g_per_kwh=_value(v, "grid_g_per_kwh"),
    )


def _training_html(fp: energy.RunFootprint, v: dict[str, Any]) -> str:
    model = _model(v)
    card = hardware.gpu(v["gpu"])
    rows = [
        ("training FLOPs (6 x params x tokens)", units.fmt_flops(fp.flops)),
        ("wall-clock time", units.fmt_seconds(fp.wall_clock_seconds)),
        ("GPU-hours", f"{fp.gpu_hours:,.0f}"),
        ("cost", units.fmt_usd(fp.total_usd)),
        ("energy (GPUs at TDP x PUE)", f"{fp.energy_joules / KWH:,.0f} kWh"),
        ("CO2", f"{fp.co2_kg / 1000:,.1f} t CO2eq"),
    ]
    intro = (
        f"<p>{html.escape(_name(model))} on {units.fmt_count(_value(v, 'tokens'))} tokens, "
        f"{fp.n_gpus:,} x {html.escape(card.name)} at {fp.mfu:.0%} MFU "
        f"({units.fmt_watts(card.tdp_watts)} each).</p>"
    )
    note = (
        "<p><i>Renting? The electricity is in the hourly price: set the electricity price to "
        "0. Owning? Put the hardware's cost per hour of its life in the GPU-hour price.</i></p>"
    )
    parts = {"GPU time": fp.rental_usd, "electricity": fp.electricity_usd}
    return intro + _rows_html(rows) + _bar_html(parts) + note


def _name(model: TransformerConfig | float) -> str:
    if isinstance(model, TransformerConfig):
        return f"{model.name} ({units.fmt_count(model.params)} parameters)"
    return f"A {units.fmt_count(model)}-parameter model"


def _inference(v: dict[str, Any]) -> Inference:
    model = _model(v)
    if not isinstance(model, TransformerConfig):
        raise ValueError(
            "inference needs a preset model: its layers and heads set the KV cache "
            "and attention (pick one in the model list)"
        )
    card = hardware.gpu(v["gpu"])
    s = inference.serving(
        model,
        card,
        requests_per_s=_value(v, "requests_per_s"),
        prompt_tokens=_value(v, "prompt_tokens"),
        output_tokens=_value(v, "output_tokens"),
        batch=_value(v, "batch"),
        dtype=v["dtype"],
        efficiency=_value(v, "efficiency"),
        usd_per_gpu_hour=_value(v, "usd_per_gpu_hour"),
    )
    fp = inference.serving_footprint(
        s,
        card,
        usd_per_kwh=_value(v, "usd_per_kwh"),
        pue=_value(v, "pue"),
        grid_g_per_kwh=_value(v, "grid_g_per_kwh"),
    )
    return Inference(s, fp)


def _inference_html(answer: Inference, v: dict[str, Any]) -> str:
    s, fp = answer.serving, answer.footprint
    model = _model(v)
    card = hardware.gpu(v["gpu"])
    rows = [
        ("GPUs needed", f"{s.gpus:,} ({s.replicas:,} replicas of {s.gpus_per_replica})"),
        (
            f"memory per replica (weights + KV cache of {s.batch:,} x {s.context_tokens:,} tokens)",
            units.fmt_bytes(s.weights_bytes + s.kv_cache_bytes),
        ),
        ("time to first token", units.fmt_seconds(s.time_to_first_token_seconds)),
        ("output tokens per second", f"{s.output_tokens_per_s:,.0f}"),
        ("cost per hour (GPUs)", units.fmt_usd(s.cost_per_hour_usd)),
        ("cost per 1M output tokens", units.fmt_usd(fp.total_usd)),
        ("energy per 1M output tokens", f"{fp.energy_joules / KWH:,.2f} kWh"),
        ("CO2 per 1M output tokens", f"{fp.co2_kg:,.2f} kg"),
    ]
    intro = (
        f"<p>{html.escape(_name(model))} on {html.escape(card.name)}, batch {s.batch} per "
        f"replica, {_value(v, 'efficiency'):.0%} of the roofline.</p>"
    )
    parts = {"GPU time": fp.gpu_time_usd, "electricity": fp.electricity_usd}
    return intro + _rows_html(rows) + _bar_html(parts)


def answer(v: dict[str, Any]) -> energy.RunFootprint | Inference:
    """The calculators' result for the widget's values ``v`` (errors name the on-screen labels)."""
    return _training(v) if v["mode"] == "training" else _inference(v)


def _cost_html(result: energy.RunFootprint | Inference, v: dict[str, Any]) -> str:
    if isinstance(result, Inference):
        return _inference_html(result, v)
    return _training_html(result, v)


def how_long_and_how_much(
    mode: str = "training",
    model: str = "llama-2-7b",
    params: str = "7e9",
    tokens: str = "2e12",
    gpu: str = "a100-80gb-sxm",
    n_gpus: str = "1024",
    mfu: str = "0.4",
    usd_per_gpu_hour: str = "2.0",
    usd_per_kwh: str = "0.10",
    pue: str = "1.1",
    grid_g_per_kwh: str = "400",
    requests_per_s: str = "10",
    prompt_tokens: str = "512",
    output_tokens: str = "256",
    batch: str = "16",
    efficiency: str = "0.6",
    dtype: str = "bf16",
) -> Calculator:
    """How long and how much: training or inference, GPUs and prices -> time, cost, energy, CO2.

    The defaults are Llama 2 7B's pretraining (2T tokens on A100-80GB) at 40 % MFU: about the
    184,320 GPU-hours its paper reports (Touvron et al. 2023, Table 2). Default prices and grid:
    $2 per GPU-hour (DeepSeek-V3's assumed rental, its report's Table 1), $0.10 per kWh (the
    price of *AI Infrastructure*'s energy example), PUE 1.1, 400 gCO2eq/kWh (about what Llama 2's
    reported emissions imply). Every value is a text box, so any number can be typed ('2e12',
    '1,024').
    """
    controls = {
        "mode": widgets.ToggleButtons(
            options=["training", "inference"], value=mode, description="workload"
        ),
        "model": dropdown(
            "model", [*PRESETS, CUSTOM] if mode == "training" else list(PRESETS), model
        ),
        "params": text_box(LIMITS["params"][0], params),
        "tokens": text_box(LIMITS["tokens"][0], tokens),
        "gpu": dropdown("GPU", gpu_options(), hardware.gpu(gpu).key),
        "dtype": dropdown(
            "compute dtype", dtypes_of(gpu), dtype if dtype in dtypes_of(gpu) else dtypes_of(gpu)[0]
        ),
        "n_gpus": text_box(LIMITS["n_gpus"][0], n_gpus),
        "mfu": text_box(LIMITS["mfu"][0], mfu),
        "usd_per_gpu_hour": text_box(LIMITS["usd_per_gpu_hour"][0], usd_per_gpu_hour),
        "usd_per_kwh": text_box(LIMITS["usd_per_kwh"][0], usd_per_kwh),
        "pue": text_box(LIMITS["pue"][0], pue),
        "grid_g_per_kwh": text_box(LIMITS["grid_g_per_kwh"][0], grid_g_per_kwh),
        "requests_per_s": text_box(LIMITS["requests_per_s"][0], requests_per_s),
        "prompt_tokens": text_box(LIMITS["prompt_tokens"][0], prompt_tokens),
        "output_tokens": text_box(LIMITS["output_tokens"][0], output_tokens),
        "batch": text_box(LIMITS["batch"][0], batch),
        "efficiency": text_box(LIMITS["efficiency"][0], efficiency),
    }
    training_only = ("tokens", "n_gpus", "mfu")
    inference_only = ("requests_per_s", "prompt_tokens", "output_tokens", "batch", "efficiency")

    def follow_gpu(change) -> None:  # each GPU has its own list of dtypes
        available = dtypes_of(change["new"])
        keep = controls["dtype"].value if controls["dtype"].value in available else available[0]
        controls["dtype"].options = available
        controls["dtype"].value = keep

    def follow_mode(change) -> None:  # serving needs a decoder's layers and heads (KV cache)
        models = _models(change["new"])
        keep = controls["model"].value if controls["model"].value in models else "llama-2-7b"
        controls["model"].options = models
        controls["model"].value = keep

    controls["gpu"].observe(follow_gpu, names="value")
    controls["mode"].observe(follow_mode, names="value")

    def grey_out(_change=None) -> None:  # only the controls the chosen mode uses stay active
        training = controls["mode"].value == "training"
        for name in training_only:
            controls[name].disabled = not training
        for name in inference_only:
            controls[name].disabled = training
        controls["params"].disabled = controls["model"].value != CUSTOM

    for name in ("mode", "model"):
        controls[name].observe(grey_out, names="value")
    grey_out()
    return Calculator("How long and how much", controls, answer, render=_cost_html)


__all__ = [
    "CUSTOM",
    "DTYPES",
    "LIMITS",
    "Inference",
    "answer",
    "dtypes_of",
    "how_long_and_how_much",
]
