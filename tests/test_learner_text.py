"""What a learner reads names the readings by title: never a file they lack ("seed 004", FACTS.md)."""

import ast
import json
import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
FORBIDDEN = re.compile(r"\bseeds? \d{3}\b|\b\d{3}_[0-9a-f]{16}\.txt\b|FACTS\.md|shared/seeds", re.I)
NOTEBOOKS = sorted(p for d in ("notebooks", "exercises") for p in (ROOT / d).glob("*.ipynb"))
QUIZZES = sorted((ROOT / "course" / "presentation" / "quizzes").glob("lesson_*.py"))


def markdown_of(path: Path) -> str:
    cells = json.loads(path.read_text())["cells"]
    return "\n".join("".join(c["source"]) for c in cells if c["cell_type"] == "markdown")


def strings_of(path: Path) -> str:
    tree = ast.parse(path.read_text())
    return "\n".join(
        n.value for n in ast.walk(tree) if isinstance(n, ast.Constant) and isinstance(n.value, str)
    )


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: f"{p.parent.name}/{p.name}")
def test_notebook_text_names_no_file_the_learner_lacks(path):
    found = FORBIDDEN.findall(markdown_of(path))
    assert not found, (
        f"{path.name} names {found}: name the reading by its title (README lists them)"
    )


@pytest.mark.parametrize("path", QUIZZES, ids=lambda p: p.stem)
def test_quiz_text_names_no_file_the_learner_lacks(path):
    found = FORBIDDEN.findall(strings_of(path))
    assert not found, f"{path.name} names {found}: name the reading by its title"


def test_no_public_name_of_the_package_says_seed():
    """Learners read the package: the readings' rules are named by the reading ("as written"),
    never by a file id. Random seeds (``seed=``, ``manual_seed``) are another word."""
    import importlib
    import pkgutil

    import course

    offenders = []
    for info in pkgutil.walk_packages(course.__path__, "course."):
        if "seed" in info.name.rsplit(".", 1)[-1].lower():
            offenders.append(info.name)
            continue
        if info.name.startswith(("course.measure", "course.distributed", "course.publishing")):
            continue  # torch-heavy or entry points: checked by name only
        module = importlib.import_module(info.name)
        offenders += [
            f"{info.name}.{n}" for n in getattr(module, "__all__", ()) if "seed" in n.lower()
        ]
    assert not offenders, offenders
