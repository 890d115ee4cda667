"""Regrades keep their history: every run's gradebook is kept beside the others, and a regrade
writes what changed, per submission and question.

``grades.csv`` is always the latest run; ``grades_history/<UTC time>.csv`` keeps each run's copy,
and when ``grades.csv`` held an earlier run, ``grades_history/<UTC time>-diff.csv`` lists every
score that changed (``submission, student, question, before, after``; a submission that appeared or
disappeared has one row with ``question`` = ``(submission)``). Every file is written whole (a
temporary file, then renamed), so an interrupted run leaves the previous files as they were.
"""

from __future__ import annotations

import csv
import io
import re
import time
from pathlib import Path

from teaching.grading.files import make_dir, spreadsheet_safe, write_new

QUESTION = re.compile(r"(?P<q>.+) \[(?P<p>[^\]]+) pts\]")
DIFF_HEADER = ["submission", "student", "question", "before", "after"]


def scores(text: str) -> dict[str, dict[str, str]]:
    """A native gradebook CSV as {submission: {question or 'total' or 'status': cell}}."""
    rows = list(csv.reader(io.StringIO(text, newline="")))
    if not rows:
        return {}
    header = rows[0]
    wanted = {
        i: (m.group("q") if (m := QUESTION.fullmatch(h)) else h)
        for i, h in enumerate(header)
        if QUESTION.fullmatch(h) or h in ("total", "status")
    }
    return {
        row[0]: {name: row[i] for i, name in wanted.items() if i < len(row)}
        for row in rows[1:]
        if row
    }


def diff(before: str, after: str, owners: dict[str, str] | None = None) -> list[list[str]]:
    """Rows of what changed between two runs' CSVs (header first)."""
    old, new = scores(before), scores(after)
    owners = owners or {}
    rows = [DIFF_HEADER]
    for sub in sorted(old.keys() | new.keys()):
        who = owners.get(sub.removeprefix("'"), "")
        if sub not in new or sub not in old:
            total = (old.get(sub) or new.get(sub) or {}).get("total", "")
            rows.append(
                [sub, who, "(submission)", total if sub in old else "", total if sub in new else ""]
            )
            continue
        for q in dict.fromkeys([*old[sub], *new[sub]]):
            a, b = old[sub].get(q, ""), new[sub].get(q, "")
            if a != b:
                rows.append([sub, who, q, a, b])
    return rows


def record(target: Path, before: str | None, owners: dict[str, str] | None = None) -> str:
    """Keep ``target``'s new contents in its history folder and, when it held an earlier run,
    the diff; returns a one-line summary."""
    folder = target.with_name(f"{target.stem}_history")
    make_dir(folder)
    stamp = time.strftime("%Y%m%dT%H%M%SZ", time.gmtime())
    n, name = 1, stamp
    while (folder / f"{name}.csv").exists():
        n += 1
        name = f"{stamp}-{n}"
    after = target.read_text(encoding="utf-8")
    write_new(folder / f"{name}.csv", after)
    if before is None:
        return f"first run kept as {folder / (name + '.csv')}"
    rows = diff(before, after, owners)
    buf = io.StringIO()
    writer = csv.writer(buf, lineterminator="\r\n")
    for row in rows:
        writer.writerow([spreadsheet_safe(c) for c in row])
    path = folder / f"{name}-diff.csv"
    write_new(path, buf.getvalue())
    changed = {r[0] for r in rows[1:]}
    return f"regrade: {len(rows) - 1} change(s) in {len(changed)} submission(s) -> {path}"
