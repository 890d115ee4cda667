"""Open in Colab / Open in Kaggle links and the install cell: built from one repository URL, present
in every lesson, exercise set and README row, current (a rerun changes nothing) and idempotent."""

from __future__ import annotations

import shutil
from pathlib import Path

import nbformat
import pytest
from teaching import hosted_links, site
from teaching.grading import authoring

from course.selfcheck.hosted import install_cell

ROOT = hosted_links.ROOT
REPOSITORY, VERSION = hosted_links.project()
LESSONS = sorted((ROOT / "notebooks").glob("[0-9][0-9]_*.ipynb"))
EXERCISES = sorted((ROOT / "exercises").glob("[0-9][0-9]_*.ipynb"))


def _first(nb, kind: str) -> str:
    return next(c.source for c in nb.cells if c.cell_type == kind)


@pytest.mark.parametrize("path", LESSONS + EXERCISES, ids=lambda p: p.parent.name + "/" + p.stem)
def test_every_notebook_opens_hosted_and_installs_its_own_release_first(path):
    nb = nbformat.read(path, as_version=4)
    rel = path.relative_to(ROOT).as_posix()
    assert hosted_links.links(REPOSITORY, VERSION, rel) in _first(nb, "markdown").split("\n")[2]
    assert _first(nb, "code") == install_cell(REPOSITORY, VERSION)
    assert f"/v{VERSION}.zip" in _first(nb, "code")


def test_the_readme_links_every_lesson_and_exercise_set_and_so_does_the_sites_home_page():
    readme = (ROOT / "README.md").read_text()
    home = site._index(readme, answer_keys=False)
    for path in LESSONS + EXERCISES:
        rel = path.relative_to(ROOT).as_posix()
        for url in (
            hosted_links.colab_url(REPOSITORY, VERSION, rel),
            hosted_links.kaggle_url(REPOSITORY, VERSION, rel),
        ):
            assert f"]({url})" in readme and url in home, url


def test_the_links_follow_the_one_url_in_pyproject(tmp_path):
    text = (ROOT / "pyproject.toml").read_text().replace(REPOSITORY, "https://github.com/fork/c")
    (tmp_path / "pyproject.toml").write_text(text)
    repository, version = hosted_links.project(tmp_path)
    assert (repository, version) == ("https://github.com/fork/c", VERSION)
    line = hosted_links.links(repository, version, "notebooks/00_setup.ipynb")
    assert line == (
        f"[Open in Colab](https://colab.research.google.com/github/fork/c/blob/v{VERSION}/"
        f"notebooks/00_setup.ipynb) · [Open in Kaggle](https://kaggle.com/kernels/welcome?src="
        f"https://github.com/fork/c/blob/v{VERSION}/notebooks/00_setup.ipynb)"
    )
    assert "https://github.com/fork/c/archive/refs/tags/" in install_cell(repository, version)
    (tmp_path / "pyproject.toml").write_text(text.replace("https://github.com/fork/c", "x.org/c"))
    with pytest.raises(ValueError, match="Repository"):
        hosted_links.project(tmp_path)


def test_the_committed_notebooks_and_readme_are_current(tmp_path):
    """What `python -m teaching hosted-links` would write is what is committed."""
    for name in ("notebooks", "exercises", "solutions"):
        shutil.copytree(ROOT / name, tmp_path / name)
    for name in ("README.md", "pyproject.toml"):
        shutil.copy(ROOT / name, tmp_path / name)
    assert hosted_links.apply(tmp_path) == []


def test_a_new_version_replaces_the_cells_and_a_rerun_changes_nothing(tmp_path):
    nb = nbformat.v4.new_notebook(
        cells=[
            nbformat.v4.new_markdown_cell("# 99 · A lesson\n\n**Prerequisites.** none"),
            nbformat.v4.new_code_cell("import torch"),
        ]
    )
    hosted_links.with_hosted_cells(nb, "notebooks/99_x.ipynb", REPOSITORY, "1.0.0")
    nb.cells[1].metadata["tags"] = ["keep-me"]
    once = nbformat.writes(
        hosted_links.with_hosted_cells(nb, "notebooks/99_x.ipynb", REPOSITORY, "2.0.0")
    )
    twice = nbformat.writes(
        hosted_links.with_hosted_cells(nb, "notebooks/99_x.ipynb", REPOSITORY, "2.0.0")
    )
    assert once == twice
    assert [c.cell_type for c in nb.cells] == ["markdown", "code", "code"]
    assert nb.cells[0].source.split("\n")[:4] == [
        "# 99 · A lesson",
        "",
        hosted_links.links(REPOSITORY, "2.0.0", "notebooks/99_x.ipynb"),
        "",
    ]
    assert "1.0.0" not in once and nb.cells[1].source == install_cell(REPOSITORY, "2.0.0")
    assert nb.cells[1].metadata["tags"] == ["keep-me"] and nb.cells[2].source == "import torch"


def test_the_exercise_generator_puts_the_install_cell_before_the_checks_cell():
    from teaching.grading import spec

    nb = authoring.student_notebook(spec.read(authoring.solution_notebooks()[0]))
    code = [c.source for c in nb.cells if c.cell_type == "code"]
    assert code[0] == install_cell(REPOSITORY, VERSION)
    assert code[1].startswith("# Run this cell first") and "Grader(" in code[1]


def test_readme_rows_are_rewritten_not_duplicated(tmp_path: Path):
    readme = (ROOT / "README.md").read_text()
    again = hosted_links.readme_with_links(readme, REPOSITORY, VERSION)
    assert again == readme
    assert readme.count(f"| {hosted_links.README_COLUMN} |") == 2  # Part I and Part II tables


def test_an_nbgitpuller_link_pulls_the_release_branch_and_opens_lesson_00():
    url = hosted_links.nbgitpuller_url(
        "https://hub.example.edu/", REPOSITORY, "release", "notebooks/00_setup.ipynb"
    )
    folder = REPOSITORY.rsplit("/", 1)[-1]
    assert url == (
        "https://hub.example.edu/hub/user-redirect/git-pull?repo="
        + REPOSITORY.replace(":", "%3A").replace("/", "%2F")
        + f"&branch=release&urlpath=lab%2Ftree%2F{folder}%2Fnotebooks%2F00_setup.ipynb"
    )


def _repo(tmp_path: Path, remote: str | None, tag: str | None) -> Path:
    import subprocess

    def git(*args):
        subprocess.run(["git", "-C", str(tmp_path), *args], check=True, capture_output=True)

    tmp_path.mkdir(parents=True)
    git("init", "-q")
    git("-c", "user.name=t", "-c", "user.email=t@t", "commit", "-q", "--allow-empty", "-m", "x")
    if remote:
        git("remote", "add", "origin", remote)
    if tag:
        git("tag", tag)
    return tmp_path


def test_hosted_links_warns_when_the_links_are_not_this_checkouts_remote(tmp_path):
    """A fork that forgets pyproject.toml would send its learners to the upstream course."""
    fork = _repo(tmp_path / "fork", "git@github.com:someone/gpu-course.git", f"v{VERSION}")
    said = hosted_links.remote_warnings(REPOSITORY, VERSION, fork)
    assert len(said) == 1 and "remote 'origin' is git@github.com:someone/gpu-course.git" in said[0]
    assert REPOSITORY in said[0] and f"v{VERSION}" in said[0] and "pyproject.toml" in said[0]
    ssh_of_own = REPOSITORY.replace("https://github.com/", "git@github.com:") + ".git"
    own = _repo(tmp_path / "own", ssh_of_own, f"v{VERSION}")
    assert hosted_links.remote_warnings(REPOSITORY, VERSION, own) == []
    untagged = _repo(tmp_path / "untagged", REPOSITORY + ".git", None)
    (said,) = hosted_links.remote_warnings(REPOSITORY, VERSION, untagged)
    assert f"tag v{VERSION} is not in this checkout" in said
    copy = _repo(tmp_path / "copy", None, f"v{VERSION}")
    (said,) = hosted_links.remote_warnings(REPOSITORY, VERSION, copy)
    assert "no git remote 'origin'" in said
