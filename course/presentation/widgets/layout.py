"""The layout chooser of lesson 06: a model on nodes of GPUs, split DP x TP x PP -> memory and time.

``layout_chooser()`` returns a :class:`course.presentation.widgets.base.Calculator`. Pick a model, a
GPU, GPUs per node and nodes, the data x tensor x pipeline parallel degrees, the ZeRO stage,
micro-batches and activation recomputation; the output says whether the busiest GPU's memory fits,
draws the step time split into compute, bubble and each kind of communication, and shows the
calculator's table. Impossible layouts (the degrees do not multiply to the GPUs, tensor parallelism
across nodes, more stages than layers, heads not divisible) show the reason in red.

Every number comes from :func:`course.calculators.parallel.layout_step`; nothing is computed here.
The GPU menu lists the GPUs with a bf16 peak (the step is timed at it: no V100); choosing a model
keeps the sequence length within its context window and tensor parallelism a divisor of its heads
(data parallelism takes up the difference).
"""

from __future__ import annotations

import html
from typing import Any

from course.calculators import memory, parallel
from course.facts import hardware, units
from course.facts.models import PRESETS
from course.presentation.plots import PALETTE
from course.presentation.widgets.base import (
    ERROR_COLOUR,
    Calculator,
    dropdown,
    parse_number,
    parse_whole,
    text_box,
)

#: Parameter of ``layout_step`` -> the on-screen label of its control (error messages use these).
LABELS = {
    "gpus_per_node": "GPUs per node",
    "nodes": "nodes",
    "data_parallel": "data parallel (DP)",
    "tensor_parallel": "tensor parallel (TP)",
    "pipeline_parallel": "pipeline parallel (PP)",
    "micro_batch": "micro-batch size",
    "microbatches": "micro-batches per step",
    "seq_len": "sequence length",
    "compute_hfu": "HFU while computing",
    "virtual_stages": "virtual stages per GPU",
}
#: Lowest HFU the box accepts (0.1 %): below it a step takes longer than anyone can read.
MIN_HFU = 0.001


#: Largest value each whole-number box accepts (the calculator's own limits).
_MAXIMA = {
    "gpus_per_node": 1024,
    "nodes": parallel.MAX_GPUS,
    "data_parallel": parallel.MAX_GPUS,
    "tensor_parallel": parallel.MAX_GPUS,
    "pipeline_parallel": parallel.MAX_GPUS,
    "micro_batch": memory.MAX_BATCH,
    "microbatches": 10**6,
    "virtual_stages": 1024,
}


def _relabel(message: str) -> str:
    for name, label in sorted(LABELS.items(), key=lambda kv: -len(kv[0])):
        message = message.replace(name, label)
    return message


def layout_of(v: dict[str, Any]) -> parallel.LayoutStep:
    """The calculator's result for the widget's values ``v`` (ValueError with on-screen labels)."""
    config = PRESETS[v["model"]]
    kwargs = {
        name: parse_whole(LABELS[name], v[name], minimum=1, maximum=_MAXIMA[name])
        for name in _MAXIMA
    }
    kwargs["seq_len"] = parse_whole(
        LABELS["seq_len"], v["seq_len"], minimum=1, maximum=config.max_positions
    )
    kwargs["compute_hfu"] = parse_number(
        LABELS["compute_hfu"], v["compute_hfu"], minimum=MIN_HFU, maximum=1
    )
    try:
        return parallel.layout_step(
            config, gpu=v["gpu"], zero_stage=v["zero_stage"], recompute=v["recompute"], **kwargs
        )
    except ValueError as exc:
        raise ValueError(_relabel(str(exc))) from None


def adapt_to_model(controls: dict, model: str) -> None:
    """Keep the other controls valid for ``model``: the context window bounds the sequence
    length, and tensor parallelism must divide the heads (data parallelism takes up the rest)."""
    config = PRESETS[model]
    try:
        seq_len = parse_whole(LABELS["seq_len"], controls["seq_len"].value)
        if seq_len > config.max_positions:
            controls["seq_len"].value = str(config.max_positions)
        t = parse_whole(LABELS["tensor_parallel"], controls["tensor_parallel"].value)
        d = parse_whole(LABELS["data_parallel"], controls["data_parallel"].value)
    except ValueError:
        return  # a bad value in a box: its own message says so
    if t < 1 or config.heads % t == 0:
        return
    new_t = max(k for k in range(1, t + 1) if config.heads % k == 0 and t % k == 0)
    controls["data_parallel"].value = str(d * (t // new_t))
    controls["tensor_parallel"].value = str(new_t)


def _time_bar(r: parallel.LayoutStep) -> str:
    parts = {
        "compute": r.compute_seconds,
        "pipeline bubble": r.bubble_seconds,
        "TP all-reduces": r.tensor_parallel_comm_seconds,
        "PP sends": r.pipeline_comm_seconds,
        "DP gradient all-reduce": r.data_parallel_comm_seconds,
    }
    segments, legend = [], []
    for (label, value), colour in zip(parts.items(), PALETTE, strict=False):
        if value <= 0:
            continue
        width = 100 * value / r.step_seconds
        segments.append(
            f'<div title="{html.escape(label)}" style="width:{width:.2f}%;'
            f'background:{colour};height:22px"></div>'
        )
        legend.append(
            f'<span style="color:{colour}">&#9632;</span> {html.escape(label)} '
            f"{units.fmt_seconds(value)} ({width:.0f} %)"
        )
    return (
        '<div style="display:flex;width:100%;max-width:640px;background:#eee;margin:6px 0">'
        f'{"".join(segments)}</div><div style="font-size:90%">'
        f"{' &nbsp; '.join(legend)}</div>"
    )


def _layout_html(r: parallel.LayoutStep, _v: dict[str, Any]) -> str:
    share = f"{100 * r.memory_per_gpu_bytes / r.gpu_memory_bytes:.0f} %"
    if r.fits == "yes":
        verdict = (
            f'<p style="color:#007a3d"><b>Fits</b>: the busiest GPU needs '
            f"{units.fmt_bytes(r.memory_per_gpu_bytes)}, {share} of its "
            f"{units.fmt_bytes(r.gpu_memory_bytes)}.</p>"
        )
    else:
        verdict = (
            f'<p style="color:{ERROR_COLOUR}"><b>Does not fit</b>: the busiest GPU needs '
            f"{units.fmt_bytes(r.memory_per_gpu_bytes)}, {share} of its "
            f"{units.fmt_bytes(r.gpu_memory_bytes)}.</p>"
        )
    step = (
        f"<p>Step of {r.global_batch:,} sequences: <b>{units.fmt_seconds(r.step_seconds)}"
        f"</b>, {r.compute_efficiency:.0%} of it compute (an estimate: nothing overlapped, "
        f"the kernels at the HFU given while they compute). Over the whole step: MFU "
        f"{r.mfu:.0%}, HFU {r.hfu:.0%} (HFU also counts the recomputed forward). Links: "
        f"{html.escape(r.intra_node_link)} in a node, {html.escape(r.inter_node_link)} "
        f"between nodes; {r.dtype}.</p>"
    )
    notes = "" if r.notes == "none" else f"<p><i>Note: {html.escape(r.notes)}.</i></p>"
    return verdict + step + notes + _time_bar(r) + r._repr_html_()


def layout_chooser(
    model: str = "llama-2-70b",
    gpu: str = "h100-sxm",
    gpus_per_node: int = 8,
    nodes: int = 8,
    data_parallel: int = 4,
    tensor_parallel: int = 8,
    pipeline_parallel: int = 2,
    zero_stage: int = 1,
    micro_batch: int = 1,
    microbatches: int = 16,
    seq_len: int = 4096,
    recompute: str = "selective",
    compute_hfu: float = 0.5,
    virtual_stages: int = 1,
) -> Calculator:
    """Choose a layout: controls for model, cluster and DP x TP x PP; output: fit and step time.

    The defaults put Llama-2-70B on 64 H100s (8 nodes of 8) as DP 4 x TP 8 x PP 2 with ZeRO-1,
    a layout in the family Narayanan et al. 2021 recommend: TP inside the node, PP across nodes.
    Each GPU is priced with its own links and 16-bit format (:func:`communication.gpu_links`).
    """
    controls = {
        "model": dropdown("model", [k for k, c in PRESETS.items() if c.lm_head], model),
        "gpu": dropdown(
            "GPU", [(g.name, k) for k, g in hardware.GPUS.items()], hardware.gpu(gpu).key
        ),
        **{
            name: text_box(LABELS[name], str(value))
            for name, value in (
                ("gpus_per_node", gpus_per_node),
                ("nodes", nodes),
                ("data_parallel", data_parallel),
                ("tensor_parallel", tensor_parallel),
                ("pipeline_parallel", pipeline_parallel),
            )
        },
        "zero_stage": dropdown("ZeRO stage", list(parallel.ZERO_STAGES), zero_stage),
        **{
            name: text_box(LABELS[name], str(value))
            for name, value in (
                ("micro_batch", micro_batch),
                ("microbatches", microbatches),
                ("seq_len", seq_len),
                ("virtual_stages", virtual_stages),
                ("compute_hfu", compute_hfu),
            )
        },
        "recompute": dropdown("activation recomputation", list(memory.RECOMPUTE), recompute),
    }
    controls["model"].observe(lambda change: adapt_to_model(controls, change["new"]), names="value")
    return Calculator("Choose a parallel layout", controls, layout_of, render=_layout_html)


__all__ = ["LABELS", "MIN_HFU", "adapt_to_model", "layout_chooser", "layout_of"]
