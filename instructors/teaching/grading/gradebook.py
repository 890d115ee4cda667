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
import shutil
import sys
import tempfile
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

from tqdm.auto import tqdm

from course.facts import validate
from teaching.grading import authoring, keycheck, sandbox, spec
from teaching.grading.exports import check_before_grading, parse_formats, write_all
from teaching.grading.files import (
    display_name,
    first_link,
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
    RECORD,
    Grade,
    adjust,
    merge,
    not_graded,
    number,
    read_adjustments,
    read_overrides,
    read_record,
    record_rows,
    summary,
    summary_text,
    updated,
    write_csv,
)
from teaching.grading.history import (
    keep_copy,
    keep_exports,
    keep_logs,
    keep_run,
    new_run_folder,
)
from teaching.grading.roster import (
    compile_pattern,
    join_files,
    key,
    read_roster,
    set_from_name,
)
from teaching.grading.submission import (
    KEY_MARK,
    LOG_FILES,
    VERSION_MARK,
    SetGrader,
    check_key,
    grade_file,
    identify,
    prepare_set,
    read_submission,
)


def grade_folder(
    submissions_dir: str | Path,
    out_csv: str | Path,
    *,
    timeout_seconds: float = 300,
    cell_timeout_seconds: float = 60,
    assignment: str | None = None,
    jobs: int = 1,
    solutions_dir: str | Path = authoring.SOLUTIONS_DIR,
    log_dir: str | Path | None = None,
    roster: str | Path | None = None,
    pattern: str | None = None,
    exports: list[str] | str | None = None,
    visibility: str = "after_due_date",
    history: bool = True,
    replace: bool = False,
    overrides: str | Path | None = None,
    late_penalty: float | None = None,
) -> int:
    """Grade every file in a folder (see the module docstring). Returns 0 when each got a row.

    ``roster`` and ``pattern`` pair files with students (:mod:`~teaching.grading.roster`),
    ``exports`` names the formats to write beside ``out_csv``
    (:mod:`~teaching.grading.exports`), ``history`` keeps each run and a regrade's diff
    (:mod:`~teaching.grading.history`). All three are checked before anyone is graded.

    The run's rows merge into the class's record (``<logs>/gradebook.json``,
    :func:`~teaching.grading.grades.merge`): a regrade of some files updates their rows (and those
    of the same students and sets) and keeps everyone else's, in the gradebook, the logs and every
    export. ``replace`` starts the gradebook afresh from this run's rows (the earlier one stays in
    the history); without it, a run is refused when ``--out`` holds graded rows but no record to
    merge them into (a gradebook of an older version): it would drop them.

    Returns :data:`NOT_GRADED_EXIT` (3) when a row has no score because the grader's side failed
    (a key that could not be made here, a sandbox that could not start, the grader failing on a
    file): those rows are marked ``not-graded`` and no export carries a score for them.

    ``overrides`` (a CSV: ``student,set,question,points,reason``) and ``late_penalty`` (the
    fraction of each question a file the LMS marked late loses) update the class's adjustments
    (``<logs>/adjustments.json``), which every run applies to every row
    (:func:`~teaching.grading.grades.adjust`): a later regrade, with or without them, keeps
    them."""
    jobs = validate.positive_int("jobs", jobs, maximum=64)
    folder, out_csv = Path(submissions_dir), Path(out_csv)
    if not folder.is_dir():
        print(f"not a folder of submissions: {folder}", file=sys.stderr)
        return 2
    try:
        listed = exports if isinstance(exports, str | None) else ",".join(exports)
        formats = parse_formats(listed, has_roster=roster is not None)
        class_roster = read_roster(roster) if roster is not None else None
        name_pattern = compile_pattern(pattern or "default")
        check_before_grading(formats, class_roster, visibility)
    except ValueError as e:
        print(f"refusing to grade: {e}", file=sys.stderr)
        return 2
    solutions = {p.stem: p for p in authoring.solution_notebooks(solutions_dir)}
    if not solutions:
        print(f"no assignments: no solution notebooks in {solutions_dir}", file=sys.stderr)
        return 2
    if assignment is not None and assignment not in solutions:
        print(
            f"assignment must be one of {', '.join(solutions)}; got {assignment!r}", file=sys.stderr
        )
        return 2
    known = [assignment] if assignment else sorted(solutions)
    log_dir = Path(log_dir) if log_dir else out_csv.with_name(out_csv.stem + "_logs")
    inside = [
        label
        for label, path in (("--out", out_csv), ("the log folder", log_dir))
        if _under(path, folder)
    ]
    if inside:
        print(
            f"refusing to grade: {' and '.join(inside)} inside the submissions folder ({folder}): "
            "a student could plant a link there; write them elsewhere",
            file=sys.stderr,
        )
        return 2
    if unwritable := _unwritable(out_csv, log_dir):
        print(f"refusing to grade: {unwritable}", file=sys.stderr)
        return 2
    try:
        adjustments = _adjustments(log_dir, overrides, late_penalty, solutions, class_roster)
    except (OSError, ValueError) as e:
        print(f"refusing to grade: {e}", file=sys.stderr)
        return 2
    print(sandbox.describe(), file=sys.stderr)
    for name in known:
        if keycheck.uncommitted(solutions[name], Path(solutions_dir).resolve().parent):
            loud(
                f"solutions/{solutions[name].name} has uncommitted changes: learners received "
                "the last commit's checks, the key comes from the file as it is now"
            )
    if sandbox.mode()["mounts"]:
        kept = {
            "submissions folder": folder,
            "output": out_csv.parent,
            "log folder": log_dir,
            "solutions": Path(solutions_dir),
        }
        if (authoring.REPO / "solutions").is_dir():  # a checkout (not an installed package)
            kept["checkout"] = authoring.REPO
        exposed = sandbox.exposed(kept)
        if exposed:
            print(
                "refusing to grade: " + "; ".join(exposed) + ". Move it out of the folders "
                "the sandbox shows (the system's program folders, the interpreter, the "
                "environment, the course package).",
                file=sys.stderr,
            )
            return 2
    record_path = log_dir / RECORD
    history_dir = out_csv.with_name(out_csv.stem + "_history")
    try:
        earlier = read_record(record_path)
    except ValueError as e:
        earlier = None
        if not replace:
            print(f"refusing to grade: {e}; --replace starts a new gradebook", file=sys.stderr)
            return 2
    if replace:
        earlier_rows, earlier = earlier, None
    else:
        earlier_rows = earlier
        if earlier is None and (held := _graded_rows(out_csv, sorted(solutions))):
            print(
                f"refusing to grade: {held} holds graded rows of an earlier run and there is no "
                f"class record ({record_path}) to merge this run into, so they would be dropped: "
                "grade the whole class into a new --out, or pass --replace to start the gradebook "
                "afresh (the earlier one is kept in its history)",
                file=sys.stderr,
            )
            return 2
    files, links = [], []
    for p in sorted(folder.iterdir(), key=lambda p: os.fsencode(p.name)):
        if p.is_symlink():
            links.append(p)
        elif p.suffix == ".csv" or p.name.startswith(".") or p.is_dir():
            print(f"not graded (not a submission): {printable(display_name(p))}", file=sys.stderr)
        else:
            files.append(p)
    if not files and not links:
        if earlier_rows or out_csv.exists():  # never an empty gradebook over a class's grades
            print(f"no submissions in {folder}: nothing graded, nothing changed", file=sys.stderr)
            return 1
        message = f"no submissions in {folder}: wrote {out_csv} with its header only"
        points = {}
        if assignment:
            points = {q.name: q.points for q in spec.read(solutions[assignment]).questions}
        write_csv(out_csv, [], points)
        print(message, file=sys.stderr)
        return 1

    planned = []
    for p in files:
        nb, problem = read_submission(p)
        named = assignment or set_from_name(display_name(p), name_pattern, known)
        name, note = identify(p, nb, known, named)
        planned.append((p, nb, problem, name, note))
    for p in links:
        name, _ = identify(p, None, known, assignment)
        planned.append((p, None, "a symbolic link: not followed, not graded", name, ""))
    threads = max(1, (os.cpu_count() or 1) // jobs)
    assignments = {n: spec.read(solutions[n]) for n in sorted({n for *_, n, _ in planned if n})}
    regraded = [log_dir / log_name(p) for p in [*files, *links]]
    staged = _stage_logs(regraded, history_dir) if history else None
    with contextlib.ExitStack() as stack:
        zygote = (
            sandbox.start_factory(list(assignments.values()), threads, jobs=jobs)
            if assignments
            else None
        )
        if zygote is not None:
            stack.callback(zygote.close)
        try:
            grades = _grade_all(
                planned,
                assignments,
                known,
                zygote=zygote,
                jobs=jobs,
                threads=threads,
                timeout_seconds=timeout_seconds,
                cell_timeout_seconds=cell_timeout_seconds,
                log_dir=log_dir,
                exercises_dir=Path(solutions_dir).resolve().parent / "exercises",
            )
        except KeyboardInterrupt:
            _restore_logs(staged)
            print(
                "\ninterrupted: no gradebook, export or history written; the files of earlier "
                "runs are as they were",
                file=sys.stderr,
            )
            return 130
    for g, (p, *_) in zip(grades, planned, strict=True):
        g.name_hex = os.fsencode(p.name).hex()
        with contextlib.suppress(OSError):  # nbgrader's timestamp: naive UTC, str(datetime)
            stamp = datetime.datetime.fromtimestamp(p.lstat().st_mtime, datetime.UTC)
            g.submitted = str(stamp.replace(tzinfo=None))
    if class_roster is not None:
        now = join_files(
            [(g.submission, g.assignment) for g in grades], class_roster, name_pattern, []
        )
        for g in grades:
            g.student = now.owner.get(g.submission, "")
            g.late = g.submission in now.late
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
    if changed := adjust(rows_all, adjustments):
        print(
            f"{changed} row(s) adjusted by the instructor's overrides and late penalty "
            f"({log_dir / ADJUSTMENTS}): their reason says how",
            file=sys.stderr,
        )
    all_sets = {g.assignment for g in rows_all if g.assignment in solutions}
    assignments |= {n: spec.read(solutions[n]) for n in sorted(all_sets - set(assignments))}
    by_set: dict[str, list[Grade]] = {}
    for g in rows_all:
        by_set.setdefault(g.assignment, []).append(g)
    status = 0
    summaries = {}
    written: list[Path] = []
    join = None
    if class_roster is not None:
        join = join_files(
            [(g.submission, g.assignment) for g in rows_all],
            class_roster,
            name_pattern,
            sorted(by_set.keys() & assignments.keys()),
        )
        _report_roster(join, out_csv)
    run_folder = None
    if history:
        try:
            run_folder = new_run_folder(history_dir)
            if replace:  # what this run starts afresh from stays readable
                for book in _books(out_csv, sorted(solutions)) + [record_path]:
                    keep_copy(book, run_folder / "replaced" / book.name)
        except OSError as e:
            print(f"history not kept: {e}", file=sys.stderr)
            run_folder = None
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
    try:
        make_dir(log_dir)
        write_new(record_path, record_rows(rows_all))
        write_new(log_dir / ADJUSTMENTS, adjustments.to_json())
        write_new(log_dir / "summary.json", json.dumps(summaries, indent=1))
    except OSError as e:
        print(f"class record not written: {e}", file=sys.stderr)
        status = 1
    if run_folder is not None:
        names = (
            {k: st.student_id for k, st in class_roster.students.items()} if class_roster else {}
        )
        try:
            print(
                keep_run(
                    run_folder, books=written, rows=rows_all, before=earlier_rows, names=names
                ),
                file=sys.stderr,
            )
        except OSError as e:
            print(f"history not kept: {e}", file=sys.stderr)
    current = {g.log for g in rows_all if g.log}
    _keep_replaced_logs(staged, run_folder, log_dir, replaced, current)
    _clear_stale(out_csv, log_dir, written, current, sorted(solutions), run_folder)
    void = [g for g in rows_all if g.status == NOT_GRADED]
    if void:
        loud(
            f"{len(void)} submission(s) NOT GRADED: the grader failed, not the learner; no "
            "export carries a score for them (Canvas, Moodle and nbgrader leave them out, "
            "PrairieLearn says not gradable, Gradescope has no result). "
            + "; ".join(f"{g.submission}: {g.reason}" for g in void[:5])
        )
        status = NOT_GRADED_EXIT
    for mark in (KEY_MARK, VERSION_MARK):
        hit = [g.submission for g in grades if mark in g.reason]
        if hit:
            loud(f"{len(hit)} row(s) lost points marked {mark!r}: read their reason")
    if formats:
        try:
            exported = write_all(
                formats, out_csv, rows_all, assignments, join, visibility=visibility
            )
            for path in exported:
                print(f"export -> {path}")
            if run_folder is not None:
                keep_exports(run_folder, exported)
        except (OSError, ValueError) as e:
            print(f"exports not written: {e}", file=sys.stderr)
            status = 1
    return status


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


def _books(out_csv: Path, sets: list[str]) -> list[Path]:
    """The gradebooks at ``--out``: itself and each set's ``<out>-<set>.csv`` (those that exist)."""
    names = [out_csv, *(out_csv.with_name(f"{out_csv.stem}-{s}.csv") for s in [*sets, "unknown"])]
    return [p for p in names if p.is_file() and not p.is_symlink()]


def _graded_rows(out_csv: Path, sets: list[str]) -> Path | None:
    """The first gradebook at ``--out`` (or a set's ``<out>-<set>.csv``) that holds a row."""
    for book in _books(out_csv, sets):
        with contextlib.suppress(OSError, UnicodeDecodeError):
            if book.is_file() and len(book.read_text(encoding="utf-8").strip().splitlines()) > 1:
                return book
    return None


def _stage_logs(logs: list[Path], history_dir: Path) -> Path | None:
    """Copy the log folders this run will overwrite (of the files it regrades) aside, so the
    evidence behind the earlier grades reaches the history (or is put back on Ctrl-C)."""
    present = [p for p in logs if p.is_dir() and not p.is_symlink()]
    if not present:
        return None
    try:
        make_dir(history_dir)
        staged = Path(tempfile.mkdtemp(prefix=".staged-logs-", dir=history_dir))
        (staged / ".from").write_text(str(present[0].parent))
        for p in present:
            shutil.copytree(p, staged / p.name, symlinks=True)
        return staged
    except OSError as e:
        print(f"earlier logs of the regraded files not kept: {e}", file=sys.stderr)
        return None


def _restore_logs(staged: Path | None) -> None:
    """Ctrl-C: the staged log folders go back where they were."""
    if staged is None:
        return
    log_dir = None
    with contextlib.suppress(OSError):
        info = staged / ".from"
        log_dir = Path(info.read_text()) if info.is_file() else None
    for p in staged.iterdir() if log_dir is not None else ():
        if p.name == ".from":
            continue
        with contextlib.suppress(OSError):
            shutil.rmtree(log_dir / p.name, ignore_errors=True)
            os.replace(p, log_dir / p.name)
    shutil.rmtree(staged, ignore_errors=True)


def _keep_replaced_logs(
    staged: Path | None, run_folder: Path | None, log_dir: Path, replaced, current: set[str]
) -> None:
    """The logs of the rows this run replaced go into the run's history folder: those it
    overwrote (staged before grading) and those of replaced files it did not grade again."""
    logs = [log_dir / g.log for g in replaced if g.log and g.log not in current]
    if run_folder is None:
        if staged is not None:
            shutil.rmtree(staged, ignore_errors=True)
        return
    try:
        if staged is not None:
            keep_logs(run_folder, [p for p in staged.iterdir() if p.name != ".from"])
        keep_logs(run_folder, logs)
    except OSError as e:
        print(f"logs of replaced rows not kept in the history: {e}", file=sys.stderr)
    finally:
        if staged is not None:
            shutil.rmtree(staged, ignore_errors=True)


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


def _clear_stale(
    out_csv: Path,
    log_dir: Path,
    written: list[Path],
    logs: set[str],
    sets: list[str],
    run_folder: Path | None,
) -> None:
    """What an earlier run left that no row of the class now has: a set's gradebook and a log
    folder move into this run's history folder (removed only with ``--no-history``; of a log
    folder, only the files the grader writes there)."""
    if not written:  # nothing written this run: the earlier files are the only ones
        return
    books = [out_csv, *(out_csv.with_name(f"{out_csv.stem}-{s}.csv") for s in [*sets, "unknown"])]
    for old in books:
        if old in written or old.is_symlink() or not old.is_file():
            continue
        with contextlib.suppress(OSError):
            keep = run_folder if run_folder is not None else old.with_name(f"{old.stem}_history")
            make_dir(keep / "stale")
            os.replace(old, keep / "stale" / old.name)
            print(f"moved a gradebook no row of the class is in into {keep}", file=sys.stderr)
    if not log_dir.is_dir() or log_dir.is_symlink():
        return
    for folder in log_dir.iterdir():
        if folder.name in logs or folder.is_symlink() or not folder.is_dir():
            continue
        if run_folder is not None:
            with contextlib.suppress(OSError):
                keep_logs(run_folder, [folder])
                continue
        for name in LOG_FILES:
            with contextlib.suppress(OSError):
                (folder / name).unlink()
        with contextlib.suppress(OSError):
            folder.rmdir()


def _under(path: Path, folder: Path) -> bool:
    real, base = os.path.realpath(path), os.path.realpath(folder)
    return real == base or real.startswith(base.rstrip("/") + "/")


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
    zygote,
    jobs,
    threads,
    timeout_seconds,
    cell_timeout_seconds,
    log_dir,
    exercises_dir=authoring.EXERCISES_DIR,
) -> list[Grade]:
    def prepared(assignment) -> SetGrader:
        return prepare_set(
            assignment,
            timeout_seconds=timeout_seconds,
            cell_timeout_seconds=cell_timeout_seconds,
            zygote=zygote,
        )

    with ThreadPoolExecutor(max_workers=jobs if zygote is not None else 1) as pool:
        try:
            sets = dict(zip(assignments, pool.map(prepared, assignments.values()), strict=True))
        except KeyboardInterrupt:
            _stop(pool, zygote)
            raise
    for name, setg in sets.items():
        check_key(name, setg, exercises_dir)

    def graded(item) -> Grade:
        p, nb, problem, name, note = item
        return grade_file(
            p,
            nb,
            problem,
            sets[name] if name is not None else None,
            note,
            known=known,
            timeout_seconds=timeout_seconds,
            cell_timeout_seconds=cell_timeout_seconds,
            threads=threads,
            log_dir=log_dir,
            zygote=zygote,
        )

    def one(item) -> Grade:
        """Whatever one submission does, it gets a row and the run goes on."""
        try:
            return graded(item)
        except Exception as e:  # noqa: BLE001 - a grader bug or a full disk costs one row, not the run
            p, _, _, name, _ = item
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
                bar.write(
                    printable(
                        safe_text(
                            f"{g.submission}: {number(g.total)}/{number(g.possible)} [{g.status}] "
                            f"{g.reason}"[:400]
                        )
                    )
                )
        except KeyboardInterrupt:
            _stop(pool, zygote)
            raise
    bar.close()
    print(f"graded {len(grades)} file(s) in {time.monotonic() - start:.0f} s", file=sys.stderr)
    return grades
