"""Regrades keep their history: every run leaves a folder of its own beside the gradebook, and a
regrade writes what changed, per student (or file), set and question.

``grades_history/<UTC time>/`` holds that run's gradebook CSVs (byte copies), the class's record
(``gradebook.json``), a copy of every export it wrote (``exports/``), the grading logs of the rows
it replaced (``replaced-logs/<log folder>/``: the evidence behind the earlier grades) and, when an
earlier run left a record, ``diff.csv``: every value that changed (``set, student, submission,
question, before, after``; a row that appeared or disappeared has one ``(submission)`` row).

The diff compares the two runs' records, not their CSVs: rows are matched by (student, set) when
the file is a roster student's (a resubmission under a new file name is a change of that
student's grade, not one file gone and one new), else by the file name's bytes and set (two names
that print alike are two rows). A CSV re-saved by a spreadsheet, a folder that mixes sets in one
run and not in the next, and a name the console prints as another's change nothing in it.

What a regrade overwrites or no longer refers to reaches the run's folder too: the log folders of
the files it regrades are staged aside before grading (:func:`stage_logs`; put back on Ctrl-C,
:func:`restore_logs`) and kept with those of the rows it replaced (:func:`keep_replaced_logs`); a
set's gradebook or a log folder no row of the class refers to moves in (:func:`clear_stale`).
"""

from __future__ import annotations

import contextlib
import csv
import io
import os
import shutil
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path

from teaching.grading.files import make_dir, printable, safe_text, spreadsheet_safe, write_new
from teaching.grading.grades import RECORD, Grade, number, record_rows
from teaching.grading.submission import LOG_FILES

DIFF_HEADER = ["set", "student", "submission", "question", "before", "after"]
APPEARED = "(submission)"


def values(g: Grade) -> dict[str, str]:
    """A row's values as the diff compares them: each question, the total and the status."""
    void = not g.earned
    out = {q: "" if void else number(g.scores.get(q, 0.0)) for q in g.points}
    out["total"] = "" if void else number(g.total)
    out["status"] = g.status
    return out


def _matched(before: list[Grade], after: list[Grade]) -> dict[tuple, list]:
    """key -> [row before or None, row after or None]: by (set, student) or (set, file), and by
    file too where one side holds two rows of a key (a student's two files)."""
    count_before = Counter(g.key for g in before)
    count_after = Counter(g.key for g in after)
    pairs: dict[tuple, list] = {}
    for side, rows in ((0, before), (1, after)):
        for g in rows:
            unique = count_before[g.key] <= 1 and count_after[g.key] <= 1
            k = g.key if unique else (*g.key, g.file)
            pairs.setdefault(k, [None, None])[side] = g
    return pairs


def diff(before: list[Grade], after: list[Grade], names: dict[str, str] | None = None) -> list:
    """Rows of what changed between two runs' records (header first); ``names`` maps a roster id
    key to the id shown."""
    names = names or {}
    rows = [DIFF_HEADER]
    for _, (old, new) in sorted(_matched(before, after).items()):
        g = new or old
        who = names.get(g.student, g.student)
        shown = printable(safe_text(g.submission))
        if old is None or new is None:
            total = values(g)["total"]
            rows.append(
                [g.assignment, who, shown, APPEARED, "" if new else total, total if new else ""]
            )
            continue
        if old.file != new.file:
            rows.append([g.assignment, who, shown, "(file)", printable(old.submission), shown])
        a, b = values(old), values(new)
        for q in dict.fromkeys([*a, *b]):
            if a.get(q, "") != b.get(q, ""):
                rows.append([g.assignment, who, shown, q, a.get(q, ""), b.get(q, "")])
    return rows


def keep_copy(source: Path, target: Path) -> None:
    """A byte copy of a file or a folder (links are not followed, nor copied)."""
    if source.is_symlink():
        return
    if source.is_dir():
        shutil.copytree(source, target, symlinks=True)
    elif source.is_file():
        make_dir(target.parent)
        write_new(target, source.read_bytes())


def new_run_folder(history_dir: Path) -> Path:
    """``history_dir/<UTC time>`` (``-2``, ``-3`` ... when two runs share a second)."""
    make_dir(history_dir)
    stamp = time.strftime("%Y%m%dT%H%M%SZ", time.gmtime())
    n, name = 1, stamp
    while (history_dir / name).exists():
        n += 1
        name = f"{stamp}-{n}"
    folder = history_dir / name
    folder.mkdir()
    return folder


def keep_run(
    folder: Path,
    *,
    books: list[Path],
    rows: list[Grade],
    before: list[Grade] | None,
    names: dict[str, str],
) -> str:
    """Keep this run's gradebooks and record in ``folder`` and, after an earlier run, the diff;
    returns a one-line summary."""
    for book in books:
        keep_copy(book, folder / book.name)
    write_new(folder / RECORD, record_rows(rows))
    if before is None:
        return f"first run kept in {folder}"
    changes = diff(before, rows, names)
    buf = io.StringIO()
    writer = csv.writer(buf, lineterminator="\r\n")
    for row in changes:
        writer.writerow([spreadsheet_safe(c) for c in row])
    write_new(folder / "diff.csv", "\ufeff" + buf.getvalue())
    changed = {tuple(r[:3]) for r in changes[1:]}
    return (
        f"regrade: {len(changes) - 1} change(s) in {len(changed)} row(s) -> {folder / 'diff.csv'}"
    )


def keep_exports(folder: Path, paths: list[Path]) -> None:
    """A copy of each export file or folder in ``folder/exports``."""
    for p in paths:
        keep_copy(p, folder / "exports" / p.name)


def keep_logs(folder: Path, logs: list[Path]) -> None:
    """Move log folders (of rows a regrade replaced) into ``folder/replaced-logs``."""
    for log in logs:
        if log.is_dir() and not log.is_symlink():
            make_dir(folder / "replaced-logs")
            os.replace(log, folder / "replaced-logs" / log.name)


def books(out_csv: Path, sets: list[str]) -> list[Path]:
    """The gradebooks at ``--out``: itself and each set's ``<out>-<set>.csv`` (those that exist)."""
    names = [out_csv, *(out_csv.with_name(f"{out_csv.stem}-{s}.csv") for s in [*sets, "unknown"])]
    return [p for p in names if p.is_file() and not p.is_symlink()]


def stage_logs(logs: list[Path], history_dir: Path) -> Path | None:
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


def restore_logs(staged: Path | None) -> None:
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


def keep_replaced_logs(
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


def clear_stale(
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
