"""One unit spelling per quantity in the package's names (CONTRIBUTING.md, "SI base units
everywhere").

Every name the package defines (parameters, dataclass fields, constants, functions that return a
number; a function that returns a record or text, ``fmt_bandwidth``, names what it makes) spells its
unit out: seconds as ``_seconds``, rates as ``_per_s`` (``_bytes_per_s``, ``_flop_per_s``), never a
bare ``_s`` suffix or a bare ``bandwidth``, and "utilisation" with an s. The renames were made by a
script; this test keeps new code from bringing the old spellings back.
"""

from __future__ import annotations

import ast
from pathlib import Path

COURSE = Path(__file__).resolve().parents[2] / "course"


def _defined_names(tree: ast.AST):
    for node in ast.walk(tree):
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
            if node.returns is None or ast.unparse(node.returns) in {"float", "int"}:
                yield node.name, node.lineno  # a function named for the number it returns
            args = node.args
            for a in [*args.posonlyargs, *args.args, *args.kwonlyargs]:
                yield a.arg, a.lineno
        elif isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name):
            yield node.target.id, node.lineno  # dataclass fields, annotated constants
        elif isinstance(node, ast.Assign):
            for t in node.targets:
                if isinstance(t, ast.Name):
                    yield t.id, t.lineno


def _bad(name: str) -> str | None:
    low = name.lower()
    if low.endswith("_s") and not low.endswith("_per_s"):
        return "a bare _s: write _seconds (a time) or _per_s (a rate)"
    if low == "bandwidth" or low.endswith("_bandwidth"):
        return "a bandwidth without its unit: write _bytes_per_s"
    if "utiliz" in low:
        return "spell it utilisation"
    return None


def test_every_name_in_the_package_spells_its_unit():
    found = []
    for path in sorted(COURSE.rglob("*.py")):
        tree = ast.parse(path.read_text(encoding="utf-8"))
        for name, line in _defined_names(tree):
            if (why := _bad(name)) is not None:
                found.append(f"{path.relative_to(COURSE.parent)}:{line}: {name}: {why}")
    assert not found, "\n".join(sorted(set(found)))


def test_the_rule_catches_each_old_spelling():
    assert _bad("step_s") and _bad("link_bandwidth") and _bad("gpu_utilization")
    assert not any(
        _bad(n) for n in ("step_seconds", "bandwidth_bytes_per_s", "tokens_per_s", "utilisation")
    )
