"""Gradebook: ``python -m teaching grade SUBMISSIONS --out grades.csv``.

For each exercise set found in the folder: run the solution once in the sandbox with this run's
secret probe seed (its answers are the key), then each submission in its own sandbox
(:mod:`teaching.grading.extract`), then check the plain answers in this trusted process
(:mod:`teaching.grading.check`). Every file gets a row with a score and a reason; the run
goes on.

Which set a file is: ``--assignment``, else the set named in its file name, else (fallback) the
notebook's metadata, else the only set there is; a metadata that disagrees is reported. CSV files
and the log folder inside the submissions folder are never graded. A folder that mixes sets writes
one CSV per set (``grades-00_units_and_memory.csv``, ...).

CSV columns: ``submission, assignment, q1 [2 pts], ..., total, possible, percent, status, reason,
protections_off, seconds``; ``reason`` names each failing check per question. The log folder
(``<out>_logs/<submission>/``) keeps the executed notebook, the extracted answers, each check with
the expected value, the submission's and the tolerance, and the output; ``<out>_logs/summary.json``
the class's mean per question and who timed out.

Every file gets a row whatever it holds (a failure of the grader on one file, a key that cannot be
made on this machine or a sandbox that cannot start is a ``not-graded`` row with no score, which no
export carries, and the command returns 3);
every writer takes any text and any file name; nothing is written through a link (a fresh file,
renamed). Grading refuses to start when ``--out`` or its logs are inside the submissions folder,
name a folder or go through a link, or when anything to keep from submissions would be visible in
the sandbox. Console lines and CSV cells carry no control character (``\\x1b``); a reason is
capped. A run merges into the class's record (``<logs>/gradebook.json``): the rows of the files it
grades are replaced, every other row is kept with its log folder and exported again
(:func:`grade_folder`); what no row of the class refers to any more (a gradebook, a log folder)
moves into the run's history folder. An empty folder writes the header only (never over an
existing gradebook) and returns 1.
"""

from __future__ import annotations

import contextlib
import datetime
import json
import os
import sys
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

from tqdm.auto import tqdm

from teaching.grading import authoring, sandbox, spec
from teaching.grading.exports import write_all
from teaching.grading.extract import Execution
from teaching.grading.files import (
    display_name,
    log_name,
    loud,
    make_dir,
    printable,
    safe_text,
    write_new,
)
from teaching.grading.grades import (
    ADJUSTMENTS,
    NOT_GRADED,
    NOT_GRADED_EXIT,
    Adjustments,
    Grade,
    adjust,
    merge,
    not_graded,
    number,
    record_rows,
    summary,
    summary_text,
    write_csv,
)
from teaching.grading.history import (
    books,
    clear_stale,
    keep_copy,
    keep_exports,
    keep_replaced_logs,
    keep_run,
    new_run_folder,
    restore_logs,
    stage_logs,
)
from teaching.grading.preflight import GradingRun, Refused, Setup, checked, earlier_record
from teaching.grading.roster import (
    join_files,
    set_from_name,
)
from teaching.grading.submission import (
    KEY_MARK,
    VERSION_MARK,
    check_key,
    grade_file,
    identify,
    prepare_set,
    read_submission,
)


def grade_folder(run: GradingRun) -> int:
    """Grade every file in a folder (see the module docstring). Returns 0 when each got a row.

    In phases: check everything asked for before anyone is graded (the roster, the pattern, the
    exports, the folders: :mod:`~teaching.grading.preflight`), read the class's record, find the
    submissions and the set each is, grade them in sandboxes, pair them with the roster, merge
    them with the class's record and apply the adjustments, then write the gradebooks, the record,
    the history and the exports (:func:`_write_class`).

    The run's rows merge into the class's record (``<logs>/gradebook.json``,
    :func:`~teaching.grading.grades.merge`): a regrade of some files updates their rows (and those
    of the same students and sets) and keeps everyone else's, in the gradebook, the logs and every
    export. ``run.replace`` starts the gradebook afresh from this run's rows (the earlier one stays
    in the history); without it, a run is refused when ``--out`` holds graded rows but no record to
    merge them into (a gradebook of an older version): it would drop them.

    Returns :data:`NOT_GRADED_EXIT` (3) when a row has no score because the grader's side failed
    (a key that could not be made here, a sandbox that could not start, the grader failing on a
    file): those rows are marked ``not-graded`` and no export carries a score for them.

    The class's adjustments (``<logs>/adjustments.json``), updated by ``run.overrides`` and
    ``run.late_penalty``, are applied to every row by every run
    (:func:`~teaching.grading.grades.adjust`): a later regrade, with or without them, keeps
    them."""
    try:
        setup = checked(run)
        earlier, earlier_rows = earlier_record(run, setup)
        files, links = _find_submissions(run.submissions_dir)
        if not files and not links:
            return _nothing_to_grade(run, setup, earlier_rows)
        planned = _plan(run, setup, files, links)
        sets = sorted({n for *_, n, _ in planned if n})
        assignments = {n: spec.read(setup.solutions[n]) for n in sets}
        regraded = [run.log_dir / log_name(p) for p in [*files, *links]]
        staged = stage_logs(regraded, run.history_dir) if run.history else None
        grades = _grade_in_sandboxes(run, setup, planned, assignments, staged)
    except Refused as refused:
        print(refused.message, file=sys.stderr)
        return refused.status
    _identify_rows(grades, planned, setup)
    rows_all, replaced = _merge_class(run, setup, grades, earlier)
    return _write_class(run, setup, grades, (rows_all, replaced, earlier_rows), assignments, staged)


def _find_submissions(folder: Path) -> tuple[list[Path], list[Path]]:
    """``(files, links)`` in the folder, in name-byte order; what is no submission is said."""
    files, links = [], []
    for p in sorted(folder.iterdir(), key=lambda p: os.fsencode(p.name)):
        if p.is_symlink():
            links.append(p)
        elif p.suffix == ".csv" or p.name.startswith(".") or p.is_dir():
            print(f"not graded (not a submission): {printable(display_name(p))}", file=sys.stderr)
        else:
            files.append(p)
    return files, links


def _nothing_to_grade(run: GradingRun, setup: Setup, earlier_rows) -> int:
    """An empty folder: the header only, never an empty gradebook over a class's grades."""
    folder, out_csv = run.submissions_dir, run.out_csv
    if earlier_rows or out_csv.exists():
        print(f"no submissions in {folder}: nothing graded, nothing changed", file=sys.stderr)
        return 1
    message = f"no submissions in {folder}: wrote {out_csv} with its header only"
    points = {}
    if run.assignment:
        points = {q.name: q.points for q in spec.read(setup.solutions[run.assignment]).questions}
    write_csv(out_csv, [], points)
    print(message, file=sys.stderr)
    return 1


def _plan(run: GradingRun, setup: Setup, files: list[Path], links: list[Path]) -> list[tuple]:
    """Each file as ``(path, notebook, problem, set, note)``; a link is never followed."""
    planned = []
    for p in files:
        nb, problem = read_submission(p)
        named = run.assignment or set_from_name(display_name(p), setup.pattern, setup.known)
        name, note = identify(p, nb, setup.known, named)
        planned.append((p, nb, problem, name, note))
    for p in links:
        name, _ = identify(p, None, setup.known, run.assignment)
        planned.append((p, None, "a symbolic link: not followed, not graded", name, ""))
    return planned


def _grade_in_sandboxes(
    run: GradingRun, setup: Setup, planned: list[tuple], assignments: dict, staged: Path | None
) -> list[Grade]:
    """Every planned file's row, ``run.jobs`` at a time, from one sandbox factory; Ctrl-C puts
    the staged logs back and writes nothing."""
    threads = max(1, (os.cpu_count() or 1) // run.jobs)
    with contextlib.ExitStack() as stack:
        zygote = (
            sandbox.start_factory(list(assignments.values()), threads, jobs=run.jobs)
            if assignments
            else None
        )
        if zygote is not None:
            stack.callback(zygote.close)
        execution = Execution(run.timeout_seconds, run.cell_timeout_seconds, threads, zygote)
        try:
            return _grade_all(
                planned,
                assignments,
                setup.known,
                execution=execution,
                jobs=run.jobs,
                log_dir=run.log_dir,
                exercises_dir=run.exercises_dir,
            )
        except KeyboardInterrupt:
            restore_logs(staged)
            raise Refused(
                "\ninterrupted: no gradebook, export or history written; the files of earlier "
                "runs are as they were",
                130,
            ) from None


def _identify_rows(grades: list[Grade], planned: list[tuple], setup: Setup) -> None:
    """Each row's file name bytes and time (nbgrader's timestamp: naive UTC, str(datetime)), and
    with a roster its student and whether the LMS marked it late."""
    for g, (p, *_) in zip(grades, planned, strict=True):
        g.name_hex = os.fsencode(p.name).hex()
        with contextlib.suppress(OSError):
            stamp = datetime.datetime.fromtimestamp(p.lstat().st_mtime, datetime.UTC)
            g.submitted = str(stamp.replace(tzinfo=None))
    if setup.roster is not None:
        now = join_files(
            [(g.submission, g.assignment) for g in grades], setup.roster, setup.pattern, []
        )
        for g in grades:
            g.student = now.owner.get(g.submission, "")
            g.late = g.submission in now.late


def _merge_class(
    run: GradingRun, setup: Setup, grades: list[Grade], earlier: list | None
) -> tuple[list[Grade], list[Grade]]:
    """``(the class's rows, the earlier rows replaced)``: this run's rows merged into the record,
    the adjustments applied to all."""
    if earlier is None:
        rows_all, replaced = sorted(grades, key=lambda g: (g.assignment, g.file)), []
    else:
        rows_all, replaced = merge(earlier, grades)
        kept = len(rows_all) - len(grades)
        if kept:
            print(
                f"kept {kept} row(s) of earlier runs that this run did not regrade "
                f"(their grades, logs and exports stand; --replace drops them)",
                file=sys.stderr,
            )
    if changed := adjust(rows_all, setup.adjustments):
        print(
            f"{changed} row(s) adjusted by the instructor's overrides and late penalty "
            f"({run.log_dir / ADJUSTMENTS}): their reason says how",
            file=sys.stderr,
        )
    return rows_all, replaced


def _write_class(
    run: GradingRun,
    setup: Setup,
    grades: list[Grade],
    merged: tuple[list[Grade], list[Grade], list | None],
    assignments: dict,
    staged: Path | None,
) -> int:
    """Write what the class's rows (``merged``: the rows, the earlier ones replaced, the record
    before) make: the roster report, each set's gradebook, the record, the history, the
    exports; what no row refers to any more moves into the history. The run's exit status."""
    rows_all, replaced, earlier_rows = merged
    all_sets = {g.assignment for g in rows_all if g.assignment in setup.solutions}
    assignments |= {n: spec.read(setup.solutions[n]) for n in sorted(all_sets - set(assignments))}
    by_set: dict[str, list[Grade]] = {}
    for g in rows_all:
        by_set.setdefault(g.assignment, []).append(g)
    join = None
    if setup.roster is not None:
        join = join_files(
            [(g.submission, g.assignment) for g in rows_all],
            setup.roster,
            setup.pattern,
            sorted(by_set.keys() & assignments.keys()),
        )
        _report_roster(join, run.out_csv)
    run_folder = _start_history(run, setup) if run.history else None
    written, summaries, status = _write_books(run.out_csv, by_set, assignments)
    if not _write_record(run, rows_all, setup.adjustments, summaries):
        status = 1
    if run_folder is not None:
        _keep_run(run_folder, written, rows_all, earlier_rows, setup.roster)
    current = {g.log for g in rows_all if g.log}
    keep_replaced_logs(staged, run_folder, run.log_dir, replaced, current)
    clear_stale(run.out_csv, run.log_dir, written, current, sorted(setup.solutions), run_folder)
    if _warn_not_graded(rows_all, grades):
        status = NOT_GRADED_EXIT
    if setup.formats and not _write_exports(run, setup, rows_all, assignments, join, run_folder):
        status = 1
    return status


def _start_history(run: GradingRun, setup: Setup) -> Path | None:
    """This run's history folder (None when it cannot be made); with ``--replace`` it keeps the
    gradebooks and the record the run starts afresh from."""
    try:
        run_folder = new_run_folder(run.history_dir)
        if run.replace:  # what this run starts afresh from stays readable
            for book in books(run.out_csv, sorted(setup.solutions)) + [run.record_path]:
                keep_copy(book, run_folder / "replaced" / book.name)
    except OSError as e:
        print(f"history not kept: {e}", file=sys.stderr)
        return None
    return run_folder


def _write_books(
    out_csv: Path, by_set: dict[str, list[Grade]], assignments: dict
) -> tuple[list[Path], dict, int]:
    """``(written, summaries, status)``: one gradebook per set (``<out>-<set>.csv`` when there
    are several), each set's summary on the console."""
    written: list[Path] = []
    summaries = {}
    status = 0
    for s, rows in sorted(by_set.items()):
        target = out_csv
        if len(by_set) > 1:
            target = out_csv.with_name(f"{out_csv.stem}-{s or 'unknown'}.csv")
        points = {q.name: q.points for q in assignments[s].questions} if s in assignments else {}
        try:
            write_csv(target, rows, points)
        except OSError as e:
            print(f"cannot write {target}: {e}", file=sys.stderr)
            status = 1
            continue
        written.append(target)
        summaries[s or "unknown"] = summary(rows, points)
        print(f"{len(rows)} submission(s) of {s or 'no known set'} -> {target}")
        print(summary_text(summaries[s or "unknown"]), file=sys.stderr)
    return written, summaries, status


def _write_record(
    run: GradingRun, rows_all: list[Grade], adjustments: Adjustments, summaries: dict
) -> bool:
    """The class's record, adjustments and summary in the log folder; False when not written."""
    try:
        make_dir(run.log_dir)
        write_new(run.record_path, record_rows(rows_all))
        write_new(run.log_dir / ADJUSTMENTS, adjustments.to_json())
        write_new(run.log_dir / "summary.json", json.dumps(summaries, indent=1))
    except OSError as e:
        print(f"class record not written: {e}", file=sys.stderr)
        return False
    return True


def _keep_run(
    run_folder: Path, written: list[Path], rows_all: list[Grade], earlier_rows, class_roster
) -> None:
    """The run's gradebooks in its history folder, with what changed since the record before."""
    names = {k: st.student_id for k, st in class_roster.students.items()} if class_roster else {}
    try:
        print(
            keep_run(run_folder, books=written, rows=rows_all, before=earlier_rows, names=names),
            file=sys.stderr,
        )
    except OSError as e:
        print(f"history not kept: {e}", file=sys.stderr)


def _warn_not_graded(rows_all: list[Grade], grades: list[Grade]) -> bool:
    """Say loudly which rows have no score and which lost points where the key is in doubt; True
    when a row is not graded."""
    void = [g for g in rows_all if g.status == NOT_GRADED]
    if void:
        loud(
            f"{len(void)} submission(s) NOT GRADED: the grader failed, not the learner; no "
            "export carries a score for them (Canvas, Moodle and nbgrader leave them out, "
            "PrairieLearn says not gradable, Gradescope has no result). "
            + "; ".join(f"{g.submission}: {g.reason}" for g in void[:5])
        )
    for mark in (KEY_MARK, VERSION_MARK):
        hit = [g.submission for g in grades if mark in g.reason]
        if hit:
            loud(f"{len(hit)} row(s) lost points marked {mark!r}: read their reason")
    return bool(void)


def _write_exports(run, setup, rows_all, assignments, join, run_folder) -> bool:
    """Every ``--export`` format beside ``--out`` (kept in the history); False when not written."""
    try:
        exported = write_all(
            setup.formats, run.out_csv, rows_all, assignments, join, visibility=run.visibility
        )
        for path in exported:
            print(f"export -> {path}")
        if run_folder is not None:
            keep_exports(run_folder, exported)
    except (OSError, ValueError) as e:
        print(f"exports not written: {e}", file=sys.stderr)
        return False
    return True


def _report_roster(join, out_csv: Path) -> None:
    """Every file and student that did not pair up, on the console and in ``<out>-roster.txt``."""
    problems = join.problems()
    report = out_csv.with_name(f"{out_csv.stem}-roster.txt")
    paired = sum(len(v) == 1 for v in join.files.values())
    head = (
        f"roster: {len(join.roster.students)} student(s), {paired} paired with one file; "
        f"{len(problems)} problem(s)"
    )
    print(safe_text(head), file=sys.stderr)
    for line in problems:
        print("  " + safe_text(printable(line))[:400], file=sys.stderr)
    try:
        make_dir(report.parent)
        write_new(report, safe_text("\n".join([head, *problems]) + "\n"))
    except OSError as e:
        print(f"roster report not written: {e}", file=sys.stderr)


def _stop(pool: ThreadPoolExecutor, zygote) -> None:
    """Ctrl-C: queued submissions are dropped and every running sandbox ends now (closing the
    factory kills them all), so the pool's threads return at once instead of at their timeout."""
    pool.shutdown(wait=False, cancel_futures=True)
    if zygote is not None:
        zygote.close()


def _grade_all(
    planned,
    assignments,
    known,
    *,
    execution: Execution,
    jobs,
    log_dir,
    exercises_dir=authoring.EXERCISES_DIR,
) -> list[Grade]:
    """Each set's key (made once, checked against the release), then every planned file's row,
    ``jobs`` at a time, with a progress bar and a line per file."""
    zygote = execution.zygote
    with ThreadPoolExecutor(max_workers=jobs if zygote is not None else 1) as pool:
        try:
            made = pool.map(lambda a: prepare_set(a, execution=execution), assignments.values())
            sets = dict(zip(assignments, made, strict=True))
        except KeyboardInterrupt:
            _stop(pool, zygote)
            raise
    for name, setg in sets.items():
        check_key(name, setg, exercises_dir)

    def one(item) -> Grade:
        """Whatever one submission does, it gets a row and the run goes on."""
        p, nb, problem, name, note = item
        try:
            setg = sets[name] if name is not None else None
            return grade_file(
                p, nb, problem, setg, note, known=known, execution=execution, log_dir=log_dir
            )
        except Exception as e:  # noqa: BLE001 - a grader bug or a full disk costs one row, not the run
            points = sets[name].points if name in sets else {}
            return not_graded(
                Grade(display_name(p), name or "", points=points),
                f"the grader failed on this file ({type(e).__name__}: {str(e)[:200]})",
            )

    grades: list[Grade] = []
    bar = tqdm(total=len(planned), desc="grading", unit="submission")
    start = time.monotonic()
    with ThreadPoolExecutor(max_workers=jobs) as pool:
        try:
            for g in pool.map(one, planned):
                grades.append(g)
                bar.update(1)
                bar.write(_progress_line(g))
        except KeyboardInterrupt:
            _stop(pool, zygote)
            raise
    bar.close()
    print(f"graded {len(grades)} file(s) in {time.monotonic() - start:.0f} s", file=sys.stderr)
    return grades


def _progress_line(g: Grade) -> str:
    """One graded file's console line: score, status and reason, printable and capped."""
    line = f"{g.submission}: {number(g.total)}/{number(g.possible)} [{g.status}] {g.reason}"
    return printable(safe_text(line[:400]))
