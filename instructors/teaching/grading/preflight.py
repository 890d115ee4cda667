"""What one ``grade`` run is asked to do (:class:`GradingRun`, the command's flags) and
everything checked before anyone is graded (:func:`checked`, :func:`earlier_record`): the roster,
the file-name pattern and the exports parse; the sets exist; ``--out`` and its logs lie outside
the submissions folder, are writable and go through no link; the instructor's overrides and late
penalty read; nothing to keep from submissions is visible in the sandbox; and a run that would
drop graded rows without a class record to merge them into is refused (unless ``--replace``).
A refusal is :class:`Refused`: :func:`teaching.grading.gradebook.grade_folder` prints it and
returns its status, having written nothing.
"""

from __future__ import annotations

import contextlib
import os
import re
import sys
from dataclasses import dataclass
from pathlib import Path

from course.facts import validate
from teaching.grading import authoring, keycheck, sandbox, spec
from teaching.grading.exports import check_before_grading, parse_formats
from teaching.grading.files import first_link, loud
from teaching.grading.grades import (
    ADJUSTMENTS,
    RECORD,
    Adjustments,
    read_adjustments,
    read_overrides,
    read_record,
    updated,
)
from teaching.grading.history import books
from teaching.grading.roster import Roster, compile_pattern, key, read_roster


@dataclass(frozen=True)
class GradingRun:
    """What one ``grade`` run is asked to do (the command's flags), built once and read by every
    phase of :func:`~teaching.grading.gradebook.grade_folder`.

    ``roster`` and ``pattern`` pair files with students (:mod:`~teaching.grading.roster`),
    ``exports`` names the formats to write beside ``out_csv``
    (:mod:`~teaching.grading.exports`), ``history`` keeps each run and a regrade's diff
    (:mod:`~teaching.grading.history`). ``replace`` starts the gradebook afresh from this run's
    rows. ``overrides`` (a CSV: ``student,set,question,points,reason``) and ``late_penalty`` (the
    fraction of each question a file the LMS marked late loses) update the class's adjustments.
    ``log_dir`` is ``<out>_logs`` beside ``out_csv`` unless given. ValueError for ``jobs`` out of
    range."""

    submissions_dir: Path
    out_csv: Path
    timeout_seconds: float = 300
    cell_timeout_seconds: float = 60
    assignment: str | None = None
    jobs: int = 1
    solutions_dir: Path = authoring.SOLUTIONS_DIR
    log_dir: Path | None = None
    roster: Path | None = None
    pattern: str | None = None
    exports: list[str] | str | None = None
    visibility: str = "after_due_date"
    history: bool = True
    replace: bool = False
    overrides: Path | None = None
    late_penalty: float | None = None

    def __post_init__(self) -> None:
        jobs = validate.positive_int("jobs", self.jobs, maximum=64)
        out_csv = Path(self.out_csv)
        log_dir = Path(self.log_dir) if self.log_dir else out_csv.with_name(out_csv.stem + "_logs")
        object.__setattr__(self, "jobs", jobs)
        object.__setattr__(self, "submissions_dir", Path(self.submissions_dir))
        object.__setattr__(self, "out_csv", out_csv)
        object.__setattr__(self, "log_dir", log_dir)

    @property
    def record_path(self) -> Path:
        """The class's record: every row of every run, merged."""
        return self.log_dir / RECORD

    @property
    def history_dir(self) -> Path:
        return self.out_csv.with_name(self.out_csv.stem + "_history")

    @property
    def exercises_dir(self) -> Path:
        return Path(self.solutions_dir).resolve().parent / "exercises"


@dataclass
class Setup:
    """What the checks before anyone is graded found and read."""

    formats: list[str]
    roster: Roster | None
    pattern: re.Pattern
    solutions: dict[str, Path]  # set name -> solution notebook
    known: list[str]  # the sets a file may be
    adjustments: Adjustments


class Refused(Exception):
    """The run stops before writing anything: ``message`` on stderr, ``status`` returned."""

    def __init__(self, message: str, status: int = 2) -> None:
        super().__init__(message)
        self.message, self.status = message, status


def checked(run: GradingRun) -> Setup:
    """Everything the run was asked for, checked (and read) before anyone is graded."""
    folder = run.submissions_dir
    if not folder.is_dir():
        raise Refused(f"not a folder of submissions: {folder}")
    try:
        exports = run.exports
        listed = exports if isinstance(exports, str | None) else ",".join(exports)
        formats = parse_formats(listed, has_roster=run.roster is not None)
        class_roster = read_roster(run.roster) if run.roster is not None else None
        name_pattern = compile_pattern(run.pattern or "default")
        check_before_grading(formats, class_roster, run.visibility)
    except ValueError as e:
        raise Refused(f"refusing to grade: {e}") from None
    solutions = {p.stem: p for p in authoring.solution_notebooks(run.solutions_dir)}
    if not solutions:
        raise Refused(f"no assignments: no solution notebooks in {run.solutions_dir}")
    if run.assignment is not None and run.assignment not in solutions:
        raise Refused(f"assignment must be one of {', '.join(solutions)}; got {run.assignment!r}")
    known = [run.assignment] if run.assignment else sorted(solutions)
    _check_places(run)
    try:
        adjustments = _adjustments(
            run.log_dir, run.overrides, run.late_penalty, solutions, class_roster
        )
    except (OSError, ValueError) as e:
        raise Refused(f"refusing to grade: {e}") from None
    print(sandbox.describe(), file=sys.stderr)
    for name in known:
        if keycheck.uncommitted(solutions[name], Path(run.solutions_dir).resolve().parent):
            loud(
                f"solutions/{solutions[name].name} has uncommitted changes: learners received "
                "the last commit's checks, the key comes from the file as it is now"
            )
    _check_hidden(run)
    return Setup(formats, class_roster, name_pattern, solutions, known, adjustments)


def _check_places(run: GradingRun) -> None:
    """``--out`` and the logs: outside the submissions folder, writable, through no link."""
    inside = [
        label
        for label, path in (("--out", run.out_csv), ("the log folder", run.log_dir))
        if _under(path, run.submissions_dir)
    ]
    if inside:
        raise Refused(
            f"refusing to grade: {' and '.join(inside)} inside the submissions folder "
            f"({run.submissions_dir}): a student could plant a link there; write them elsewhere"
        )
    if unwritable := _unwritable(run.out_csv, run.log_dir):
        raise Refused(f"refusing to grade: {unwritable}")


def _check_hidden(run: GradingRun) -> None:
    """Nothing to keep from submissions is visible in the sandbox (where it mounts folders)."""
    if not sandbox.mode()["mounts"]:
        return
    kept = {
        "submissions folder": run.submissions_dir,
        "output": run.out_csv.parent,
        "log folder": run.log_dir,
        "solutions": Path(run.solutions_dir),
    }
    if (authoring.REPO / "solutions").is_dir():  # a checkout (not an installed package)
        kept["checkout"] = authoring.REPO
    exposed = sandbox.exposed(kept)
    if exposed:
        raise Refused(
            "refusing to grade: " + "; ".join(exposed) + ". Move it out of the folders "
            "the sandbox shows (the system's program folders, the interpreter, the "
            "environment, the course package)."
        )


def earlier_record(run: GradingRun, setup: Setup) -> tuple[list | None, list | None]:
    """``(earlier, earlier_rows)``: the record this run merges into (None with ``--replace``)
    and the one its history diff compares with. Refused when a record cannot be read, or when
    graded rows at ``--out`` have no record to merge into (they would be dropped), unless
    ``--replace``."""
    try:
        earlier = read_record(run.record_path)
    except ValueError as e:
        earlier = None
        if not run.replace:
            raise Refused(f"refusing to grade: {e}; --replace starts a new gradebook") from None
    if run.replace:
        return None, earlier
    if earlier is None and (held := _graded_rows(run.out_csv, sorted(setup.solutions))):
        raise Refused(
            f"refusing to grade: {held} holds graded rows of an earlier run and there is no "
            f"class record ({run.record_path}) to merge this run into, so they would be dropped: "
            "grade the whole class into a new --out, or pass --replace to start the gradebook "
            "afresh (the earlier one is kept in its history)"
        )
    return earlier, earlier


def _adjustments(log_dir, overrides, late_penalty, solutions, class_roster):
    """The class's adjustments after this run's ``--overrides`` and ``--late-penalty`` (the kept
    ones too, even with ``--replace``: they are the instructor's, not a run's); ValueError on a
    bad file, line or value."""
    adj = read_adjustments(log_dir / ADJUSTMENTS)
    if late_penalty is not None:
        late_penalty = validate.fraction("--late-penalty", late_penalty, allow_zero=True)
        if late_penalty >= 1:
            raise ValueError("--late-penalty must be below 1 (a fraction of each question)")
    if overrides is None:
        return updated(adj, late_penalty=late_penalty)
    points = {n: {q.name: q.points for q in spec.read(p).questions} for n, p in solutions.items()}

    def on_roster(student_id: str, where: str) -> str:
        if class_roster.find(student_id) is None:
            raise ValueError(f"{where}: student {student_id!r} is not on the roster")
        return key(student_id)

    found, removed = read_overrides(
        Path(overrides), points, on_roster if class_roster is not None else None
    )
    return updated(adj, late_penalty=late_penalty, overrides=found, removed=removed)


def _graded_rows(out_csv: Path, sets: list[str]) -> Path | None:
    """The first gradebook at ``--out`` (or a set's ``<out>-<set>.csv``) that holds a row."""
    for book in books(out_csv, sets):
        with contextlib.suppress(OSError, UnicodeDecodeError):
            if book.is_file() and len(book.read_text(encoding="utf-8").strip().splitlines()) > 1:
                return book
    return None


def _unwritable(out_csv: Path, log_dir: Path) -> str:
    """Why the gradebook or its logs could not be written where asked ('' when they can): said
    before anyone is graded, not after."""
    if out_csv.is_dir():
        return f"--out {out_csv} is a folder: name the CSV file to write"
    if log_dir.exists() and not log_dir.is_dir():
        return f"the log folder {log_dir} is a file"
    for label, path in (("--out", out_csv.parent), ("the log folder", log_dir)):
        if (link := first_link(path)) is not None:
            return f"{label} goes through a symbolic link ({link}): not followed"
    return ""


def _under(path: Path, folder: Path) -> bool:
    real, base = os.path.realpath(path), os.path.realpath(folder)
    return real == base or real.startswith(base.rstrip("/") + "/")
