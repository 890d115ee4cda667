"""Documents that cannot drift: every path, module and make target the prose names exists.

The prose is CONTRIBUTING.md, the README, requirements/*.in, and every docstring and comment in
``course/`` and ``tests/``. A path (``course/facts/report.py``, ``tests/project/``), a dotted
module or name (``course.calculators.overhead.crossover_size``) and a ``make`` target named there
must be in the tree; a placeholder (``NN_slug``, ``<topic>``, ``*``) must match at least one file.
"""

from __future__ import annotations

import ast
import io
import re
import tokenize
from functools import cache
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
DOCUMENTS = [
    ROOT / "CONTRIBUTING.md",
    ROOT / "README.md",
    *sorted((ROOT / "requirements").glob("*.in")),
]
TOP = ("course", "tests", "notebooks", "solutions", "exercises", "benchmarks", "instructors")
PATH = re.compile(rf"(?<![\w./-])(?:{'|'.join(TOP)})/[\w.*<>/-]*[\w*>/]")
MODULE = re.compile(r"(?<![\w./-])course(?:\.\w+)+")
MAKE = re.compile(r"`make ([a-z][\w.-]*)")
#: Folders and files that the code writes at run time (not in the tree until then).
WRITTEN_AT_RUN_TIME = ("exercises/checks/", "build/")


def prose_of(path: Path) -> str:
    """The docstrings and comments of a Python file (its code and other strings left out)."""
    text = path.read_text()
    tree = ast.parse(text)
    parts = [
        ast.get_docstring(node, clean=False) or ""
        for node in ast.walk(tree)
        if isinstance(node, ast.Module | ast.ClassDef | ast.FunctionDef | ast.AsyncFunctionDef)
    ]
    parts += [
        tok.string
        for tok in tokenize.generate_tokens(io.StringIO(text).readline)
        if tok.type == tokenize.COMMENT
    ]
    parts += [  # "#:" attribute docs and constants that document are comments already
        n.value
        for n in ast.walk(tree)
        if isinstance(n, ast.Expr)
        and isinstance(n.value, ast.Constant)
        and isinstance(n.value.value, str)
    ]
    return "\n".join(p if isinstance(p, str) else "" for p in parts)


def _pattern_exists(name: str) -> bool:
    if name.startswith(WRITTEN_AT_RUN_TIME):
        return True
    pattern = re.sub(r"<[^>]*>|\bNN\b|NN_\w+|NN", "*", name.rstrip("/"))
    pattern = re.sub(r"\*+", "*", pattern)
    if "*" in pattern:
        return any(ROOT.glob(pattern))
    return (ROOT / pattern).exists()


@cache
def _top_names(module_file: Path) -> frozenset[str]:
    tree = ast.parse(module_file.read_text())
    names: set[str] = set()
    for node in tree.body:
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
            names.add(node.name)
            if isinstance(node, ast.ClassDef):
                names.update(
                    f"{node.name}.{n.name}"
                    for n in node.body
                    if isinstance(n, ast.FunctionDef | ast.AsyncFunctionDef)
                )
        elif isinstance(node, ast.Assign | ast.AnnAssign):
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            names.update(t.id for t in targets if isinstance(t, ast.Name))
        elif isinstance(node, ast.ImportFrom | ast.Import):
            names.update((a.asname or a.name).split(".")[0] for a in node.names)
    return frozenset(names)


def _module_exists(dotted: str) -> bool:
    parts = dotted.split(".")
    for cut in range(len(parts), 0, -1):
        base = ROOT.joinpath(*parts[:cut])
        for module_file in (base.with_suffix(".py"), base / "__init__.py"):
            if module_file.is_file():
                rest = parts[cut:]
                if not rest:
                    return True
                names = _top_names(module_file)
                return ".".join(rest[:2]) in names or rest[0] in names
    return False


def named_things() -> list[tuple[str, str, str]]:
    """(kind, name, where) for every path, module and make target the prose names."""
    sources = [(p, p.read_text()) for p in DOCUMENTS]
    sources += [
        (p, prose_of(p)) for d in ("course", "tests") for p in sorted((ROOT / d).rglob("*.py"))
    ]
    found = []
    for path, text in sources:
        where = str(path.relative_to(ROOT))
        found += [("path", m.rstrip("."), where) for m in PATH.findall(text)]
        found += [("module", m.rstrip("."), where) for m in MODULE.findall(text)]
        found += [("make target", m, where) for m in MAKE.findall(text)]
    return found


def test_every_path_module_and_make_target_named_in_the_prose_exists():
    makefile = (ROOT / "Makefile").read_text()
    targets = set(re.findall(r"^([\w.-]+)\s*:", makefile, re.M))
    check = {"path": _pattern_exists, "module": _module_exists, "make target": targets.__contains__}
    things = named_things()
    assert len(things) > 100, "the scan found almost nothing: the patterns are broken"
    missing = sorted(
        {f"{where}: {kind} {name}" for kind, name, where in things if not check[kind](name)}
    )
    assert not missing, "named but not in the tree:\n" + "\n".join(missing)


def test_the_checks_fail_on_names_that_are_not_there():
    assert _pattern_exists("course/facts/report.py") and not _pattern_exists("course/facts/nope.py")
    assert _pattern_exists("notebooks/NN_slug.ipynb") and _pattern_exists("course/<layer>/")
    assert _module_exists("course.facts.report.Table") and _module_exists("course.calculators")
    assert not _module_exists("course.measure.matmul.fit_fixed_cost")  # moved to calculators
    assert not _module_exists("course.nothing")


def test_test_names_say_the_claim_not_the_issue_that_asked_for_it():
    named = [
        f"{p.relative_to(ROOT)}::{m.group(1)}"
        for p in (ROOT / "tests").rglob("test_*.py")
        for m in re.finditer(r"def (test_\w*issue_?\d+\w*)", p.read_text(), re.I)
    ]
    assert not named, f"name the claim, not the issue number: {named}"
