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
import csv
import json
import os
import re
import secrets
import stat
import sys
import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path

import nbformat

from course.facts import validate
from teaching.grading import authoring, check, extract, keycheck, sandbox, spec


@dataclass
class Grade:
    """One row of the gradebook."""

    submission: str
    assignment: str = ""
    scores: dict[str, float] = field(default_factory=dict)
    points: dict[str, float] = field(default_factory=dict)
    status: str = "ok"  # ok | timeout | crashed | error | not-a-notebook | unknown-assignment
    reason: str = ""
    seconds: float = 0.0
    protections_off: tuple[str, ...] = ()
    feedback: dict[str, str] = field(default_factory=dict)  # question -> why it lost points
    log: str = ""  # the log folder this run wrote for it ('' when none)

    @property
    def total(self) -> float:
        return sum(self.scores.values())

    @property
    def possible(self) -> float:
        return sum(self.points.values())


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


def _log_name(path: Path) -> str:
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
    import tempfile

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


MAX_NOTEBOOK_BYTES = 256 * 2**20  # read at most this much of a file
MAX_CONTAINERS = 500_000  # JSON objects and lists outside strings: a bomb is refused before parsing
MAX_CODE_BYTES = 16 * 2**20  # of sources, once outputs are stripped
_STRING = re.compile(rb'"[^"\\]*(?:\\.[^"\\]*)*"')


def read_submission(path: Path) -> tuple[nbformat.NotebookNode | None, str]:
    """The notebook in ``path`` (its outputs stripped: the grader runs the code again), or None and
    why it is not one. A link is never followed; the size and the number of JSON objects and lists
    are bounded before parsing; nbformat 3 is converted."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK)
        with os.fdopen(fd, "rb") as f:
            if not stat.S_ISREG(os.fstat(f.fileno()).st_mode):
                return None, "not a regular file"
            raw = f.read(MAX_NOTEBOOK_BYTES + 1)
        if len(raw) > MAX_NOTEBOOK_BYTES:
            return None, f"file larger than {MAX_NOTEBOOK_BYTES // 2**20} MB"
        containers = _STRING.sub(b'""', raw)
        count = containers.count(b"{") + containers.count(b"[")
        del containers
        if count > MAX_CONTAINERS:
            return None, f"more than {MAX_CONTAINERS:,} JSON objects and lists: not parsed"
        data = json.loads(raw.decode("utf-8"))
    except (UnicodeDecodeError, json.JSONDecodeError) as e:
        return None, f"not JSON ({type(e).__name__})"
    except (OSError, RecursionError, ValueError) as e:
        return None, f"cannot read: {e}"
    finally:
        raw = None
    if isinstance(data, dict) and "worksheets" in data and data.get("nbformat") == 3:
        for sheet in data["worksheets"] if isinstance(data["worksheets"], list) else []:
            for cell in sheet.get("cells", []) if isinstance(sheet, dict) else []:
                if isinstance(cell, dict) and "outputs" in cell:
                    cell["outputs"] = []
    elif not isinstance(data, dict) or "cells" not in data or "nbformat" not in data:
        return None, "JSON but not a notebook (no 'cells'/'nbformat')"
    for cell in data.get("cells", []) if isinstance(data.get("cells"), list) else []:
        if isinstance(cell, dict) and "outputs" in cell:
            cell["outputs"], cell["execution_count"] = [], None
        if isinstance(cell, dict) and isinstance(cell.get("attachments"), dict):
            cell["attachments"] = {}
    try:
        nb = nbformat.from_dict(data)
        nb = nbformat.reads(nbformat.writes(nb), as_version=4)
        nbformat.validate(nb)
    except Exception as e:  # nbformat raises many kinds for malformed notebooks
        return None, f"invalid notebook ({type(e).__name__}: {str(e)[:160]})"
    code = sum(len(c.source) for c in nb.cells if isinstance(c.source, str))
    if code > MAX_CODE_BYTES:
        return None, f"more than {MAX_CODE_BYTES // 2**20} MB of cell sources"
    return nb, ""


def _metadata_sets(nb) -> list[str]:
    """Every set the notebook's metadata names (``metadata["course"]["assignment"]``,
    ``metadata["otter"]["assignment_name"]``)."""
    if nb is None:
        return []
    named = []
    for key, field_ in (("course", "assignment"), ("otter", "assignment_name")):
        meta = nb.metadata.get(key)
        if isinstance(meta, dict) and isinstance(meta.get(field_), str):
            named.append(_capped(meta[field_], MAX_NAME_CHARS))
    return list(dict.fromkeys(named))


def identify(path: Path, nb, known: list[str], forced: str | None) -> tuple[str | None, str]:
    """(set, note): ``--assignment``, file name, metadata (fallback, when it names one set), the
    only set; metadata that disagrees with the choice, or names two sets, is reported."""
    metas = _metadata_sets(nb)
    name_text = display_name(path)
    by_name = [k for k in known if k in name_text]
    name = forced or (max(by_name, key=len) if by_name else None)
    if name is None and len(metas) == 1 and metas[0] in known:
        return metas[
            0
        ], f"set taken from the notebook's metadata ({metas[0]}): name files after their set"
    if name is None and len(metas) > 1:
        return None, f"the notebook's metadata names {len(metas)} sets ({', '.join(metas)})"
    if name is None and len(known) == 1:
        name = known[0]
    note = ""
    others = [m for m in metas if m != name]
    if name and others:
        note = f"the notebook's metadata says {', '.join(metas)}; graded as {name}"
    return name, note


def _executed(nb: nbformat.NotebookNode, ext: extract.Extraction) -> nbformat.NotebookNode:
    records = iter(ext.cells)
    for cell in nb.cells:
        if cell.cell_type != "code":
            continue
        cell["outputs"] = []
        record = next(records, None)
        if record is None:
            continue
        if record.get("output"):
            cell["outputs"].append(
                nbformat.v4.new_output("stream", name="stdout", text=str(record["output"]))
            )
        if record.get("status") != "ok":
            cell["outputs"].append(
                nbformat.v4.new_output(
                    "error",
                    ename=record.get("status", "error"),
                    evalue=str(record.get("error", "")),
                    traceback=[],
                )
            )
    return nb


@dataclass
class SetGrader:
    """Everything needed to grade submissions of one set in this run."""

    assignment: spec.Assignment
    key: dict | None
    problem: str = ""
    key_problems: dict[str, str] = field(default_factory=dict)  # question -> key vs the release

    @property
    def points(self) -> dict[str, float]:
        return {q.name: q.points for q in self.assignment.questions}


def prepare_set(
    assignment: spec.Assignment, *, timeout_seconds: float, cell_timeout_seconds: float, zygote=None
) -> SetGrader:
    """Run a solution in the sandbox with this run's secret probes: its answers are the key."""
    probes = check.make_probes(assignment, secrets.token_hex(16))
    try:
        key = authoring.run_solution(
            assignment,
            probes,
            sandboxed=True,
            zygote=zygote,
            timeout_seconds=max(timeout_seconds, 600),
            cell_timeout_seconds=max(cell_timeout_seconds, 300),
        )
    except RuntimeError as e:
        return SetGrader(assignment, None, f"the solution failed on this machine: {str(e)[:300]}")
    return SetGrader(assignment, key)


def _tolerance(answer: spec.Answer, expected) -> str:
    if answer.expect == "machine":
        return f"within {answer.rel:g} relative (measured on this machine)"
    if answer.expect == "none":
        return "any value of the right form"
    sig = answer.sig_for(expected)
    return "exact" if sig == check.EXACT else f"{sig} significant figures (or one unit of the last)"


def check_log(assignment: spec.Assignment, results, got: dict, key: dict) -> list[dict]:
    """What ``checks.json`` holds: per question its score and failures, and per answer the expected
    value, what the submission gave and the tolerance (for a regrade)."""
    out = []
    for q, r in zip(assignment.questions, results, strict=True):
        answers = []
        for a in q.answers:
            want = (key.get(q.name) or {}).get(a.name) or {}
            have = (got.get(q.name) or {}).get(a.name)
            expected = want.get("value", want.get("calls"))
            answers.append(
                {
                    "answer": a.name,
                    "expected": expected,
                    "got": have.get("value", have.get("calls", have.get("error")))
                    if isinstance(have, dict)
                    else None,
                    "tolerance": _tolerance(a, expected),
                }
            )
        out.append(
            {
                "question": r.name,
                "score": r.score,
                "points": r.points,
                "failures": r.failures,
                "hints": r.hints,
                "answers": answers,
            }
        )
    return out


def _cell_no(record: dict) -> str:
    index = record.get("index")
    return str(index + 1) if type(index) is int else "?"


def grade_one(
    path: Path,
    nb,
    setg: SetGrader,
    *,
    timeout_seconds: float,
    cell_timeout_seconds: float,
    threads: int,
    log_dir: Path,
    zygote=None,
) -> Grade:
    grade = Grade(submission=display_name(path), assignment=setg.assignment.name)
    grade.points = setg.points
    grade.scores = {q: 0.0 for q in grade.points}
    if setg.key is None:
        grade.status, grade.reason = "error", setg.problem
        return grade
    log = log_dir / _log_name(path)
    ext = extract.run_cells(
        extract.notebook_cells(nb),
        check.request_questions(setg.assignment, setg.key["probes"]),
        cell_timeout_seconds=cell_timeout_seconds,
        timeout_seconds=timeout_seconds,
        threads=threads,
        log_dir=None,
        zygote=zygote,
    )
    grade.seconds = ext.seconds
    grade.protections_off = ext.protections_off
    results = check.check_all(setg.assignment, ext.answers, setg.key["answers"], setg.key["extras"])
    reasons = []
    for r in results:
        grade.scores[r.name] = min(r.score, r.points)  # capped, whatever came back
        if r.score < r.points:
            reasons.append(f"{r.name}: {r.reason}")
            grade.feedback[r.name] = r.reason
    slow = [c for c in ext.cells if c.get("status") == "timeout"]
    notes = [
        f"cell {_cell_no(c)} ({c.get('question') or 'no question'}) timed out after "
        f"{cell_timeout_seconds:g} s"
        for c in slow
    ]
    if ext.timed_out:
        grade.status = "timeout"
    elif ext.problem:
        grade.status = "crashed" if "ended early" in ext.problem else "error"
    if ext.problem:
        notes.append(ext.problem)
    try:  # the grade stands whatever happens to its logs (a full disk, a planted link)
        make_dir(log)
        write_new(log / "output.txt", safe_text(ext.output))
        write_new(log / "answers.json", json.dumps(ext.answers, indent=1))
        write_new(
            log / "checks.json",
            json.dumps(
                check_log(setg.assignment, results, ext.answers, setg.key["answers"]), indent=1
            ),
        )
        write_new(log / "executed.ipynb", safe_text(nbformat.writes(_executed(nb, ext))))
        grade.log = log.name
    except (OSError, ValueError) as e:
        notes.append(f"logs not written ({type(e).__name__}: {str(e)[:120]})")
    grade.reason = "; ".join(notes + reasons)
    return grade


def _num(x: float) -> str:
    return f"{x:g}"


LOG_FILES = ("output.txt", "answers.json", "checks.json", "executed.ipynb")
HEADER_TAIL = ["total", "possible", "percent", "status", "reason", "protections_off", "seconds"]
MAX_REASON_CHARS = 4000  # a reason cell, whatever a notebook's metadata or output holds
MAX_NAME_CHARS = 120  # a set name quoted from a notebook's metadata


def _capped(text: str, limit: int) -> str:
    return text if len(text) <= limit else text[:limit] + f"... ({len(text) - limit:,} more)"


def write_csv(out_csv: Path, grades: list[Grade], points: dict[str, float]) -> None:
    """The gradebook, written without following links, every text cell safe for a spreadsheet."""
    import io

    buf = io.StringIO()
    writer = csv.writer(buf)
    writer.writerow(
        [
            "submission",
            "assignment",
            *(f"{q} [{_num(p)} pts]" for q, p in points.items()),
            *HEADER_TAIL,
        ]
    )
    for g in grades:
        percent = 100 * g.total / g.possible if g.possible else 0.0
        text = [spreadsheet_safe(printable(safe_text(t))) for t in (g.submission, g.assignment)]
        writer.writerow(
            [
                *text,
                *(_num(g.scores.get(q, 0)) for q in points),
                _num(g.total),
                _num(g.possible),
                f"{percent:.1f}",
                spreadsheet_safe(printable(safe_text(g.status))),
                spreadsheet_safe(printable(safe_text(_capped(g.reason, MAX_REASON_CHARS)))),
                " ".join(g.protections_off),
                f"{g.seconds:.1f}",
            ]
        )
    make_dir(out_csv.parent)
    write_new(out_csv, buf.getvalue())


def summary(grades: list[Grade], points: dict[str, float]) -> dict:
    """The class at a glance: mean score per question, and who timed out, crashed or erred."""
    rows = [g for g in grades if g.points]
    return {
        "submissions": len(grades),
        "mean_per_question": {
            q: round(sum(g.scores.get(q, 0) for g in rows) / len(rows), 3) if rows else None
            for q in points
        },
        "mean_percent": round(sum(100 * g.total / g.possible for g in rows) / len(rows), 1)
        if rows
        else None,
        "timed_out": [
            g.submission for g in grades if g.status == "timeout" or "timed out" in g.reason
        ],
        "not_ok": {g.submission: g.status for g in grades if g.status != "ok"},
    }


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
    from teaching.grading import exports as export_formats
    from teaching.grading import history as history_module
    from teaching.grading import roster as rosters

    jobs = validate.positive_int("jobs", jobs, maximum=64)
    folder, out_csv = Path(submissions_dir), Path(out_csv)
    if not folder.is_dir():
        print(f"not a folder of submissions: {folder}", file=sys.stderr)
        return 2
    try:
        listed = exports if isinstance(exports, str | None) else ",".join(exports)
        formats = export_formats.parse_formats(listed, has_roster=roster is not None)
        class_roster = rosters.read_roster(roster) if roster is not None else None
        name_pattern = rosters.compile_pattern(pattern or "default")
        export_formats.check(formats, class_roster, visibility)
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
            _loud(
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
        named = assignment or rosters.set_from_name(display_name(p), name_pattern, known)
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
        join = rosters.join(
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
                print(history_module.record(target, before, owners), file=sys.stderr)
            except (OSError, UnicodeDecodeError) as e:
                print(f"history of {target} not kept: {e}", file=sys.stderr)
        summaries[s or "unknown"] = summary(rows, points)
        print(f"{len(rows)} submission(s) of {s or 'no known set'} -> {target}")
        print(_summary_text(summaries[s or "unknown"]), file=sys.stderr)
    _clear_stale(out_csv, log_dir, written, {g.log for g in grades if g.log}, sorted(solutions))
    try:
        make_dir(log_dir)
        write_new(log_dir / "summary.json", json.dumps(summaries, indent=1))
    except OSError as e:
        print(f"class summary not written: {e}", file=sys.stderr)
    for mark in (KEY_MARK, VERSION_MARK):
        hit = [g.submission for g in grades if mark in g.reason]
        if hit:
            _loud(f"{len(hit)} row(s) lost points marked {mark!r}: read their reason")
    if formats:
        try:
            for path in export_formats.write_all(
                formats, out_csv, grades, assignments, join, visibility=visibility
            ):
                print(f"export -> {path}")
        except (OSError, ValueError) as e:
            print(f"exports not written: {e}", file=sys.stderr)
            status = 1
    return status


KEY_MARK = "KEY DIFFERS FROM THE RELEASE:"
VERSION_MARK = "OLDER VERSION OF THE SET?"


def _loud(text: str) -> None:
    """A warning an instructor must not miss: marked, on its own lines."""
    print(f"\n!!! WARNING: {printable(safe_text(text))}\n", file=sys.stderr)


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


def _summary_text(s: dict) -> str:
    means = ", ".join(f"{q} {m:g}" for q, m in s["mean_per_question"].items() if m is not None)
    lines = [
        f"  class: {s['submissions']} submission(s), mean {s['mean_percent']}%; mean per "
        f"question: {means}"
    ]
    if s["timed_out"]:
        lines.append(
            "  timed out (whole or a cell): " + printable(safe_text(", ".join(s["timed_out"])))
        )
    return "\n".join(lines)


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
    from tqdm.auto import tqdm

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
        if setg.problem:
            print(f"[{name}] {setg.problem}", file=sys.stderr)
        elif setg.key is not None:
            released, where = keycheck.released_checks(name, exercises_dir, exercises_dir.parent)
            if released is None:
                _loud(f"[{name}] {where}: the key is not checked against what learners received")
                continue
            setg.key_problems = keycheck.key_vs_release(setg.assignment, setg.key, released)
            for q, problem in setg.key_problems.items():
                _loud(f"[{name}] {q}: {problem} (released: {where})")

    def graded(item) -> Grade:
        p, nb, problem, name, note = item
        if name is None:
            problem = "; ".join(t for t in (problem, note) if t)
            return Grade(
                display_name(p),
                status="unknown-assignment",
                reason=(problem + "; " if problem else "")
                + f"cannot tell which set ({', '.join(known)}): name the file after its set",
            )
        setg = sets[name]
        if nb is None:
            g = Grade(
                display_name(p),
                name,
                {q: 0.0 for q in setg.points},
                setg.points,
                "not-a-notebook",
                problem,
            )
        else:
            g = grade_one(
                p,
                nb,
                setg,
                timeout_seconds=timeout_seconds,
                cell_timeout_seconds=cell_timeout_seconds,
                threads=threads,
                log_dir=log_dir,
                zygote=zygote,
            )
        if note:
            g.reason = note + ("; " + g.reason if g.reason else "")
        lost = [q for q in setg.points if g.scores.get(q, 0) < setg.points[q]]
        flagged = [
            f"{KEY_MARK} {q}: {setg.key_problems[q]}" for q in lost if q in setg.key_problems
        ]
        if nb is not None:
            old = keycheck.missing_names(setg.assignment, nb)
            flagged += [
                f"{VERSION_MARK} {q}: the notebook never names {', '.join(old[q])} (made from an "
                "earlier version of the set, or the answer cell deleted)"
                for q in lost
                if q in old
            ]
        if flagged:
            g.reason = "; ".join(t for t in (g.reason, *flagged) if t)
        return g

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
                            f"{g.submission}: {_num(g.total)}/{_num(g.possible)} [{g.status}] "
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
