"""One submission: read it safely, tell which set it is, and grade it against a key.

The key comes from running the set's solution in the sandbox with this run's secret probes
(:func:`prepare_set`); :func:`grade_file` runs the submission in its own sandbox
(:mod:`teaching.grading.extract`), checks the plain answers in this trusted process
(:mod:`teaching.grading.check`) and keeps its logs. The class command
(:mod:`teaching.grading.gradebook`) and the external autograders
(:mod:`teaching.grading.autograder`) both grade through here.
"""

from __future__ import annotations

import json
import os
import re
import secrets
import stat
import sys
from dataclasses import dataclass, field
from pathlib import Path

import nbformat

from teaching.grading import authoring, check, extract, keycheck, spec
from teaching.grading.files import (
    capped,
    display_name,
    log_name,
    loud,
    make_dir,
    safe_text,
    write_new,
)
from teaching.grading.grades import NOT_GRADED, Grade, not_graded

MAX_NOTEBOOK_BYTES = 256 * 2**20  # read at most this much of a file
MAX_CONTAINERS = 500_000  # JSON objects and lists outside strings: a bomb is refused before parsing
MAX_CODE_BYTES = 16 * 2**20  # of sources, once outputs are stripped
_STRING = re.compile(rb'"[^"\\]*(?:\\.[^"\\]*)*"')


MAX_NAME_CHARS = 120  # a set name quoted from a notebook's metadata
LOG_FILES = ("output.txt", "answers.json", "checks.json", "executed.ipynb")
KEY_MARK = "KEY DIFFERS FROM THE RELEASE:"
VERSION_MARK = "OLDER VERSION OF THE SET?"


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
            named.append(capped(meta[field_], MAX_NAME_CHARS))
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


def prepare_set(assignment: spec.Assignment, *, execution: extract.Execution) -> SetGrader:
    """Run a solution in the sandbox with this run's secret probes: its answers are the key (with
    at least 600 s for the run and 300 s a cell, whatever the submissions get)."""
    probes = check.make_probes(assignment, secrets.token_hex(16))
    try:
        key = authoring.run_solution(
            assignment,
            probes,
            sandboxed=True,
            zygote=execution.zygote,
            timeout_seconds=max(execution.timeout_seconds, 600),
            cell_timeout_seconds=max(execution.cell_timeout_seconds, 300),
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
    execution: extract.Execution,
    log_dir: Path,
) -> Grade:
    grade = Grade(submission=display_name(path), assignment=setg.assignment.name)
    grade.points = setg.points
    grade.scores = {q: 0.0 for q in grade.points}
    if setg.key is None:  # no key: nothing to grade against, so no score (never 0)
        return not_graded(grade, setg.problem)
    log = log_dir / log_name(path)
    ext = extract.run_cells(
        extract.notebook_cells(nb),
        check.request_questions(setg.assignment, setg.key["probes"]),
        execution=execution,
        log_dir=None,
    )
    grade.seconds = ext.seconds
    grade.protections_off = ext.protections_off
    if ext.grader_problem:  # the sandbox never ran it: the learner's work was not looked at
        return not_graded(grade, ext.grader_problem)
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
        f"{execution.cell_timeout_seconds:g} s"
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


def check_key(name: str, setg: SetGrader, exercises_dir: Path) -> None:
    """Warn about the key before anyone is graded: a solution that failed here, or a key that
    differs from the checks learners received or from the key the last release recorded
    (:func:`keycheck.key_vs_recorded`; each such question is remembered in
    ``setg.key_problems``, so that rows losing points there are marked)."""
    if setg.problem:
        loud(
            f"[{name}] {setg.problem}: no submission of this set gets a score (each row says "
            "NOT GRADED, no export carries one); fix the grading machine and grade again"
        )
    elif setg.key is not None:
        released, where = keycheck.released_checks(name, exercises_dir, exercises_dir.parent)
        if released is None:
            loud(f"[{name}] {where}: the key is not checked against what learners received")
        else:
            setg.key_problems = keycheck.key_vs_release(setg.assignment, setg.key, released)
            for q, problem in setg.key_problems.items():
                loud(f"[{name}] {q}: {problem} (released: {where})")
        changed, release = keycheck.key_vs_recorded(setg.assignment, setg.key, authoring.BUILD_DIR)
        for q, problem in changed.items():
            loud(f"[{name}] {q}: {problem}")
            setg.key_problems.setdefault(q, problem)
        if release.startswith("no release"):
            print(
                f"[{name}] {release}: the key is compared with the committed checks only",
                file=sys.stderr,
            )


def grade_file(
    path: Path,
    nb,
    problem: str,
    setg: SetGrader | None,
    note: str,
    *,
    known: list[str],
    execution: extract.Execution,
    log_dir: Path,
) -> Grade:
    """One file's row: not a notebook, a set nobody can tell (``setg`` None), or graded; rows that
    lose points where the key differs from the release, or whose notebook is of an older version
    of the set, say so."""
    if setg is None:
        problem = "; ".join(t for t in (problem, note) if t)
        return Grade(
            display_name(path),
            status="unknown-assignment",
            reason=(problem + "; " if problem else "")
            + f"cannot tell which set ({', '.join(known)}): name the file after its set",
        )
    name = setg.assignment.name
    if nb is None:
        g = Grade(
            display_name(path),
            name,
            {q: 0.0 for q in setg.points},
            setg.points,
            "not-a-notebook",
            problem,
        )
    else:
        g = grade_one(
            path,
            nb,
            setg,
            execution=execution,
            log_dir=log_dir,
        )
    if note:
        g.reason = note + ("; " + g.reason if g.reason else "")
    if g.status == NOT_GRADED:
        return g
    lost = [q for q in setg.points if g.scores.get(q, 0) < setg.points[q]]
    flagged = [f"{KEY_MARK} {q}: {setg.key_problems[q]}" for q in lost if q in setg.key_problems]
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
