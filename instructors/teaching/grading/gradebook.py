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

Every file gets a row whatever it holds (a failure of the grader on one file is an ``error`` row);
every writer takes any text and any file name; nothing is written through a link (a fresh file,
renamed). Grading refuses to start when ``--out`` or its logs are inside the submissions folder,
name a folder or go through a link, or when anything to keep from submissions would be visible in
the sandbox. Console lines and CSV cells carry no control character (``\\x1b``); a reason is
capped. A rerun leaves nothing stale: a set's gradebook it did not write moves into that set's
history, the log folders of files no longer there are removed. An empty folder writes the header
only and returns 1.
"""

from __future__ import annotations

import contextlib
import json
import os
import sys
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
    loud,
    make_dir,
    printable,
    safe_text,
    write_new,
)
from teaching.grading.grades import Grade, number, summary, summary_text, write_csv
from teaching.grading.history import record
from teaching.grading.roster import compile_pattern, join_files, read_roster, set_from_name
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
) -> int:
    """Grade every file in a folder (see the module docstring). Returns 0 when each got a row.

    ``roster`` and ``pattern`` pair files with students (:mod:`~teaching.grading.roster`),
    ``exports`` names the formats to write beside ``out_csv``
    (:mod:`~teaching.grading.exports`), ``history`` keeps each run and a regrade's diff
    (:mod:`~teaching.grading.history`). All three are checked before anyone is graded."""
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
    files, links = [], []
    for p in sorted(folder.iterdir(), key=lambda p: os.fsencode(p.name)):
        if p.is_symlink():
            links.append(p)
        elif p.suffix == ".csv" or p.name.startswith(".") or p.is_dir():
            print(f"not graded (not a submission): {printable(display_name(p))}", file=sys.stderr)
        else:
            files.append(p)
    if not files and not links:
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
    with contextlib.ExitStack() as stack:
        zygote = sandbox.start_factory(list(assignments.values()), threads) if assignments else None
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
            print(
                "\ninterrupted: no gradebook, export or history written; the files of earlier "
                "runs are as they were",
                file=sys.stderr,
            )
            return 130
    by_set: dict[str, list[Grade]] = {}
    for g in grades:
        by_set.setdefault(g.assignment, []).append(g)
    status = 0
    summaries = {}
    written: list[Path] = []
    join = None
    if class_roster is not None:
        join = join_files(
            [(g.submission, g.assignment) for g in grades],
            class_roster,
            name_pattern,
            sorted(assignments),
        )
        _report_roster(join, out_csv)
    owners = {f: join.roster.students[k].student_id for f, k in join.owner.items()} if join else {}
    for s, rows in by_set.items():
        target = out_csv
        if len(by_set) > 1:
            target = out_csv.with_name(f"{out_csv.stem}-{s or 'unknown'}.csv")
        points = {q.name: q.points for q in assignments[s].questions} if s in assignments else {}
        before = _previous_run(target) if history else None
        try:
            write_csv(target, rows, points)
        except OSError as e:
            print(f"cannot write {target}: {e}", file=sys.stderr)
            status = 1
            continue
        written.append(target)
        if history:
            try:
                print(record(target, before, owners), file=sys.stderr)
            except (OSError, UnicodeDecodeError) as e:
                print(f"history of {target} not kept: {e}", file=sys.stderr)
        summaries[s or "unknown"] = summary(rows, points)
        print(f"{len(rows)} submission(s) of {s or 'no known set'} -> {target}")
        print(summary_text(summaries[s or "unknown"]), file=sys.stderr)
    _clear_stale(out_csv, log_dir, written, {g.log for g in grades if g.log}, sorted(solutions))
    try:
        make_dir(log_dir)
        write_new(log_dir / "summary.json", json.dumps(summaries, indent=1))
    except OSError as e:
        print(f"class summary not written: {e}", file=sys.stderr)
    for mark in (KEY_MARK, VERSION_MARK):
        hit = [g.submission for g in grades if mark in g.reason]
        if hit:
            loud(f"{len(hit)} row(s) lost points marked {mark!r}: read their reason")
    if formats:
        try:
            for path in write_all(
                formats, out_csv, grades, assignments, join, visibility=visibility
            ):
                print(f"export -> {path}")
        except (OSError, ValueError) as e:
            print(f"exports not written: {e}", file=sys.stderr)
            status = 1
    return status


def _previous_run(target: Path) -> str | None:
    """The gradebook an earlier run left at ``target`` (None: none, or not readable as one)."""
    try:
        return target.read_text(encoding="utf-8") if target.is_file() else None
    except (OSError, UnicodeDecodeError):
        return None


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
    out_csv: Path, log_dir: Path, written: list[Path], logs: set[str], sets: list[str]
) -> None:
    """What an earlier run left that this one did not write: a set's gradebook moves into its
    history folder (nothing is lost), a submission's log folder is removed (only the files the
    grader writes there; anything else stays)."""
    if not written:  # nothing written this run: the earlier files are the only ones
        return
    books = [out_csv, *(out_csv.with_name(f"{out_csv.stem}-{s}.csv") for s in [*sets, "unknown"])]
    for old in books:
        if old in written or old.is_symlink() or not old.is_file():
            continue
        keep = old.with_name(f"{old.stem}_history")
        with contextlib.suppress(OSError):
            make_dir(keep)
            os.replace(old, keep / f"{time.strftime('%Y%m%dT%H%M%SZ', time.gmtime())}-stale.csv")
            print(f"moved a gradebook this run did not write into {keep}", file=sys.stderr)
    if not log_dir.is_dir() or log_dir.is_symlink():
        return
    for folder in log_dir.iterdir():
        if folder.name in logs or folder.is_symlink() or not folder.is_dir():
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
            return Grade(
                display_name(p),
                name or "",
                {q: 0.0 for q in points},
                points,
                "error",
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
