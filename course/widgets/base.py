"""The base of every calculator widget: controls wired to a calculator, the answer shown below.

Each widget (one module per widget in ``course/widgets/``) is built by one small function that
returns a :class:`Calculator`: named ``controls``, an ``output`` (an ``ipywidgets.HTML``) and the
function that turns the controls' values into the output. A bad value never shows a
traceback: the calculator's ``ValueError`` message appears in red where the result would be.
Nothing is printed, so under nbval (which has no widget manager) a cell that shows a calculator
has only its deterministic text form as output.

To add a widget: write a ``_something_html(values) -> str`` that calls the calculator and formats
its result, and a builder that makes the controls and returns ``Calculator(title, controls, fn)``.
Tests drive them by setting ``calc.controls[name].value`` and reading ``calc.output.value``.

Layer 4: calculations live in ``course.compute`` etc.; nothing is computed here.
"""

from __future__ import annotations

import html
import re
from collections.abc import Callable, Mapping
from typing import Any

import ipywidgets as widgets

from course import hardware

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


def dropdown(description: str, options, value) -> widgets.Dropdown:
    return widgets.Dropdown(description=description, options=options, value=value,
                            style={"description_width": "initial"})  # fmt: skip


def text_box(description: str, value: str) -> widgets.Text:
    return widgets.Text(description=description, value=value,
                        style={"description_width": "initial"})  # fmt: skip


def gpu_options() -> list[tuple[str, str]]:
    return [(g.name, key) for key, g in hardware.GPUS.items()]
