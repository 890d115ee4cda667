"""Each lesson's setup cell is the one CONTRIBUTING shows: it imports the course's modules, one line
per layer folder, never the names inside them (later cells say ``report.Table(...)``,
``devices.describe_machine()``), and it stays short."""

from __future__ import annotations

import ast
import importlib
import json
import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
LESSONS = sorted((ROOT / "notebooks").glob("[0-9][0-9]_*.ipynb"))
#: CONTRIBUTING says "about a dozen lines"; lesson 11 adds four that pick Triton's interpreter
#: before triton is imported, lesson 12 imports seven layers' modules and starts its clock.
MAX_LINES = 20


def setup_cell(path: Path) -> str:
    """The lesson's first code cell that imports the course."""
    cells = json.loads(path.read_text(encoding="utf-8"))["cells"]
    code = ["".join(c["source"]) for c in cells if c["cell_type"] == "code"]
    return next(s for s in code if re.search(r"^(from|import) course", s, re.M))


def imported_names(source: str) -> list[str]:
    """What ``from course... import X`` brings in that is not a module of the course."""
    names = []
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.ImportFrom) and (node.module or "").startswith("course"):
            for alias in node.names:
                try:
                    importlib.import_module(f"{node.module}.{alias.name}")
                except ModuleNotFoundError:
                    names.append(f"{node.module}.{alias.name}")
    return names


def test_imported_names_sees_a_name_and_spares_a_module():
    source = "from course.facts import report, units\nfrom course.facts.report import Table\n"
    assert imported_names(source) == ["course.facts.report.Table"]


@pytest.mark.parametrize("path", LESSONS, ids=lambda p: p.name)
def test_the_setup_cell_imports_modules_not_names(path):
    assert imported_names(setup_cell(path)) == []


@pytest.mark.parametrize("path", LESSONS, ids=lambda p: p.name)
def test_the_setup_cell_is_short(path):
    lines = setup_cell(path).strip().splitlines()
    assert len(lines) <= MAX_LINES, f"{len(lines)} lines:\n" + "\n".join(lines)
