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


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m teaching", description=__doc__.splitlines()[0])
    sub = parser.add_subparsers(dest="command", required=True)
    assign = sub.add_parser("assign", help="generate exercises/ from solutions/")
    assign.add_argument("notebooks", nargs="*", help="solution notebooks (default: all)")
    grade = sub.add_parser("grade", help="grade a folder of submitted notebooks into a CSV")
    grade.add_argument("submissions", help="folder of submitted .ipynb files")
    grade.add_argument("--out", default="grades.csv", help="CSV gradebook to write")
    grade.add_argument("--timeout", type=float, default=300.0, help="seconds per submission")
    grade.add_argument("--cell-timeout", type=float, default=60.0, help="seconds per cell")
    grade.add_argument("--jobs", type=int, default=1, help="submissions graded at once")
    grade.add_argument(
        "--assignment", help="grade every file as this assignment (e.g. 00_units_and_memory)"
    )
    grade.add_argument("--roster", help="class roster CSV (Canvas or Moodle export, or your own)")
    grade.add_argument(
        "--pattern",
        help="file name -> student: 'canvas', 'moodle', 'default' (NN_slug-ID.ipynb) or a regular "
        "expression with (?P<student>...) and optionally (?P<set>...)",
    )
    grade.add_argument(
        "--export",
        help="comma-separated: canvas, moodle, nbgrader (need --roster), prairielearn, gradescope",
    )
    grade.add_argument(
        "--no-history", action="store_true", help="do not keep this run in <out>_history/"
    )
    grade.add_argument(
        "--replace",
        action="store_true",
        help="start the gradebook afresh from this run's files (default: merge into it, keeping "
        "every row this run does not regrade)",
    )
    grade.add_argument(
        "--overrides",
        help="CSV of student,set,question,points,reason: scores you set by hand, kept by every "
        "later run (an empty points cell removes one)",
    )
    grade.add_argument(
        "--late-penalty",
        type=float,
        help="fraction of each question's score a file the LMS marked late loses (e.g. 0.1); "
        "kept by every later run, 0 turns it off",
    )
    autograder = sub.add_parser("autograder", help="build an external autograder for a set")
    autograder.add_argument("tool", choices=["gradescope"], help="the autograder's platform")
    autograder.add_argument("assignment", help="the exercise set, e.g. 04_model_memory")
    autograder.add_argument("out", help="the archive to write, e.g. build/04-gradescope.zip")
    autograder.add_argument("--timeout", type=float, default=300.0, help="seconds per run")
    autograder.add_argument("--cell-timeout", type=float, default=60.0, help="seconds per cell")
    autograder.add_argument(
        "--allow-unprotected",
        action="store_true",
        help="grade even where the container refuses the sandbox's hidden-files, PID-namespace "
        "and unprivileged-user protections (default: refuse, so staff see a failed run)",
    )
    autograder.add_argument(
        "--visibility",
        default="after_due_date",
        help="when learners see key-checked scores: after_due_date (default), after_published, "
        "hidden or visible",
    )
    release = sub.add_parser("release", help="write the student release (no solutions)")
    release.add_argument("outdir", help="folder to write (must not exist, or be empty)")
    release.add_argument(
        "--graded",
        action="store_true",
        help="for a graded class: checks of form, units and a coarse range, no value to search for",
    )
    keys = sub.add_parser("answer-keys", help="write the instructors' answer keys from solutions/")
    keys.add_argument("outdir", help="folder for the pages (e.g. build/answer-keys)")
    keys.add_argument(
        "--no-values", action="store_true", help="leave out the key values (no solution is run)"
    )
    site = sub.add_parser("site", help="build the course website (Sphinx + myst-nb)")
    site.add_argument("outdir", help="folder for the HTML (e.g. build/site)")
    site.add_argument(
        "--answer-keys",
        action="store_true",
        help="include the answer keys (never for a site a graded class can read)",
    )
    slides = sub.add_parser("slides", help="build a Reveal.js deck per lesson")
    slides.add_argument("outdir", help="folder for the decks (e.g. build/slides)")
    slides.add_argument(
        "--tag",
        action="store_true",
        help="re-tag the lessons' cells for slides first (metadata only)",
    )
    collect = sub.add_parser(
        "collect", help="gather a JupyterHub's submissions from the learners' homes for `grade`"
    )
    collect.add_argument("homes", help="the hub's homes, one folder per hub user (e.g. /home)")
    collect.add_argument("--assignment", required=True, help="the set, e.g. 04_model_memory")
    collect.add_argument(
        "--folder",
        required=True,
        help="the folder the nbgitpuller link cloned in each home (the release repository's name)",
    )
    collect.add_argument("--out", required=True, help="folder for the copies (e.g. subs/)")
    collect.add_argument("--roster", help="class roster CSV: collect only its students")
    sub.add_parser("hosted-links", help="write the Colab/Kaggle links and install cells")
    args = parser.parse_args(argv)

    if args.command == "assign":
        from teaching.grading.authoring import assign_all

        return assign_all(args.notebooks)
    if args.command == "collect":
        from teaching.collect import run_collect

        return run_collect(
            args.homes, args.assignment, args.out, folder=args.folder, roster=args.roster
        )
    if args.command == "hosted-links":
        from teaching.hosted_links import run_hosted_links

        return run_hosted_links()
    if args.command == "answer-keys":
        from teaching.answer_keys import run_answer_keys

        return run_answer_keys(args.outdir, values=not args.no_values)
    if args.command == "slides":
        from teaching.slides import run_slides

        return run_slides(args.outdir, retag=args.tag)
    if args.command == "site":
        from teaching.site import run_site

        return run_site(args.outdir, answer_keys=args.answer_keys)
    if args.command == "release":
        from teaching.grading.release import write_release

        return write_release(args.outdir, graded=args.graded)
    if args.command == "autograder":
        from teaching.grading.exports.gradescope import build_archive

        return build_archive(
            args.assignment,
            args.out,
            timeout_seconds=args.timeout,
            cell_timeout_seconds=args.cell_timeout,
            visibility=args.visibility,
            allow_unprotected=args.allow_unprotected,
        )
    from teaching.grading.gradebook import grade_folder

    return grade_folder(
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


if __name__ == "__main__":
    sys.exit(main())
