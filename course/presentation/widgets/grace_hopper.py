"""The Grace Hopper widget of lesson 10 (practice question 7): where a model's weights and KV cache
live, and the decode rate each link allows.

``grace_hopper_calculator()`` returns a :class:`course.presentation.widgets.base.Calculator`.
Inputs: a model, its weights' dtype, the context length and the batch. Output, for an H100 SXM
whose host memory is reached over PCIe 5.0 and for the two GH200s whose Grace memory (LPDDR5X) is
reached over NVLink-C2C: what stays in HBM, what is streamed from CPU memory every step, and the
floor on a decoding step, each from :func:`course.calculators.offload.offload_decode_step`; nothing
is computed here.
"""

from __future__ import annotations

import html
from dataclasses import dataclass
from typing import Any

from course.calculators import offload
from course.facts import report, units
from course.facts.models import PRESETS
from course.presentation.widgets.base import (
    ERROR_COLOUR,
    Calculator,
    dropdown,
    parse_whole,
    text_box,
)

#: The three places a model can run: HBM + host over PCIe, and HBM + Grace over NVLink-C2C.
GPUS = ("h100-sxm", "gh200-96gb", "gh200-144gb")
DTYPES = ("bf16", "fp16", "fp8", "int8", "int4")
LABELS = {"seq_len": "context length (tokens)", "batch": "batch (sequences)"}


@dataclass(frozen=True)
class Placements:
    """One decoding step of the same model on each of :data:`GPUS`."""

    steps: tuple[offload.OffloadStep, ...]

    def table(self) -> report.Table:
        return report.Table(
            self.steps,
            columns=(
                "gpu",
                "needed_bytes",
                "gpu_usable_bytes",
                "offloaded_bytes",
                "link",
                "link_bandwidth_bytes_per_s",
                "step_seconds",
                "tokens_per_s",
            ),
            title="Decoding floor: HBM, and what streams over the host link each step",
        )


def placements(v: dict[str, Any]) -> Placements:
    """The calculator's results for the widget's values ``v`` (errors name the on-screen labels)."""
    config = PRESETS[v["model"]]
    seq_len = parse_whole(LABELS["seq_len"], v["seq_len"], minimum=1, maximum=config.max_positions)
    batch = parse_whole(LABELS["batch"], v["batch"], minimum=1, maximum=4096)
    return Placements(
        tuple(
            offload.offload_decode_step(
                config, gpu=gpu, dtype=v["dtype"], seq_len=seq_len, batch=batch
            )
            for gpu in GPUS
        )
    )


def _where(s: offload.OffloadStep) -> str:
    if s.offloaded_bytes == 0:
        return "all in HBM"
    host = (
        ""
        if s.fits_host
        else (
            f' <span style="color:{ERROR_COLOUR}">(more than the '
            f"{units.fmt_bytes(s.host_memory_bytes)} of CPU memory: does not fit)</span>"
        )
    )
    return f"{units.fmt_bytes(s.offloaded_bytes)} streamed over {html.escape(s.link)}{host}"


def _placements_html(r: Placements, _v: dict[str, Any]) -> str:
    lines = "".join(
        f"<div>&bull; {html.escape(s.gpu)}: {_where(s)}; at most <b>{s.tokens_per_s:,.1f} "
        f"tokens/s</b> ({units.fmt_seconds(s.step_seconds)} a step)</div>"
        for s in r.steps
    )
    need = units.fmt_bytes(r.steps[0].needed_bytes)
    return f"<p>Weights and KV cache: {need}.</p>{lines}" + r.table()._repr_html_()


def grace_hopper_calculator(
    model: str = "llama-2-70b", dtype: str = "bf16", seq_len: str = "4096", batch: str = "1"
) -> Calculator:
    """A model and a context on an H100 (host memory over PCIe) and on GH200 (Grace's LPDDR5X over
    NVLink-C2C): where weights and KV cache fit, and the floor on decoding each link allows.

    Defaults: Llama-2-70B in bf16 at its 4,096-token context, one sequence (lesson 10's worked
    answer to question 7).
    """
    model_box = dropdown("model", list(PRESETS), model)
    seq_box = text_box(LABELS["seq_len"], seq_len)

    def follow_model(change) -> None:  # a context beyond the new model's window: its window
        window = PRESETS[change["new"]].max_positions
        try:
            too_long = parse_whole(LABELS["seq_len"], seq_box.value, minimum=1) > window
        except ValueError:
            return  # the box shows its own message
        if too_long:
            seq_box.value = str(window)

    model_box.observe(follow_model, names="value")
    controls = {
        "model": model_box,
        "dtype": dropdown("weights dtype", DTYPES, dtype),
        "seq_len": seq_box,
        "batch": text_box(LABELS["batch"], batch),
    }
    return Calculator(
        "Grace Hopper: HBM, LPDDR5X over NVLink-C2C, or host memory over PCIe",
        controls,
        placements,
        LABELS,
        render=_placements_html,
    )


__all__ = ["DTYPES", "GPUS", "Placements", "grace_hopper_calculator", "placements"]
