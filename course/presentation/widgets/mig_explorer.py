"""The MIG explorer of lesson 08 (practice question 5): place GPU instances, see what fits.

``mig_explorer()`` returns a :class:`course.presentation.widgets.base.Calculator`. Pick a GPU with a
MIG table (``course.facts.hardware.mig_profiles``), type the instances ("3g.40gb, 2g.20gb, 1g.10gb"
or "7 x 1g.10gb"), a model, its weights dtype and the context it serves. The output draws the 8
memory slices with each instance where :func:`course.calculators.gpu_systems.mig_layout` placed it,
the SMs used and left idle, and which instances hold the model
(:func:`course.calculators.gpu_systems.mig_serving_fit` for the memory). An invalid mix shows the
layout calculator's reason in red. Nothing is computed here.
"""

from __future__ import annotations

import html
import re
from dataclasses import dataclass
from typing import Any

from course.calculators import gpu_systems
from course.facts import hardware, units
from course.facts.dtypes import BYTES_PER_VALUE
from course.facts.models import PRESETS
from course.presentation.plots import PALETTE
from course.presentation.widgets.base import Calculator, dropdown, parse_whole, text_box

_COUNT_FIRST = re.compile(r"^(\d{1,6})\s*[x×*]\s*(\S+)$")
_COUNT_LAST = re.compile(r"^(\S+)\s*[x×*]\s*(\d{1,6})$")
DECODERS = [key for key, cfg in PRESETS.items() if cfg.causal]
SEQ_LABEL = "context (tokens)"
INSTANCES_LABEL = "instances (e.g. 3g.40gb, 2 x 2g.20gb)"


def parse_instances(text: object) -> list[str]:
    """'3g.40gb, 2 x 2g.20gb' -> ['3g.40gb', '2g.20gb', '2g.20gb']; ValueError on junk."""
    names: list[str] = []
    for part in str(text).split(","):
        part = part.strip()
        if not part:
            continue
        m = _COUNT_FIRST.match(part) or _COUNT_LAST.match(part)
        if m:
            a, b = m.groups()
            count, name = (int(a), b) if a.isdigit() else (int(b), a)
            if not 1 <= count <= 7:
                raise ValueError(
                    f"{INSTANCES_LABEL}: a count must be 1 to 7, got {count} in {part!r}"
                )
            names += [name] * count
        else:
            names.append(part)
    if not names:
        raise ValueError(f"{INSTANCES_LABEL} must name at least one MIG profile, got {text!r}")
    return names


def _slices_html(layout: gpu_systems.MigLayout, table: dict) -> str:
    """The 8 memory slices as a row of cells, each instance coloured where it sits."""
    cells = ['<div style="flex:1;border:1px solid #999;height:26px;background:#eee"></div>'] * 8
    spans = []
    for i, (name, start) in enumerate(layout.starts):
        size = table[name].memory_slices
        colour = PALETTE[i % len(PALETTE)]
        spans.append((start, size, name, colour))
    row = []
    pos = 0
    for start, size, name, colour in sorted(spans):
        row += cells[pos:start]
        row.append(
            f'<div title="{html.escape(name)}" style="flex:{size};border:1px solid #333;'
            f"height:26px;background:{colour};color:#fff;text-align:center;"
            f'font-size:85%">{html.escape(name)}</div>'
        )
        pos = start + size
    row += cells[pos:]
    return (
        '<div style="display:flex;max-width:640px;margin:6px 0">' + "".join(row) + "</div>"
        '<div style="font-size:90%">memory slices 0-7, left to right (grey: free)</div>'
    )


@dataclass(frozen=True)
class MigAnswer:
    """The MIG explorer's result: the calculators' layout and serving fit, and which instances
    of the layout are profiles the fit says hold the model."""

    layout: gpu_systems.MigLayout
    fit: gpu_systems.MigServingFit
    seq_len: int
    holding: tuple[str, ...]  # "profile@start" of each placed instance that holds the model


def answer(v: dict[str, Any]) -> MigAnswer:
    """The calculators' result for the widget's values ``v`` (errors name the on-screen labels)."""
    card = hardware.gpu(v["gpu"])
    try:
        layout = gpu_systems.mig_layout(card.key, parse_instances(v["instances"]))
    except ValueError as exc:
        message = str(exc)
        if not message.startswith(INSTANCES_LABEL):
            message = f"{INSTANCES_LABEL}: {message}"
        raise ValueError(message) from None
    config = PRESETS[v["model"]]
    seq_len = parse_whole(SEQ_LABEL, v["seq_len"], minimum=0, maximum=config.max_positions)
    fit = gpu_systems.mig_serving_fit(config, gpu=card.key, dtype=v["dtype"], seq_len=seq_len)
    fitting = set(fit.fits_on.split(", "))
    holding = tuple(f"{name}@{start}" for name, start in layout.starts if name in fitting)
    return MigAnswer(layout, fit, seq_len, holding)


def _mig_html(a: MigAnswer, v: dict[str, Any]) -> str:
    card = hardware.gpu(v["gpu"])
    table = {p.name: p for p in hardware.mig_profiles(card.key)}
    layout, fit, holds = a.layout, a.fit, a.holding
    summary = (
        f"<p><b>{layout.instances} instances</b> on one {html.escape(card.name)}: "
        f"{layout.sms_used} of {layout.sms_total} SMs used, <b>{layout.sms_idle} idle</b> "
        f"({layout.idle_sm_fraction:.0%}); {layout.compute_slices_used} of 7 compute "
        f"slices, {layout.memory_slices_used} of 8 memory slices.</p>"
    )
    verdict = (
        f"<p>{html.escape(v['model'])} in {html.escape(v['dtype'])} with a "
        f"{a.seq_len:,}-token context needs {units.fmt_bytes(fit.needed_bytes)} "
        "(weights + KV cache + 10 %): "
    )
    if holds:
        verdict += f"fits on {len(holds)} of these instances ({', '.join(holds)}).</p>"
    else:
        verdict += "fits on none of these instances.</p>"
    verdict += (
        f"<p>Smallest profile that holds it: <b>{html.escape(fit.smallest_profile)}</b>"
        + (f" ({fit.instances_per_gpu} per GPU)" if fit.instances_per_gpu else "")
        + ".</p>"
    )
    return summary + _slices_html(layout, table) + verdict + layout._repr_html_()


def fill_gpu(gpu: str) -> str:
    """The default mix for ``gpu``: as many of its smallest profile as one GPU holds."""
    smallest = hardware.mig_profiles(hardware.gpu(gpu).key)[0]
    return f"{smallest.instances} x {smallest.name}"


def mig_explorer(
    gpu: str = "h100-sxm",
    instances: str = "7 x 1g.10gb",
    model: str = "llama-2-7b",
    dtype: str = "bf16",
    seq_len: int = 4096,
) -> Calculator:
    """Place MIG instances on one GPU; see SMs left idle and which instances hold a model.

    The default answers the lesson's opening: seven 1g.10gb slices on an H100 use 112 of its
    132 SMs, and none of them holds Llama-2-7B in bf16 (13.5 GB of weights).
    """
    gpus = [(hardware.GPUS[k].name, k) for k in hardware.MIG_PROFILES]
    dtypes = [d for d in BYTES_PER_VALUE if d not in ("tf32",)]
    gpu_box = dropdown("GPU", gpus, hardware.gpu(gpu).key)
    instances_box = text_box(INSTANCES_LABEL, instances)
    instances_box.layout.width = "32em"  # room for a mix of seven instances

    def follow_gpu(change) -> None:  # a mix that does not exist on the new GPU becomes its default
        try:
            gpu_systems.mig_layout(change["new"], parse_instances(instances_box.value))
        except ValueError:
            instances_box.value = fill_gpu(change["new"])

    gpu_box.observe(follow_gpu, names="value")
    model_box = dropdown("model to serve", DECODERS, model)
    seq_box = text_box(SEQ_LABEL, str(seq_len))

    def follow_model(change) -> None:  # a context longer than the model's window becomes its window
        longest = PRESETS[change["new"]].max_positions
        try:
            too_long = parse_whole(SEQ_LABEL, seq_box.value) > longest
        except ValueError:
            too_long = False
        if too_long:
            seq_box.value = str(longest)

    model_box.observe(follow_model, names="value")
    controls = {
        "gpu": gpu_box,
        "instances": instances_box,
        "model": model_box,
        "dtype": dropdown("weights dtype", dtypes, dtype),
        "seq_len": seq_box,
    }
    return Calculator("MIG explorer", controls, answer, render=_mig_html)


__all__ = ["DECODERS", "MigAnswer", "answer", "fill_gpu", "mig_explorer", "parse_instances"]
