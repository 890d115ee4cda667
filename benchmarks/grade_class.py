"""Benchmark: how long grading one submission of exercise set 04 takes, over a class of 20.

    .venv/bin/python benchmarks/grade_class.py [--set 04_model_memory] [--class-size 20] [--jobs 2]

Builds a class from the set's exercise and solution notebooks (most right, some blank, some with a
known wrong answer), grades it with ``python -m teaching grade``'s code path (sandbox factory start,
solution run with this run's probes, then every submission), and prints the median and spread of
the per-submission seconds from the CSV, the whole run's wall time, and the machine's load average
before and after (a busy machine is slower: compare figures taken on the same machine, quiet).
Not a test: nothing here asserts a speed.
"""

from __future__ import annotations

import argparse
import contextlib
import csv
import json
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path

import nbformat
from teaching.grading import authoring, gradebook, spec

from course.measure.devices import describe_machine


def make_class(folder: Path, name: str, size: int) -> None:
    exercise = authoring.EXERCISES_DIR / f"{name}.ipynb"
    answers = [c["source"] for c in spec.read(authoring.SOLUTIONS_DIR / f"{name}.ipynb").run_cells
               if c["answer"]]  # fmt: skip
    for i in range(size):
        nb = nbformat.read(exercise, as_version=4)
        cells = [c for c in nb.cells if c.metadata.get("course", {}).get("answer")]
        if i % 7 != 6:  # every seventh learner hands in a blank notebook
            for cell, source in zip(cells, answers, strict=True):
                cell.source = source
        if i % 5 == 4:  # every fifth gets the first question wrong
            cells[0].source += "\nparams_8b = params_8b + 1"
        nbformat.write(nb, folder / f"{name}-learner{i:02d}.ipynb")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--set", default="04_model_memory")
    parser.add_argument("--class-size", type=int, default=20)
    parser.add_argument("--jobs", type=int, default=2)
    args = parser.parse_args(argv)
    with tempfile.TemporaryDirectory(prefix="grade-class-") as tmp:
        subs = Path(tmp) / "submissions"
        subs.mkdir()
        make_class(subs, args.set, args.class_size)
        out = Path(tmp) / "grades.csv"
        load_before = os.getloadavg()
        start = time.monotonic()
        with contextlib.redirect_stdout(sys.stderr):  # stdout carries only the JSON report
            status = gradebook.grade_folder(
                gradebook.GradingRun(subs, out, assignment=args.set, jobs=args.jobs)
            )
        wall = time.monotonic() - start
        load_after = os.getloadavg()
        rows = list(csv.DictReader(out.open(newline="")))
    seconds = sorted(float(r["seconds"]) for r in rows)
    report = {
        "set": args.set,
        "class_size": args.class_size,
        "jobs": args.jobs,
        "status": status,
        "median_s_per_submission": round(statistics.median(seconds), 2),
        "min_seconds": round(seconds[0], 2),
        "max_seconds": round(seconds[-1], 2),
        "wall_s_whole_class": round(wall, 1),
        "wall_s_per_submission": round(wall / args.class_size, 2),
        "statuses": sorted({r["status"] for r in rows}),
        "load_average_before": [round(x, 1) for x in load_before],
        "load_average_after": [round(x, 1) for x in load_after],
        "cpus": os.cpu_count(),
        "machine": describe_machine(),
    }
    print(json.dumps(report, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
