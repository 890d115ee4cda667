"""Extract: run a notebook's code in the sandbox and bring back its answers as checked plain data.

:func:`run_cells` writes a request for :mod:`teaching.grading.runner` into a fresh folder,
runs it in
:mod:`teaching.grading.sandbox` (or, for the trusted solution when building exercises, in a
plain subprocess), and reads back ``results.json`` the way one reads a file an adversary wrote: no
symlinks or special files, bounded size, JSON only (never pickle), the run's nonce, only the
questions and answers that were asked for, only plain values. Anything else is dropped with a
reason.
"""

from __future__ import annotations

import contextlib
import json
import os
import secrets
import shutil
import stat
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path

import nbformat

from course.selfcheck.values import plain_problem
from teaching.grading import sandbox

RUNNER = sandbox.RUNNER
MAX_RESULTS_BYTES = 32 * 2**20


@dataclass
class Extraction:
    """What came back from one run."""

    answers: dict[str, dict] = field(default_factory=dict)  # question -> answer -> record
    cells: list[dict] = field(default_factory=list)
    extras: dict = field(default_factory=dict)
    done: bool = False  # every cell ran and the final extraction finished
    problem: str = ""  # why the run is incomplete or its results were rejected
    grader_problem: str = ""  # the grader's side failed (no sandbox): no grade, whatever it holds
    output: str = ""  # the run's own stdout/stderr, capped
    seconds: float = 0.0
    timed_out: bool = False
    protections_off: tuple[str, ...] = ()
    #: question -> {"answers", "extras"} right after its own answer cell (``in_place`` runs only)
    in_place: dict = field(default_factory=dict)


def notebook_cells(nb: nbformat.NotebookNode) -> list[dict]:
    """A submission's code cells, each with the question it belongs to (inherited from above)."""
    cells, question = [], None
    for cell in nb.cells:
        meta = cell.get("metadata", {}).get("course", {})
        if isinstance(meta, dict) and isinstance(meta.get("question"), str):
            question = meta["question"]
        if cell.cell_type == "code":
            answer = bool(isinstance(meta, dict) and meta.get("answer"))
            cells.append({"source": cell.source, "question": question, "answer": answer})
    return cells


def _read_untrusted(path: Path, limit: int) -> bytes:
    """Read a file the submission could have replaced: no symlink, no FIFO, bounded."""
    fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK)
    try:
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode):
            raise OSError("not a regular file")
        if info.st_size > limit:
            raise OSError(f"larger than {limit:,} bytes")
        with os.fdopen(fd, "rb", closefd=False) as f:
            return f.read(limit + 1)
    finally:
        os.close(fd)


def _validate(data, nonce: str, questions: dict) -> tuple[Extraction, str]:
    ext = Extraction()
    if not isinstance(data, dict):
        return ext, "results are not a JSON object"
    if data.get("nonce") != nonce:
        return ext, "results do not belong to this run (wrong nonce): rejected"
    cells = data.get("cells")
    if isinstance(cells, list):
        ext.cells = [c for c in cells if isinstance(c, dict) and not plain_problem(c)]
    ext.done = data.get("done") is True
    extras = data.get("extras")
    if isinstance(extras, dict) and not plain_problem(extras):
        ext.extras = extras
    in_place = data.get("in_place")
    if isinstance(in_place, dict) and not plain_problem(in_place, max_depth=12):
        ext.in_place = in_place
    answers = data.get("answers")
    if not isinstance(answers, dict):
        return ext, "results carry no answers"
    for q, spec in questions.items():
        got = answers.get(q)
        if not isinstance(got, dict):
            continue
        wanted = set(spec.get("answers", {})) | set(spec.get("calls", {}))
        kept = {}
        for name in wanted:
            record = got.get(name)
            if not isinstance(record, dict):
                continue
            if problem := plain_problem(record, max_depth=10):
                kept[name] = {"error": f"rejected: {problem}"}
            elif set(record) <= {"value", "error", "calls"} and len(record) == 1:
                kept[name] = record
            else:
                kept[name] = {"error": "rejected: malformed answer record"}
        ext.answers[q] = kept
    return ext, ""


@dataclass(frozen=True)
class Execution:
    """How a notebook runs: its time limits (the whole run, each cell), the threads its numeric
    libraries may use, the factory that starts its sandboxes (None: a fresh sandbox each) and
    whether it is sandboxed at all (only the trusted solution, when building exercises, is not)."""

    timeout_seconds: float = 300
    cell_timeout_seconds: float = 60
    threads: int = 1
    zygote: sandbox.Zygote | None = None
    sandboxed: bool = True


def run_cells(
    cells: list[dict],
    questions: dict,
    *,
    execution: Execution | None = None,
    extras: dict | None = None,
    log_dir: Path | None = None,
    in_place: bool = False,
) -> Extraction:
    """Run ``cells`` as ``execution`` says (default: :class:`Execution`'s) and extract
    ``questions`` (``{q: {"answers": {name: expr}, "calls": ...}}``); ``in_place``: also as they
    were right after each question's answer cell."""
    execution = execution or Execution()
    nonce = secrets.token_hex(16)
    request = {
        "nonce": nonce,
        "cells": cells,
        "questions": questions,
        "extras": extras or {},
        "in_place": in_place,
        "cell_timeout": execution.cell_timeout_seconds,
        "results": "results.json",
        "sys_path": [sandbox.package_parent()],
    }
    with contextlib.ExitStack() as stack:
        if execution.zygote is not None:
            work = execution.zygote.new_dir()
            stack.callback(shutil.rmtree, work, True)
        else:
            work = Path(stack.enter_context(tempfile.TemporaryDirectory(prefix="grade-")))
        (work / "request.json").write_text(json.dumps(request))
        start = time.monotonic()
        output, timed_out, off, grader_problem = _execute(work, execution)
        seconds = time.monotonic() - start
        full = (work / sandbox.sandbox_init.FULL).exists()
        problem = ""
        try:
            data = json.loads(_read_untrusted(work / "results.json", MAX_RESULTS_BYTES))
            ext, problem = _validate(data, nonce, questions)
        except (OSError, ValueError, RecursionError) as e:
            ext, problem = Extraction(), f"no usable results ({type(e).__name__}: {str(e)[:120]})"
    ext.output, ext.seconds, ext.timed_out, ext.protections_off = output, seconds, timed_out, off
    ext.grader_problem = grader_problem
    ext.problem = _why_incomplete(ext, problem, full, execution.timeout_seconds)
    if log_dir is not None:
        log_dir.mkdir(parents=True, exist_ok=True)
        (log_dir / "output.txt").write_text(output, errors="replace")
    return ext


def _environment(work: Path, execution: Execution) -> dict[str, str]:
    """The run's whole environment. Scratch (home, temporary files, caches) on the sandbox's
    private, size-limited /tmp where there is one (the runner makes the folders), so only the
    submission's own writes to its working folder reach the grader's disk."""
    scratch = "/tmp" if (execution.sandboxed and sandbox.mode()["mounts"]) else str(work)
    for sub in ("home", "tmp") if scratch == str(work) else ():
        (work / sub).mkdir()
    threads = str(execution.threads)
    return {
        "PATH": "/usr/local/bin:/usr/bin:/bin",
        "HOME": f"{scratch}/home",
        "TMPDIR": f"{scratch}/tmp",
        "IPYTHONDIR": f"{scratch}/home/.ipython",
        "MPLBACKEND": "Agg",
        "MPLCONFIGDIR": f"{scratch}/home/.mpl",
        "COURSE_GRADING": "1",
        "OMP_NUM_THREADS": threads,
        "MKL_NUM_THREADS": threads,
        "LANG": "C.UTF-8",
    }


def _execute(work: Path, execution: Execution) -> tuple[str, bool, tuple[str, ...], str]:
    """Run the request in ``work``: ``(output, timed_out, protections_off, grader_problem)``."""
    env = _environment(work, execution)
    argv = [os.path.abspath(sys.executable), "-I", "-B", str(RUNNER), "request.json"]
    timeout_seconds, zygote = execution.timeout_seconds, execution.zygote
    if not execution.sandboxed:
        try:
            proc = subprocess.run(
                argv, cwd=work, env=env, capture_output=True, text=True, timeout=timeout_seconds
            )
            return (proc.stdout + proc.stderr)[-40_000:], False, (), ""
        except subprocess.TimeoutExpired as e:
            return str(e.output or "")[-40_000:], True, (), ""
    with sandbox.slots.uid() as uid:  # its own user while it runs: limits of its own
        if sandbox.mode()["drop"]:
            for p in [work, *work.iterdir()]:
                os.chown(p, uid, uid)
        if zygote is not None:
            outcome = zygote.run(work, env=env, timeout_seconds=timeout_seconds, uid=uid)
        else:
            outcome = sandbox.run(work, argv, env=env, timeout_seconds=timeout_seconds, uid=uid)
    return outcome.output, outcome.timed_out, outcome.protections_off, outcome.failed_to_start


def _why_incomplete(ext: Extraction, problem: str, full: bool, timeout_seconds: float) -> str:
    """The run's problem: what the results said, else why it stopped before its end."""
    if ext.timed_out:
        ran = len(ext.cells)
        return problem or f"killed at the time limit ({timeout_seconds:g} s) during cell {ran + 1}"
    if not ext.done and not problem and full:
        return (
            f"the run ended early: its folder was full ({sandbox.FOLDER_LIMITS}), so "
            f"nothing after cell {len(ext.cells)} could be recorded"
        )
    if not ext.done and not problem:
        return f"the run ended early, during cell {len(ext.cells) + 1} (the kernel died?)"
    return problem
