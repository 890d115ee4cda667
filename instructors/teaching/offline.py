"""Everything a deck or a page loads, served from the build: no CDN, no font service.

A classroom behind a firewall opens the decks and the website from files. Their scripts, styles and
fonts therefore come from packages pinned in ``requirements/instructors.txt`` (PyPI) and are copied
next to what is built, as the subset that is used:

- Reveal.js 3.9 from ``rise`` (``rise/static/reveal.js``): the script, its stylesheet, the
  ``white`` theme with its Source Sans Pro fonts (WOFF) and the speaker-notes plugin;
- MathJax 2.7 from ``jupyter-server-mathjax``: the TeX input, the HTML-CSS output and its STIX-Web
  fonts (WOFF), the only output and fonts that package ships.

Calculators need no script at all (``teaching.widget_html`` draws their saved state).
:func:`audit` lists what built files would still fetch from another host, and the local files
they would miss; the tests check that it finds nothing in any deck or page.
"""

from __future__ import annotations

import html.parser
import importlib.util
import re
import shutil
from pathlib import Path
from urllib.parse import unquote, urlsplit

#: Where the assets go, relative to a deck's or a page's static folder.
REVEAL_DIR = "reveal.js"
MATHJAX_DIR = "mathjax"
#: MathJax's entry script with the configuration the packaged files support.
MATHJAX_ENTRY = "MathJax.js?config=TeX-AMS-MML_HTMLorMML-full,Safe"
#: Its settings: the packaged web font, no image fonts (not shipped), TeX delimiters.
MATHJAX_CONFIG = {
    "HTML-CSS": {
        "availableFonts": [],
        "preferredFont": None,
        "webFont": "STIX-Web",
        "imageFont": None,
        "linebreaks": {"automatic": True},
    },
    "messageStyle": "none",
    "menuSettings": {"zoom": "None"},
}

#: Files copied (packaged path, path in the build: nbconvert's deck expects Reveal.js 4's layout,
#: ``dist/``, which the 3.9 files fit; the theme's fonts stay at ``../../lib/font`` from it).
_REVEAL_FILES = (
    ("js/reveal.js", "dist/reveal.js"),
    ("css/reveal.css", "dist/reveal.css"),
    ("css/theme/white.css", "dist/theme/white.css"),
    *(
        (f"lib/font/source-sans-pro/{name}",) * 2
        for name in (
            "source-sans-pro.css",
            "source-sans-pro-regular.woff",
            "source-sans-pro-italic.woff",
            "source-sans-pro-semibold.woff",
            "source-sans-pro-semibolditalic.woff",
            "LICENSE",
        )
    ),
    ("plugin/notes/notes.js",) * 2,
    ("plugin/notes/notes.html",) * 2,
    ("plugin/markdown/marked.js",) * 2,
    ("LICENSE",) * 2,
)
_MATHJAX_PARTS = (
    "MathJax.js",
    "LICENSE",
    "config",
    "extensions",
    "jax/input/TeX",
    "jax/element",
    "jax/output/HTML-CSS",
    "fonts/HTML-CSS/STIX-Web/woff",
)
#: Parts of the packaged MathJax never loaded by the settings above (accessibility add-ons that
#: only load on request from the menu).
_MATHJAX_SKIP = ("a11y",)


def _package_dir(name: str) -> Path:
    """A package's folder without importing it (``rise`` imports a module Python 3.12 dropped)."""
    spec = importlib.util.find_spec(name)
    if spec is None or not spec.submodule_search_locations:
        raise RuntimeError(f"the {name!r} package is missing: make install-instructors")
    return Path(next(iter(spec.submodule_search_locations)))


def reveal_source() -> Path:
    return _package_dir("rise") / "static" / "reveal.js"


def mathjax_source() -> Path:
    return _package_dir("jupyter_server_mathjax") / "static"


def copy_reveal(static: Path) -> Path:
    """Copy Reveal.js's used files into ``static/reveal.js``; return that folder."""
    src, dst = reveal_source(), static / REVEAL_DIR
    for packaged, built in _REVEAL_FILES:
        (dst / built).parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(src / packaged, dst / built)
    fonts = dst / "lib/font/source-sans-pro/source-sans-pro.css"
    fonts.write_text(_woff_only(fonts.read_text()))
    return dst


def _woff_only(css: str) -> str:
    """The font stylesheet without its EOT and TrueType alternatives (not copied: every browser
    that runs Reveal.js reads WOFF)."""
    css = re.sub(r"\s*src: url\('[^']+\.eot'\);", "", css)
    css = re.sub(r"url\('[^']+\.eot\?#iefix'\) format\('embedded-opentype'\),\s*", "", css)
    return re.sub(r",\s*url\('[^']+\.ttf'\) format\('truetype'\)", "", css)


def copy_mathjax(static: Path) -> Path:
    """Copy MathJax's used files into ``static/mathjax``; return that folder."""
    src, dst = mathjax_source(), static / MATHJAX_DIR
    ignore = shutil.ignore_patterns(*_MATHJAX_SKIP)
    for rel in _MATHJAX_PARTS:
        (dst / rel).parent.mkdir(parents=True, exist_ok=True)
        if (src / rel).is_dir():
            shutil.copytree(src / rel, dst / rel, ignore=ignore, dirs_exist_ok=True)
        else:
            shutil.copy2(src / rel, dst / rel)
    return dst


#: ``<link rel=...>`` that the browser fetches (others, like "next" or "search", are links).
_LOADED_RELS = {"stylesheet", "icon", "shortcut icon", "preload", "modulepreload", "manifest"}


class _Loads(html.parser.HTMLParser):
    """What a page fetches by itself: scripts, stylesheets, fonts, module imports, CSS urls."""

    def __init__(self) -> None:
        super().__init__()
        self.urls: list[str] = []
        self._in: str | None = None

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        a = dict(attrs)
        if tag == "script" and a.get("src"):
            self.urls.append(a["src"] or "")
        if tag == "link" and a.get("href") and (a.get("rel") or "").lower() in _LOADED_RELS:
            self.urls.append(a["href"] or "")
        if tag in ("img", "iframe", "source", "embed") and a.get("src"):
            self.urls.append(a["src"] or "")
        self.urls += _css_urls(a.get("style") or "")
        self._in = tag if tag in ("script", "style") else None

    def handle_endtag(self, tag: str) -> None:
        self._in = None

    def handle_data(self, data: str) -> None:
        if self._in == "style":
            self.urls += _css_urls(data)
        elif self._in == "script":
            self.urls += re.findall(r"""\bimport\b[^'"]*?\bfrom\s*['"]([^'"]+)['"]""", data)
            self.urls += re.findall(r"""\bimport\s*\(\s*['"]([^'"]+)['"]""", data)


def _css_urls(css: str) -> list[str]:
    urls = re.findall(r"""url\(\s*['"]?([^'")]+)['"]?\s*\)""", css)
    urls += re.findall(r"""@import\s+['"]([^'"]+)['"]""", css)
    return urls


def _remote(url: str) -> bool:
    parts = urlsplit(url.strip())
    if parts.scheme in ("", "data", "blob", "about", "file"):
        return bool(parts.netloc)  # "//host/x" is remote too
    return parts.hostname not in ("localhost", "127.0.0.1", "::1")


def external_references(text: str, *, css: bool = False) -> list[str]:
    """Non-local URLs that an HTML file (or, with ``css``, a stylesheet) makes the browser load."""
    return sorted({u for u in _loads(text, css=css) if _remote(u)})


def _loads(text: str, *, css: bool = False) -> list[str]:
    if css:
        return _css_urls(text)
    parser = _Loads()
    parser.feed(re.sub(r"data:[^\"')\s]{100,}", "data:", text))  # embedded images: not loads
    return parser.urls


def audit(folder: Path) -> dict[str, list[str]]:
    """One pass over the HTML and CSS under ``folder``: what they load from another host
    (``external``) and the local files they load that are not there (``missing``), each as
    ``"file: url"`` lines; both empty for a build that works offline."""
    found: dict[str, list[str]] = {"external": [], "missing": []}
    for path in sorted(folder.rglob("*")):
        if path.suffix not in (".html", ".css"):
            continue
        name = path.relative_to(folder)
        urls = _loads(path.read_text(errors="replace"), css=path.suffix == ".css")
        found["external"] += sorted({f"{name}: {u}" for u in urls if _remote(u)})
        local = {unquote(urlsplit(u).path) for u in urls if not (_remote(u) or _is_inline(u))}
        found["missing"] += [
            f"{name}: {rel}" for rel in sorted(local) if rel and not (path.parent / rel).exists()
        ]
    return found


def _is_inline(url: str) -> bool:
    return url.strip().startswith(("data:", "blob:", "about:", "#"))
