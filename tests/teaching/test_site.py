"""The course website (``make site``): every lesson is a page, no link is broken, keys stay out.

One build per test session (about 20 s on 2 busy cores) into a temporary folder; the browser test
opens the built home page and lessons in Debian's headless Chromium (as
``tests/project/test_browser.py`` does), with every request off the machine aborted, and checks that
a heading, a plot image, a formula (MathJax from the build) and a calculator (drawn from its saved
state) render.
"""

from __future__ import annotations

import html.parser
import os
import shutil
import subprocess
import time
from pathlib import Path
from unittest import mock

import pytest
from browser_setup import CHROMIUM_ARGS
from teaching import offline, site, site_usability

BUILD_BUDGET_S = 120  # the limit for the build on 2 cores
REPOSITORY = "https://example.org/course/repository"


@pytest.fixture(scope="module")
def built(tmp_path_factory) -> Path:
    start = time.perf_counter()
    with mock.patch.dict(os.environ, {"COURSE_REPOSITORY_URL": REPOSITORY}):
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


SCROLLING_CODE = """[...document.querySelectorAll('div.highlight pre, div.cell_output pre')]
    .filter(e => e.scrollWidth > e.clientWidth + 1).map(e => e.textContent.slice(0, 60))"""


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
        # At 1280 px no code cell or output scrolls sideways; at 390 px (a phone) no page is wider
        # than the screen and the glossary's title comes first, above the sidebar.
        page.set_viewport_size({"width": 1280, "height": 800})
        page.goto((built / "notebooks" / "04_model_memory.html").as_uri())
        assert page.evaluate(SCROLLING_CODE) == []
        page.set_viewport_size({"width": 390, "height": 844})
        for name in ("glossary", "04_model_memory", "06_parallelism"):
            page.goto((built / "notebooks" / f"{name}.html").as_uri())
            wide = page.evaluate("document.documentElement.scrollWidth - window.innerWidth")
            assert wide <= 1, f"{name}.html is {wide} px wider than a 390 px phone"
        title_top = page.goto((built / "notebooks" / "glossary.html").as_uri()) and page.evaluate(
            "document.querySelector('div.body h1').getBoundingClientRect().top + window.scrollY"
        )
        assert title_top < 400, f"the glossary's title starts {title_top:.0f} px down on a phone"
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


class _Prose(html.parser.HTMLParser):
    """Web addresses in a page's text outside links, code, scripts and the page head."""

    SKIP = ("a", "pre", "code", "script", "style", "head")

    def __init__(self) -> None:
        super().__init__()
        self.open: list[str] = []
        self.bare: list[str] = []

    def handle_starttag(self, tag, attrs):
        if tag not in ("br", "img", "meta", "link", "input", "hr", "wbr"):
            self.open.append(tag)

    def handle_endtag(self, tag):
        if tag in self.open:
            del self.open[len(self.open) - 1 - self.open[::-1].index(tag) :]

    def handle_data(self, data):
        if not any(t in self.SKIP for t in self.open):
            self.bare += site_usability.URL.findall(data)


def _pages(built: Path) -> list[Path]:
    return [p for p in built.rglob("*.html") if not {"_static", "_sources"} & set(p.parts)]


def test_source_urls_in_the_text_are_links(built):
    bare = {}
    for page in _pages(built):
        parser = _Prose()
        parser.feed(page.read_text(encoding="utf-8"))
        if parser.bare:
            bare[page.name] = parser.bare[:3]
    assert bare == {}
    assert 'href="https://arxiv.org/abs/2001.08361"' in (
        built / "notebooks" / "01_cpu_vs_gpu.html"
    ).read_text(encoding="utf-8")


def test_bare_url_finder_leaves_punctuation_and_code_alone():
    parts = site_usability.link_text("See https://x.org/a_b. And (https://y.org/c), done")
    refs = [p["refuri"] for p in parts if p.tagname == "reference"]
    assert refs == ["https://x.org/a_b", "https://y.org/c"]
    assert (
        "".join(p.astext() for p in parts) == "See https://x.org/a_b. And (https://y.org/c), done"
    )
    parser = _Prose()
    parser.feed("<p>a <code>https://in.code/x</code> <a href='u'>https://linked/x</a></p>")
    assert parser.bare == []
    parser.feed("<p>plain https://bare.org/x.</p>")
    assert parser.bare == ["https://bare.org/x"]


def test_every_page_has_the_stylesheet_the_repository_and_lessons_a_notebook_download(built):
    css = (built / "_static" / "course.css").read_text()
    assert "white-space: pre-wrap" in css and "order: 2" in css  # code wraps; sidebar below
    for page in _pages(built):
        text = page.read_text(encoding="utf-8")
        assert "_static/course.css" in text, page.name
        assert f'href="{REPOSITORY}"' in text, f"{page.name} has no repository link"
    for lesson in site.lessons():
        text = (built / "notebooks" / f"{lesson.stem}.html").read_text(encoding="utf-8")
        assert f'href="{lesson.name}" download' in text, lesson.name
        assert (built / "notebooks" / lesson.name).read_bytes() == lesson.read_bytes()


def test_repository_url_from_the_environment_or_an_ssh_remote(tmp_path, monkeypatch):
    monkeypatch.setenv("COURSE_REPOSITORY_URL", "https://example.org/r")
    assert site_usability.repository_url(tmp_path) == "https://example.org/r"
    monkeypatch.setenv("COURSE_REPOSITORY_URL", "")
    assert site_usability.repository_url(tmp_path) is None  # not a git checkout: no link
    (tmp_path / "pyproject.toml").write_text('[project]\nurls = {Repository = "https://e.org/p"}\n')
    assert site_usability.repository_url(tmp_path) == "https://e.org/p"
    (tmp_path / "pyproject.toml").unlink()
    subprocess.run(["git", "init", "-q", str(tmp_path)], check=True)
    subprocess.run(
        [
            "git",
            "-C",
            str(tmp_path),
            "remote",
            "add",
            "origin",
            "git@github.com:someone/course.git",
        ],
        check=True,
    )
    assert site_usability.repository_url(tmp_path) == "https://github.com/someone/course"
