"""The course as a static website: ``python -m teaching site OUTDIR`` (``make site``).

Sphinx with myst-nb renders every lesson from its committed outputs (nothing is executed), with the
README as the home page, the glossary, the instructors' guide and CONTRIBUTING. The sources are
staged into ``OUTDIR/../site-src`` first, where three things change on the way:

- an interactive output (a calculator or a quiz: an ipywidgets view) is drawn from the notebook's
  saved widget state as plain HTML (``teaching.widget_html``: no widget JavaScript) and
  gains a note that running the notebook makes it interactive (a static page has no kernel);
- MathJax, for the formulas, is copied from a pinned package into the site
  (``teaching.offline``): no page loads a script, a style or a font from the internet;
- the instructors' answer keys (``teaching.answer_keys``) are included only when asked for
  (``--answer-keys``): a graded class must not publish them.

The build fails on any Sphinx warning (``-W``, nitpicky: a broken cross-reference, a page missing
from the table of contents) and on any relative link or image in the built HTML that points at
nothing (:func:`broken_links`).
"""

from __future__ import annotations

import html.parser
import shutil
import subprocess
import sys
from pathlib import Path
from urllib.parse import unquote, urlsplit

import nbformat

from teaching import offline

ROOT = Path(__file__).resolve().parents[2]
WIDGET_MIME = "application/vnd.jupyter.widget-view+json"
WIDGET_NOTE = (
    "```{note}\nThe output above is a static snapshot of an interactive calculator or quiz. "
    "Run the notebook (`make lab`) to change its inputs or answer it.\n```"
)

#: Sphinx writes inline math as \( \) and display math as \[ \]; a "$" stays money.
TEX_DELIMITERS = {"inlineMath": [["\\(", "\\)"]], "displayMath": [["\\[", "\\]"]]}

CONF = '''\
"""Sphinx configuration of the course website (written by instructors/teaching/site.py; edit it
there)."""

project = "GPU infrastructure for AI"
author = "the course authors"
root_doc = "index"
extensions = ["myst_nb"]
nb_execution_mode = "off"
myst_heading_anchors = 3
myst_enable_extensions = ["dollarmath"]
# "$5 and $6" is money, not math: no inline math that touches a digit or opens/closes on a space.
myst_dmath_allow_digits = False
myst_dmath_allow_space = False
nitpicky = True
exclude_patterns = ["_build"]
html_theme = "alabaster"
html_title = "GPU infrastructure for AI: an executable course"
html_sidebars = {"**": ["about.html", "navigation.html", "searchbox.html"]}
html_theme_options = {
    "description": "Lessons that run, measure and calculate",
    "fixed_sidebar": True,
    "page_width": "1240px",
    "sidebar_width": "280px",
    "logo_name": False,
}
suppress_warnings = ["myst.header"]
# MathJax 2.7 from the site's own _static (copied by instructors/teaching/site.py), not a CDN.
html_static_path = ["_static"]
myst_update_mathjax = False  # its settings are MathJax 3's; the TeX delimiters below suffice
''' + (
    f"mathjax_path = {offline.MATHJAX_DIR + '/' + offline.MATHJAX_ENTRY!r}\n"
    f"mathjax2_config = {dict(tex2jax=TEX_DELIMITERS, **offline.MATHJAX_CONFIG)!r}\n"
)


def lessons(root: Path = ROOT) -> list[Path]:
    """The lesson notebooks, in order (``notebooks/NN_slug.ipynb``)."""
    return sorted((root / "notebooks").glob("[0-9][0-9]_*.ipynb"))


def _static_notebook(src: Path, dst: Path) -> None:
    """Copy a notebook for the website: widget views drawn from their saved state (or their text
    where none was saved), plus a note to run it."""
    from teaching import widget_html

    nb = nbformat.read(src, as_version=4)
    cells = []
    for cell in nb.cells:
        cells.append(cell)
        outputs = cell.get("outputs", []) if cell.cell_type == "code" else []
        if any(WIDGET_MIME in o.get("data", {}) for o in outputs):
            cells.append(nbformat.v4.new_markdown_cell(WIDGET_NOTE))
    nb.cells = cells
    widget_html.to_html_outputs(nb)
    nbformat.write(nb, dst)


#: Lessons 00-10 are Part I (the readings); later lessons are Part II, "Going deeper" (README).
LAST_OF_PART_ONE = 10


def _index(readme: str, answer_keys: bool) -> str:
    """The home page: the README plus the (hidden) tables of contents that order the sidebar."""
    part_one = [p for p in lessons() if int(p.stem[:2]) <= LAST_OF_PART_ONE]
    part_two = [p for p in lessons() if int(p.stem[:2]) > LAST_OF_PART_ONE]
    toc = [
        "",
        "```{toctree}",
        ":hidden:",
        ":caption: Lessons",
        "",
        *[f"notebooks/{p.stem}" for p in part_one],
        "notebooks/glossary",
        "```",
        "",
        *(
            [
                "```{toctree}",
                ":hidden:",
                ":caption: Part II: Going deeper",
                "",
                *[f"notebooks/{p.stem}" for p in part_two],
                "```",
                "",
            ]
            if part_two
            else []
        ),
        "```{toctree}",
        ":hidden:",
        ":caption: Instructors",
        "",
        "instructors/guide",
        "instructors/grading",
        "instructors/editions",
        *(["instructors/answer-keys/index"] if answer_keys else []),
        "CONTRIBUTING",
        "LICENSE",
        "```",
        "",
    ]
    return readme.replace("](LICENSE)", "](LICENSE.md)") + "\n".join(toc)


def stage(src_dir: Path, answer_keys: bool = False) -> Path:
    """Write the website's sources into ``src_dir`` (emptied first) and return it."""
    if src_dir.exists():
        shutil.rmtree(src_dir)
    (src_dir / "notebooks").mkdir(parents=True)
    from teaching.site_usability import stage_usability

    (src_dir / "conf.py").write_text(CONF + stage_usability(src_dir, ROOT, lessons()))
    offline.copy_mathjax(src_dir / "_static")
    (src_dir / "index.md").write_text(_index((ROOT / "README.md").read_text(), answer_keys))
    shutil.copy(ROOT / "CONTRIBUTING.md", src_dir / "CONTRIBUTING.md")
    licence = (ROOT / "LICENSE").read_text()
    (src_dir / "LICENSE.md").write_text(f"# Licence\n\n```text\n{licence}```\n")
    shutil.copy(ROOT / "notebooks" / "glossary.md", src_dir / "notebooks" / "glossary.md")
    for path in lessons():
        _static_notebook(path, src_dir / "notebooks" / path.name)
    shutil.copytree(ROOT / "instructors", src_dir / "instructors", ignore=_no_keys)
    if answer_keys:
        from teaching.answer_keys import write_answer_keys

        write_answer_keys(src_dir / "instructors" / "answer-keys")
    return src_dir


def _no_keys(folder: str, names: list[str]) -> list[str]:
    return [n for n in names if n == "answer-keys"]


class _Links(html.parser.HTMLParser):
    def __init__(self) -> None:
        super().__init__()
        self.targets: list[str] = []
        self.ids: set[str] = set()

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        for name, value in attrs:
            if name == "id" and value:
                self.ids.add(value)
            if name in ("href", "src") and value and tag in ("a", "img", "link", "script"):
                self.targets.append(value)


def broken_links(site: Path) -> list[str]:
    """Relative links and images in the built HTML that point at no file or no anchor."""
    pages = {p: _Links() for p in site.rglob("*.html")}
    for page, parser in pages.items():
        parser.feed(page.read_text(encoding="utf-8"))
    broken = []
    for page, parser in pages.items():
        for target in parser.targets:
            parts = urlsplit(target)
            if parts.scheme or parts.netloc or target.startswith(("mailto:", "data:")):
                continue
            path = (page.parent / unquote(parts.path)).resolve() if parts.path else page
            if not path.exists():
                broken.append(f"{page.relative_to(site)}: {target}")
            elif parts.fragment and path.suffix == ".html":
                ids = pages[path].ids if path in pages else set()
                if unquote(parts.fragment) not in ids:
                    broken.append(f"{page.relative_to(site)}: {target} (no such anchor)")
    return broken


#: A file every build leaves in its folder, saying whether it holds the answer keys.
KIND_MARKER = ".course-site-kind"


def _claim_folder(out: Path, answer_keys: bool) -> None:
    """Refuse to write a public site where a build with answer keys lives, or the other way round:
    one forgotten rebuild must never publish the keys (or overwrite the instructors' copy)."""
    kind = "answer-keys" if answer_keys else "public"
    marker = out / KIND_MARKER
    if marker.is_file() and marker.read_text().strip() != kind:
        raise RuntimeError(
            f"{out} holds the {marker.read_text().strip()} build; build the {kind} site into "
            "another folder (make site -> build/site, "
            "make site ANSWER_KEYS=1 -> build/site-answer-keys)"
        )
    if not marker.is_file() and out.is_dir() and any(out.iterdir()):
        raise RuntimeError(f"{out} is not empty and holds no site build: choose an empty folder")


def build(out_dir: str | Path, answer_keys: bool = False, quiet: bool = True) -> Path:
    """Build the website into ``out_dir``; raise ``RuntimeError`` on a warning or a broken link, or
    when ``out_dir`` holds the other kind of build (public vs answer keys)."""
    out = Path(out_dir).resolve()
    _claim_folder(out, answer_keys)
    src = stage(out.parent / (out.name + "-src"), answer_keys=answer_keys)
    command = [sys.executable, "-m", "sphinx", "-W", "--keep-going", "-n", "-b", "html"]
    command += ["-q"] if quiet else []
    result = subprocess.run(
        [*command, "-E", "-d", str(src / "_doctrees"), str(src), str(out)],
        capture_output=True,
        text=True,
    )
    if result.returncode != 0:
        raise RuntimeError(f"the site build failed:\n{result.stdout}\n{result.stderr}")
    (out / KIND_MARKER).write_text("answer-keys" if answer_keys else "public")
    broken = broken_links(out)
    if broken:
        raise RuntimeError("broken links in the built site:\n" + "\n".join(broken))
    return out


def run_site(out_dir: str, answer_keys: bool = False) -> int:
    """``python -m teaching site OUTDIR``: build, print where the home page is, 0 or 1."""
    try:
        out = build(out_dir, answer_keys=answer_keys)
    except RuntimeError as exc:
        print(exc, file=sys.stderr)
        return 1
    print(f"site built: {out / 'index.html'}")
    return 0
