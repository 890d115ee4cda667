"""The base of every calculator widget: controls wired to a calculator, the answer shown below.

Each widget (one module per widget in ``course/presentation/widgets/``) is built by one small
function that returns a :class:`Calculator`: named ``controls``, an ``output`` (an
``ipywidgets.HTML``) and the function that turns the controls' values into the output. A bad value
never shows a traceback: the calculator's ``ValueError`` message appears in red where the result
would be. Nothing is printed, so under nbval (which has no widget manager) a cell that shows a
calculator has only its deterministic text form as output.

To add a widget: write ``something(values)`` that parses the controls (``parse_number``,
``parse_whole``: label and allowed range) and calls one calculator, a ``_something_html(result,
values) -> str`` that only formats its result, and a builder that makes the controls and returns
``Calculator(title, controls, something, render=_something_html)``. Tests drive them by setting
``calc.controls[name].value`` and reading ``calc.result`` (None while a message is shown).

Error messages speak the learner's language: a calculator's ``ValueError`` names its parameter
(``seq_len must be ...``); the Calculator replaces that name with the on-screen label of the
control (``sequence length (tokens) must be ...``; ``labels`` adds names that are not control keys)
and writes long numbers with thousands separators. Parse typed values with the control's label:
``parse_number(label, text)``, ``parse_whole(label, text)``.

Calculations live in ``course.calculators.compute`` etc.; nothing is computed here.
"""

from __future__ import annotations

import html
import math
import re
from collections.abc import Callable, Mapping
from typing import Any

import ipywidgets as widgets

from course.facts import hardware, validate
from course.presentation.plots import PALETTE

ERROR_COLOUR = "#b00020"

#: The model menu's last entry in the widgets that take a parameter count instead of a preset.
CUSTOM = "custom size"


def error_html(message: str) -> str:
    """A ValueError's message, in red, where the result would be."""
    return f'<div class="calc-error" style="color:{ERROR_COLOUR}">{html.escape(message)}</div>'


def stacked_bar_html(
    parts: Mapping[str, float],
    fmt: Callable[[float], str],
    *,
    line_at: float | None = None,
    line_note: str = "",
    shares: bool = False,
) -> str:
    """A horizontal stacked bar of ``parts`` (label -> value) in the plots' palette, with a legend.

    The bar's full width is the total, or ``line_at`` where that is larger; ``line_at`` also draws
    a dashed line there (a capacity), explained by ``line_note``. With ``line_at``, parts of 0 are
    left out; ``shares`` adds each part's share of the total to the legend.
    """
    total = sum(parts.values())
    scale = total if line_at is None else max(total, line_at)
    segments, legend = [], []
    for (label, value), colour in zip(parts.items(), PALETTE, strict=False):
        if line_at is not None and value <= 0:
            continue
        width = 100 * value / scale
        segments.append(
            f'<div title="{html.escape(label)}" style="width:{width:.2f}%;'
            f'background:{colour};height:22px"></div>'
        )
        share = f" ({100 * value / total:.0f} %)" if shares else ""
        legend.append(
            f'<span style="color:{colour}">&#9632;</span> {html.escape(label)} {fmt(value)}{share}'
        )
    marker, position, note = "", "", ""
    if line_at is not None:
        marker = (
            f'<div style="position:absolute;left:{100 * line_at / scale:.2f}%;top:-4px;'
            'height:30px;border-left:2px dashed #000"></div>'
        )
        position = "position:relative;"
    if line_note:
        note = f" &nbsp; ({html.escape(line_note)})"
    return (
        f'<div style="{position}display:flex;width:100%;max-width:640px;background:#eee;'
        f'margin:6px 0">{"".join(segments)}{marker}</div>'
        f'<div style="font-size:90%">{" &nbsp; ".join(legend)}{note}</div>'
    )


def parse_number(
    label: str,
    text: object,
    *,
    minimum: float | None = None,
    maximum: float | None = None,
    strict_min: bool = False,
) -> float:
    """A number typed into a text box: '2e12', '2,000', ' 1.5 ' all work; ValueError otherwise.

    The message names the on-screen ``label`` and the allowed range (``inf``, ``nan`` and numbers
    too large for a float are refused: :func:`course.facts.validate.number`).
    """
    if isinstance(text, int | float) and not isinstance(text, bool):
        value = text
    else:
        cleaned = str(text).replace(",", "").replace("_", "").strip()
        try:
            value = float(cleaned)
        except ValueError:
            allowed = _allowed(minimum, maximum, strict_min)
            raise ValueError(
                f"{label} must be a number{allowed} such as "
                f"{_example(minimum, maximum)}, got {text!r}"
            ) from None
    return validate.number(label, value, minimum=minimum, maximum=maximum, strict_min=strict_min)


def _allowed(minimum: float | None, maximum: float | None, strict_min: bool = False) -> str:
    low = "" if minimum is None else (f"> {minimum:g}" if strict_min else f">= {minimum:g}")
    high = "" if maximum is None else f"<= {maximum:g}"
    parts = " and ".join(p for p in (low, high) if p)
    return f" ({parts})" if parts else ""


def _example(minimum: float | None, maximum: float | None) -> str:
    if maximum is not None and maximum <= 1:
        return "0.5"
    return "2e12" if maximum is None or maximum >= 2e12 else f"{max(minimum or 0, 1):g}"


def parse_whole(
    label: str, text: object, *, minimum: int | None = None, maximum: int | None = None
) -> int:
    """A whole number typed into a text box ('2,048', '4') -> int; '2.5', 'four',
    'inf' -> ValueError.

    ``parse_whole("batch", "0", minimum=1, maximum=64)`` says
    ``batch must be a whole number from 1 to 64, got '0'``.
    """
    if minimum is not None and maximum is not None:
        allowed = f" from {minimum:,} to {maximum:,}"
    elif minimum is not None:
        allowed = f" >= {minimum:,}"
    else:
        allowed = "" if maximum is None else f" <= {maximum:,}"
    message = f"{label} must be a whole number{allowed}, got {{}}"
    try:
        value = parse_number(label, text)
    except ValueError:
        raise ValueError(message.format(repr(text))) from None
    message = message.format(str(text).strip())  # a number: shown with separators
    too_low = minimum is not None and value < minimum
    too_high = maximum is not None and value > maximum
    if value != int(value) or too_low or too_high:
        raise ValueError(message)
    return int(value)


def parse_optional(label: str, text: object, **limits: Any) -> float | None:
    """A number, or None when the box is left blank (an option the learner leaves out)."""
    return None if str(text).strip() == "" else parse_number(label, text, **limits)


def parse_percent(
    label: str, text: object, *, allow_zero: bool = False, maximum: float = 100
) -> float:
    """A percentage typed in a box -> a fraction; the message speaks in percent, as on screen."""
    return parse_number(label, text, minimum=0, maximum=maximum, strict_min=not allow_zero) / 100


# A plain number in a message: not inside a word ("fp16", "A100", "2e12"), a quoted value ('2.5')
# or a number that already has separators ("100,000").
_NUMBER = re.compile(r"(?<![\w.'\"])(?<!\d,)-?\d+(?:\.\d+)?(?![\w.'\"])(?!,\d)")


def _format_number(match: re.Match) -> str:
    x = float(match.group())
    if math.isfinite(x) and x == int(x) and abs(x) < 1e15:
        return f"{int(x):,}"
    return f"{x:,.6g}"


def friendly_message(message: str, labels: Mapping[str, str]) -> str:
    """``message`` with a leading parameter name replaced by its on-screen label, numbers formatted.

    ``friendly_message("seq_len must be <= 4096, got 100000", {"seq_len": "sequence length"})``
    -> ``"sequence length must be <= 4,096, got 100,000"``.
    """
    already_labelled = any(message.startswith(f"{label} ") for label in labels.values())
    for name in sorted(labels, key=len, reverse=True):
        if already_labelled:
            break
        if re.match(rf"{re.escape(name)}( (must|is|has|does|and|cannot)|=| ['\"])", message):
            message = labels[name] + message[len(name) :]
            break
    for name in sorted(labels, key=len, reverse=True):  # code names further on, e.g. bytes_moved
        if "_" in name:
            message = re.sub(rf"\b{re.escape(name)}\b", labels[name], message)
    return _NUMBER.sub(_format_number, message)


def _plain(html_text: str) -> str:
    """Rough plain text of an HTML fragment (for the text form of a calculator)."""
    text = re.sub(r"</(tr|div|p|caption)>", "\n", html_text)
    text = re.sub(r"</td><td[^>]*>", "  ", text)
    text = re.sub(r"<[^>]+>", "", text)
    return html.unescape("\n".join(line.strip() for line in text.splitlines() if line.strip()))


class Calculator:
    """Controls + an HTML output, recomputed whenever a control changes.

    ``compute(values)`` parses the controls (``parse_number`` etc.) and calls the calculator; its
    return value is kept as :attr:`result` (what tests check). ``render(result, values)`` turns it
    into HTML. Without ``render``, ``compute`` returns the HTML itself (``result`` is then that
    HTML).
    """

    def __init__(
        self,
        title: str,
        controls: Mapping[str, widgets.ValueWidget],
        compute: Callable[[dict[str, Any]], Any],
        labels: Mapping[str, str] | None = None,
        *,
        render: Callable[[Any, dict[str, Any]], str] | None = None,
    ):
        self.title = title
        self.controls = dict(controls)
        #: parameter name -> on-screen label, for error messages (controls' descriptions first).
        self.labels = {
            name: control.description
            for name, control in self.controls.items()
            if getattr(control, "description", "")
        }
        self.labels.update(labels or {})
        self.output = widgets.HTML()
        #: The calculator's result for the values on screen; None while an error is shown.
        self.result: Any = None
        self._compute = compute
        self._render = render
        for control in self.controls.values():
            control.observe(lambda _change: self.update(), names="value")
        self.update()

    def values(self) -> dict[str, Any]:
        return {name: control.value for name, control in self.controls.items()}

    def update(self) -> None:
        """Recompute the output; a ValueError's message is shown in red instead of a result.

        Any other exception is a bug: the output says so (the previous result never stays on
        screen) and the exception propagates, so tests see it.
        """
        self.result = None
        values = self.values()
        try:
            result = self._compute(values)
            page = result if self._render is None else self._render(result, values)
        except ValueError as exc:
            self.output.value = error_html(friendly_message(str(exc), self.labels))
            return
        except Exception:
            self.output.value = error_html(
                "These values could not be computed (a bug in the course: please report it)."
            )
            raise
        self.result = result
        self.output.value = page

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
        bundle = widget_bundle(self.widget(), include=include, exclude=exclude)
        bundle["text/plain"] = repr(self)
        return bundle


def widget_bundle(widget: widgets.Widget, include=None, exclude=None) -> dict:
    """A widget's display data on ipywidgets 8 (its ``_repr_mimebundle_``) and on ipywidgets 7
    (Colab's 7.7.1, which has no ``_repr_mimebundle_`` and displays through ``_ipython_display_``:
    the same widget-view data, built here as ipywidgets 7 builds it)."""
    own = getattr(widget, "_repr_mimebundle_", None)
    if own is not None:
        return own(include=include, exclude=exclude) or {}
    view = {"version_major": 2, "version_minor": 0, "model_id": widget.model_id}
    return {"text/plain": repr(widget), "application/vnd.jupyter.widget-view+json": view}


def dropdown(description: str, options, value) -> widgets.Dropdown:
    return widgets.Dropdown(
        description=description,
        options=options,
        value=value,
        style={"description_width": "initial"},
    )


def text_box(description: str, value: str) -> widgets.Text:
    return widgets.Text(
        description=description, value=value, style={"description_width": "initial"}
    )


def gpu_options() -> list[tuple[str, str]]:
    return [(g.name, key) for key, g in hardware.GPUS.items()]


def gpu_and_dependent(
    gpu: str, label: str, value: str, options_for: Callable[[str], list[str]]
) -> tuple[widgets.Dropdown, widgets.Dropdown]:
    """A GPU menu and a menu labelled ``label`` whose options follow the GPU (``options_for(key)``,
    e.g. the precisions that GPU has): on a change of GPU it keeps its value where the new GPU
    offers it, else takes the first option."""
    card = hardware.gpu(gpu)
    choices = options_for(card.key)
    gpu_box = dropdown("GPU", gpu_options(), card.key)
    dependent = dropdown(label, choices, value if value in choices else choices[0])

    def follow_gpu(change) -> None:
        available = options_for(change["new"])
        keep = dependent.value if dependent.value in available else available[0]
        dependent.options = available
        dependent.value = keep

    gpu_box.observe(follow_gpu, names="value")
    return gpu_box, dependent
