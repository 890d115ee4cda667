"""One submission graded for an external autograder: what Gradescope's ``run_autograder`` and a
PrairieLearn entrypoint run.

``python -m teaching.grading.exports.autograder gradescope|prairielearn SUBMISSION_DIR
RESULTS_JSON --assignment SET``: the first ``.ipynb`` in the submission folder is graded by
:func:`~teaching.grading.gradebook.grade_folder` (sandbox, fresh secret probes, the key
from the solution), and the tool's ``results.json`` is written whole. A folder with no notebook
still gets a result that says so (Gradescope: 0 points; PrairieLearn: not gradable).
"""

from __future__ import annotations

import argparse
import json
import shutil
import sys
import tempfile
from pathlib import Path

from teaching.grading import authoring
from teaching.grading.gradebook import display_name, grade_folder, write_new


def _no_notebook(tool: str, folder: Path) -> dict:
    why = f"no .ipynb file in the submission ({folder.name}): submit the exercise notebook"
    if tool == "prairielearn":
        return {"gradable": False, "format_errors": [why]}
    return {"score": 0.0, "output": why, "tests": []}


def run(
    tool: str,
    submission_dir: Path,
    results_json: Path,
    *,
    assignment: str,
    solutions_dir: Path,
    timeout_seconds: float,
    cell_timeout_seconds: float,
    visibility: str = "after_due_date",
) -> int:
    notebooks = sorted(
        p for p in submission_dir.rglob("*.ipynb") if p.is_file() and not p.is_symlink()
    )
    notebooks = [p for p in notebooks if ".ipynb_checkpoints" not in p.parts]
    results_json.parent.mkdir(parents=True, exist_ok=True)
    if not notebooks:
        write_new(results_json, json.dumps(_no_notebook(tool, submission_dir), indent=1))
        return 0
    with tempfile.TemporaryDirectory(prefix="autograder-") as tmp:
        subs, out = Path(tmp) / "submissions", Path(tmp) / "out" / "grades.csv"
        subs.mkdir()
        shutil.copyfile(notebooks[0], subs / notebooks[0].name)
        status = grade_folder(
            subs,
            out,
            assignment=assignment,
            solutions_dir=solutions_dir,
            timeout_seconds=timeout_seconds,
            cell_timeout_seconds=cell_timeout_seconds,
            exports=[tool],
            visibility=visibility,
            history=False,
        )
        found = sorted((out.parent / f"grades-{tool}").glob("*/results.json"))
        if not found:
            print(f"the grader wrote no result (status {status})", file=sys.stderr)
            return 1
        data = json.loads(found[0].read_text())
    if len(notebooks) > 1:
        note = (
            f"graded {display_name(notebooks[0])}; {len(notebooks) - 1} other notebook(s) ignored"
        )
        key = "message" if tool == "prairielearn" else "output"
        data[key] = "; ".join(t for t in (note, data.get(key, "")) if t)
    write_new(results_json, json.dumps(data, indent=1))
    return 0


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
    args = parser.parse_args(argv)
    return run(
        args.tool,
        args.submission_dir,
        args.results_json,
        assignment=args.assignment,
        solutions_dir=args.solutions,
        timeout_seconds=args.timeout,
        cell_timeout_seconds=args.cell_timeout,
        visibility=args.visibility,
    )


if __name__ == "__main__":
    sys.exit(main())
