"""Slides for instructor-led classes: ``python -m course slides OUTDIR`` (``make slides``).

Each lesson becomes a Reveal.js deck (nbconvert's slides exporter, as ``jupyter nbconvert --to
slides`` does) from cells tagged with Jupyter's ``slideshow`` metadata. The tags follow one rule
(:func:`slide_type`), so they can be re-applied at any time (``python -m course slides --tag``):
metadata only, the notebooks are not executed and their sources and outputs are untouched.

The rule: the lesson's title and every ``##`` section start a slide; ``###`` subsections (the
"sources say" boxes), takeaways and code cells whose output is a plot or a calculator start a
sub-slide (down arrow); other Markdown becomes speaker notes (press *S* in the deck); other code is
skipped. Cells without tags (a lesson or a cell written after the last tagging) are tagged by the
same rule in the copy the deck is built from. Widgets show their static snapshot, with the site's note to run the
notebook; present them live in JupyterLab (see the instructors' guide). Reveal.js itself is loaded
from its CDN when the deck is opened. Layer 5 (entry point).
"""

from __future__ import annotations

import sys
from pathlib import Path

import nbformat

from course.publishing.site import WIDGET_MIME, lessons

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


def _deck_notebook(path: Path) -> nbformat.NotebookNode:
    """The notebook a deck is built from: tagged (by the rule where a cell has no tag), static widgets."""
    from course.publishing.site import WIDGET_NOTE

    nb = nbformat.read(path, as_version=4)
    tag(nb, only_missing=True)
    nb.metadata.pop("widgets", None)
    cells = []
    for cell in nb.cells:
        cells.append(cell)
        outputs = cell.get("outputs", []) if cell.cell_type == "code" else []
        if any(WIDGET_MIME in o.get("data", {}) for o in outputs):
            for o in outputs:
                o.get("data", {}).pop(WIDGET_MIME, None)
            note = nbformat.v4.new_markdown_cell(WIDGET_NOTE)
            note.metadata["slideshow"] = {"slide_type": "-"}
            cells.append(note)
    nb.cells = cells
    return nb


def build(out_dir: str | Path, paths: list[Path] | None = None) -> list[Path]:
    """Write one ``NN_slug.slides.html`` deck per lesson into ``out_dir``; return the decks."""
    from nbconvert import SlidesExporter

    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    exporter = SlidesExporter()
    exporter.exclude_input = True  # the story and its results; the code runs live in JupyterLab
    exporter.exclude_output_prompt = True
    decks = []
    for path in paths or lessons():
        body, _ = exporter.from_notebook_node(_deck_notebook(path))
        deck = out / f"{path.stem}.slides.html"
        deck.write_text(body, encoding="utf-8")
        decks.append(deck)
    return decks


def run_slides(out_dir: str, retag: bool = False) -> int:
    """``python -m course slides OUTDIR [--tag]``: (re-tag, then) build the decks; 0 or 1."""
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
