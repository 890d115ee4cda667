"""Gradebook: ``python -m course grade SUBMISSIONS --out grades.csv``.

For each exercise set found in the folder: run the solution once in the sandbox with this run's
secret probe seed (its answers are the key), then each submission in its own sandbox
(:mod:`course.publishing.grading.extract`), then check the plain answers in this trusted process
(:mod:`course.publishing.grading.check`). Every file gets a row with a score and a reason; the run goes on.

Which set a file is: ``--assignment``, else the set named in its file name, else (fallback) the
notebook's metadata, else the only set there is; a metadata that disagrees is reported. CSV files
and the log folder inside the submissions folder are never graded. A folder that mixes sets writes
one CSV per set (``grades-00_units_and_memory.csv``, ...).

CSV columns: ``submission, assignment, q1 [2 pts], ..., total, possible, percent, status, reason,
protections_off, seconds``; ``reason`` names each failing check per question. The log folder
(``<out>_logs/<submission>/``) keeps the executed notebook, the extracted answers and the check results.
"""

from __future__ import annotations

import contextlib
import csv
import json
import os
import secrets
import sys
import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path

import nbformat

from course.facts import validate
from course.publishing.grading import authoring, check, extract, sandbox, spec

MAX_NOTEBOOK_BYTES = 50 * 2**20


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

    @property
    def total(self) -> float:
        return sum(self.scores.values())

    @property
    def possible(self) -> float:
        return sum(self.points.values())


def read_submission(path: Path) -> tuple[nbformat.NotebookNode | None, str]:
    """The notebook in ``path``, or None and why it is not one."""
    try:
        with path.open("rb") as f:
            raw = f.read(MAX_NOTEBOOK_BYTES + 1)
        if len(raw) > MAX_NOTEBOOK_BYTES:
            return None, f"file larger than {MAX_NOTEBOOK_BYTES // 2**20} MB"
        data = json.loads(raw.decode("utf-8"))
    except (UnicodeDecodeError, json.JSONDecodeError) as e:
        return None, f"not JSON ({type(e).__name__})"
    except (OSError, RecursionError) as e:
        return None, f"cannot read: {e}"
    if not isinstance(data, dict) or "cells" not in data or "nbformat" not in data:
        return None, "JSON but not a notebook (no 'cells'/'nbformat')"
    try:
        nb = nbformat.from_dict(data)
        nb = nbformat.reads(nbformat.writes(nb), as_version=4)
        nbformat.validate(nb)
    except Exception as e:  # nbformat raises many kinds for malformed notebooks
        return None, f"invalid notebook ({type(e).__name__}: {str(e)[:160]})"
    return nb, ""


def _metadata_set(nb) -> str | None:
    if nb is None:
        return None
    for key, field_ in (("course", "assignment"), ("otter", "assignment_name")):
        meta = nb.metadata.get(key)
        if isinstance(meta, dict) and isinstance(meta.get(field_), str):
            return meta[field_]
    return None


def identify(path: Path, nb, known: list[str], forced: str | None) -> tuple[str | None, str]:
    """(set, note): ``--assignment``, file name, metadata (fallback), the only set."""
    meta = _metadata_set(nb)
    by_name = [k for k in known if k in path.name]
    name = forced or (max(by_name, key=len) if by_name else None)
    if name is None and meta in known:
        return meta, f"set taken from the notebook's metadata ({meta}): name files after their set"
    if name is None and len(known) == 1:
        name = known[0]
    note = ""
    if name and meta and meta != name:
        note = f"the notebook's metadata says {meta}; graded as {name}"
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
            cell["outputs"].append(nbformat.v4.new_output("stream", name="stdout",
                                                          text=str(record["output"])))  # fmt: skip
        if record.get("status") != "ok":
            cell["outputs"].append(nbformat.v4.new_output(
                "error", ename=record.get("status", "error"),
                evalue=str(record.get("error", "")), traceback=[]))  # fmt: skip
    return nb


@dataclass
class SetGrader:
    """Everything needed to grade submissions of one set in this run."""

    assignment: spec.Assignment
    key: dict | None
    problem: str = ""

    @property
    def points(self) -> dict[str, float]:
        return {q.name: q.points for q in self.assignment.questions}


def prepare_set(assignment: spec.Assignment, *, timeout_s: float, cell_timeout_s: float,
                zygote=None) -> SetGrader:  # fmt: skip
    """Run a solution in the sandbox with this run's secret probes: its answers are the key."""
    probes = check.make_probes(assignment, secrets.token_hex(16))
    try:
        key = authoring.run_solution(assignment, probes, sandboxed=True, zygote=zygote,
                                     timeout_s=max(timeout_s, 600), cell_timeout_s=max(cell_timeout_s, 300))  # fmt: skip
    except RuntimeError as e:
        return SetGrader(assignment, None, f"the solution failed on this machine: {str(e)[:300]}")
    return SetGrader(assignment, key)


def grade_one(path: Path, nb, setg: SetGrader, *, timeout_s: float, cell_timeout_s: float,
              threads: int, log_dir: Path, zygote=None) -> Grade:  # fmt: skip
    grade = Grade(submission=path.name, assignment=setg.assignment.name)
    grade.points = setg.points
    grade.scores = {q: 0.0 for q in grade.points}
    if setg.key is None:
        grade.status, grade.reason = "error", setg.problem
        return grade
    log = log_dir / path.name
    ext = extract.run_cells(
        extract.notebook_cells(nb),
        check.request_questions(setg.assignment, setg.key["probes"]),
        cell_timeout_s=cell_timeout_s,
        timeout_s=timeout_s,
        threads=threads,
        log_dir=log,
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
    slow = [c for c in ext.cells if c.get("status") == "timeout"]
    notes = [f"cell {c['index'] + 1} ({c.get('question') or 'no question'}) timed out after "
             f"{cell_timeout_s:g} s" for c in slow]  # fmt: skip
    if ext.timed_out:
        grade.status = "timeout"
    elif ext.problem:
        grade.status = "crashed" if "ended early" in ext.problem else "error"
    if ext.problem:
        notes.append(ext.problem)
    grade.reason = "; ".join(notes + reasons)
    (log / "answers.json").write_text(json.dumps(ext.answers, indent=1))
    (log / "checks.json").write_text(json.dumps(
        [{"question": r.name, "score": r.score, "points": r.points, "failures": r.failures,
          "hints": r.hints} for r in results], indent=1))  # fmt: skip
    nbformat.write(_executed(nb, ext), log / "executed.ipynb")
    return grade


def _num(x: float) -> str:
    return f"{x:g}"


def write_csv(out_csv: Path, grades: list[Grade], points: dict[str, float]) -> None:
    out_csv.parent.mkdir(parents=True, exist_ok=True)
    tmp = out_csv.with_name(out_csv.name + ".tmp")
    with tmp.open("w", newline="") as f:
        writer = csv.writer(f)
        writer.writerow(["submission", "assignment", *(f"{q} [{_num(p)} pts]" for q, p in points.items()),
                         "total", "possible", "percent", "status", "reason", "protections_off",
                         "seconds"])  # fmt: skip
        for g in grades:
            percent = 100 * g.total / g.possible if g.possible else 0.0
            writer.writerow([g.submission, g.assignment, *(_num(g.scores.get(q, 0)) for q in points),
                             _num(g.total), _num(g.possible), f"{percent:.1f}", g.status, g.reason,
                             " ".join(g.protections_off), f"{g.seconds:.1f}"])  # fmt: skip
    tmp.replace(out_csv)


def grade_folder(
    submissions_dir: str | Path,
    out_csv: str | Path,
    *,
    timeout_s: float = 300,
    cell_timeout_s: float = 60,
    assignment: str | None = None,
    jobs: int = 1,
    solutions_dir: str | Path = authoring.SOLUTIONS_DIR,
    log_dir: str | Path | None = None,
) -> int:
    """Grade every file in a folder (see the module docstring). Returns 0 when each got a row."""
    jobs = validate.positive_int("jobs", jobs, maximum=64)
    folder, out_csv = Path(submissions_dir), Path(out_csv)
    if not folder.is_dir():
        print(f"not a folder of submissions: {folder}", file=sys.stderr)
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
    print(sandbox.describe(), file=sys.stderr)
    skip = {out_csv.resolve(), log_dir.resolve()}
    files = []
    for p in sorted(folder.iterdir(), key=lambda p: p.name):
        if p.resolve() in skip or p.suffix == ".csv" or p.name.startswith(".") or not p.is_file():
            print(f"not graded (not a submission): {p.name}", file=sys.stderr)
            continue
        files.append(p)

    planned = []
    for p in files:
        nb, problem = read_submission(p)
        name, note = identify(p, nb, known, assignment)
        planned.append((p, nb, problem, name, note))
    threads = max(1, (os.cpu_count() or 1) // jobs)
    assignments = {n: spec.read(solutions[n]) for n in sorted({n for *_, n, _ in planned if n})}
    with contextlib.ExitStack() as stack:
        zygote = sandbox.start_factory(list(assignments.values()), threads) if assignments else None
        if zygote is not None:
            stack.callback(zygote.close)
        grades = _grade_all(
            planned,
            assignments,
            known,
            zygote=zygote,
            jobs=jobs,
            threads=threads,
            timeout_s=timeout_s,
            cell_timeout_s=cell_timeout_s,
            log_dir=log_dir,
        )
    by_set: dict[str, list[Grade]] = {}
    for g in grades:
        by_set.setdefault(g.assignment, []).append(g)
    for s, rows in by_set.items():
        target = out_csv
        if len(by_set) > 1:
            target = out_csv.with_name(f"{out_csv.stem}-{s or 'unknown'}.csv")
        points = {q.name: q.points for q in assignments[s].questions} if s in assignments else {}
        write_csv(target, rows, points)
        print(f"{len(rows)} submission(s) of {s or 'no known set'} -> {target}")
    return 0


def _grade_all(planned, assignments, known, *, zygote, jobs, threads, timeout_s, cell_timeout_s,
               log_dir) -> list[Grade]:  # fmt: skip
    from tqdm.auto import tqdm

    sets: dict[str, SetGrader] = {}
    for name, assignment in assignments.items():
        sets[name] = prepare_set(
            assignment, timeout_s=timeout_s, cell_timeout_s=cell_timeout_s, zygote=zygote
        )
        if sets[name].problem:
            print(f"[{name}] {sets[name].problem}", file=sys.stderr)

    def one(item) -> Grade:
        p, nb, problem, name, note = item
        if name is None:
            return Grade(p.name, status="unknown-assignment", reason=(problem + "; " if problem else "")
                         + f"cannot tell which set ({', '.join(known)}): name the file after its set")  # fmt: skip
        setg = sets[name]
        if nb is None:
            g = Grade(p.name, name, {q: 0.0 for q in setg.points}, setg.points,
                      "not-a-notebook", problem)  # fmt: skip
        else:
            g = grade_one(p, nb, setg, timeout_s=timeout_s, cell_timeout_s=cell_timeout_s,
                          threads=threads, log_dir=log_dir, zygote=zygote)  # fmt: skip
        if note:
            g.reason = note + ("; " + g.reason if g.reason else "")
        return g

    grades: list[Grade] = []
    bar = tqdm(total=len(planned), desc="grading", unit="submission")
    start = time.monotonic()
    with ThreadPoolExecutor(max_workers=jobs) as pool:
        for g in pool.map(one, planned):
            grades.append(g)
            bar.update(1)
            bar.write(
                f"{g.submission}: {_num(g.total)}/{_num(g.possible)} [{g.status}] {g.reason}"[:400]
            )
    bar.close()
    print(f"graded {len(grades)} file(s) in {time.monotonic() - start:.0f} s", file=sys.stderr)
    return grades
