"""Release: ``python -m course release OUTDIR`` writes what students receive, and nothing else.

The repository holds the solutions (``solutions/``) and, once built, the answer keys
(``build/grading/``): a graded class hands out this release instead. It contains the lessons
(``notebooks/``), the exercise sets (``exercises/`` with their public checks), the ``course`` package,
``requirements.txt``, ``environment.yml``, ``pyproject.toml``, a student README and a small Makefile
(``make install``, ``make lab``, ``make check``). It never contains ``solutions/``, ``build/``,
``tests/``, ``benchmarks/``, git history, or any file named like an answer key; a test greps the
release for every hidden value.
"""

from __future__ import annotations

import shutil
import sys
from pathlib import Path

from course.publishing.grading.authoring import REPO

COPIED_DIRS = ("notebooks", "exercises", "course")
COPIED_FILES = ("requirements.txt", "environment.yml", "pyproject.toml")
NEVER = ("solutions", "build", "tests", "benchmarks", ".git", "__pycache__", ".ipynb_checkpoints")
NEVER_SUFFIXES = (".key.json", ".zip", ".pyc")

STUDENT_README = """# GPU infrastructure and the computational requirements of AI: course materials

Executable lessons (`notebooks/`) and exercise sets (`exercises/`) on GPU hardware, memory, data types,
and what training and serving models costs. No GPU is needed: lessons measure the machine you have.

## Start

    make install      # a virtual environment in .venv with every pinned package (Python 3.11+)
    make check        # is this machine ready for the course?
    make lab          # opens JupyterLab on the first lesson

(Or `conda env create -f environment.yml`, then `pip install -e .` and `jupyter lab`.)

## Exercises

Open `exercises/NN_*.ipynb` from JupyterLab, run its first code cell, replace each `...` with your
answer and run the `grader.check("qN")` cell below it. It tells you whether each value is right to
the question's precision, without showing the value, and gives a hint when it is not. Multiple-choice
and True/False answers are checked for their form only; your instructor's grader checks them.

Hand in the `.ipynb` file under its own name (keep the set's name, e.g. `04_model_memory-yourname.ipynb`).
Your notebook is graded by running it from the top on the instructor's machine: run it top to bottom
yourself first (*Kernel → Restart Kernel and Run All Cells*).
"""

STUDENT_MAKEFILE = """PYTHON ?= python3
BIN := .venv/bin

.PHONY: install lab check

install: .venv/.installed

.venv/.installed: requirements.txt pyproject.toml
\t$(PYTHON) -m venv .venv
\t$(BIN)/python -m pip install --quiet -r requirements.txt
\t$(BIN)/python -m pip install --quiet --no-deps --no-build-isolation -e .
\ttouch .venv/.installed

lab: install
\t$(BIN)/jupyter lab --ServerApp.ip=127.0.0.1 --LabApp.default_url=/lab/tree/notebooks/00_setup.ipynb \\
\t    $(if $(filter 0,$(shell id -u)),--allow-root)

check: install
\t$(BIN)/python -m course check
"""


def _ignore(directory: str, names: list[str]) -> set[str]:
    return {n for n in names if n in NEVER or n.endswith(NEVER_SUFFIXES)}


def write_release(outdir: str | Path, *, repo: Path = REPO) -> int:
    """Write the release into ``outdir`` (new or empty). Returns an exit status."""
    out = Path(outdir)
    if out.exists() and any(out.iterdir()):
        print(f"{out} exists and is not empty: choose a new folder", file=sys.stderr)
        return 2
    out.mkdir(parents=True, exist_ok=True)
    for name in COPIED_DIRS:
        if (repo / name).is_dir():
            shutil.copytree(repo / name, out / name, ignore=_ignore)
    for name in COPIED_FILES:
        if (repo / name).is_file():
            shutil.copy2(repo / name, out / name)
    (out / "README.md").write_text(STUDENT_README)
    (out / "Makefile").write_text(STUDENT_MAKEFILE)
    leaked = [p for p in out.rglob("*") if p.name in NEVER[:4] or p.name.endswith(NEVER_SUFFIXES)]
    if leaked:
        print(f"refusing: the release would contain {leaked[:3]}", file=sys.stderr)
        shutil.rmtree(out)
        return 1
    print(f"release written to {out}: {', '.join(COPIED_DIRS + COPIED_FILES)}, README.md, Makefile")
    return 0
