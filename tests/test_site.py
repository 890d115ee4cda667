"""The course website (``make site``): every lesson is a page, no link is broken, keys stay out.

One build per test session (about 20 s on 2 busy cores) into a temporary folder; the browser test
opens the built home page and lessons in Debian's headless Chromium (as ``tests/test_browser.py``
does), with every request off the machine aborted, and checks that a heading, a plot image, a
formula (MathJax from the build) and a calculator (drawn from its saved state) render.
"""

from __future__ import annotations

import os
import shutil
import time
from pathlib import Path

import pytest
from test_browser import CHROMIUM_ARGS

from course.publishing import offline, site

BUILD_BUDGET_S = 120  # the limit for the build on 2 cores


@pytest.fixture(scope="module")
def built(tmp_path_factory) -> Path:
    start = time.perf_counter()
    out = site.build(tmp_path_factory.mktemp("site") / "html")
    elapsed = time.perf_counter() - start
    assert elapsed < BUILD_BUDGET_S, f"the site took {elapsed:.0f} s to build"
    return out


def test_every_lesson_notebook_is_a_page_in_the_table_of_contents(built):
    index = (built / "index.html").read_text()
    names = [p.stem for p in sorted((site.ROOT / "notebooks").glob("*.ipynb"))]
    assert names, "no lessons found"
    for name in names:
        assert (built / "notebooks" / f"{name}.html").is_file(), name
        assert f'href="notebooks/{name}.html"' in index, f"{name} is not in the sidebar"
    for page in ("notebooks/glossary.html", "instructors/guide.html", "CONTRIBUTING.html"):
        assert (built / page).is_file(), page


def test_built_site_has_no_broken_links_and_no_answer_keys(built):
    assert site.broken_links(built) == []
    assert not (built / "instructors" / "answer-keys").exists()
    assert 'href="instructors/answer-keys' not in (built / "index.html").read_text()


def test_widgets_are_drawn_from_their_state_with_a_note_and_load_no_widget_javascript(built):
    page = (built / "notebooks" / "04_model_memory.html").read_text()
    assert "static snapshot of an interactive calculator" in page
    assert "<b>Will it fit?</b>" in page and '<div class="cw">' in page  # drawn, not text
    assert "<option selected>NVIDIA H100 SXM 80GB</option>" in page  # its saved inputs
    for text in (p.read_text() for p in built.rglob("*.html")):
        assert "widget-state+json" not in text
        assert "@jupyter-widgets" not in text and "unpkg.com" not in text


def test_no_page_loads_a_script_a_style_or_a_font_from_another_host(built):
    assert offline.audit(built) == {"external": [], "missing": []}
    assert (built / "_static" / offline.MATHJAX_DIR / "MathJax.js").is_file()


def test_broken_links_finds_a_missing_page_and_a_missing_anchor(tmp_path):
    (tmp_path / "a.html").write_text('<h1 id="top">A</h1><a href="b.html#nowhere">b</a>')
    (tmp_path / "b.html").write_text('<a href="a.html#top">ok</a><a href="c.html">c</a>')
    (tmp_path / "d.html").write_text('<img src="_images/x.png"><a href="https://x.org/y">e</a>')
    assert sorted(site.broken_links(tmp_path)) == [
        "a.html: b.html#nowhere (no such anchor)",
        "b.html: c.html",
        "d.html: _images/x.png",
    ]


@pytest.mark.slow
def test_a_lesson_missing_from_the_toc_fails_the_build(tmp_path, monkeypatch):
    real = site.lessons
    monkeypatch.setattr(site, "lessons", lambda root=site.ROOT: real(root)[:1])

    def stage_all(src_dir, answer_keys=False):
        out = site_stage(src_dir, answer_keys)
        for path in real()[1:2]:  # a notebook copied into the site but left out of the sidebar
            site._static_notebook(path, out / "notebooks" / path.name)
        return out

    site_stage = site.stage
    monkeypatch.setattr(site, "stage", stage_all)
    with pytest.raises(RuntimeError, match="toctree"):
        site.build(tmp_path / "html")


@pytest.mark.browser
def test_home_page_and_a_lesson_render_a_heading_and_a_plot_in_chromium(built):
    path = shutil.which("chromium")
    if path is None:
        if os.environ.get("CI"):
            pytest.fail("CI is set, so the site's browser test may not be skipped")
        pytest.skip("Debian's chromium is not installed (apt-get install -y chromium)")
    from playwright.sync_api import sync_playwright

    blocked: list[str] = []

    def no_network(route):  # a firewalled classroom: the pages are files, nothing else answers
        if route.request.url.startswith("file:"):
            route.continue_()
        else:
            blocked.append(route.request.url)
            route.abort()

    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=path, headless=True, args=CHROMIUM_ARGS)
        page = browser.new_page()
        page.route("**/*", no_network)
        page.goto((built / "index.html").as_uri())
        assert "executable course" in page.locator("div.body h1").first.inner_text()
        page.get_by_role("link", name="CPU vs GPU").first.click()
        page.wait_for_load_state("load")
        assert page.url.endswith("notebooks/01_cpu_vs_gpu.html")
        assert "CPU" in page.locator("div.body h1").first.inner_text()
        plot = page.locator("img[src*='_images/']").first
        plot.scroll_into_view_if_needed()
        assert plot.evaluate("img => img.complete && img.naturalWidth > 100")
        # A formula typeset by the site's own MathJax; a calculator drawn with its inputs.
        page.goto((built / "notebooks" / "13_serving_at_scale.html").as_uri())
        page.wait_for_function(
            "window.MathJax && document.querySelectorAll('.math .MathJax').length > 0",
            timeout=20_000,
        )
        page.goto((built / "notebooks" / "04_model_memory.html").as_uri())
        calculator = page.locator(".cw").filter(has_text="Will it fit?").first
        calculator.scroll_into_view_if_needed()
        assert calculator.locator("select").first.is_visible()
        assert calculator.bounding_box()["width"] <= page.viewport_size["width"]
        browser.close()
    assert blocked == [], f"the site asked the internet for {blocked}"


def test_a_public_build_never_lands_where_the_answer_keys_are_and_back(tmp_path):
    """`make site` and `make site ANSWER_KEYS=1` write different folders; a forgotten rebuild
    into the wrong one is refused before anything is written."""
    keys = tmp_path / "site-answer-keys"
    keys.mkdir()
    (keys / site.KIND_MARKER).write_text("answer-keys")
    with pytest.raises(RuntimeError, match="holds the answer-keys build"):
        site._claim_folder(keys, answer_keys=False)
    site._claim_folder(keys, answer_keys=True)  # rebuilding the instructors' copy is fine
    public = tmp_path / "site"
    public.mkdir()
    (public / site.KIND_MARKER).write_text("public")
    with pytest.raises(RuntimeError, match="holds the public build"):
        site._claim_folder(public, answer_keys=True)
    other = tmp_path / "notes"
    other.mkdir()
    (other / "todo.txt").write_text("mine")
    with pytest.raises(RuntimeError, match="not empty"):
        site._claim_folder(other, answer_keys=False)


def test_site_config_reads_dollar_amounts_as_money_and_keeps_real_math():
    # MyST's dollarmath with the site's settings (conf.py as written by site.stage).
    from markdown_it.renderer import RendererHTML
    from myst_parser.config.main import MdParserConfig
    from myst_parser.parsers.mdit import create_md_parser

    conf: dict = {}
    exec(site.CONF, conf)  # noqa: S102 - our own configuration text
    config = MdParserConfig(
        enable_extensions=set(conf["myst_enable_extensions"]),
        dmath_allow_digits=conf["myst_dmath_allow_digits"],
        dmath_allow_space=conf["myst_dmath_allow_space"],
    )
    md = create_md_parser(config, RendererHTML)
    money = "A purchase of $5,000 and $6 per hour."
    assert "math" not in md.render(money)
    assert "math" in md.render("The value $(-1)^s \\times 2^{e}$ of a float.")
    default = create_md_parser(MdParserConfig(enable_extensions={"dollarmath"}), RendererHTML)
    assert "math" in default.render(money)  # what the two settings prevent


def test_the_sidebar_puts_lessons_after_10_under_part_two():
    index = site._index("README", answer_keys=False)
    part_two = index[index.index(":caption: Part II: Going deeper") :]
    assert "notebooks/11_inside_the_gpu" in part_two.split("```")[0]
    assert "notebooks/11_inside_the_gpu" not in index[: index.index("Part II")]
