"""The website's reading comfort: code that fits, a phone layout, links, downloads.

A Sphinx extension and the files it needs, written into the site's sources by
``teaching.site.stage`` (see :func:`stage_usability`):

- ``_course_static/course.css``: code cells and outputs wrap instead of scrolling sideways (long
  lines break at the text column, indentation kept); wide tables, formulas and images fit the page
  or scroll inside their own box; below 875 px the sidebar moves under the page (the page's title is
  the first thing a phone shows) and nothing is wider than the screen;
- a bar at the top of every page: *Download this notebook* (the committed lesson, outputs and all,
  copied beside its page) and *Source repository* (from ``COURSE_REPOSITORY_URL``, the
  ``Repository`` entry of ``[project.urls]`` in ``pyproject.toml``, or the git remote ``origin`` of
  this checkout; left out when none names one);
- a transform that turns a bare ``http(s)://`` address in prose into a link (not in code).


"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import tomllib
from pathlib import Path

from docutils import nodes
from sphinx.transforms import SphinxTransform

STATIC = "_course_static"
TEMPLATES = "_course_templates"
EXTRA = "_course_extra"
PHONE_MAX_PX = 875  # alabaster's own narrow-screen break point for a 1240 px page is wider

CSS = """\
/* teaching.site_usability: code that fits, a phone layout. */
div.highlight pre, div.cell_output pre, div.output pre, .output_area pre, div.body pre {
    white-space: pre-wrap;
    overflow-wrap: anywhere;
    word-break: normal;
    overflow-x: auto;
    max-width: 100%;
}
div.body img, div.cell_output img { max-width: 100%; height: auto; }
div.body table.docutils, div.cell_output table {
    display: block;
    max-width: 100%;
    overflow-x: auto;
}
div.body .math, div.body mjx-container[display="true"] { max-width: 100%; overflow-x: auto; }
div.body a, div.body code.literal { overflow-wrap: anywhere; }
div.body code.literal span.pre { white-space: pre-wrap; }
div.course-links {
    font-size: 0.9em;
    margin: 0 0 1em 0;
    padding: 0.3em 0.6em;
    background: #f4f4f4;
    border-radius: 4px;
}
div.course-links a { margin-right: 1.2em; }
@media screen and (max-width: PHONE_MAXpx) {
    body { padding: 10px 12px; }
    div.document { display: flex; flex-direction: column; }
    div.documentwrapper { order: 1; }
    div.sphinxsidebar { order: 2; margin: 20px -12px 0 -12px; width: auto; }
    div.body { min-width: 0; max-width: 100%; }
    div.bodywrapper { margin: 0; }
    div.body h1 { font-size: 1.8em; overflow-wrap: anywhere; }
    div.body h2 { font-size: 1.4em; }
    div.body pre { font-size: 0.8em; }
}
""".replace("PHONE_MAX", str(PHONE_MAX_PX))

LAYOUT = """\
{% extends "!layout.html" %}
{% block relbar_top %}
{{ super() }}
{%- set lesson = pagename.startswith("notebooks/") and pagename[10:12].isdigit() %}
{%- if lesson or course_repository %}
<div class="course-links">
{%- if lesson %}
<a class="course-download" href="{{ pathto(pagename + '.ipynb', 1) }}" download>Download this notebook (.ipynb)</a>
{%- endif %}
{%- if course_repository %}
<a class="course-repository reference external" href="{{ course_repository }}">Source repository</a>
{%- endif %}
</div>
{%- endif %}
{% endblock %}
"""

CONF_EXTRA = f'''
# Added by instructors/teaching/site_usability.py (code that fits, a phone layout, links, downloads).
extensions = [*extensions, "teaching.site_usability"]
html_static_path = [*globals().get("html_static_path", []), "{STATIC}"]
html_css_files = [*globals().get("html_css_files", []), "course.css"]
templates_path = [*globals().get("templates_path", []), "{TEMPLATES}"]
html_extra_path = [*globals().get("html_extra_path", []), "{EXTRA}"]
'''

#: A bare web address in prose; a trailing full stop, comma, colon or bracket is not part of it.
URL = re.compile(r"https?://[^\s<>\"'`]+[^\s<>\"'`.,;:!?)\]]")
_NOT_IN = (
    nodes.reference,
    nodes.literal,
    nodes.literal_block,
    nodes.raw,
    nodes.math,
    nodes.math_block,
    nodes.comment,
    nodes.target,
)


def repository_url(root: Path) -> str | None:
    """``COURSE_REPOSITORY_URL``, else ``[project.urls] Repository`` in ``pyproject.toml``, else the
    https address of git remote ``origin``, else None."""
    url = os.environ.get("COURSE_REPOSITORY_URL", "").strip()
    if not url and (root / "pyproject.toml").is_file():
        project = tomllib.loads((root / "pyproject.toml").read_text()).get("project", {})
        url = str(project.get("urls", {}).get("Repository", "")).strip()
    if not url:
        try:
            url = subprocess.run(
                ["git", "-C", str(root), "remote", "get-url", "origin"],
                capture_output=True,
                text=True,
                timeout=10,
            ).stdout.strip()
        except (OSError, subprocess.SubprocessError):
            url = ""
    ssh = re.fullmatch(r"git@([^:]+):(.+?)(?:\.git)?", url)
    if ssh:
        url = f"https://{ssh.group(1)}/{ssh.group(2)}"
    return url if url.startswith(("https://", "http://")) else None


def stage_usability(src_dir: Path, root: Path, lesson_paths: list[Path]) -> str:
    """Write the stylesheet, the page template and the downloadable notebooks into ``src_dir``;
    return the lines to append to its ``conf.py``."""
    (src_dir / STATIC).mkdir(parents=True, exist_ok=True)
    (src_dir / STATIC / "course.css").write_text(CSS)
    (src_dir / TEMPLATES).mkdir(parents=True, exist_ok=True)
    (src_dir / TEMPLATES / "layout.html").write_text(LAYOUT)
    downloads = src_dir / EXTRA / "notebooks"
    downloads.mkdir(parents=True, exist_ok=True)
    for path in lesson_paths:
        shutil.copy(path, downloads / path.name)
    context = (
        "html_context = "
        f"{{**globals().get('html_context', {{}}), 'course_repository': {repository_url(root)!r}}}\n"
    )
    return CONF_EXTRA + context


def link_text(text: str) -> list[nodes.Node]:
    """``text`` as Text and reference nodes, each bare web address a link to itself."""
    out: list[nodes.Node] = []
    last = 0
    for match in URL.finditer(text):
        if match.start() > last:
            out.append(nodes.Text(text[last : match.start()]))
        url = match.group()
        out.append(nodes.reference(url, url, refuri=url))
        last = match.end()
    if last < len(text):
        out.append(nodes.Text(text[last:]))
    return out


class LinkBareUrls(SphinxTransform):
    """Bare web addresses in prose become links (code, math and existing links are left alone)."""

    default_priority = 900

    def apply(self, **kwargs) -> None:
        for text in list(self.document.findall(nodes.Text)):
            if "://" not in text or any(isinstance(a, _NOT_IN) for a in _ancestors(text)):
                continue
            parts = link_text(str(text))
            if len(parts) > 1 or isinstance(parts[0], nodes.reference):
                text.parent.replace(text, parts)


def _ancestors(node: nodes.Node):
    node = node.parent
    while node is not None:
        yield node
        node = node.parent


def setup(app) -> dict:
    app.add_transform(LinkBareUrls)
    return {"parallel_read_safe": True, "parallel_write_safe": True}
