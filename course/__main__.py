"""Command line: ``python -m course check | measure | assign | grade``.

- ``check``: one [OK]/[FAIL] line per requirement of the course; exit status 1 on any FAIL.
- ``measure [--budget S] [--save run.json] [--compare other.json]``: this machine's matmul rates
  and memory bandwidths, measured now; saved as JSON, or printed beside another saved portrait.
- ``assign``: regenerate the student notebooks in ``exercises/`` from ``solutions/`` (otter assign).
- ``grade SUBMISSIONS_DIR --out grades.csv``: grade every submission, one CSV row each.
"""

from __future__ import annotations

import argparse
import sys


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m course", description=__doc__.splitlines()[0])
    sub = parser.add_subparsers(dest="command", required=True)
    sub.add_parser("check", help="check that this machine can run the course")
    measure = sub.add_parser("measure", help="measure this machine's compute and bandwidth")
    measure.add_argument("--budget", type=float, default=30.0, help="seconds for the whole run")
    measure.add_argument("--save", metavar="RUN_JSON", help="write this portrait to a JSON file")
    measure.add_argument(
        "--compare",
        metavar="OTHER_JSON",
        help="print it beside a saved portrait, or 'h100' for the reference run",
    )
    assign = sub.add_parser("assign", help="generate exercises/ from solutions/")
    assign.add_argument("notebooks", nargs="*", help="solution notebooks (default: all)")
    grade = sub.add_parser("grade", help="grade a folder of submitted notebooks into a CSV")
    grade.add_argument("submissions", help="folder of submitted .ipynb files")
    grade.add_argument("--out", default="grades.csv", help="CSV gradebook to write")
    grade.add_argument("--timeout", type=float, default=120.0, help="seconds per submission")
    grade.add_argument("--jobs", type=int, default=1, help="submissions graded at once")
    grade.add_argument(
        "--assignment", help="grade every file as this assignment (e.g. 00_units_and_memory)"
    )
    args = parser.parse_args(argv)

    if args.command == "check":
        from course.check import run_checks

        return run_checks()
    if args.command == "measure":
        from course.measure.quick import run_measure

        return run_measure(args.budget, save=args.save, compare=args.compare)
    if args.command == "assign":
        from course.grading import assign_all

        return assign_all(args.notebooks)
    from course.grading import grade_folder

    return grade_folder(
        args.submissions,
        args.out,
        timeout_s=args.timeout,
        assignment=args.assignment,
        jobs=args.jobs,
    )


if __name__ == "__main__":
    sys.exit(main())
