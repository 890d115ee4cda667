"""Slides for instructor-led classes: ``python -m teaching slides OUTDIR`` (``make slides``).

Each lesson becomes a Reveal.js deck (nbconvert's slides exporter, as ``jupyter nbconvert --to
slides`` does) from cells tagged with Jupyter's ``slideshow`` metadata. The tags follow one rule
(:func:`slide_type`), so they can be re-applied at any time (``python -m teaching slides --tag``):
metadata only, the notebooks are not executed and their sources and outputs are untouched.

The rule: the lesson's title and every ``##`` section start a slide; ``###`` subsections (the
"sources say" boxes), takeaways and code cells whose output is a plot or a calculator start a
sub-slide (down arrow); other Markdown becomes speaker notes (press *S* in the deck); other code is
skipped. Cells without tags (a lesson or a cell written after the last tagging) are tagged by the
same rule in the copy the deck is built from. Present widgets live in JupyterLab (see the
instructors' guide); a deck draws their saved state (``teaching.widget_html``).

The deck follows the lesson's structure, whatever the cells' boundaries (:func:`deck_notebook`, on
the copy only): a Markdown cell is split before every ``#``/``##``/``###`` heading, so each section
starts a slide even where a takeaway and the next heading share a cell; text beyond a slide's budget
(:data:`SLIDE_LINES` lines of a 1280x720 slide, :func:`slide_lines`) becomes that slide's speaker
notes; links to lessons and the glossary point into the website built beside the decks
(``build/site``). Decks load nothing from the internet: Reveal.js, MathJax and their fonts are
copied from pinned packages into ``OUTDIR/_static`` (``teaching.offline``).
"""

from __future__ import annotations

import json
import math
import re
import sys
from pathlib import Path

import nbformat

from teaching import offline, widget_html
from teaching.site import WIDGET_MIME, WIDGET_NOTE, lessons

PLOT_MIMES = ("image/png", "image/svg+xml", WIDGET_MIME)


def _heading_level(source: str) -> int:
    first = source.lstrip().split("\n", 1)[0]
    hashes = len(first) - len(first.lstrip("#"))
    return hashes if 0 < hashes <= 6 and first[hashes : hashes + 1] == " " else 0


def slide_type(cell: nbformat.NotebookNode) -> str:
    """The slide type the rule gives ``cell``: slide, subslide, notes or skip."""
    if cell.cell_type == "markdown":
        level = _heading_level(cell.source)
        if level in (1, 2):
            return "slide"
        if level == 3 or "**Takeaway" in cell.source:
            return "subslide"
        return "notes"
    if cell.cell_type == "code":
        shown = any(
            mime in output.get("data", {})
            for output in cell.get("outputs", [])
            for mime in PLOT_MIMES
        )
        return "subslide" if shown else "skip"
    return "skip"


def tag(nb: nbformat.NotebookNode, *, only_missing: bool = False) -> int:
    """Set every cell's ``slideshow`` metadata by the rule (``only_missing``: only cells without
    one, e.g. cells added since the last tagging); return how many cells changed."""
    changed = 0
    for cell in nb.cells:
        if only_missing and "slideshow" in cell.metadata:
            continue
        want = {"slide_type": slide_type(cell)}
        if cell.metadata.get("slideshow") != want:
            cell.metadata["slideshow"] = want
            changed += 1
    return changed


def is_tagged(nb: nbformat.NotebookNode) -> bool:
    return any("slideshow" in cell.metadata for cell in nb.cells)


def tag_lessons(paths: list[Path] | None = None) -> list[Path]:
    """Re-tag the lesson notebooks in place (metadata only); return those that changed."""
    changed = []
    for path in paths or lessons():
        nb = nbformat.read(path, as_version=4)
        if tag(nb):
            nbformat.write(nb, path)
            changed.append(path)
    return changed


#: A slide's size (pixels) and its text budget, in lines of the deck's body text (20 px type,
#: about 16 words a line at 1280 px); what does not fit goes to the speaker notes.
SLIDE_WIDTH, SLIDE_HEIGHT = 1280, 720
SLIDE_LINES = 18
WORDS_PER_LINE = 16
#: Lines a heading takes (large type, with its margin), and a figure or a drawn widget (both are
#: held below a fixed height by the deck's style, :data:`DECK_CSS`).
HEADING_LINES = {1: 4, 2: 3, 3: 2}
FIGURE_LINES = 14
#: Where the website lies, seen from the decks (``make slides`` -> build/slides, ``make site`` ->
#: build/site).
SITE_FROM_DECKS = "../site/"

DECK_CSS = f"""
html, body, main {{ width: 100%; height: 100%; margin: 0; overflow: hidden; }}
.reveal {{ height: 100%; }}
.reveal .jp-OutputArea-output pre {{ max-height: {FIGURE_LINES * 30}px; overflow: auto; font-size: 14px; }}
.reveal .jp-RenderedMarkdown.jp-OutputArea-output {{ max-height: {SLIDE_LINES * 30}px; overflow: auto; }}
.reveal .jp-OutputArea-output img {{ max-height: {FIGURE_LINES * 30}px; width: auto; }}
.reveal .cw {{ max-height: {FIGURE_LINES * 30 + 60}px; overflow: auto; font-size: 16px; }}
.reveal .jp-RenderedHTMLCommon table {{ font-size: 0.85em; }}
"""

_HEADING = re.compile(r"^(#{1,6}) ")
_FENCE = re.compile(r"^\s*(```|~~~)")


_ITEM = re.compile(r"^\s{0,3}([-*+]|\d+\.) ")
CHARS_PER_LINE = 95


def _blocks(source: str) -> list[str]:
    """Markdown split into blocks: paragraphs, list items, tables and fenced code (kept whole)."""
    blocks, current, fenced = [], [], False
    for line in source.split("\n"):
        if _FENCE.match(line):
            fenced = not fenced
        if not fenced and not line.strip():
            if current:
                blocks.append("\n".join(current))
                current = []
            continue
        if not fenced and (_HEADING.match(line) or _ITEM.match(line)) and current:
            blocks.append("\n".join(current))
            current = []
        current.append(line)
    if current:
        blocks.append("\n".join(current))
    return blocks


def _block_lines(block: str) -> int:
    """Lines a Markdown block fills on a slide (the budget's unit)."""
    heading = _HEADING.match(block)
    if heading:
        return HEADING_LINES.get(len(heading.group(1)), 2)
    if _FENCE.match(block) or block.lstrip().startswith("|"):
        return len(block.split("\n"))
    if "![" in block or "<img" in block:
        return FIGURE_LINES
    text = re.sub(r"\]\([^)]*\)|[*_`>#|\\]", "", block)
    gap = 0 if _ITEM.match(block) else 1  # list items sit close; paragraphs have a gap
    return max(1, math.ceil(len(" ".join(text.split())) / CHARS_PER_LINE)) + gap


def _join(blocks: list[str]) -> str:
    """Blocks back into Markdown: list items one per line (a tight list), the rest apart."""
    text = ""
    for block in blocks:
        tight = text and _ITEM.match(block) and _ITEM.match(text.rsplit("\n\n", 1)[-1])
        text += ("\n" if tight else "\n\n" if text else "") + block
    return text


def _output_lines(output: dict) -> int:
    data = output.get("data", {})
    if any(m in data for m in (*PLOT_MIMES, "text/html")):
        return FIGURE_LINES
    if "text/markdown" in data:
        lines = sum(_block_lines(b) for b in _blocks(str(data["text/markdown"])))
        return min(lines, SLIDE_LINES)  # held there by the deck's style (it scrolls)
    text = output.get("text") or data.get("text/plain") or ""
    return min(len(str(text).split("\n")), FIGURE_LINES)


def slide_lines(cell: nbformat.NotebookNode) -> int:
    """Lines a cell fills on a slide: its Markdown blocks, or its outputs (a figure or a widget
    is held to :data:`FIGURE_LINES` by the deck's style, and so is long text)."""
    if cell.cell_type == "markdown":
        return sum(_block_lines(b) for b in _blocks(cell.source))
    if cell.cell_type == "code":
        return sum(_output_lines(o) for o in cell.get("outputs", []))
    return 0


def _shown_outputs(cell: nbformat.NotebookNode) -> list:
    """Outputs a deck shows: results and printed text, not warnings, progress bars or errors."""
    return [
        o
        for o in cell.get("outputs", [])
        if o.get("output_type") in ("display_data", "execute_result")
        or (o.get("output_type") == "stream" and o.get("name") == "stdout")
    ]


def _split_outputs(cell: nbformat.NotebookNode) -> list[nbformat.NotebookNode]:
    """A shown code cell with several outputs (a table, a figure, a finding) as one sub-slide
    per output, so that each fits."""
    kind = cell.metadata.get("slideshow", {}).get("slide_type")
    if cell.cell_type != "code" or kind not in ("slide", "subslide"):
        return [cell]
    outputs = _shown_outputs(cell)
    if len(outputs) <= 1:
        cell.outputs = outputs
        return [cell]
    cells = []
    for i, output in enumerate(outputs):
        part = nbformat.v4.new_code_cell(cell.source)
        part.outputs = [output]
        part.metadata["slideshow"] = {"slide_type": kind if i == 0 else "subslide"}
        cells.append(part)
    return cells


def _split_sections(cell: nbformat.NotebookNode) -> list[nbformat.NotebookNode]:
    """A Markdown cell cut before every ``#``, ``##`` and ``###`` heading after its first line (a
    takeaway and the next section, or a section and its "sources say" box, often share a cell);
    each piece tagged by the rule (a section starts a slide, a box a sub-slide)."""
    if cell.cell_type != "markdown":
        return [cell]
    pieces, current, fenced = [], [], False
    for line in cell.source.split("\n"):
        if _FENCE.match(line):
            fenced = not fenced
        heading = _HEADING.match(line)
        if (
            not fenced
            and heading
            and len(heading.group(1)) <= 3
            and any(x.strip() for x in current)
        ):
            pieces.append("\n".join(current).strip("\n"))
            current = []
        current.append(line)
    pieces.append("\n".join(current).strip("\n"))
    if len(pieces) == 1:
        return [cell]
    cells = []
    for text in pieces:
        piece = nbformat.v4.new_markdown_cell(text)
        piece.metadata["slideshow"] = {"slide_type": slide_type(piece)}
        cells.append(piece)
    return cells


def _fit(cell: nbformat.NotebookNode) -> list[nbformat.NotebookNode]:
    """A slide's Markdown within :data:`SLIDE_LINES`; the rest follows as its speaker notes."""
    kind = cell.metadata.get("slideshow", {}).get("slide_type")
    if cell.cell_type != "markdown" or kind not in ("slide", "subslide", "-"):
        return [cell]
    kept, rest, used = [], [], 0
    for block in _blocks(cell.source):
        lines = _block_lines(block)
        if not rest and (not kept or used + lines <= SLIDE_LINES):
            kept.append(block)
            used += lines
        else:
            rest.append(block)
    if not rest:
        return [cell]
    shown = nbformat.v4.new_markdown_cell(_join(kept))
    shown.metadata["slideshow"] = {"slide_type": kind}
    notes = nbformat.v4.new_markdown_cell(_join(rest))
    notes.metadata["slideshow"] = {"slide_type": "notes"}
    return [shown, notes]


_LESSON_LINK = re.compile(r"\]\((?:\./)?(\d\d_[\w-]+)\.ipynb(#[^)\s]*)?\)")
_GLOSSARY_LINK = re.compile(r"\]\((?:\./)?glossary\.md(#[^)\s]*)?\)")


def site_links(source: str, site: str = SITE_FROM_DECKS) -> str:
    """Markdown links to lessons and the glossary, pointed at their pages in the website."""
    source = _LESSON_LINK.sub(
        lambda m: f"]({site}notebooks/{m.group(1)}.html{m.group(2) or ''})", source
    )
    return _GLOSSARY_LINK.sub(
        lambda m: f"]({site}notebooks/glossary.html{m.group(1) or ''})", source
    )


def slides_of(nb: nbformat.NotebookNode) -> list[list[nbformat.NotebookNode]]:
    """The deck's slides (each a slide or sub-slide and the cells shown with it), notes and skipped
    cells left out."""
    slides: list[list[nbformat.NotebookNode]] = []
    for cell in nb.cells:
        kind = cell.metadata.get("slideshow", {}).get("slide_type", "-")
        if kind in ("slide", "subslide") or (kind in ("-", "fragment") and not slides):
            slides.append([cell])
        elif kind in ("-", "fragment"):
            slides[-1].append(cell)
    return slides


def deck_notebook(path: Path, site: str = SITE_FROM_DECKS) -> nbformat.NotebookNode:
    """The notebook a deck is built from: tagged (by the rule where a cell has no tag), cut at
    every section, long text moved to notes, links into the website, widgets drawn."""
    nb = nbformat.read(path, as_version=4)
    tag(nb, only_missing=True)
    had_widget = {
        id(c)
        for c in nb.cells
        if any(WIDGET_MIME in o.get("data", {}) for o in c.get("outputs", []))
    }
    cells = []
    for cell in nb.cells:
        if cell.cell_type == "markdown":
            cell.source = site_links(cell.source, site)
        for piece in _split_sections(cell):
            for part in _split_outputs(piece):
                cells.extend(_fit(part))
        if id(cell) in had_widget:
            note = nbformat.v4.new_markdown_cell(WIDGET_NOTE)
            note.metadata["slideshow"] = {"slide_type": "notes"}
            cells.append(note)
    nb.cells = cells
    widget_html.to_html_outputs(nb)
    return nb


_TEMPLATE = """\
{%- extends 'reveal/index.html.j2' -%}
{%- block html_head_js -%}{%- endblock html_head_js -%}
{%- block jupyter_widgets -%}{%- endblock jupyter_widgets -%}
{%- block html_head_js_mathjax -%}
<script type="text/x-mathjax-config">
MathJax.Hub.Config(MATHJAX_CONFIG);
MathJax.Hub.Config({tex2jax: {inlineMath: [['$','$'], ['\\\\(','\\\\)']],
  displayMath: [['$$','$$'], ['\\\\[','\\\\]']], processEscapes: true, processEnvironments: true}});
</script>
<script src="{{ resources.mathjax_url }}"></script>
{%- endblock html_head_js_mathjax -%}
{%- block html_head_css -%}<style type="text/css">DECK_CSS</style>{%- endblock html_head_css -%}
{% block footer_js %}
<script src="{{ reveal_url_prefix }}/dist/reveal.js"></script>
<script>
Reveal.initialize({
  controls: true, progress: true, history: true, center: true,
  transition: "{{ reveal_transition }}", slideNumber: "{{ reveal_number }}",
  width: {{ reveal_width }}, height: {{ reveal_height }},
  dependencies: [{src: "{{ reveal_url_prefix }}/plugin/notes/notes.js", async: true}]
});
Reveal.addEventListener("slidechanged", function () {
  if (window.MathJax && MathJax.Hub) { MathJax.Hub.Rerender(Reveal.getCurrentSlide()); }
});
</script>
{% endblock footer_js %}
"""


def _exporter(static: str = "_static"):
    """nbconvert's slides exporter with a template that loads everything from ``static``."""
    import jinja2
    from nbconvert import SlidesExporter

    template = _TEMPLATE.replace("MATHJAX_CONFIG", json.dumps(offline.MATHJAX_CONFIG))
    exporter = SlidesExporter(
        extra_loaders=[
            jinja2.DictLoader({"course_deck.html.j2": template.replace("DECK_CSS", DECK_CSS)})
        ],
        template_file="course_deck.html.j2",
        reveal_url_prefix=f"{static}/{offline.REVEAL_DIR}",
        mathjax_url=f"{static}/{offline.MATHJAX_DIR}/{offline.MATHJAX_ENTRY}",
        reveal_theme="white",  # its fonts are packaged ("simple" fetches Google's)
        reveal_width=str(SLIDE_WIDTH),
        reveal_height=str(SLIDE_HEIGHT),
    )
    exporter.exclude_input = True  # the story and its results; the code runs live in JupyterLab
    exporter.exclude_output_prompt = True
    return exporter


def build(out_dir: str | Path, paths: list[Path] | None = None) -> list[Path]:
    """Write one ``NN_slug.slides.html`` deck per lesson into ``out_dir``, and the files they load
    into ``out_dir/_static``; return the decks."""
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    offline.copy_reveal(out / "_static")
    offline.copy_mathjax(out / "_static")
    exporter = _exporter()
    decks = []
    for path in paths or lessons():
        body, _ = exporter.from_notebook_node(deck_notebook(path))
        deck = out / f"{path.stem}.slides.html"
        deck.write_text(body, encoding="utf-8")
        decks.append(deck)
    return decks


def run_slides(out_dir: str, retag: bool = False) -> int:
    """``python -m teaching slides OUTDIR [--tag]``: (re-tag, then) build the decks; 0 or 1."""
    if retag:
        for path in tag_lessons():
            print(f"tagged {path.name}")
    try:
        decks = build(out_dir)
    except Exception as exc:  # an exporter error names the notebook's problem
        print(f"the slides build failed: {exc}", file=sys.stderr)
        return 1
    print(f"{len(decks)} decks written to {Path(out_dir).resolve()}")
    return 0
