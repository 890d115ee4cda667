"""Decision-table widget: state the constraint, see the techniques ranked for your model.

The learner picks a model, training or serving, the constraint that bites (does not fit / too
slow / too costly), a GPU, a batch and a sequence length; the table lists the techniques that
address the constraint, ranked by their calculated or measured effect on that model, each with where
its number comes from and what it costs. The ranking is
``course.calculators.techniques.rank_techniques`` (pure, tested); this module only wires it to
controls. Lesson 07.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from course.calculators.techniques import CONSTRAINTS, WORKLOADS, Ranking, rank_techniques
from course.facts import hardware
from course.facts.models import PRESETS
from course.presentation.widgets.base import (
    Calculator,
    dropdown,
    gpu_options,
    parse_whole,
    text_box,
)

#: On-screen labels of the number boxes, by the calculator's parameter name.
LABELS = {"batch": "batch", "seq_len": "sequence length (tokens)"}


#: Batch and sequence-length limits of :func:`course.calculators.techniques.rank_techniques`.
MAX_BATCH = 4096
MIN_SEQ_LEN = 16


def ranking(v: dict[str, Any], measured: Mapping[str, float] | None = None) -> Ranking:
    """The calculator's ranking for the widget's values ``v`` (errors name the on-screen labels)."""
    config = PRESETS[v["model"]]
    batch = parse_whole(LABELS["batch"], v["batch"], minimum=1, maximum=MAX_BATCH)
    seq_len = parse_whole(
        LABELS["seq_len"], v["seq_len"], minimum=MIN_SEQ_LEN, maximum=config.max_positions
    )
    return rank_techniques(
        config,
        workload=v["workload"],
        constraint=v["constraint"],
        gpu=v["gpu"],
        batch=batch,
        seq_len=seq_len,
        measured=measured,
    )


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
        ),
        "gpu": dropdown("GPU", gpu_options(), hardware.gpu(gpu).key),
        "batch": text_box(LABELS["batch"], str(batch)),
        "seq_len": text_box(LABELS["seq_len"], str(seq_len)),
    }

    def follow_model(
        change,
    ) -> None:  # a sequence longer than the model's window becomes its window
        longest = PRESETS[change["new"]].max_positions
        try:
            too_long = parse_whole(LABELS["seq_len"], controls["seq_len"].value) > longest
        except ValueError:
            too_long = False
        if too_long:
            controls["seq_len"].value = str(longest)

    controls["model"].observe(follow_model, names="value")
    return Calculator(
        "Which technique? Ranked for your model",
        controls,
        lambda v: ranking(v, measured),
        render=lambda r, _v: r._repr_html_(),
    )


__all__ = ["ranking", "technique_table"]
