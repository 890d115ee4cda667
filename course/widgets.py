"""Calculator widgets: a few controls wired to a calculator in ``course``, the answer shown below.

Each widget is built by one small function (``roofline_explorer()``, ``decode_speed_calculator()``)
that returns a :class:`Calculator`: named ``controls``, an ``output`` (an ``ipywidgets.HTML``) and
the function that turns the controls' values into the output. A bad value never shows a
traceback: the calculator's ``ValueError`` message appears in red where the result would be.
Nothing is printed, so under nbval (which has no widget manager) a cell that shows a calculator
has only its deterministic text form as output.

To add a widget: write a ``_something_html(values) -> str`` that calls the calculator and formats
its result, and a builder that makes the controls and returns ``Calculator(title, controls, fn)``.
Tests drive them by setting ``calc.controls[name].value`` and reading ``calc.output.value``.

Used by lesson 02 (more lessons add theirs). Layer 4: calculations live in ``course.compute`` etc.
"""

from __future__ import annotations

import html
import re
from collections.abc import Callable, Mapping
from typing import Any

import ipywidgets as widgets

from course import compute, hardware, units
from course.memory import BYTES_PER_PARAM
from course.models import PRESETS

ERROR_COLOUR = "#b00020"


def error_html(message: str) -> str:
    """A ValueError's message, in red, where the result would be."""
    return f'<div class="calc-error" style="color:{ERROR_COLOUR}">{html.escape(message)}</div>'


def parse_number(name: str, text: object) -> float:
    """A number typed into a text box: '2e12', '2,000', ' 1.5 ' all work; ValueError otherwise."""
    if isinstance(text, int | float) and not isinstance(text, bool):
        return float(text)
    cleaned = str(text).replace(",", "").replace("_", "").strip()
    try:
        return float(cleaned)
    except ValueError:
        raise ValueError(f"{name} must be a number such as 2e12, got {text!r}") from None


def _plain(html_text: str) -> str:
    """Rough plain text of an HTML fragment (for the text form of a calculator)."""
    text = re.sub(r"</(tr|div|p|caption)>", "\n", html_text)
    text = re.sub(r"</td><td[^>]*>", "  ", text)
    text = re.sub(r"<[^>]+>", "", text)
    return html.unescape("\n".join(line.strip() for line in text.splitlines() if line.strip()))


class Calculator:
    """Controls + an HTML output, recomputed whenever a control changes."""

    def __init__(
        self,
        title: str,
        controls: Mapping[str, widgets.ValueWidget],
        compute_html: Callable[[dict[str, Any]], str],
    ):
        self.title = title
        self.controls = dict(controls)
        self.output = widgets.HTML()
        self._compute_html = compute_html
        for control in self.controls.values():
            control.observe(lambda _change: self.update(), names="value")
        self.update()

    def values(self) -> dict[str, Any]:
        return {name: control.value for name, control in self.controls.items()}

    def update(self) -> None:
        """Recompute the output; a ValueError's message is shown in red instead of a result."""
        try:
            self.output.value = self._compute_html(self.values())
        except ValueError as exc:
            self.output.value = error_html(str(exc))

    @property
    def error(self) -> str | None:
        """The message shown in red, or None when the output is a result."""
        if "calc-error" not in self.output.value:
            return None
        return _plain(self.output.value)

    def widget(self) -> widgets.VBox:
        header = widgets.HTML(f"<b>{html.escape(self.title)}</b>")
        return widgets.VBox([header, *self.controls.values(), self.output])

    def __repr__(self) -> str:
        return f"{self.title}\n{_plain(self.output.value)}"

    def _repr_mimebundle_(self, include=None, exclude=None):
        bundle = self.widget()._repr_mimebundle_(include=include, exclude=exclude) or {}
        bundle["text/plain"] = repr(self)
        return bundle


def _dropdown(description: str, options, value) -> widgets.Dropdown:
    return widgets.Dropdown(description=description, options=options, value=value,
                            style={"description_width": "initial"})  # fmt: skip


def _text(description: str, value: str) -> widgets.Text:
    return widgets.Text(description=description, value=value,
                        style={"description_width": "initial"})  # fmt: skip


def _gpu_options() -> list[tuple[str, str]]:
    return [(g.name, key) for key, g in hardware.GPUS.items()]


# ---------------------------------------------------------------------------------------------
# Roofline explorer
# ---------------------------------------------------------------------------------------------


def _roofline_html(v: dict[str, Any]) -> str:
    card = hardware.gpu(v["gpu"])
    peak = card.peak_flops(v["dtype"])
    flops = parse_number("flops", v["flops"])
    moved = parse_number("bytes_moved", v["bytes_moved"])
    result = compute.roofline_seconds(flops, moved, peak, card.memory_bandwidth)
    utilisation = result.attainable_flop_per_s / peak
    summary = (
        f"<p>On the {html.escape(card.name)} ({v['dtype']} dense peak "
        f"{units.fmt_flop_rate(peak)}, memory {units.fmt_bandwidth(card.memory_bandwidth, digits=2)}) "
        f"this "
        f"operation is <b>{result.bound}-bound</b>: at least "
        f"<b>{units.fmt_seconds(result.seconds)}</b>, using at most "
        f"<b>{100 * utilisation:.1f} %</b> of the compute peak.</p>"
    )
    return summary + result._repr_html_()


def roofline_explorer(
    gpu: str = "h100-sxm",
    dtype: str = "bf16",
    flops: str = "2e9",
    bytes_moved: str = "2e9",
) -> Calculator:
    """GPU, dtype, FLOPs and bytes of one operation -> bound, floor on time, share of peak.

    The defaults are a matrix-vector product with a 1e9-weight matrix in 16 bits: 2 FLOPs per
    2-byte weight, intensity 1 FLOP/byte, far below the H100's ridge of ~295.
    """
    card = hardware.gpu(gpu)
    gpu_box = _dropdown("GPU", _gpu_options(), card.key)
    dtype_box = _dropdown("dtype", list(card.dense_flops), dtype)

    def follow_gpu(change) -> None:  # each GPU has its own list of dtypes
        available = list(hardware.gpu(change["new"]).dense_flops)
        keep = dtype_box.value if dtype_box.value in available else available[0]
        dtype_box.options = available
        dtype_box.value = keep

    gpu_box.observe(follow_gpu, names="value")
    controls = {
        "gpu": gpu_box,
        "dtype": dtype_box,
        "flops": _text("FLOPs", flops),
        "bytes_moved": _text("bytes moved", bytes_moved),
    }
    return Calculator("Roofline explorer", controls, _roofline_html)


# ---------------------------------------------------------------------------------------------
# Decode-speed calculator
# ---------------------------------------------------------------------------------------------


def _decode_html(v: dict[str, Any]) -> str:
    config = PRESETS[v["model"]]
    step = compute.decode_step(config.params, v["dtype"], v["gpu"], v["batch"])
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

    Uses :func:`course.compute.decode_step`: every weight is read once per step and each token
    costs 2 FLOPs per weight. The KV cache is left out (it adds bytes per sequence; lesson 07).
    """
    controls = {
        "model": _dropdown("model", list(PRESETS), model),
        "dtype": _dropdown("weights dtype", [d for d in BYTES_PER_PARAM if d != "tf32"], dtype),
        "gpu": _dropdown("GPU", _gpu_options(), hardware.gpu(gpu).key),
        "batch": widgets.IntText(description="batch", value=batch),
    }
    return Calculator("Decode-speed calculator", controls, _decode_html)


__all__ = [
    "Calculator",
    "decode_speed_calculator",
    "error_html",
    "parse_number",
    "roofline_explorer",
]
