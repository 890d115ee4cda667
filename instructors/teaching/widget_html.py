"""A calculator or quiz on a static page: its saved widget state drawn as plain HTML, no JavaScript.

A notebook saved from JupyterLab keeps every widget's last state in its metadata
(``application/vnd.jupyter.widget-state+json``); an output then holds only a reference to its model
and a one-line text fallback. The widget renderer of the web (``@jupyter-widgets/html-manager``)
ships on npm only, not in any package the course installs from PyPI, so the website and the decks
draw the saved state themselves: boxes as flex boxes, an HTML widget as its HTML (the calculators'
results, bars and tables), inputs, menus and buttons with their saved values (shown, inactive: a
static page has no kernel to recompute), a progress bar at its last value. The widgets the course
uses are all drawn (:data:`DRAWN`); any other model falls back to its description.
"""

from __future__ import annotations

import html
from collections.abc import Mapping

STATE_MIME = "application/vnd.jupyter.widget-state+json"
VIEW_MIME = "application/vnd.jupyter.widget-view+json"
REF = "IPY_MODEL_"

#: Layout traits copied as CSS (ipywidgets' names, underscores for hyphens).
_LAYOUT_CSS = (
    "width",
    "min_width",
    "max_width",
    "height",
    "min_height",
    "max_height",
    "margin",
    "padding",
    "display",
    "flex",
    "flex_flow",
    "align_items",
    "align_content",
    "justify_content",
    "border_top",
    "border_right",
    "border_bottom",
    "border_left",
    "overflow",
    "grid_template_columns",
    "grid_template_rows",
    "grid_gap",
    "visibility",
)

#: Styles of the drawn widgets, scoped to ``.cw`` (inlined with each drawing: about 1 kB).
CSS = """\
.cw { font-size: 0.95em; line-height: 1.35; max-width: 100%; overflow-wrap: anywhere; }
.cw-vbox { display: flex; flex-direction: column; gap: 4px; max-width: 100%; }
.cw-hbox { display: flex; flex-direction: row; flex-wrap: wrap; align-items: center; gap: 6px; }
.cw-row { display: flex; flex-wrap: wrap; align-items: center; gap: 6px; margin: 2px 0; }
.cw-label { min-width: 8em; color: #333; }
.cw input[type=text], .cw select { font: inherit; padding: 1px 4px; max-width: 100%; }
.cw button { font: inherit; padding: 2px 10px; border: 1px solid #999; border-radius: 3px;
  background: #eee; color: #111; }
.cw button.cw-on, .cw button.cw-primary { background: #2f6fb0; color: #fff; border-color: #2f6fb0; }
.cw-radio { display: flex; flex-direction: column; }
.cw-progress { width: 12em; }
.cw-html table { border-collapse: collapse; }
.cw-html td, .cw-html th { padding: 1px 6px; }
"""

#: Model names drawn as controls (the rest: boxes, HTML, or a description fallback).
DRAWN = (
    "VBoxModel",
    "HBoxModel",
    "BoxModel",
    "HTMLModel",
    "HTMLMathModel",
    "LabelModel",
    "TextModel",
    "TextareaModel",
    "FloatTextModel",
    "IntTextModel",
    "ButtonModel",
    "DropdownModel",
    "SelectModel",
    "RadioButtonsModel",
    "ToggleButtonsModel",
    "FloatProgressModel",
    "IntProgressModel",
    "CheckboxModel",
)


def _esc(value: object) -> str:
    return html.escape("" if value is None else str(value), quote=True)


def _style(state: Mapping, models: Mapping) -> str:
    ref = state.get("layout")
    layout = models.get(ref[len(REF) :], {}).get("state", {}) if isinstance(ref, str) else {}
    css = [
        f"{name.replace('_', '-')}: {layout[name]}"
        for name in _LAYOUT_CSS
        if layout.get(name) not in (None, "")
    ]
    return f' style="{_esc("; ".join(css))}"' if css else ""


def _labelled(state: Mapping, control: str) -> str:
    label = state.get("description") or ""
    if not label:
        return control
    return f'<div class="cw-row"><span class="cw-label">{_esc(label)}</span>{control}</div>'


def _options(state: Mapping) -> list[str]:
    return [str(o) for o in state.get("_options_labels", [])]


def _draw(model_id: str, models: Mapping, depth: int = 0) -> str:
    model = models.get(model_id)
    if model is None or depth > 50:
        return ""
    name, state = model.get("model_name", ""), model.get("state", {})
    style = _style(state, models)
    if name in ("VBoxModel", "HBoxModel", "BoxModel"):
        kind = "cw-hbox" if name == "HBoxModel" else "cw-vbox"
        children = "".join(
            _draw(ref[len(REF) :], models, depth + 1)
            for ref in state.get("children", [])
            if isinstance(ref, str) and ref.startswith(REF)
        )
        return f'<div class="{kind}"{style}>{children}</div>'
    if name in ("HTMLModel", "HTMLMathModel"):  # the course's own HTML: results, bars, tables
        return _labelled(state, f'<div class="cw-html"{style}>{state.get("value") or ""}</div>')
    if name == "LabelModel":
        return f'<div class="cw-label"{style}>{_esc(state.get("value"))}</div>'
    if name in ("TextModel", "FloatTextModel", "IntTextModel", "TextareaModel"):
        control = (
            f'<input type="text" readonly value="{_esc(state.get("value"))}" '
            f'placeholder="{_esc(state.get("placeholder"))}"{style}>'
        )
        return _labelled(state, control)
    if name == "ButtonModel":
        cls = "cw-primary" if state.get("button_style") == "primary" else ""
        return f'<button class="{cls}" disabled{style}>{_esc(state.get("description"))}</button>'
    if name in ("DropdownModel", "SelectModel"):
        chosen = state.get("index")
        options = "".join(
            f"<option{' selected' if i == chosen else ''}>{_esc(o)}</option>"
            for i, o in enumerate(_options(state))
        )
        return _labelled(state, f"<select disabled{style}>{options}</select>")
    if name == "RadioButtonsModel":
        chosen = state.get("index")
        radios = "".join(
            f'<label><input type="radio" disabled{" checked" if i == chosen else ""}> '
            f"{_esc(o)}</label>"
            for i, o in enumerate(_options(state))
        )
        return _labelled(state, f'<div class="cw-radio"{style}>{radios}</div>')
    if name == "ToggleButtonsModel":
        chosen = state.get("index")
        buttons = "".join(
            f'<button disabled class="{"cw-on" if i == chosen else ""}">{_esc(o)}</button>'
            for i, o in enumerate(_options(state))
        )
        return _labelled(state, f'<div class="cw-hbox"{style}>{buttons}</div>')
    if name in ("FloatProgressModel", "IntProgressModel"):
        bar = (
            f'<progress class="cw-progress" max="{_esc(state.get("max", 100))}" '
            f'value="{_esc(state.get("value", 0))}"{style}></progress>'
        )
        return _labelled(state, bar)
    if name == "CheckboxModel":
        checked = " checked" if state.get("value") else ""
        return _labelled(state, f'<input type="checkbox" disabled{checked}>')
    return f'<div class="cw-other">{_esc(state.get("description") or name)}</div>'


def render(view: Mapping, notebook_metadata: Mapping) -> str | None:
    """HTML for one widget output (its ``widget-view+json`` data), from the notebook's saved state;
    ``None`` when the state was not saved (then the text fallback is all there is)."""
    models = notebook_metadata.get("widgets", {}).get(STATE_MIME, {}).get("state", {})
    model_id = view.get("model_id", "")
    if model_id not in models:
        return None
    return f'<style>{CSS}</style><div class="cw">{_draw(model_id, models)}</div>'


def to_html_outputs(nb) -> int:
    """Replace every widget output of ``nb`` whose state was saved by its drawing (``text/html``),
    drop the saved state; return how many were drawn. The text fallback stays for the others."""
    drawn = 0
    for cell in nb.cells:
        if cell.cell_type != "code":
            continue
        for output in cell.get("outputs", []):
            data = output.get("data", {})
            if VIEW_MIME not in data:
                continue
            body = render(data[VIEW_MIME], nb.metadata)
            del data[VIEW_MIME]
            if body is not None:
                data.pop("text/plain", None)
                data["text/html"] = body
                drawn += 1
    nb.metadata.pop("widgets", None)
    return drawn
