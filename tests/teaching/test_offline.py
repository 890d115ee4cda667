"""Decks and pages that work behind a firewall, and decks cut along the lessons' structure.

One browser test: lesson 03's deck (a formula, plots, calculators) built into a temporary folder,
served from a loopback HTTP server and opened in Debian's headless Chromium (``test_browser``'s
fixture) with every request to another host aborted. The rest are pure functions over the
notebooks, without a browser.
"""

from __future__ import annotations

import functools
import http.server
import threading
from pathlib import Path
from urllib.parse import urlsplit

import nbformat
import pytest
from browser_setup import CHROMIUM_ARGS
from nbformat.v4 import new_code_cell, new_markdown_cell, new_notebook, new_output
from teaching import offline, site, slides, widget_html

LESSONS = site.lessons()
DECK_LESSON = next(p for p in LESSONS if p.name.startswith("03_"))


# --- slide structure (every deck, no browser) ---------------------------------------------------


def _sections(path: Path) -> list[str]:
    """The lesson's ``##`` headings (outside fenced code)."""
    found = []
    for cell in nbformat.read(path, as_version=4).cells:
        if cell.cell_type == "markdown":
            fenced = False
            for line in cell.source.split("\n"):
                if line.lstrip().startswith(("```", "~~~")):
                    fenced = not fenced
                elif not fenced and line.startswith("## "):
                    found.append(line.strip())
    return found


@pytest.fixture(scope="module")
def decks() -> dict[str, nbformat.NotebookNode]:
    return {p.stem: slides.deck_notebook(p) for p in LESSONS}


def test_every_section_of_every_lesson_starts_a_slide(decks):
    for path in LESSONS:
        starts = [
            c.source.split("\n", 1)[0].strip()
            for c in decks[path.stem].cells
            if c.get("metadata", {}).get("slideshow", {}).get("slide_type") == "slide"
        ]
        assert _sections(path), path.name
        missing = [h for h in _sections(path) if h not in starts]
        assert not missing, f"{path.name}: sections that start no slide: {missing}"


def test_no_slide_of_any_deck_exceeds_the_text_budget(decks):
    over = [
        f"{name} slide {i}: {lines} lines"
        for name, nb in decks.items()
        for i, cells in enumerate(slides.slides_of(nb))
        if (lines := sum(slides.slide_lines(c) for c in cells)) > slides.SLIDE_LINES
    ]
    assert not over, over


def test_long_text_moves_to_the_notes_and_sections_split_where_cells_join():
    takeaway = "> **Takeaway:** the point.\n\n## 2. Next section\n\n" + "word " * 400
    nb = new_notebook(cells=[new_markdown_cell("# 03 · Title"), new_markdown_cell(takeaway)])
    pieces = slides._split_sections(nb.cells[1])
    assert [p.metadata["slideshow"]["slide_type"] for p in pieces] == ["subslide", "slide"]
    shown, notes = slides._fit(pieces[1])
    assert shown.source == "## 2. Next section"  # 400 words do not fit: all go to the notes
    assert notes.metadata["slideshow"]["slide_type"] == "notes" and "word" in notes.source
    short = new_markdown_cell("## 3. Short\n\nA line.")
    short.metadata["slideshow"] = {"slide_type": "slide"}
    assert slides._fit(short) == [short]
    boxed = new_markdown_cell("## 4. Section\n\nText.\n\n### The sources say: x\n\nQuote.")
    assert [p.metadata["slideshow"]["slide_type"] for p in slides._split_sections(boxed)] == [
        "slide",
        "subslide",
    ]
    fenced = new_markdown_cell("Text\n```\n## not a heading\n```")
    assert len(slides._split_sections(fenced)) == 1


def test_deck_links_point_into_the_website():
    text = "See [FLOP](glossary.md#flop), [lesson 4](04_model_memory.ipynb) and [x](https://a.b/c)."
    assert slides.site_links(text) == (
        "See [FLOP](../site/notebooks/glossary.html#flop), "
        "[lesson 4](../site/notebooks/04_model_memory.html) and [x](https://a.b/c)."
    )


def test_no_deck_keeps_a_link_to_a_notebook_or_a_markdown_file(decks):
    import re

    dead = [
        (name, link)
        for name, nb in decks.items()
        for c in nb.cells
        if c.cell_type == "markdown"
        for link in re.findall(r"\]\(([^)\s]+)", c.source)
        if not urlsplit(link).scheme and urlsplit(link).path.endswith((".ipynb", ".md"))
    ]
    assert not dead, dead[:10]


# --- widgets drawn from their saved state -------------------------------------------------------


def _widget_notebook() -> nbformat.NotebookNode:
    def model(name, **state):
        return {"model_name": name, "model_module": "@jupyter-widgets/controls", "state": state}

    models = {
        "box": model("VBoxModel", children=["IPY_MODEL_menu", "IPY_MODEL_out", "IPY_MODEL_bar"]),
        "menu": model(
            "DropdownModel", description="GPU", _options_labels=["A100", "H100"], index=1
        ),
        "out": model("HTMLModel", value="<b>fits: 61 GiB of 80</b>"),
        "bar": model("FloatProgressModel", value=3.0, max=4.0, layout="IPY_MODEL_lay"),
        "lay": {"model_name": "LayoutModel", "state": {"width": "50%", "height": None}},
    }
    cell = new_code_cell("calculator()")
    view = {"model_id": "box", "version_major": 2, "version_minor": 0}
    cell.outputs = [new_output("display_data", data={site.WIDGET_MIME: view, "text/plain": "VBox"})]
    lost = new_code_cell("other()")
    lost.outputs = [new_output("display_data", data={site.WIDGET_MIME: {"model_id": "gone"}})]
    lost.outputs[0].data["text/plain"] = "VBox(children=...)"
    nb = new_notebook(cells=[cell, lost])
    nb.metadata["widgets"] = {widget_html.STATE_MIME: {"state": models, "version_major": 2}}
    return nb


def test_a_calculator_is_drawn_from_its_saved_state_and_the_state_is_dropped():
    nb = _widget_notebook()
    assert widget_html.to_html_outputs(nb) == 1
    drawn = nb.cells[0].outputs[0].data
    assert set(drawn) == {"text/html"}
    body = drawn["text/html"]
    assert "<option selected>H100</option>" in body and "<option>A100</option>" in body
    assert "<b>fits: 61 GiB of 80</b>" in body and "GPU" in body
    assert 'max="4.0" value="3.0" style="width: 50%"' in body
    assert nb.cells[1].outputs[0].data == {"text/plain": "VBox(children=...)"}  # no state saved
    assert "widgets" not in nb.metadata


def test_every_widget_the_lessons_save_is_one_the_drawing_knows():
    unknown = {
        (path.name, m["model_name"])
        for path in LESSONS
        for m in nbformat.read(path, as_version=4)
        .metadata.get("widgets", {})
        .get(widget_html.STATE_MIME, {})
        .get("state", {})
        .values()
        if m["model_name"] not in widget_html.DRAWN
        and not m["model_name"].endswith("StyleModel")
        and m["model_name"] != "LayoutModel"
    }
    assert not unknown, unknown


# --- nothing from the internet ------------------------------------------------------------------


def test_external_references_finds_scripts_styles_fonts_and_imports():
    page = (
        '<script src="https://cdn.x/require.js"></script><script src="_static/local.js"></script>'
        '<link rel="stylesheet" href="//fonts.x/css"><a href="https://docs.x/">a link is fine</a>'
        "<style>@import 'https://y/z.css'; .a { background: url(img/a.png) }</style>"
        "<script type=\"module\">import mermaid from 'https://m/mermaid.mjs';</script>"
        '<script src="http://127.0.0.1:8000/ok.js"></script>'
    )
    assert offline.external_references(page) == [
        "//fonts.x/css",
        "https://cdn.x/require.js",
        "https://m/mermaid.mjs",
        "https://y/z.css",
    ]
    css = (
        "@font-face { src: url('https://fonts.gstatic.com/a.woff') } .b { background: url(b.png) }"
    )
    assert offline.external_references(css, css=True) == ["https://fonts.gstatic.com/a.woff"]


def test_copied_assets_hold_what_the_decks_load(tmp_path):
    reveal = offline.copy_reveal(tmp_path)
    mathjax = offline.copy_mathjax(tmp_path)
    assert (reveal / "dist/reveal.js").is_file() and (mathjax / "MathJax.js").is_file()
    assert offline.audit(tmp_path) == {"external": [], "missing": []}  # the theme's fonts too


# --- one deck in Chromium, offline --------------------------------------------------------------


class _Quiet(http.server.SimpleHTTPRequestHandler):
    def log_message(self, *args) -> None:
        pass


@pytest.mark.browser
@pytest.mark.timeout(120)
def test_a_deck_works_offline_in_chromium(chromium, tmp_path):  # noqa: F811
    from playwright.sync_api import sync_playwright

    (deck,) = slides.build(tmp_path, [DECK_LESSON])
    assert offline.audit(tmp_path) == {"external": [], "missing": []}
    handler = functools.partial(_Quiet, directory=str(tmp_path))
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    blocked: list[str] = []

    def only_loopback(route):
        if urlsplit(route.request.url).hostname in ("127.0.0.1", "localhost"):
            route.continue_()
        else:
            blocked.append(route.request.url)
            route.abort()

    try:
        with sync_playwright() as p:
            browser = p.chromium.launch(executable_path=chromium, headless=True, args=CHROMIUM_ARGS)
            page = browser.new_page(viewport={"width": 1280, "height": 720})
            page.route("**/*", only_loopback)
            page.goto(f"http://127.0.0.1:{server.server_port}/{deck.name}")
            page.wait_for_function("window.Reveal && Reveal.isReady()", timeout=20_000)
            page.evaluate("Reveal.configure({transition: 'none', history: false})")

            # Navigation: the right arrow moves to the next section.
            page.keyboard.press("ArrowRight")
            assert page.evaluate("Reveal.getIndices().h") == 1
            assert page.evaluate("Reveal.getTotalSlides()") > 10

            # Every slide, shown in turn: its height (none over 720 px), and what it holds.
            report = page.evaluate(
                """async () => {
                  const out = {over: [], images: 0, widgets: 0};
                  const slides = Reveal.getSlides();
                  for (const s of slides) {
                    const i = Reveal.getIndices(s);
                    Reveal.slide(i.h, i.v);
                    await new Promise(r => requestAnimationFrame(r));
                    if (s.scrollHeight > 725) out.over.push([i.h, i.v, s.scrollHeight]);
                    for (const img of s.querySelectorAll('img')) {
                      if (img.complete && img.naturalWidth > 100) out.images++;
                    }
                    for (const w of s.querySelectorAll('.cw select, .cw button')) {
                      if (w.getBoundingClientRect().width > 0) { out.widgets++; break; }
                    }
                  }
                  return out;
                }"""
            )
            assert report["over"] == [], f"slides taller than 720 px: {report['over']}"
            assert report["images"] >= 3, report
            assert report["widgets"] >= 1, report

            # A formula typeset by MathJax, with its packaged web font.
            page.wait_for_function(
                "window.MathJax && MathJax.Hub && document.querySelectorAll('.MathJax').length > 0",
                timeout=20_000,
            )
            assert page.evaluate("document.fonts.check('16px \"Source Sans Pro\"')")
            page.screenshot(path=str(tmp_path / "deck.png"))
            browser.close()
    finally:
        server.shutdown()
    assert blocked == [], f"the deck asked the internet for {blocked}"


def test_audit_finds_a_remote_font_and_a_missing_local_script(tmp_path):
    (tmp_path / "deck.html").write_text(
        '<script src="_static/here.js"></script><script src="_static/gone.js"></script>'
        '<img src="data:image/png;base64,iVBOR"><link rel="stylesheet" href="s.css">'
    )
    (tmp_path / "_static").mkdir()
    (tmp_path / "_static" / "here.js").write_text("")
    (tmp_path / "s.css").write_text("@font-face { src: url(https://fonts.x/a.woff) }")
    assert offline.audit(tmp_path) == {
        "external": ["s.css: https://fonts.x/a.woff"],
        "missing": ["deck.html: _static/gone.js"],
    }
