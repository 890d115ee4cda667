"""The decode-speed calculator of lesson 02: model, weight dtype, GPU, batch -> floor on time per
token."""

from __future__ import annotations

import html
from typing import Any

from course.calculators import compute
from course.facts import hardware, units
from course.facts.dtypes import BYTES_PER_VALUE
from course.facts.models import PRESETS
from course.presentation.widgets.base import (
    ERROR_COLOUR,
    Calculator,
    dropdown,
    gpu_options,
    parse_whole,
    text_box,
)

#: Largest batch the box accepts (the calculator's limit).
MAX_BATCH = 10**7


def decode_step(v: dict[str, Any]) -> compute.DecodeStep:
    """The calculator's result for the widget's values ``v`` (errors name the on-screen labels)."""
    batch = parse_whole("batch", v["batch"], minimum=1, maximum=MAX_BATCH)  # '2.5' is refused
    return compute.decode_step(PRESETS[v["model"]].params, v["dtype"], v["gpu"], batch)


def _decode_html(step: compute.DecodeStep, v: dict[str, Any]) -> str:
    config = PRESETS[v["model"]]
    card = hardware.gpu(v["gpu"])
    lines = (
        f"<p><b>{html.escape(config.name)}</b> ({units.fmt_count(config.params)} parameters) in "
        f"{v['dtype']} on the {html.escape(card.name)}, batch {step.batch}: each step takes at "
        f"least <b>{units.fmt_seconds(step.step_seconds)}</b> ({step.bound}-bound), so at most "
        f"<b>{step.tokens_per_s / step.batch:,.1f} tokens/s per sequence</b> and "
        f"{step.tokens_per_s:,.0f} tokens/s in all. Up to a batch of about "
        f"{step.compute_bound_batch:,.0f} more sequences cost almost nothing extra.</p>"
    )
    if step.weights_bytes > card.memory_bytes:
        lines += (
            f'<p style="color:{ERROR_COLOUR}">The weights ({units.fmt_bytes(step.weights_bytes)}) '
            f"do not fit in this GPU's {units.fmt_bytes(card.memory_bytes)}: the floor assumes "
            f"they are split over GPUs that read in parallel.</p>"
        )
    return lines + step._repr_html_()


def decode_speed_calculator(
    model: str = "llama-2-13b",
    dtype: str = "fp16",
    gpu: str = "a100-80gb-sxm",
    batch: int = 1,
) -> Calculator:
    """Model, weight dtype, GPU and batch -> the bandwidth/compute floor on decoding speed.

    Uses :func:`course.calculators.compute.decode_step`: every weight is read once per step and each
    token costs 2 FLOPs per weight. The KV cache is left out (it adds bytes per sequence; lesson
    07).
    """
    controls = {
        "model": dropdown("model", list(PRESETS), model),
        "dtype": dropdown("weights dtype", [d for d in BYTES_PER_VALUE if d != "tf32"], dtype),
        "gpu": dropdown("GPU", gpu_options(), hardware.gpu(gpu).key),
        "batch": text_box("batch", str(batch)),
    }
    return Calculator("Decode-speed calculator", controls, decode_step, render=_decode_html)
