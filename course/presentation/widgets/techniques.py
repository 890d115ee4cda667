"""Decision-table widget: state the constraint, see the techniques ranked for your model.

The learner picks a model, training or serving, the constraint that bites (does not fit / too slow /
too costly), a GPU, a batch and a sequence length; the table lists the techniques that address the
constraint, ranked by their calculated or measured effect on that model, each with where its number
comes from and what it costs. The ranking is ``course.calculators.techniques.rank_techniques`` (pure, tested);
this module only wires it to controls. Lesson 07. Layer 4.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any

from course.calculators.techniques import CONSTRAINTS, WORKLOADS, rank_techniques
from course.facts import hardware
from course.facts.models import PRESETS
from course.presentation.widgets.base import (
    Calculator,
    dropdown,
    gpu_options,
    parse_number,
    text_box,
)

#: On-screen labels of the number boxes, by the calculator's parameter name.
LABELS = {"batch": "batch", "seq_len": "sequence length (tokens)"}


def _whole(name: str, text: object) -> int:
    value = parse_number(name, text)
    if not math.isfinite(value) or value != int(value):
        raise ValueError(f"{name} must be a whole number, got {text!r}")
    return int(value)


def _html(v: dict[str, Any], measured: Mapping[str, float] | None) -> str:
    batch = _whole(LABELS["batch"], v["batch"])
    seq_len = _whole(LABELS["seq_len"], v["seq_len"])
    try:
        ranking = rank_techniques(PRESETS[v["model"]], workload=v["workload"],
                                  constraint=v["constraint"], gpu=v["gpu"], batch=batch,
                                  seq_len=seq_len, measured=measured)  # fmt: skip
    except ValueError as exc:
        message = str(exc)
        for name, label in LABELS.items():
            message = message.replace(name, label, 1) if message.startswith(name) else message
        raise ValueError(message) from None
    return ranking._repr_html_()


def technique_table(
    model: str = "llama-2-13b",
    *,
    workload: str = "training",
    constraint: str = "does_not_fit",
    gpu: str = "rtx-4090",
    batch: int = 1,
    seq_len: int = 2048,
    measured: Mapping[str, float] | None = None,
) -> Calculator:
    """The decision table. ``measured`` adds speed-ups measured in the lesson (name -> factor)."""
    controls = {
        "model": dropdown("model", list(PRESETS), model),
        "workload": dropdown("workload", list(WORKLOADS), workload),
        "constraint": dropdown(
            "constraint", [(c.replace("_", " "), c) for c in CONSTRAINTS], constraint
        ),  # fmt: skip
        "gpu": dropdown("GPU", gpu_options(), hardware.gpu(gpu).key),
        "batch": text_box(LABELS["batch"], str(batch)),
        "seq_len": text_box(LABELS["seq_len"], str(seq_len)),
    }
    return Calculator("Which technique? Ranked for your model",
                      controls, lambda v: _html(v, measured))  # fmt: skip


__all__ = ["technique_table"]
