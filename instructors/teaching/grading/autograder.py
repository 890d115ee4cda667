"""One submission graded for an external autograder: what Gradescope's ``run_autograder`` and a
PrairieLearn entrypoint run.

``python -m teaching.grading.autograder gradescope|prairielearn SUBMISSION_DIR RESULTS_JSON
--assignment SET``: the first ``.ipynb`` in the submission folder is graded as the class command
grades each file (:func:`~teaching.grading.submission.grade_file`: its own sandbox, a key from the
solution run with this run's secret probes, checked against the release), and the tool's
``results.json`` (:mod:`.exports.gradescope`, :mod:`.exports.prairielearn`) is written whole. A
folder with no notebook still gets a result that says so (Gradescope: 0 points; PrairieLearn: not
gradable).

When the grader's side fails (the solution cannot run here, the sandbox cannot start, the grader
fails on the file), the learner's work was not looked at and nothing may be recorded as a score:
PrairieLearn gets ``gradable: false`` with the reason (no points, no attempt used); for Gradescope
no ``results.json`` is written and the command exits 3 with the reason on stderr, so Gradescope
shows staff a failed autograder run instead of recording 0.
"""

from __future__ import annotations

import argparse
import contextlib
import dataclasses
import json
import os
import sys
import tempfile
from pathlib import Path

from teaching.grading import authoring, sandbox, spec
from teaching.grading.exports import gradescope, prairielearn
from teaching.grading.extract import Execution
from teaching.grading.files import display_name, write_new
from teaching.grading.grades import NOT_GRADED_EXIT, Grade
from teaching.grading.submission import (
    check_key,
    grade_file,
    identify,
    prepare_set,
    read_submission,
)


def _no_notebook(tool: str, folder: Path) -> dict:
    why = f"no .ipynb file in the submission ({folder.name}): submit the exercise notebook"
    if tool == "prairielearn":
        return {"gradable": False, "format_errors": [why]}
    return {"score": 0.0, "output": why, "tests": []}


def grade_notebook(
    path: Path,
    setup: spec.Assignment,
    *,
    exercises_dir: Path,
    execution: Execution,
    log_dir: Path,
) -> Grade:
    """One notebook's row, graded with the whole machine (one sandbox, every core) within
    ``execution``'s time limits."""
    print(sandbox.describe(), file=sys.stderr)
    nb, problem = read_submission(path)
    _, note = identify(path, nb, [setup.name], setup.name)
    threads = os.cpu_count() or 1
    zygote = sandbox.start_factory([setup], threads)
    execution = dataclasses.replace(execution, threads=threads, zygote=zygote)
    try:
        setg = prepare_set(setup, execution=execution)
        check_key(setup.name, setg, exercises_dir)
        return grade_file(
            path,
            nb,
            problem,
            setg,
            note,
            known=[setup.name],
            execution=execution,
            log_dir=log_dir,
        )
    finally:
        if zygote is not None:
            zygote.close()


REQUIRED = ("hidden-files", "pid-namespace", "unprivileged-user")  # Gradescope's: see run()


def run(
    tool: str,
    submission_dir: Path,
    results_json: Path,
    *,
    assignment: str,
    solutions_dir: Path,
    execution: Execution,
    visibility: str = "after_due_date",
    allow_unprotected: bool = False,
) -> int:
    """Grade the submission folder's notebook into ``results_json`` within ``execution``'s time
    limits. For Gradescope, whose container may refuse namespaces: without the hidden-files,
    PID-namespace and unprivileged-user protections (:data:`REQUIRED`) a submission could read the
    solution in the archive, or rewrite the grader or its result, so nothing is graded (exit 2, no
    ``results.json``: staff see a failed run) unless the instructor built the archive with
    ``--allow-unprotected``; every ``results.json`` states the protections that were off
    (``extra_data``)."""
    off = sandbox.protections_off()
    missing = [p for p in REQUIRED if p in off]
    if tool == "gradescope" and missing and not allow_unprotected:
        with contextlib.suppress(FileNotFoundError):
            results_json.unlink()
        print(
            f"refusing to grade: this container does not allow the sandbox's {', '.join(missing)} "
            "protection(s), without which a submission can read the solution or rewrite its own "
            "result; give the autograder a container that allows them, or rebuild the archive "
            "with --allow-unprotected to grade without them (each result then says so)",
            file=sys.stderr,
        )
        return 2
    notebooks = _notebooks(submission_dir)
    results_json.parent.mkdir(parents=True, exist_ok=True)
    if not notebooks:
        write_new(results_json, json.dumps(_no_notebook(tool, submission_dir), indent=1))
        return 0
    solutions = {p.stem: p for p in authoring.solution_notebooks(solutions_dir)}
    if assignment not in solutions:
        print(
            f"--assignment must be one of {', '.join(solutions)}; got {assignment!r}",
            file=sys.stderr,
        )
        return 2
    setup = spec.read(solutions[assignment])
    with tempfile.TemporaryDirectory(prefix="autograder-") as logs:
        grade = grade_notebook(
            notebooks[0],
            setup,
            exercises_dir=Path(solutions_dir).resolve().parent / "exercises",
            execution=execution,
            log_dir=Path(logs),
        )
    data = _results(tool, grade, setup, visibility, off, notebooks)
    if data is None:  # the grader's side failed: Gradescope shows a failed run, never a score
        with contextlib.suppress(FileNotFoundError):
            results_json.unlink()
        print(f"no results.json written: {grade.reason}", file=sys.stderr)
        return NOT_GRADED_EXIT
    write_new(results_json, json.dumps(data, indent=1))
    return 0


def _notebooks(submission_dir: Path) -> list[Path]:
    """The submission's notebooks in name order (no link, no checkpoint copy)."""
    notebooks = sorted(
        p for p in submission_dir.rglob("*.ipynb") if p.is_file() and not p.is_symlink()
    )
    return [p for p in notebooks if ".ipynb_checkpoints" not in p.parts]


def _results(
    tool: str,
    grade: Grade,
    setup: spec.Assignment,
    visibility: str,
    off: tuple[str, ...],
    notebooks: list[Path],
) -> dict | None:
    """The tool's ``results.json`` for ``grade`` (None: the grader's side failed), saying which
    protections were off (Gradescope) and which notebooks were not graded."""
    if tool == "prairielearn":
        data = prairielearn.results(grade)
    else:
        data = gradescope.results(grade, setup, visibility)
    if data is None:
        return None
    if tool == "gradescope":
        data["extra_data"] = {"protections_off": list(off)}
        if off:
            data["output"] = "; ".join(
                t for t in (f"sandbox protections off: {', '.join(off)}", data.get("output")) if t
            )
    if len(notebooks) > 1:
        note = (
            f"graded {display_name(notebooks[0])}; {len(notebooks) - 1} other notebook(s) ignored"
        )
        key = "message" if tool == "prairielearn" else "output"
        data[key] = "; ".join(t for t in (note, data.get(key, "")) if t)
    return data


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("tool", choices=["gradescope", "prairielearn"])
    parser.add_argument("submission_dir", type=Path)
    parser.add_argument("results_json", type=Path)
    parser.add_argument("--assignment", required=True)
    parser.add_argument("--solutions", type=Path, default=authoring.SOLUTIONS_DIR)
    parser.add_argument("--timeout", type=float, default=300.0)
    parser.add_argument("--cell-timeout", type=float, default=60.0)
    parser.add_argument("--visibility", default="after_due_date")
    parser.add_argument(
        "--allow-unprotected",
        action="store_true",
        help="grade even where the container refuses the sandbox's protections",
    )
    args = parser.parse_args(argv)
    return run(
        args.tool,
        args.submission_dir,
        args.results_json,
        assignment=args.assignment,
        solutions_dir=args.solutions,
        execution=Execution(timeout_seconds=args.timeout, cell_timeout_seconds=args.cell_timeout),
        visibility=args.visibility,
        allow_unprotected=args.allow_unprotected,
    )


if __name__ == "__main__":
    sys.exit(main())
