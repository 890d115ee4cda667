"""Release: ``python -m teaching release OUTDIR [--graded]`` writes what students receive, and nothing
else.

The repository holds the solutions (``solutions/``) and, once built, the answer keys
(``build/grading/``): a graded class hands out this release instead. It contains the lessons
(``notebooks/``), the exercise sets (``exercises/`` with their public checks), the ``course``
package (the learners' package only: ``instructors/`` with the instructors' package never ships), the
learners' set, its lock and installer (``requirements/learners.{in,txt}``, ``install.py``),
``environment.yml``, ``pyproject.toml``, a student README and a small Makefile (``make install``, ``make lab``, ``make check``). It never contains ``solutions/``,
``build/``, ``tests/``, ``benchmarks/``, git history, or any file named like an answer key.

- **From the committed files only**: the release is read from ``git archive HEAD``, so an exercise
  notebook an instructor filled in and ran, or any other uncommitted change, never reaches students
  (the command says how many uncommitted paths it left out). Outside a git checkout it refuses.
- **Exercise notebooks without outputs**: every ``exercises/*.ipynb`` is written with its outputs
  and execution counts stripped, whatever was committed.
- **Two modes**: the default (self-study) ships the checks of ``exercises/checks/`` (precise: a
  salted hash of each answer's rounding, which a loop over candidates can recover); ``--graded``
  writes checks of form, units and a coarse range only (:mod:`course.selfcheck.coarse`)
  from the answer keys.
- **The key it was built from is recorded** (:func:`keycheck.record_release`): a digest per
  question in ``build/grading/released.json``, never in the release; ``grade`` compares its key
  with it, so a solution edited, assigned and committed after the release is said.
- **Hidden-value check**: after writing, every solution's hidden values are searched for in the
  exercises (notebooks and checks) and the README, as :mod:`teaching.grading.leaks` finds
  them; on a hit the release is deleted and the command exits 1.
"""

from __future__ import annotations

import io
import json
import shutil
import subprocess
import sys
import tarfile
import tempfile
from pathlib import Path

import nbformat

from teaching.grading import authoring, keycheck, leaks, spec
from teaching.grading.authoring import BUILD_DIR, REPO

COPIED_DIRS = ("notebooks", "exercises", "course")
COPIED_FILES = (
    "requirements/learners.in",
    "requirements/learners.txt",
    "requirements/install.py",
    "environment.yml",
    "pyproject.toml",
)
NEVER = (
    "solutions",
    "build",
    "tests",
    "instructors",
    "teaching",
    "benchmarks",
    ".git",
    "__pycache__",
    ".ipynb_checkpoints",
)
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
answer and run the `grader.check("qN")` cell below it.

{checks}

Hand in the `.ipynb` file under its own name (keep the set's name, e.g. `04_model_memory-yourname.ipynb`).
Your notebook is graded by running it from the top on the instructor's machine: run it top to bottom
yourself first (*Kernel → Restart Kernel and Run All Cells*).
"""

CHECKS_SELF_STUDY = """This is a self-study release. The check tells you whether each value is right to
the question's precision, without showing the value, and gives a hint when it is not (one written for
that question, or for a known mistake such as GB for GiB). It compares a salted, slow hash of your
value's rounding: it is an honesty aid, not security, since trying candidates one by one would find a
value in minutes of one core (a 4-figure answer whose order of magnitude you know: about a minute; a
whole number below 10,000: about a minute and a half). Use it to learn; a class whose marks count
receives the graded release instead. Multiple-choice and True/False answers are checked for their form
only."""

CHECKS_GRADED = """This is a graded release. The check tells you whether each value has the right form
and lies in a coarse range (the right units and order of magnitude: the range is at least a decade wide
and holds at least 100 values at the question's precision), and which of your answers are in range. It
does not say whether a value is right, and nothing in it holds a right answer to search for: your
instructor's grader checks each value precisely when it runs your notebook. When a value matches a
known mistake (GB for GiB, 4 bytes for int4) you get the hint written for it. Multiple-choice and
True/False answers are checked for their form only."""

STUDENT_MAKEFILE = """PYTHON ?= python3
BIN := .venv/bin

.PHONY: install lab check

install: .venv/.installed

.venv/.installed: requirements/learners.txt pyproject.toml
\t$(PYTHON) -m venv .venv
\t$(BIN)/python requirements/install.py requirements/learners.txt
\t$(BIN)/python -m pip install --quiet --no-deps -e .
\ttouch .venv/.installed

lab: install
\t$(BIN)/jupyter lab --ServerApp.ip=127.0.0.1 --LabApp.default_url=/lab/tree/notebooks/00_setup.ipynb \\
\t    $(if $(filter 0,$(shell id -u)),--allow-root)

check: install
\t$(BIN)/python -m course check
"""


def _ignore(directory: str, names: list[str]) -> set[str]:
    return {n for n in names if n in NEVER or n.endswith(NEVER_SUFFIXES)}


class ReleaseError(RuntimeError):
    """Why a release cannot be written (printed, exit status 1 or 2)."""


def _git(repo: Path, *args: str) -> subprocess.CompletedProcess:
    return subprocess.run(["git", "-C", str(repo), *args], capture_output=True, check=False)


def committed_tree(repo: Path, into: Path) -> list[str]:
    """Extract the committed files (``git archive HEAD``) that a release reads into ``into``.

    Returns the uncommitted paths that were left out (``git status --porcelain``), for the message.
    """
    if _git(repo, "rev-parse", "--verify", "HEAD").returncode != 0:
        raise ReleaseError(
            f"{repo} is not a git checkout with a commit: a release is built from committed "
            "files only"
        )
    wanted = [*COPIED_DIRS, *COPIED_FILES, "solutions"]
    listed = _git(repo, "ls-tree", "--name-only", "HEAD").stdout.decode().split()
    archive = _git(
        repo,
        "archive",
        "--format=tar",
        "HEAD",
        "--",
        *[w for w in wanted if w.split("/")[0] in listed],
    )
    if archive.returncode != 0:
        raise ReleaseError(f"git archive failed: {archive.stderr.decode().strip()}")
    with tarfile.open(fileobj=io.BytesIO(archive.stdout)) as tar:
        if hasattr(tarfile, "data_filter"):  # Python 3.11.4+: refuse links and paths outside
            tar.extractall(into, filter="data")
        else:  # our own HEAD's archive, read before anything else touches the folder
            tar.extractall(into)  # noqa: S202
    status = _git(repo, "status", "--porcelain", "--untracked-files=all").stdout.decode()
    return [line[3:] for line in status.splitlines() if line.strip()]


def strip_outputs(path: Path) -> None:
    """An exercise notebook as a learner starts it: no outputs, no execution counts."""
    nb = nbformat.read(path, as_version=4)
    for cell in nb.cells:
        if cell.cell_type == "code":
            cell.outputs = []
            cell.execution_count = None
    nb.metadata.pop("widgets", None)
    nbformat.write(nb, path)


def hidden_value_hits(out: Path, solutions: list[Path], keys: dict) -> list[str]:
    """Hidden values found in what a learner reads: exercises/ (notebooks, checks) and the
    README."""
    files = sorted(p for p in (out / "exercises").rglob("*") if p.is_file()) + [out / "README.md"]
    text = "\n".join(p.read_text(errors="replace") for p in files).replace("\\n", "\n")
    hits = []
    for solution in solutions:
        assignment = spec.read(solution)
        hidden = leaks.hidden_values(keys[assignment.name], assignment)
        notebook = out / "exercises" / f"{assignment.name}.ipynb"
        own = leaks.sections(nbformat.read(notebook, as_version=4)) if notebook.is_file() else {}
        for q, values in hidden.items():
            hits += [
                f"{assignment.name} {q}: {x}" for x in leaks.find_leaks(text, values, local=False)
            ]
            hits += [
                f"{assignment.name} {q} (in its own section): {x}"
                for x in leaks.find_leaks(own.get(q, ""), values, local=True)
            ]
    return hits


def _graded_checks(out: Path, solutions: list[Path], keys: dict) -> tuple[int, int]:
    """Write the graded checks; returns (known wrong answers whose hint they keep, all of them):
    a hint is left out where the wrong value's bucket would hold the right answer."""
    kept = total = 0
    for solution in solutions:
        assignment = spec.read(solution)
        checks = authoring.public_checks(assignment, keys[assignment.name], graded=True)
        kept += sum(len(q["wrong"]) for q in checks["questions"].values())
        total += sum(len(q.wrong) for q in assignment.questions)
        path = out / "exercises" / "checks" / f"{assignment.name}.json"
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(json.dumps(checks, indent=1, sort_keys=True) + "\n")
    return kept, total


def write_release(
    outdir: str | Path,
    *,
    repo: Path = REPO,
    graded: bool = False,
    build_dir: str | Path = BUILD_DIR,
    record_dir: str | Path | None = None,
) -> int:
    """Write the release into ``outdir`` (new or empty). Returns an exit status (see the module).
    The key of each set is recorded in ``record_dir`` (default: ``build_dir``, where ``grade``
    reads it)."""
    out = Path(outdir)
    if out.exists() and (not out.is_dir() or any(out.iterdir())):
        print(f"{out} exists and is not empty: choose a new folder", file=sys.stderr)
        return 2
    with tempfile.TemporaryDirectory(prefix="course-release-") as tmp:
        staged = Path(tmp)
        try:
            left_out = committed_tree(Path(repo), staged)
            solutions = authoring.solution_notebooks(staged / "solutions")
            keys, errors = authoring.answer_keys(solutions, build_dir=build_dir)
        except (ReleaseError, spec.FormatError) as e:
            print(f"refusing: {e}", file=sys.stderr)
            return 1
        if errors:
            print(
                f"refusing: a solution does not run, so its hidden values are unknown: {errors}",
                file=sys.stderr,
            )
            return 1
        _copy_release(staged, out, solutions, keys, graded=graded)
        leaked = [
            p for p in out.rglob("*") if p.name in NEVER[:5] or p.name.endswith(NEVER_SUFFIXES)
        ]
        hits = hidden_value_hits(out, solutions, keys)
        released_sets = [spec.read(s) for s in solutions]
    if leaked or hits:
        shutil.rmtree(out)
        for problem in [f"would contain {p}" for p in leaked[:5]] + hits[:20]:
            print(f"refusing: {problem}", file=sys.stderr)
        print(
            f"refusing: {len(leaked) + len(hits)} problems; nothing was written to {out}",
            file=sys.stderr,
        )
        return 1
    mode = "graded (form, units and coarse ranges)" if graded else "self-study (precise checks)"
    commit = _git(Path(repo), "rev-parse", "HEAD").stdout.decode().strip()
    record = keycheck.record_release(
        keys,
        released_sets,
        Path(record_dir if record_dir is not None else build_dir),
        commit=commit,
        mode="graded" if graded else "self-study",
    )
    _report(out, mode, left_out, record)
    return 0


def _copy_release(staged: Path, out: Path, solutions, keys: dict, *, graded: bool) -> None:
    """The committed files learners receive, from ``staged`` into ``out``: exercises without
    outputs (with graded checks for a graded class), a README and a Makefile of their own."""
    out.mkdir(parents=True, exist_ok=True)
    for name in COPIED_DIRS:
        if (staged / name).is_dir():
            shutil.copytree(staged / name, out / name, ignore=_ignore)
    for name in COPIED_FILES:
        if (staged / name).is_file():
            (out / name).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(staged / name, out / name)
    for notebook in sorted((out / "exercises").glob("*.ipynb")):
        strip_outputs(notebook)
    if graded:
        kept, total = _graded_checks(out, solutions, keys)
        print(
            f"graded checks: {kept} of the {total} known wrong answers keep their hint (the "
            "others lie within 100 steps of the right answer, whose bucket would hold it)",
            file=sys.stderr,
        )
    checks = CHECKS_GRADED if graded else CHECKS_SELF_STUDY
    (out / "README.md").write_text(STUDENT_README.format(checks=checks))
    (out / "Makefile").write_text(STUDENT_MAKEFILE)


def _report(out: Path, mode: str, left_out: list[str], record) -> None:
    """What a written release holds, what was left out and where each set's key is recorded."""
    print(
        f"release written to {out} from the committed files of HEAD, {mode}: "
        f"{', '.join(COPIED_DIRS + COPIED_FILES)}, README.md, Makefile"
    )
    if left_out:
        print(
            f"note: {len(left_out)} uncommitted paths were left out (commit them to release them), "
            f"e.g. {', '.join(left_out[:3])}"
        )
    print("hidden-value check: no solution value found in exercises/ or README.md")
    print(
        f"each set's key recorded in {record} (instructors only): `grade` warns when the key it "
        "grades with differs from it"
    )
