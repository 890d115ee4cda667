"""``python -m teaching hosted-links``: every lesson and exercise set opens on Colab and Kaggle.

From one address, ``[project.urls] Repository`` in ``pyproject.toml``, and the course's version (the
release tag ``v<version>``), it writes:

- a line of links, *Open in Colab* and *Open in Kaggle*, under the title of each notebook's first
  Markdown cell (the site's lesson pages render it);
- the install cell (:func:`course.selfcheck.hosted.install_cell`) as each notebook's first code
  cell: on a hosted runtime it installs that release beside the platform's torch, elsewhere it does
  nothing;
- a column of the same links in the README's lesson tables (the site's home page is the README).

Lessons are edited in place (first cells only); exercise sets get the same cells from their
generator (:func:`teaching.grading.authoring.student_notebook`) when ``assign`` builds them.
Idempotent: run it again after a merge, a new lesson or a new version.

Links: Colab opens a notebook from GitHub at ``colab.research.google.com/github/OWNER/REPO/blob/
REF/PATH`` (Colab's "GitHub" notebook, colab.research.google.com/github/); Kaggle imports one from
a public address at ``kaggle.com/kernels/welcome?src=URL`` (the address behind Kaggle's "Open in
Kaggle" badge).
"""

from __future__ import annotations

import re
import subprocess
import tomllib
from pathlib import Path
from urllib.parse import quote, urlencode

import nbformat

from course.selfcheck.hosted import install_cell

ROOT = Path(__file__).resolve().parents[2]
#: The first line of the install cell and the start of the links' line: how a rerun finds them.
INSTALL_MARK = install_cell("R", "V").splitlines()[0].split("(")[0]
LINKS_MARK = "[Open in Colab]("
README_COLUMN = "run hosted"


def project(root: Path = ROOT) -> tuple[str, str]:
    """``(repository, version)`` from ``pyproject.toml``: the one place both are written."""
    data = tomllib.loads((root / "pyproject.toml").read_text())["project"]
    repository = str(data["urls"]["Repository"]).rstrip("/")
    if not repository.startswith("https://github.com/"):
        raise ValueError(
            f"[project.urls] Repository must be a https://github.com/ address: {repository}"
        )
    return repository, str(data["version"])


def colab_url(repository: str, version: str, path: str) -> str:
    owner_repo = repository.removeprefix("https://github.com/")
    return f"https://colab.research.google.com/github/{owner_repo}/blob/v{version}/{path}"


def kaggle_url(repository: str, version: str, path: str) -> str:
    return f"https://kaggle.com/kernels/welcome?src={repository}/blob/v{version}/{path}"


def nbgitpuller_url(hub: str, repository: str, branch: str, path: str) -> str:
    """A JupyterHub link that clones (or updates) ``repository``'s ``branch`` into the learner's
    home and opens ``path`` in JupyterLab (nbgitpuller's link format, nbgitpuller.readthedocs.io,
    "link.html": ``hub/user-redirect/git-pull?repo=...&branch=...&urlpath=...``)."""
    folder = repository.rstrip("/").rsplit("/", 1)[-1]
    query = urlencode(
        {"repo": repository, "branch": branch, "urlpath": f"lab/tree/{folder}/{path}"},
        quote_via=quote,
    )
    return f"{hub.rstrip('/')}/hub/user-redirect/git-pull?{query}"


def links(repository: str, version: str, path: str) -> str:
    """The line of links to open ``path`` (relative to the repository root) hosted."""
    return (
        f"{LINKS_MARK}{colab_url(repository, version, path)}) · "
        f"[Open in Kaggle]({kaggle_url(repository, version, path)})"
    )


def _with_links(markdown: str, line: str) -> str:
    """``markdown`` with ``line`` as its second paragraph, under the title (an old one replaced)."""
    title, *rest = markdown.split("\n")
    if len(rest) >= 2 and rest[0] == "" and rest[1].startswith(LINKS_MARK):
        rest = rest[2:]
    if rest and rest[0] != "":
        rest = ["", *rest]
    return "\n".join([title, "", line, *rest])


def install_code_cell(repository: str, version: str) -> nbformat.NotebookNode:
    cell = nbformat.v4.new_code_cell(install_cell(repository, version))
    cell["id"] = "hosted-install"
    cell.metadata["slideshow"] = {"slide_type": "skip"}
    return cell


def with_hosted_cells(
    nb: nbformat.NotebookNode, path: str, repository: str, version: str
) -> nbformat.NotebookNode:
    """``nb`` with the links under its title and the install cell first among its code cells."""
    first_md = next(c for c in nb.cells if c.cell_type == "markdown")
    first_md.source = _with_links(first_md.source, links(repository, version, path))
    cells = [
        c for c in nb.cells if not (c.cell_type == "code" and c.source.startswith(INSTALL_MARK))
    ]
    first_code = next((i for i, c in enumerate(cells) if c.cell_type == "code"), len(cells))
    install = install_code_cell(repository, version)
    old = [c for c in nb.cells if c.cell_type == "code" and c.source.startswith(INSTALL_MARK)]
    if old:  # keep the cell's metadata other tools added, replace its code
        old[0].source = install.source
        install = old[0]
    cells.insert(first_code, install)
    nb.cells = cells
    return nb


def _cells(row: str) -> list[str]:
    return [c.strip() for c in row.strip().strip("|").split(" | ")]


def _row_links(number: str, repository: str, version: str, root: Path) -> str:
    parts = []
    for label, folder in (("lesson", "notebooks"), ("exercises", "exercises")):
        for path in sorted((root / folder).glob(f"{number}_*.ipynb"))[:1]:
            rel = path.relative_to(root).as_posix()
            colab, kaggle = (
                colab_url(repository, version, rel),
                kaggle_url(repository, version, rel),
            )
            parts.append(f"{label}: [Colab]({colab}) · [Kaggle]({kaggle})")
    return "; ".join(parts) or "-"


def readme_with_links(readme: str, repository: str, version: str, root: Path = ROOT) -> str:
    """The README's lesson tables with a last column of links to each lesson and exercise set."""
    out: list[str] = []
    for line in readme.split("\n"):
        if line.startswith("| # | lesson"):
            line = "| " + " | ".join([*_cells(line)[:3], README_COLUMN]) + " |"
        elif line.startswith("|---|") and out and out[-1].startswith("| # | lesson"):
            line = "|---|---|---|---|"
        elif re.match(r"^\| \d\d \| ", line):
            cells = _cells(line)[:3]
            line = (
                "| " + " | ".join([*cells, _row_links(cells[0], repository, version, root)]) + " |"
            )
        out.append(line)
    return "\n".join(out)


def apply(root: Path = ROOT) -> list[Path]:
    """Write the links and install cells into the lessons and the README; the paths that changed.
    Exercise sets get the same cells when ``assign`` regenerates them from ``solutions/``."""
    repository, version = project(root)
    changed = []
    for path in sorted((root / "notebooks").glob("[0-9][0-9]_*.ipynb")):
        before = path.read_text(encoding="utf-8")
        nb = nbformat.reads(before, as_version=4)
        with_hosted_cells(nb, path.relative_to(root).as_posix(), repository, version)
        after = nbformat.writes(nb) + "\n"
        if after != before:
            path.write_text(after, encoding="utf-8")
            changed.append(path)
    readme = root / "README.md"
    before = readme.read_text(encoding="utf-8")
    after = readme_with_links(before, repository, version, root)
    if after != before:
        readme.write_text(after, encoding="utf-8")
        changed.append(readme)
    return changed


def _git(root: Path, *args: str) -> str:
    try:
        done = subprocess.run(
            ["git", "-C", str(root), *args], capture_output=True, text=True, timeout=30
        )
    except (OSError, subprocess.SubprocessError):
        return ""
    return done.stdout.strip() if done.returncode == 0 else ""


def _https(url: str) -> str:
    """A git remote's address as a https URL without ``.git`` (``git@github.com:o/r.git``)."""
    ssh = re.fullmatch(r"(?:ssh://)?git@([^:/]+)[:/](.+)", url)
    if ssh:
        url = f"https://{ssh.group(1)}/{ssh.group(2)}"
    return url.rstrip("/").removesuffix(".git")


def remote_warnings(repository: str, version: str, root: Path = ROOT) -> list[str]:
    """Why the links ``hosted-links`` writes may lead elsewhere than this checkout: the address in
    ``pyproject.toml`` is not its git remote ``origin`` (a fork, a copy), or tag ``v<version>``,
    which every link and the install cell name, is not in it."""
    said = []
    remote = _git(root, "remote", "get-url", "origin")
    lead = f"the links lead to {repository} at tag v{version} ([project.urls] Repository)"
    if not remote:
        said.append(
            f"[WARN] {lead}, and this checkout has no git remote 'origin' to compare it with: "
            "learners open that repository, not this copy"
        )
    elif _https(remote).casefold() != repository.casefold():
        said.append(
            f"[WARN] {lead}, but this checkout's remote 'origin' is {remote}: learners would open "
            "that repository, not yours. A fork sets Repository in pyproject.toml to its own "
            "address, reruns `make hosted-links`, commits, tags and pushes the tag"
        )
    if not _git(root, "tag", "--list", f"v{version}"):
        said.append(
            f"[WARN] tag v{version} is not in this checkout: the links and the install cell lead "
            f"nowhere until it is pushed (git tag v{version} && git push origin v{version})"
        )
    return said


def run_hosted_links(root: Path = ROOT) -> int:
    for line in remote_warnings(*project(root), root):
        print(line)
    changed = apply(root)
    for path in changed:
        print(f"[OK] {path.relative_to(root)}")
    print(f"{len(changed)} file(s) changed" if changed else "nothing to change: already current")
    return 0
