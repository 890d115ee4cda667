"""Dependencies say what the code uses, in two sets.

Every third-party module the learners' side imports (``course/``, ``notebooks/``, ``exercises/``)
comes from a distribution declared in ``requirements/learners.in``; what the instructors' side
imports (``instructors/teaching/``, ``solutions/``, ``tests/``) from one declared there or in
``requirements/instructors.in``. Every declared distribution is imported by its side or is a tool
the Makefile or CI runs (listed below with its use). Import names are mapped to distributions by the
installed metadata (``importlib.metadata.packages_distributions``: ``yaml`` -> PyYAML).
"""

from __future__ import annotations

import ast
import functools
import json
import sys
from importlib import metadata
from pathlib import Path

import pytest
from packaging.requirements import Requirement
from packaging.utils import canonicalize_name

ROOT = Path(__file__).resolve().parents[2]
LEARNERS = ("course", "notebooks", "exercises")
INSTRUCTORS = ("instructors/teaching", "solutions", "tests")
FIRST_PARTY = {
    "course",
    "teaching",
    "conftest",
    "grading_cases",
    "leaks",
    "browser_setup",
    "quiz_cases",
    "export_cases",
}
FIRST_PARTY |= {"solution_run", "install", "measured"}  # install: requirements/install.py
FIRST_PARTY |= {"junk_cases"}  # tests/calculators/junk_cases/, one valid call per calculator
#: Declared distributions that nothing imports: tools run by make, pytest or the site build.
LEARNER_TOOLS = {"jupyterlab": "`make lab` opens the course in it"}
TOOLS = {
    "nbval": "`make notebooks` checks the stored outputs (pytest plugin)",
    "pytest-timeout": "per-test time limits in the grader's checks",
    "ruff": "`make lint`",
    "import-linter": "`make lint` runs `lint-imports` on the layers",
    "myst-nb": "`make site` renders the notebooks",
    "setuptools": "the build backend of the editable installs (pyproject.toml files)",
    "uv": "`make lock` and tests/project/test_installable.py resolve the locks with it",
    "playwright": "tests/project/test_browser.py drives JupyterLab (imported there)",
    "rise": "its Reveal.js files are copied into the decks (instructors/teaching/offline.py)",
    "jupyter-server-mathjax": "its MathJax files are copied into the decks and the site",
    "jupyterhub": "tests/project/test_hub_class.py runs the hub and its single-user servers",
    "nbgitpuller": "a server extension of the hub's JupyterLab (tests/project/test_hub_class.py)",
}
#: Declared for work on another branch, with where its import will be.
PLANNED: dict[str, str] = {}  # declared ahead of the code that imports them: none now


def _declared(name: str) -> set[str]:
    names = set()
    for line in (ROOT / "requirements" / f"{name}.in").read_text().splitlines():
        line = line.split("#", 1)[0].strip()
        if line and not line.startswith("-"):
            names.add(canonicalize_name(Requirement(line).name))
    return names


def _sources(folders: tuple[str, ...]):
    for folder in folders:
        for path in sorted((ROOT / folder).rglob("*")):
            if path.suffix == ".py":
                yield path, path.read_text(encoding="utf-8")
            elif path.suffix == ".ipynb":
                cells = json.loads(path.read_text(encoding="utf-8"))["cells"]
                for cell in cells:
                    if cell["cell_type"] == "code":
                        source = "".join(cell["source"])
                        lines = [
                            ln
                            for ln in source.splitlines()
                            if not ln.lstrip().startswith(("%", "!"))
                        ]
                        yield path, "\n".join(lines)


@functools.cache
def imported_modules(folders: tuple[str, ...]) -> dict[str, set[str]]:
    """Top-level module name -> files that import it (absolute imports only)."""
    found: dict[str, set[str]] = {}
    for path, source in _sources(folders):
        try:
            tree = ast.parse(source)
        except SyntaxError:  # a cell with shell syntax ast cannot read; nbval runs it
            continue
        for node in ast.walk(tree):
            if isinstance(node, ast.Import):
                names = [alias.name for alias in node.names]
            elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
                names = [node.module]
            elif (  # importlib.import_module("triton"): a lazy import counts as one
                isinstance(node, ast.Call)
                and getattr(node.func, "attr", getattr(node.func, "id", None)) == "import_module"
                and node.args
                and isinstance(node.args[0], ast.Constant)
                and isinstance(node.args[0].value, str)
            ):
                names = [node.args[0].value]
            else:
                continue
            for name in names:
                if (path.parent / f"{name.split('.')[0]}.py").exists():
                    continue  # a module beside the file (sandbox_init, tests' helpers)
                found.setdefault(name.split(".")[0], set()).add(str(path.relative_to(ROOT)))
    return found


def third_party(modules: dict[str, set[str]]) -> dict[str, set[str]]:
    return {
        m: files
        for m, files in modules.items()
        if m not in sys.stdlib_module_names and m not in FIRST_PARTY
    }


@functools.cache
def _packages_distributions() -> dict[str, list[str]]:
    return metadata.packages_distributions()


def distributions_of(module: str) -> set[str]:
    return {canonicalize_name(d) for d in _packages_distributions().get(module, [])}


SIDES = {
    "learners": (LEARNERS, ("learners",), LEARNER_TOOLS),
    "instructors": (INSTRUCTORS, ("learners", "instructors"), TOOLS),
}


def _undeclared(folders: tuple[str, ...], sets: tuple[str, ...]) -> dict:
    declared = set().union(*(_declared(name) for name in sets))
    missing = {}
    for module, files in third_party(imported_modules(folders)).items():
        dists = distributions_of(module)
        if not dists & declared:
            missing[module] = (sorted(dists) or ["not installed"], sorted(files)[:3])
    return missing


@pytest.mark.parametrize("side", SIDES)
def test_every_third_party_import_is_declared(side):
    folders, sets, _ = SIDES[side]
    missing = _undeclared(folders, sets)
    assert not missing, f"imported by the {side}' side but not declared in {sets}: {missing}"


@pytest.mark.parametrize("side", SIDES)
def test_every_declared_requirement_is_imported_or_a_listed_tool(side):
    folders, sets, tools = SIDES[side]
    imported = set()
    for module in third_party(imported_modules(folders)):
        imported |= distributions_of(module)
    unused = _declared(sets[-1]) - imported - set(tools) - set(PLANNED)
    assert not unused, f"declared in requirements/{sets[-1]}.in but never imported: {unused}"
    stale_tools = set(tools) & imported - {"playwright"}
    assert not stale_tools, f"listed as tools but imported (drop them from TOOLS): {stale_tools}"


def test_the_learners_side_would_fail_on_an_instructors_import():
    """The check can fail: the grader's notebook reader (nbformat) is not a learners'
    requirement."""
    missing = _undeclared(("instructors/teaching",), ("learners",))
    assert "nbformat" in missing


def test_the_scan_sees_imports_in_modules_and_notebooks():
    found = imported_modules(LEARNERS)
    assert "course/calculators/memory.py" not in found.get("torch", set())  # layers: no torch
    assert any(f.endswith(".ipynb") for f in found["course"])  # notebook cells are read
    assert distributions_of("yaml") == {"pyyaml"}  # import name -> distribution name
