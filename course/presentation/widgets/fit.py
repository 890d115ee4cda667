"""The "will it fit?" widget of lesson 04: a model, a workload and GPUs -> breakdown, verdict, GPUs.

``will_it_fit()`` returns a :class:`course.presentation.widgets.base.Calculator`. Pick a preset
model (or type a parameter count), training or inference, the precision (training) or weight dtype
(inference), the optimizer, batch, sequence length, activation recomputation, a GPU and how many of
them you have. The output is a stacked bar of where the memory goes, drawn against the usable memory
of your GPUs, a verdict, the number of GPUs needed, and the calculator's table.

Every number comes from ``course.calculators.memory`` (``training_memory``, ``inference_memory``,
``gpus_needed``) and ``course.facts.hardware``; nothing is computed here. A bad value shows the
calculator's ``ValueError`` message in red. Several GPUs are assumed to split the memory evenly
(ZeRO-3/FSDP sharding or tensor parallelism); lesson 06 shows what each scheme really keeps
per GPU.
"""

from __future__ import annotations

import html
from dataclasses import dataclass
from typing import Any

import ipywidgets as widgets

from course.calculators import memory
from course.facts import hardware, units
from course.facts.dtypes import BYTES_PER_VALUE
from course.facts.models import PRESETS, TransformerConfig
from course.facts.report import Report
from course.presentation.widgets.base import (
    CUSTOM,
    ERROR_COLOUR,
    Calculator,
    dropdown,
    gpu_options,
    parse_number,
    parse_whole,
    stacked_bar_html,
    text_box,
)

PARAMS_LABEL = "parameters (custom size)"
SEQ_LABEL = "sequence length (tokens)"
GPUS_LABEL = "GPUs you have"
#: Inference: allowance for the activation workspace and allocator (a share of weights + KV cache).
#: A rule of thumb, not a derivation; *GPU Infrastructure & Computational Requirements* uses 0.2.
INFERENCE_OVERHEAD = 0.1
#: Largest batch and (for a bare parameter count) sequence length: the memory calculator's.
MAX_BATCH = memory.MAX_BATCH
MAX_SEQ_LEN = memory.MAX_SEQ_LEN


def _model(v: dict[str, Any]) -> TransformerConfig | float:
    if v["model"] == CUSTOM:
        return parse_number(
            PARAMS_LABEL, v["params"], minimum=0, maximum=memory.MAX_COUNT, strict_min=True
        )
    return PRESETS[v["model"]]


def breakdown(v: dict[str, Any]) -> tuple[dict[str, float], Report, list[str], int]:
    """(label -> bytes, the calculator's result, notes, the sequence length read) for the widget's
    values ``v``: each box parsed once, here."""
    model = _model(v)
    batch = parse_whole("batch", v["batch"], minimum=1, maximum=MAX_BATCH)
    longest = model.max_positions if isinstance(model, TransformerConfig) else MAX_SEQ_LEN
    seq_len = parse_whole(SEQ_LABEL, v["seq_len"], minimum=1, maximum=longest)
    notes = []
    if not isinstance(model, TransformerConfig):
        notes.append(
            "A bare parameter count has no architecture: activations and the KV cache "
            "are not counted (pick a preset to include them)."
        )
    if v["mode"] == "training":
        seq = seq_len if isinstance(model, TransformerConfig) else None
        r = memory.training_memory(
            model,
            batch=batch,
            seq_len=seq,
            precision=v["precision"],
            optimizer=v["optimizer"],
            recompute=v["recompute"],
        )
        parts = {
            "weights": r.weights_bytes,
            "gradients": r.gradients_bytes,
            "fp32 master weights": r.master_weights_bytes,
            "optimizer states": r.optimizer_states_bytes,
            "activations": r.activations_bytes + r.logits_bytes,
        }
        return parts, r, notes, seq_len
    seq = seq_len if isinstance(model, TransformerConfig) else 0
    r = memory.inference_memory(
        model, dtype=v["dtype"], seq_len=seq, batch=batch, overhead_fraction=INFERENCE_OVERHEAD
    )
    notes.append(
        f"Workspace: an allowance of {INFERENCE_OVERHEAD:.0%} of weights + KV cache for "
        "activations and the allocator (a rule of thumb)."
    )
    parts = {
        "weights": r.weights_bytes,
        "KV cache": r.kv_cache_bytes,
        "workspace allowance": r.overhead_bytes,
    }
    return parts, r, notes, seq_len


@dataclass(frozen=True)
class FitAnswer:
    """The widget's result: the memory calculator's report and the GPUs it says are needed."""

    report: Report
    parts: dict[str, float]  # the report's bytes, grouped as the bar shows them
    notes: tuple[str, ...]
    seq_len: int
    gpus_needed: int  # course.calculators.memory.gpus_needed
    gpus_have: int
    usable_fraction: float
    fits: bool


def answer(v: dict[str, Any]) -> FitAnswer:
    """The calculators' result for the widget's values ``v`` (errors name the on-screen labels)."""
    parts, result, notes, seq_len = breakdown(v)
    have = parse_whole(GPUS_LABEL, v["n_gpus"], minimum=1, maximum=100_000)
    need = memory.gpus_needed(
        result.total_bytes, v["gpu"], usable_fraction=memory.USABLE_MEMORY_FRACTION
    )
    return FitAnswer(
        result,
        parts,
        tuple(notes),
        seq_len,
        need,
        have,
        memory.USABLE_MEMORY_FRACTION,
        need <= have,
    )


def _fit_html(a: FitAnswer, v: dict[str, Any]) -> str:
    parts, result, notes, need, have = a.parts, a.report, a.notes, a.gpus_needed, a.gpus_have
    card = hardware.gpu(v["gpu"])
    total = result.total_bytes
    capacity = have * card.memory_bytes * memory.USABLE_MEMORY_FRACTION
    share = f"{100 * total / capacity:.0f} % of the usable memory"
    if a.fits:
        verdict = (
            f'<p style="color:#007a3d"><b>Fits</b> on {have} x {html.escape(card.name)}: '
            f"{units.fmt_bytes(total)}, {share}.</p>"
        )
    else:
        verdict = (
            f'<p style="color:{ERROR_COLOUR}"><b>Does not fit</b> on {have} x '
            f"{html.escape(card.name)}: {units.fmt_bytes(total)} is {share}.</p>"
        )
    verdict += (
        f"<p>GPUs needed: <b>{need} x {html.escape(card.name)}</b> "
        f"({units.fmt_bytes(card.memory_bytes)} each, {memory.USABLE_MEMORY_FRACTION:.0%} usable, "
        "memory split evenly across GPUs).</p>"
    )
    extra = "".join(f"<p><i>{html.escape(n)}</i></p>" for n in notes)
    return (
        verdict
        + stacked_bar_html(
            parts,
            units.fmt_bytes,
            line_at=capacity,
            line_note="dashed line: usable memory of your GPUs",
        )
        + extra
        + result._repr_html_()
    )


def will_it_fit(
    model: str = "llama-2-7b",
    mode: str = "training",
    precision: str = "mixed",
    dtype: str = "bf16",
    optimizer: str = "adam",
    batch: int = 1,
    seq_len: int = 2048,
    recompute: str = "none",
    gpu: str = "h100-sxm",
    n_gpus: int = 1,
    params: str = "7e9",
) -> Calculator:
    """Will a model fit? Controls for model, workload and GPUs; output: breakdown and verdict.

    The defaults answer *AI Infrastructure*'s practice question 3 (train a 7B model with Adam in
    mixed precision): 16 bytes/param of model states plus activations for one 2,048-token sequence,
    on one H100 SXM. ``params`` is used when ``model`` is ``"custom size"``. ``precision`` and
    ``optimizer`` apply to training, ``dtype`` to inference (greyed out otherwise).
    """
    controls = {
        "model": dropdown("model", [*PRESETS, CUSTOM], model),
        "params": text_box(PARAMS_LABEL, params),
        "mode": widgets.ToggleButtons(
            options=["training", "inference"], value=mode, description="workload"
        ),
        "precision": dropdown("training precision", list(memory.PRECISIONS), precision),
        "optimizer": dropdown("optimizer", list(memory.OPTIMIZERS), optimizer),
        "recompute": dropdown("activation recomputation", list(memory.RECOMPUTE), recompute),
        "dtype": dropdown(
            "inference weights dtype", [d for d in BYTES_PER_VALUE if d != "tf32"], dtype
        ),
        "batch": text_box("batch", str(batch)),
        "seq_len": text_box(SEQ_LABEL, str(seq_len)),
        "gpu": dropdown("GPU", gpu_options(), hardware.gpu(gpu).key),
        "n_gpus": text_box(GPUS_LABEL, str(n_gpus)),
    }

    def grey_out(_change=None) -> None:  # only the controls the chosen workload uses stay active
        training = controls["mode"].value == "training"
        for name in ("precision", "optimizer", "recompute"):
            controls[name].disabled = not training
        controls["dtype"].disabled = training
        controls["params"].disabled = controls["model"].value != CUSTOM

    def follow_model(
        change,
    ) -> None:  # a sequence longer than the model's window becomes its window
        config = PRESETS.get(change["new"])
        try:
            too_long = config is not None and parse_whole(SEQ_LABEL, controls["seq_len"].value) > (
                config.max_positions
            )
        except ValueError:
            too_long = False
        if too_long:
            controls["seq_len"].value = str(config.max_positions)

    controls["model"].observe(follow_model, names="value")
    for name in ("mode", "model"):
        controls[name].observe(grey_out, names="value")
    grey_out()
    # the calculators name these "parameters" and "recompute"; the learner sees the labels
    labels = {"parameters": PARAMS_LABEL, "recompute": controls["recompute"].description}
    return Calculator("Will it fit?", controls, answer, labels=labels, render=_fit_html)


__all__ = ["CUSTOM", "INFERENCE_OVERHEAD", "FitAnswer", "answer", "breakdown", "will_it_fit"]
