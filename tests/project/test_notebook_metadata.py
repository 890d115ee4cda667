"""Committed notebooks carry the kernelspec JupyterLab installs, so opening one does not mark it
modified."""

import json
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
NOTEBOOKS = sorted(
    p for d in ("notebooks", "solutions", "exercises") for p in (ROOT / d).glob("*.ipynb")
)


def installed_kernelspec() -> dict:
    spec = Path(sys.prefix) / "share/jupyter/kernels/python3/kernel.json"
    if not spec.exists():
        pytest.skip(f"no ipykernel kernelspec at {spec}")
    kernel = json.loads(spec.read_text())
    return {
        "display_name": kernel["display_name"],
        "language": kernel["language"],
        "name": "python3",
    }


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: f"{p.parent.name}/{p.name}")
def test_notebook_kernelspec_is_the_installed_one(path):
    assert json.loads(path.read_text())["metadata"]["kernelspec"] == installed_kernelspec()
