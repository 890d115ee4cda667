"""Files the grader writes and the text it puts in them: any text made safe for a console, a CSV
cell and a file name, and files written whole without following a link anyone planted.

Every module of :mod:`teaching.grading` that writes (the gradebook, its logs, the history, the
exports) writes through these.
"""

from __future__ import annotations

import contextlib
import os
import sys
import tempfile
from pathlib import Path


def safe_text(text) -> str:
    """Any text made writable anywhere: lone surrogates and undecodable bytes as escapes."""
    return str(text).encode("utf-8", "backslashreplace").decode("utf-8")


def display_name(path: Path) -> str:
    """A file name as text, whatever bytes it is made of (``\\xff`` for a byte that is not
    UTF-8)."""
    return os.fsencode(path.name).decode("utf-8", "backslashreplace")


def printable(text: str) -> str:
    """Text safe on a console and in a CSV cell: control characters (terminal escapes among them)
    as ``\\xNN``."""
    return "".join(c if c.isprintable() else f"\\x{ord(c):02x}" for c in str(text))


def printable_lines(text: str) -> str:
    """:func:`printable`, line by line: the line breaks of a multi-line cell (feedback) stay."""
    return "\n".join(printable(line) for line in str(text).split("\n"))


def log_name(path: Path) -> str:
    """The log folder's name for a submission: printable, no separator, not hidden, and one per
    file name (``%XX`` for each byte of a character that is not printable, a separator, ``%``, a
    leading ``.`` or a byte that is not UTF-8; so no two names share a folder)."""
    out = []
    for i, c in enumerate(os.fsencode(path.name).decode("utf-8", "surrogateescape")):
        if "\udc80" <= c <= "\udcff":  # a byte that is not UTF-8
            out.append(f"%{ord(c) - 0xDC00:02X}")
        elif not c.isprintable() or c in "/\\%" or (i == 0 and c == "."):
            out.extend(f"%{b:02X}" for b in c.encode("utf-8"))
        else:
            out.append(c)
    return "".join(out)


def spreadsheet_safe(cell: str) -> str:
    """A CSV cell a spreadsheet will not run as a formula (a leading ``'`` before = + - @ tab
    CR)."""
    return "'" + cell if cell[:1] in ("=", "+", "-", "@", "\t", "\r") else cell


def write_new(path: Path, data: str | bytes) -> None:
    """Write ``path`` without following a link anyone planted: a fresh file beside it (``mkstemp``,
    ``O_NOFOLLOW``), then renamed over it (a rename replaces a link, never writes through it)."""
    raw = data.encode("utf-8", "backslashreplace") if isinstance(data, str) else data
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    try:
        with os.fdopen(fd, "wb") as f:
            f.write(raw)
        os.replace(tmp, path)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        raise


def first_link(path: Path) -> Path | None:
    """The first symbolic link on the way to ``path`` (itself included), or None."""
    return next((p for p in [*reversed(path.parents), path] if p.is_symlink()), None)


def make_dir(path: Path) -> None:
    """A folder that is not a link (and whose parents are not): refused otherwise."""
    if (link := first_link(path)) is not None:
        raise OSError(f"{link} is a symbolic link: not followed")
    path.mkdir(parents=True, exist_ok=True)


def capped(text: str, limit: int) -> str:
    return text if len(text) <= limit else text[:limit] + f"... ({len(text) - limit:,} more)"


def loud(text: str) -> None:
    """A warning an instructor must not miss: marked, on its own lines, on the console."""
    print(f"\n!!! WARNING: {printable(safe_text(text))}\n", file=sys.stderr)
