"""Command line of the instructors' package: ``python -m teaching assign | grade | ...``.

- ``assign``: regenerate ``exercises/`` (student notebooks and their public checks) from
  ``solutions/``.
- ``grade SUBMISSIONS_DIR --out grades.csv [--roster roster.csv --pattern canvas --export
  canvas,moodle,nbgrader,prairielearn,gradescope]``: grade every submission in a sandbox, one CSV
  row each; pair files with students and write the LMS's files; a regrade keeps the last run and
  writes what changed.
- ``autograder gradescope SET OUT.zip``: the Gradescope autograder archive of an exercise set.
- ``release OUTDIR [--graded]``: what students receive (no solutions, no answer keys), from the
  committed files, checked for hidden values; ``--graded``: public checks of form, units and coarse
  range only.
- ``answer-keys OUTDIR [--no-values]``: one answer-key page per exercise set, from ``solutions/``.
- ``site OUTDIR [--answer-keys]``: the course as a static website (Sphinx + myst-nb).
- ``slides OUTDIR [--tag]``: one Reveal.js deck per lesson (``--tag`` re-applies the slide tags
  first).
- ``collect HOMES --assignment SET --folder RELEASE --out SUBMISSIONS [--roster roster.csv]``: each
  hub user's copy of an exercise set, from their home, into the files ``grade --pattern default``
  reads (the hub user is the student id); lists every learner without one.
- ``hosted-links``: the Open in Colab / Open in Kaggle links (README, each notebook's first Markdown
  cell) and the install cell that opens every notebook, from ``[project.urls] Repository``.

The learners' commands (check, measure) are ``python -m course``.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable

from teaching import answer_keys, collect, hosted_links, site, slides
from teaching.grading import authoring, gradebook, release
from teaching.grading.exports import gradescope


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m teaching", description=__doc__.splitlines()[0])
    sub = parser.add_subparsers(dest="command", required=True)
    for add in SUBCOMMANDS:
        add(sub)
    args = parser.parse_args(argv)
    return args.func(args)


def _add_assign(sub) -> None:
    cmd = sub.add_parser("assign", help="generate exercises/ from solutions/")
    cmd.add_argument("notebooks", nargs="*", help="solution notebooks (default: all)")
    cmd.set_defaults(func=lambda args: authoring.assign_all(args.notebooks))


def _add_grade(sub) -> None:
    cmd = sub.add_parser("grade", help="grade a folder of submitted notebooks into a CSV")
    cmd.add_argument("submissions", help="folder of submitted .ipynb files")
    cmd.add_argument("--out", default="grades.csv", help="CSV gradebook to write")
    cmd.add_argument("--timeout", type=float, default=300.0, help="seconds per submission")
    cmd.add_argument("--cell-timeout", type=float, default=60.0, help="seconds per cell")
    cmd.add_argument("--jobs", type=int, default=1, help="submissions graded at once")
    cmd.add_argument(
        "--assignment", help="grade every file as this assignment (e.g. 00_units_and_memory)"
    )
    cmd.add_argument("--roster", help="class roster CSV (Canvas or Moodle export, or your own)")
    cmd.add_argument(
        "--pattern",
        help="file name -> student: 'canvas', 'moodle', 'default' (NN_slug-ID.ipynb) or a regular "
        "expression with (?P<student>...) and optionally (?P<set>...)",
    )
    cmd.add_argument(
        "--export",
        help="comma-separated: canvas, moodle, nbgrader (need --roster), prairielearn, gradescope",
    )
    cmd.add_argument(
        "--no-history", action="store_true", help="do not keep this run in <out>_history/"
    )
    cmd.add_argument(
        "--replace",
        action="store_true",
        help="start the gradebook afresh from this run's files (default: merge into it, keeping "
        "every row this run does not regrade)",
    )
    cmd.add_argument(
        "--overrides",
        help="CSV of student,set,question,points,reason: scores you set by hand, kept by every "
        "later run (an empty points cell removes one)",
    )
    cmd.add_argument(
        "--late-penalty",
        type=float,
        help="fraction of each question's score a file the LMS marked late loses (e.g. 0.1); "
        "kept by every later run, 0 turns it off",
    )
    cmd.set_defaults(func=_grade)


def _grade(args: argparse.Namespace) -> int:
    run = gradebook.GradingRun(
        args.submissions,
        args.out,
        timeout_seconds=args.timeout,
        cell_timeout_seconds=args.cell_timeout,
        assignment=args.assignment,
        jobs=args.jobs,
        roster=args.roster,
        pattern=args.pattern,
        exports=args.export,
        history=not args.no_history,
        replace=args.replace,
        overrides=args.overrides,
        late_penalty=args.late_penalty,
    )
    return gradebook.grade_folder(run)


def _add_autograder(sub) -> None:
    cmd = sub.add_parser("autograder", help="build an external autograder for a set")
    cmd.add_argument("tool", choices=["gradescope"], help="the autograder's platform")
    cmd.add_argument("assignment", help="the exercise set, e.g. 04_model_memory")
    cmd.add_argument("out", help="the archive to write, e.g. build/04-gradescope.zip")
    cmd.add_argument("--timeout", type=float, default=300.0, help="seconds per run")
    cmd.add_argument("--cell-timeout", type=float, default=60.0, help="seconds per cell")
    cmd.add_argument(
        "--allow-unprotected",
        action="store_true",
        help="grade even where the container refuses the sandbox's hidden-files, PID-namespace "
        "and unprivileged-user protections (default: refuse, so staff see a failed run)",
    )
    cmd.add_argument(
        "--visibility",
        default="after_due_date",
        help="when learners see key-checked scores: after_due_date (default), after_published, "
        "hidden or visible",
    )
    cmd.set_defaults(func=_autograder)


def _autograder(args: argparse.Namespace) -> int:
    return gradescope.build_archive(
        args.assignment,
        args.out,
        timeout_seconds=args.timeout,
        cell_timeout_seconds=args.cell_timeout,
        visibility=args.visibility,
        allow_unprotected=args.allow_unprotected,
    )


def _add_release(sub) -> None:
    cmd = sub.add_parser("release", help="write the student release (no solutions)")
    cmd.add_argument("outdir", help="folder to write (must not exist, or be empty)")
    cmd.add_argument(
        "--graded",
        action="store_true",
        help="for a graded class: checks of form, units and a coarse range, no value to search for",
    )
    cmd.set_defaults(func=lambda args: release.write_release(args.outdir, graded=args.graded))


def _add_answer_keys(sub) -> None:
    cmd = sub.add_parser("answer-keys", help="write the instructors' answer keys from solutions/")
    cmd.add_argument("outdir", help="folder for the pages (e.g. build/answer-keys)")
    cmd.add_argument(
        "--no-values", action="store_true", help="leave out the key values (no solution is run)"
    )
    cmd.set_defaults(
        func=lambda args: answer_keys.run_answer_keys(args.outdir, values=not args.no_values)
    )


def _add_site(sub) -> None:
    cmd = sub.add_parser("site", help="build the course website (Sphinx + myst-nb)")
    cmd.add_argument("outdir", help="folder for the HTML (e.g. build/site)")
    cmd.add_argument(
        "--answer-keys",
        action="store_true",
        help="include the answer keys (never for a site a graded class can read)",
    )
    cmd.set_defaults(func=lambda args: site.run_site(args.outdir, answer_keys=args.answer_keys))


def _add_slides(sub) -> None:
    cmd = sub.add_parser("slides", help="build a Reveal.js deck per lesson")
    cmd.add_argument("outdir", help="folder for the decks (e.g. build/slides)")
    cmd.add_argument(
        "--tag",
        action="store_true",
        help="re-tag the lessons' cells for slides first (metadata only)",
    )
    cmd.set_defaults(func=lambda args: slides.run_slides(args.outdir, retag=args.tag))


def _add_collect(sub) -> None:
    cmd = sub.add_parser(
        "collect", help="gather a JupyterHub's submissions from the learners' homes for `grade`"
    )
    cmd.add_argument("homes", help="the hub's homes, one folder per hub user (e.g. /home)")
    cmd.add_argument("--assignment", required=True, help="the set, e.g. 04_model_memory")
    cmd.add_argument(
        "--folder",
        required=True,
        help="the folder the nbgitpuller link cloned in each home (the release repository's name)",
    )
    cmd.add_argument("--out", required=True, help="folder for the copies (e.g. subs/)")
    cmd.add_argument("--roster", help="class roster CSV: collect only its students")
    cmd.set_defaults(
        func=lambda args: collect.run_collect(
            args.homes, args.assignment, args.out, folder=args.folder, roster=args.roster
        )
    )


def _add_hosted_links(sub) -> None:
    cmd = sub.add_parser("hosted-links", help="write the Colab/Kaggle links and install cells")
    cmd.set_defaults(func=lambda args: hosted_links.run_hosted_links())


#: Each subcommand's parser, in the order ``--help`` lists them; each sets ``func``, called with
#: the parsed arguments, which returns the exit status.
SUBCOMMANDS: tuple[Callable[..., None], ...] = (
    _add_assign,
    _add_grade,
    _add_autograder,
    _add_release,
    _add_answer_keys,
    _add_site,
    _add_slides,
    _add_collect,
    _add_hosted_links,
)

if __name__ == "__main__":
    sys.exit(main())
