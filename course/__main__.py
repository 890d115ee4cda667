"""Command line of the learners' package: ``python -m course check | measure``.

- ``check``: one [OK]/[WARN]/[FAIL] line per requirement; exit status 1 when the course cannot run.
- ``measure [--budget S] [--save run.json] [--compare other.json | h100]``: this machine's matmul
  rates and memory bandwidths, measured now; saved as JSON, or printed beside another saved portrait
  (or the shipped H100 SXM reference run).

The instructors' commands (assign, grade, autograder, release, answer-keys, site, slides) are in the
instructors' package: ``python -m teaching --help``.
"""

from __future__ import annotations

import argparse
import sys

#: Commands that moved to the instructors' package (``instructors/teaching``).
INSTRUCTORS_COMMANDS = ("assign", "grade", "autograder", "release", "answer-keys", "site", "slides")


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    if argv and argv[0] in INSTRUCTORS_COMMANDS:
        print(
            f"'{argv[0]}' is an instructors' command: python -m teaching {' '.join(argv)} "
            "(installed by `make install-instructors`, or any make target that needs it)",
            file=sys.stderr,
        )
        return 2
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
    args = parser.parse_args(argv)

    if args.command == "check":
        from course.selfcheck.environment import run_checks

        return run_checks()
    from course.measure.quick import run_measure

    return run_measure(args.budget, save=args.save, compare=args.compare)


if __name__ == "__main__":
    sys.exit(main())
