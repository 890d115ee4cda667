"""Gradescope: ``results.json`` for a graded submission, and the autograder archive of a set.

The rules, from Gradescope's "Autograder Specifications"
(https://gradescope-autograders.readthedocs.io/en/latest/specs/): the archive holds ``setup.sh``
(installs the dependencies on Gradescope's Ubuntu image) and ``run_autograder`` (executable, with a
``#!`` line) at its root; Gradescope unpacks it into ``/autograder/source``, puts the submission in
``/autograder/submission`` and reads ``/autograder/results/results.json``. Each test there has
``name``, ``number``, ``score``, ``max_score``, ``status`` (``passed``/``failed``) and ``output``
(shown to the student) and may set ``visibility`` to ``hidden``, ``after_due_date``,
``after_published`` or ``visible``; the top level may set ``visibility`` and
``stdout_visibility`` too. One test per question, the hint as its output. A question whose check
consults the key (every value that is not form-only) is ``after_due_date`` by default, and so is
the whole result: a score shown at once would let a learner resubmit until it turns, which the
graded release is built to prevent.

Resources (Gradescope's "Troubleshooting" page, same site): the defaults are 768 MB of memory,
half a virtual CPU and a 10-minute timeout (at most 40). A set that imports torch needs more: the
archive's README states what to ask for.
"""

from __future__ import annotations

import io
import stat
import sys
import time
import zipfile
from pathlib import Path

from teaching.grading import spec
from teaching.grading.authoring import REPO
from teaching.grading.exports.common import feedback, write_per_file
from teaching.grading.files import write_new
from teaching.grading.grades import NOT_GRADED, Grade

VISIBILITY = ("hidden", "after_due_date", "after_published", "visible")
MAX_OUTPUT = 8_000  # characters of one test's output


def key_dependent(assignment: spec.Assignment | None) -> set[str]:
    """Questions whose score depends on the key (any answer that is not form-only)."""
    if assignment is None:
        return set()
    return {q.name for q in assignment.questions if any(a.expect != "none" for a in q.answers)}


def results(
    grade: Grade, assignment: spec.Assignment | None, visibility: str = "after_due_date"
) -> dict | None:
    """The ``results.json`` object for one graded file; None for a ``not-graded`` row (the
    grader's side failed): Gradescope must see a failed autograder run, never a score."""
    if visibility not in VISIBILITY:
        raise ValueError(f"visibility must be one of {', '.join(VISIBILITY)}; got {visibility!r}")
    if grade.status == NOT_GRADED:
        return None
    hidden = key_dependent(assignment)
    tests = [
        {
            "name": q,
            "number": str(i),
            "score": score,
            "max_score": points,
            "status": "passed" if score >= points else "failed",
            "output": why[:MAX_OUTPUT] if why else "right",
            "visibility": visibility if q in hidden else "visible",
        }
        for i, (q, score, points, why) in enumerate(feedback(grade), start=1)
    ]
    out = {
        "execution_time": round(grade.seconds),
        "output": (f"{grade.status}: {grade.reason}" if grade.status != "ok" else "")[:MAX_OUTPUT],
        "stdout_visibility": "hidden",
        "tests": tests,
    }
    if hidden:
        out["visibility"] = visibility
    if not tests:  # not a notebook, or no set: the score must come from somewhere
        out["score"] = 0.0
        out["output"] = f"{grade.status}: {grade.reason}"[:MAX_OUTPUT]
    return out


def write(
    out: Path,
    grades: list[Grade],
    assignments: dict[str, spec.Assignment],
    *,
    visibility: str = "after_due_date",
) -> list[Path]:
    """``<out>-gradescope/<submission>/results.json``, all or none; a ``not-graded`` row has
    none (Gradescope would show the autograder's failure)."""
    target = out.with_name(f"{out.stem}-gradescope")
    write_per_file(target, grades, lambda g: results(g, assignments.get(g.assignment), visibility))
    return [target]


SETUP_SH = """#!/usr/bin/env bash
# Gradescope runs this once, as root, when it builds the autograder image. Pick an Ubuntu 24.04 base
# image in the assignment's settings (the course needs Python 3.11 or newer).
set -euo pipefail
apt-get update
apt-get install -y --no-install-recommends python3 python3-venv python3-pip
python3 -c 'import sys; assert sys.version_info >= (3, 11), "pick Ubuntu 24.04 (Python 3.11+)"'
python3 -m venv /autograder/venv
cd /autograder/source
# The instructors' lock, with the CPU-only build of the pinned torch (PyPI's Linux build bundles
# CUDA: a few GB): requirements/install.py then leaves out the lock's CUDA wheels.
TORCH_INDEX=https://download.pytorch.org/whl/cpu /autograder/venv/bin/python \\
    requirements/install.py requirements/instructors.txt
/autograder/venv/bin/pip install --no-cache-dir --no-deps -e . -e instructors
"""

RUN_AUTOGRADER = """#!/usr/bin/env bash
# Gradescope runs this for every submission, in /autograder: the learner's files are in
# /autograder/submission, and /autograder/results/results.json is what Gradescope reads.
# AUTOGRADER_ROOT and AUTOGRADER_PYTHON let an instructor try it on another machine first.
set -u
ROOT="${{AUTOGRADER_ROOT:-/autograder}}"
PY="${{AUTOGRADER_PYTHON:-$ROOT/venv/bin/python}}"
export PYTHONPATH="$ROOT/source:$ROOT/source/instructors${{PYTHONPATH:+:$PYTHONPATH}}"
mkdir -p "$ROOT/results"
exec "$PY" -m teaching.grading.autograder gradescope \\
    "$ROOT/submission" "$ROOT/results/results.json" --assignment {assignment} \\
    --solutions "$ROOT/source/solutions" --timeout {timeout:g} --cell-timeout {cell_timeout:g} \\
    --visibility {visibility}{unprotected}
"""

README = """# Gradescope autograder for {assignment}

Built by `python -m teaching autograder gradescope {assignment} OUT.zip` from the course's
solution (this archive holds it: upload it as the assignment's autograder, never to learners).

In the assignment's *Configure Autograder* page:

- **Base image**: Ubuntu 24.04 (Python 3.11 or newer is needed).
- **Memory and CPU**: Gradescope's default (768 MB, half a CPU) is too small. The grader runs the
  solution once per submission (its answers, with fresh secret probes, are the key) and then the
  submission, each in its own sandbox: run on a correct submission of sets 00, 06, 07, 12 and 13,
  the peak was 753-1,178 MiB summed over all processes (a 2-core VM, 2026-11-28; the course
  repository's benchmarks/results/autograder_resources_2core_vm_2026-11-28.json). Ask for 3 GB
  (a learner's code can take more than the solution's) and 1 CPU.
- **Timeout**: the solution and the submission each may take up to {timeout:g} s
  (the solution at least 600 s): set 20 minutes (the most is 40).
- **Learners submit** the one `.ipynb` file; its name does not matter.

Each question is one test. The score of a question checked against the key, and the whole result,
are shown `{visibility}`: a score shown at once would let a learner resubmit until it turns.
Form-only questions are visible at once. Gradescope's containers may refuse the sandbox's
namespaces. {protections}
Every `results.json` lists the protections that were off in `extra_data.protections_off`
(and, when any was, says so in its output).
"""

REFUSES = """Without the hidden-files, PID-namespace and unprivileged-user protections a
submission could read this archive's solution or rewrite the grader and its result, so this
archive grades nothing there: `run_autograder` exits 2 without `results.json` and Gradescope shows
staff the failure. Rebuild it with `--allow-unprotected` only if you accept that risk."""

ALLOWED = """This archive was built with `--allow-unprotected`: it grades even where those
protections are off (a submission could then read the solution or rewrite its result)."""


def archive(
    assignment: str,
    out_zip: Path,
    *,
    repo: Path,
    timeout_seconds: float = 300,
    cell_timeout_seconds: float = 60,
    visibility: str = "after_due_date",
    allow_unprotected: bool = False,
) -> Path:
    """The autograder zip for one set: ``setup.sh``, ``run_autograder`` and the course's source
    (the learners' and instructors' packages, the set's solution, the locks and their installer)
    at its root."""
    if visibility not in VISIBILITY:
        raise ValueError(f"--visibility must be one of {', '.join(VISIBILITY)}; got {visibility!r}")
    solution = repo / "solutions" / f"{assignment}.ipynb"
    if not solution.is_file():
        raise ValueError(f"no solution for {assignment!r} in {repo / 'solutions'}")
    options = dict(
        assignment=assignment,
        timeout=timeout_seconds,
        cell_timeout=cell_timeout_seconds,
        visibility=visibility,
        unprotected=" \\\n    --allow-unprotected" if allow_unprotected else "",
        protections=ALLOWED if allow_unprotected else REFUSES,
    )
    files: list[tuple[str, bytes, int]] = [
        ("setup.sh", SETUP_SH.encode(), 0o755),
        ("run_autograder", RUN_AUTOGRADER.format(**options).encode(), 0o755),
        ("README.md", README.format(**options).encode(), 0o644),
        ("pyproject.toml", (repo / "pyproject.toml").read_bytes(), 0o644),
        (f"solutions/{assignment}.ipynb", solution.read_bytes(), 0o644),
    ]
    sources = [repo / "requirements", repo / "course", repo / "instructors" / "teaching"]
    sources.append(repo / "instructors" / "pyproject.toml")
    for p in sorted(q for source in sources for q in [source, *source.rglob("*")]):
        if p.is_file() and "__pycache__" not in p.parts and p.suffix not in (".pyc", ".pyo"):
            files.append((p.relative_to(repo).as_posix(), p.read_bytes(), 0o644))
    buf = io.BytesIO()
    stamp = time.localtime()[:6]
    with zipfile.ZipFile(buf, "w", zipfile.ZIP_DEFLATED) as z:
        for name, data, mode in files:
            info = zipfile.ZipInfo(name, date_time=stamp)
            info.external_attr = (stat.S_IFREG | mode) << 16
            info.compress_type = zipfile.ZIP_DEFLATED
            z.writestr(info, data)
    write_new(out_zip, buf.getvalue())
    return out_zip


def build_archive(
    assignment: str,
    out: str | Path,
    *,
    timeout_seconds: float = 300,
    cell_timeout_seconds: float = 60,
    visibility: str = "after_due_date",
    allow_unprotected: bool = False,
) -> int:
    """``python -m teaching autograder gradescope SET OUT.zip``: 0 when written, 2 on bad input."""
    try:
        path = archive(
            assignment,
            Path(out),
            repo=REPO,
            timeout_seconds=timeout_seconds,
            cell_timeout_seconds=cell_timeout_seconds,
            visibility=visibility,
            allow_unprotected=allow_unprotected,
        )
    except (ValueError, OSError) as e:
        print(f"no archive written: {e}", file=sys.stderr)
        return 2
    print(f"Gradescope autograder for {assignment} -> {path} (upload it; its README.md says which")
    print("base image, memory and timeout to choose)")
    return 0
