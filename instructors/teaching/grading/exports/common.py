"""What the export formats share: CSV text a spreadsheet cannot run, a row's feedback per question,
and folders written whole (a fresh folder renamed into place)."""

from __future__ import annotations

import contextlib
import csv
import io
import json
import os
import shutil
import tempfile
from collections.abc import Callable
from pathlib import Path

from teaching.grading.files import (
    log_name,
    make_dir,
    printable_lines,
    safe_text,
    spreadsheet_safe,
    write_new,
)
from teaching.grading.grades import Grade, number

BOM = "\ufeff"  # UTF-8's byte-order mark: Excel opens the file as UTF-8 (else "Zoë" as "ZoÃ«")


def csv_text(rows: list[list], *, delimiter: str = ",", verbatim: tuple[int, ...] = ()) -> str:
    """Rows as CSV; every text cell made safe (no formula, any bytes, no control character but a
    cell's own line breaks), numbers as they are. The ``verbatim`` columns (an identity the LMS
    matches exactly: an email, a SIS id, from the roster, not the learner) get no formula guard:
    a ``'`` before ``+44...`` or ``-0042`` would match no one."""
    buf = io.StringIO()
    writer = csv.writer(buf, delimiter=delimiter, lineterminator="\r\n")
    for row in rows:
        cells = []
        for i, c in enumerate(row):
            if isinstance(c, int | float):
                cells.append(c)
                continue
            text = printable_lines(safe_text(c))
            cells.append(text if i in verbatim else spreadsheet_safe(text))
        writer.writerow(cells)
    return buf.getvalue()


def feedback(grade: Grade) -> list[tuple[str, float, float, str]]:
    """(question, score, points, why it lost points) per question, in the set's order."""
    return [
        (q, grade.scores.get(q, 0.0), p, grade.feedback.get(q, "")) for q, p in grade.points.items()
    ]


def feedback_text(grade: Grade) -> str:
    """One line per question (``q2 0/2: wrong value (hint: ...)``), then the run's notes."""
    lines = [
        f"{q} {number(s)}/{number(p)}" + (f": {why}" if why else "")
        for q, s, p, why in feedback(grade)
    ]
    if grade.status != "ok":
        lines.append(f"status: {grade.status}")
    return "\n".join(lines)


def write_folder(target: Path, fill: Callable[[Path], None]) -> None:
    """Fill a fresh folder beside ``target`` and rename it into place: an interrupted run leaves
    the previous folder (or none), never half of a new one."""
    make_dir(target.parent)
    tmp = Path(tempfile.mkdtemp(prefix=f".{target.name}.", suffix=".tmp", dir=target.parent))
    old = None
    try:
        fill(tmp)
        if target.exists() or target.is_symlink():
            old = Path(
                tempfile.mkdtemp(prefix=f".{target.name}.", suffix=".old", dir=target.parent)
            )
            os.replace(target, old / "previous")
        os.replace(tmp, target)
    except BaseException:
        if old is not None and not target.exists():
            with contextlib.suppress(OSError):
                os.replace(old / "previous", target)
        shutil.rmtree(tmp, ignore_errors=True)
        raise
    finally:
        if old is not None:
            shutil.rmtree(old, ignore_errors=True)


def write_per_file(
    target: Path, grades: list[Grade], render: Callable[[Grade], dict | None]
) -> None:
    """``target/<submission>/results.json`` for every graded file, written as one folder; a file
    ``render`` gives None for has an empty folder (no result)."""

    def fill(folder: Path) -> None:
        used: set[str] = set()
        for g in grades:
            base = name = log_name(Path(g.submission))
            n = 1
            while name in used:  # two names that print alike keep a folder each
                n += 1
                name = f"{base}-{n}"
            used.add(name)
            (folder / name).mkdir()
            data = render(g)
            if data is not None:
                write_new(folder / name / "results.json", json.dumps(data, indent=1))

    write_folder(target, fill)
