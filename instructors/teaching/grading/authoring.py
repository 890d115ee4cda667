"""Assign: build ``exercises/`` (student notebook + public checks) from ``solutions/``.

For each ``solutions/NN_slug.ipynb`` (format: :mod:`teaching.grading.spec`):

1. run the solution once, in a subprocess, and extract its answers and the known wrong values: the
   *answer key*, kept under ``build/grading/`` (never committed, never shipped), cached by a digest
   of the solution and of the ``course`` package (so it follows the calculators and the registry);
2. write ``exercises/NN_slug.ipynb``: the solution without its solution blocks, a first code cell
   that loads the checks, a ``grader.check("qN")`` cell after each question and
   ``grader.check_all()`` at the end; cell ids are derived from position and content, so the output
   is deterministic;
3. write ``exercises/checks/NN_slug.json``: forms, relations, hints and salted hashes (never
   values).

The solution must pass its own checks, or assign fails and says which.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import sys
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path

import nbformat

from course.selfcheck import coarse
from course.selfcheck.values import canonical, digest, kind_of
from teaching import hosted_links
from teaching.grading import check, extract, sandbox, spec

try:
    import fcntl
except ImportError:  # Windows
    fcntl = None

REPO = Path(__file__).resolve().parents[3]
SOLUTIONS_DIR = REPO / "solutions"
EXERCISES_DIR = REPO / "exercises"
BUILD_DIR = REPO / "build" / "grading"
KERNELSPEC = {"display_name": "Python 3 (ipykernel)", "language": "python", "name": "python3"}
INIT_SOURCE = (
    "# Run this cell first: it loads the checks for this exercise set.\n"
    "from course.selfcheck.answers import Grader\n\n"
    'grader = Grader("{name}")'
)


def solution_notebooks(solutions_dir: str | Path = SOLUTIONS_DIR) -> list[Path]:
    return sorted(Path(solutions_dir).glob("*.ipynb"))


def _source_digest(solution: Path) -> str:
    h = hashlib.sha256(solution.read_bytes())
    package = REPO / "course"
    for p in sorted(package.rglob("*")):
        if p.is_file() and p.suffix in (".py", ".json", ".csv") and "__pycache__" not in p.parts:
            h.update(str(p.relative_to(package)).encode() + b"\0" + p.read_bytes())
    return h.hexdigest()


def run_solution(
    assignment: spec.Assignment,
    probes: dict,
    *,
    sandboxed: bool,
    timeout_seconds: float = 600,
    cell_timeout_seconds: float = 300,
    zygote=None,
) -> dict:
    """Run a solution and return its key: answers by question, wrong values, cell statuses."""
    ext = extract.run_cells(
        assignment.run_cells,
        check.request_questions(assignment, probes),
        execution=extract.Execution(
            timeout_seconds=timeout_seconds,
            cell_timeout_seconds=cell_timeout_seconds,
            zygote=zygote,
            sandboxed=sandboxed,
        ),
        extras=check.wrong_extras(assignment),
        in_place=True,
    )
    broken = [c for c in ext.cells if c.get("status") != "ok"]
    if ext.problem or broken:
        detail = "; ".join(f"cell {c['index']}: {c.get('error', c['status'])}" for c in broken)
        raise RuntimeError(
            f"the solution {assignment.name} did not run cleanly: {ext.problem} {detail}\n"
            + ext.output[-2000:]
        )
    if changed := changed_later(ext):
        raise RuntimeError(
            f"the solution {assignment.name} changes an answer after its question (a name reused "
            "or rebound by a later cell? the key and the learner's check would disagree): "
            + "; ".join(changed)
        )
    key = {"answers": ext.answers, "extras": ext.extras, "probes": probes}
    results = check.check_all(assignment, ext.answers, ext.answers, ext.extras)
    failing = [f"{r.name}: {r.reason}" for r in results if r.score < r.points]
    if failing:
        raise RuntimeError(f"the solution {assignment.name} fails its own checks: {failing}")
    return key


def changed_later(ext: extract.Extraction) -> list[str]:
    """Answers and known-wrong values whose value at the end of the solution differs from the one
    right after their own question's answer cell: the key takes the end, the learner's check the
    cell (a later ``cfg = ...`` silently changed set 04's key so)."""
    changed = []
    for q, here in ext.in_place.items():
        end = {**ext.answers.get(q, {}), **ext.extras}
        for name, value in {**here.get("answers", {}), **here.get("extras", {})}.items():
            if json.dumps(value, sort_keys=True) != json.dumps(end.get(name), sort_keys=True):
                now, then = str(value)[:60], str(end.get(name))[:60]
                changed.append(f"{q} {name}: {now} after its cell, {then} at the end")
    return changed


def answer_keys(solutions, *, build_dir: str | Path = BUILD_DIR) -> tuple[dict, dict]:
    """Build-time keys (public probes) of several solutions: ``(keys, errors)`` by set name.

    A key still current (same digest of the solution and the ``course`` package) comes from the
    cache; the others are made by running their solutions in one warm sandbox factory where the
    platform has one (imports paid once), else each in a plain subprocess. Two processes that ask
    at once (two test workers, two terminals) make each key once: the second waits on the build
    folder's lock, then reads what the first cached.
    """
    keys: dict[str, dict] = {}
    errors: dict[str, str] = {}
    stale = _stale_keys(map(Path, solutions), Path(build_dir), keys)
    if not stale:
        return keys, errors
    with _keys_lock(Path(build_dir)):
        stale = _stale_keys([solution for solution, *_ in stale], Path(build_dir), keys)
        _make_keys(stale, keys, errors)
    return keys, errors


def _stale_keys(solutions, build_dir: Path, keys: dict) -> list[tuple]:
    """Put each current cached key into ``keys``; the ``(solution, assignment, digest, cache)``
    of the others."""
    stale = []
    for solution in solutions:
        assignment = spec.read(solution)
        digest_now = _source_digest(solution)
        cache = build_dir / f"{assignment.name}.key.json"
        if cache.is_file():
            cached = json.loads(cache.read_text())
            if cached.get("digest") == digest_now:
                keys[assignment.name] = cached
                continue
        stale.append((solution, assignment, digest_now, cache))
    return stale


@contextlib.contextmanager
def _keys_lock(build_dir: Path):
    """An exclusive lock on ``build_dir/.keys.lock`` while keys are made (none where the platform
    has no ``fcntl``: there a key may at worst be made twice)."""
    build_dir.mkdir(parents=True, exist_ok=True)
    if fcntl is None:
        yield
        return
    with open(build_dir / ".keys.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(lock, fcntl.LOCK_UN)


def _make_keys(stale: list[tuple], keys: dict, errors: dict) -> None:
    """Run the ``stale`` solutions for their keys, into ``keys`` and the cache (or ``errors``)."""
    if not stale:
        return
    with contextlib.ExitStack() as stack:
        threads = max(1, (os.cpu_count() or 1) // 2)  # as `make grade` (--jobs 2) runs them
        zygote = sandbox.start_factory([a for _, a, _, _ in stale], threads=threads)
        if zygote is not None:
            stack.callback(zygote.close)

        def one(item) -> None:
            _, assignment, digest_now, cache = item
            probes = check.make_probes(assignment, check.PUBLIC_SEED)
            try:
                key = run_solution(assignment, probes, sandboxed=zygote is not None, zygote=zygote)
            except RuntimeError as e:
                errors[assignment.name] = str(e)
                return
            key["digest"] = digest_now
            cache.parent.mkdir(parents=True, exist_ok=True)
            cache.write_text(json.dumps(key))
            keys[assignment.name] = key

        # two at a time, as `make grade` runs submissions: the factory forks a sandbox for each
        with ThreadPoolExecutor(max_workers=2 if zygote is not None else 1) as pool:
            list(pool.map(one, stale))


def answer_key(solution: str | Path, *, build_dir: str | Path = BUILD_DIR) -> dict:
    """The build-time key of one solution; raises RuntimeError when its solution fails."""
    keys, errors = answer_keys([solution], build_dir=build_dir)
    name = Path(solution).stem
    if name in errors:
        raise RuntimeError(errors[name])
    return keys[name]


def public_checks(assignment: spec.Assignment, key: dict, *, graded: bool = False) -> dict:
    """The learner's checks: forms, relations, hints and salted hashes, never a value.

    ``graded``: the checks of a graded release (:mod:`course.selfcheck.coarse`): each
    number gets a coarse range instead of a hash of its rounding, and only known wrong values are
    hashed, coarsely, where that cannot match the right answer.
    """
    questions = {}
    for q in assignment.questions:
        got = key["answers"][q.name]
        answers = [_answer_check(assignment, q, a, got, key["probes"], graded) for a in q.answers]
        checks = [{"expr": c.expr, "hint": c.hint} for c in q.checks if c.public]
        questions[q.name] = {
            "points": q.points,
            "hint": q.hint,
            "answers": answers,
            "wrong": _wrong_checks(assignment, q, key, graded),
            "checks": checks,
        }
    out = {"assignment": assignment.name, "questions": questions}
    if graded:
        out["mode"] = "graded"
    return out


def _answer_check(
    assignment: spec.Assignment, q: spec.Question, a: spec.Answer, got: dict, probes, graded: bool
) -> dict:
    """One answer's public check: a hash of its rounding (a coarse range when ``graded``), of its
    outputs on the probes for a function."""
    salt = f"{assignment.name}/{q.name}/{a.name}"
    entry = {
        "name": a.name,
        "expr": a.expr,
        "sig": a.sig,
        "hint": a.hint,
        "choices": [c.lower() for c in a.choices],
    }
    if a.is_function:
        outputs = [o["value"] for o in got[a.name]["calls"]]
        sig = a.sig if a.sig is not None else 4
        call = {"call": a.call, "probes": probes[q.name][a.name], "sig": sig}
        if graded:
            call["shapes"] = [coarse.shape_of(o, a.sig) for o in outputs]
        else:
            call["hash"] = [digest(canonical(outputs, sig), salt)]
        entry.update(kind="function", public=not graded, call=call)
        return entry
    value = got[a.name].get("value")
    kind = a.kind or kind_of(value)
    public = a.shows_right_or_wrong(kind)
    entry.update(kind=kind, public=public, expect=a.expect)
    if kind == "dict":
        entry["keys"] = sorted(value)
    if graded:
        entry["public"] = False
        if public and kind != "str":  # a string's range is its form: the grader checks it
            entry["shape"] = coarse.shape_of(value, a.sig)
    elif public and kind == "dict":
        entry["hash"] = {
            k: [digest(canonical(v, a.sig_for(v)), f"{salt}[{k}]")] for k, v in value.items()
        }
    elif public:
        entry["hash"] = [digest(canonical(value, a.sig_for(value)), salt)]
    return entry


def _wrong_checks(assignment: spec.Assignment, q: spec.Question, key: dict, graded: bool) -> list:
    """The question's known wrong values with their hints: hashed, or when ``graded`` a bucket of
    100 values around each (left out where it would hold the right answer)."""
    wrong = []
    for i, w in enumerate(q.wrong):
        value = key["extras"].get(f"{q.name}/wrong/{i}")
        target = next(a for a in q.answers if a.name == w.answer)
        sig = target.sig_for(value)
        entry = {"answer": w.answer, "hint": w.hint}
        if graded:  # a bucket of 100 values around the wrong one, never the right one
            right = key["answers"][q.name].get(w.answer, {}).get("value")
            wrong_salt = salt_of(assignment, q, target) + "/wrong"
            found = coarse.wrong_check(value, right, target.sig_for, wrong_salt)
            if found is not None:  # else it is too near the right answer to hint at
                wrong.append({**entry, "bucket": found})
            continue
        entry["hash"] = [digest(canonical(value, sig), salt_of(assignment, q, target) + "/wrong")]
        wrong.append(entry)
    return wrong


def salt_of(assignment: spec.Assignment, q: spec.Question, a: spec.Answer) -> str:
    return f"{assignment.name}/{q.name}/{a.name}"


def student_notebook(assignment: spec.Assignment) -> nbformat.NotebookNode:
    """The learner's notebook, deterministic."""
    cells = []
    last_answer = {}
    for i, sc in enumerate(assignment.cells):
        if sc.answer:
            last_answer[sc.question] = i
    init_done = False
    for i, sc in enumerate(assignment.cells):
        cell = sc.cell
        cell.metadata = {k: v for k, v in cell.metadata.items() if k == "tags"}
        cell.metadata["course"] = {"question": sc.question or ""}
        if sc.answer:
            cell.metadata["course"]["answer"] = True
        cells.append(cell)
        if not init_done and cell.cell_type == "markdown":
            init = nbformat.v4.new_code_cell(INIT_SOURCE.format(name=assignment.name))
            init.metadata["course"] = {"question": ""}
            cells.append(init)
            init_done = True
        if sc.question and last_answer.get(sc.question) == i:
            chk = nbformat.v4.new_code_cell(f'grader.check("{sc.question}")')
            chk.metadata["course"] = {"question": sc.question}
            cells.append(chk)
    final = nbformat.v4.new_code_cell("grader.check_all()")
    final.metadata["course"] = {"question": ""}
    cells.append(final)
    nb = nbformat.v4.new_notebook(cells=cells)
    # the Colab/Kaggle links under the title and the hosted install cell before the checks' cell
    repository, version = hosted_links.project(REPO)
    hosted_links.with_hosted_cells(nb, f"exercises/{assignment.name}.ipynb", repository, version)
    for cell in nb.cells:
        if cell.cell_type == "code" and cell.source.startswith(hosted_links.INSTALL_MARK):
            cell.metadata = {"course": {"question": ""}}
    nb.metadata = {
        "kernelspec": dict(KERNELSPEC),
        "language_info": {"name": "python"},
        "course": {"assignment": assignment.name},
    }
    for i, cell in enumerate(nb.cells):
        h = hashlib.sha256(f"{i}\0{cell.cell_type}\0{cell.source}".encode()).hexdigest()
        cell["id"] = f"c{i:02d}-{h[:8]}"
        if cell.cell_type == "code":
            cell["outputs"] = []
            cell["execution_count"] = None
    return nb


@dataclass(frozen=True)
class Assigned:
    name: str
    student_notebook: Path
    checks: Path


def assign(
    solution: str | Path,
    *,
    exercises_dir: str | Path = EXERCISES_DIR,
    build_dir: str | Path = BUILD_DIR,
    key: dict | None = None,
) -> Assigned:
    """Build one exercise set (see the module docstring)."""
    solution = Path(solution)
    assignment = spec.read(solution)
    key = key if key is not None else answer_key(solution, build_dir=build_dir)
    out = Path(exercises_dir)
    (out / "checks").mkdir(parents=True, exist_ok=True)
    nb_path = out / f"{assignment.name}.ipynb"
    nbformat.write(student_notebook(assignment), nb_path)
    checks_path = out / "checks" / f"{assignment.name}.json"
    checks_path.write_text(
        json.dumps(public_checks(assignment, key), indent=1, sort_keys=True) + "\n"
    )
    return Assigned(assignment.name, nb_path, checks_path)


def assign_all(
    notebooks=None, *, exercises_dir: str | Path = EXERCISES_DIR, build_dir: str | Path = BUILD_DIR
) -> int:
    """``python -m teaching assign``: build every exercise set. Returns an exit status."""
    paths = [Path(p) for p in notebooks] if notebooks else solution_notebooks()
    if not paths:
        print("no solution notebooks found in solutions/", file=sys.stderr)
        return 1
    failed = 0
    try:
        keys, errors = answer_keys(paths, build_dir=build_dir)
    except spec.FormatError as e:
        print(f"[FAIL] {e}", file=sys.stderr)
        return 1
    for path in paths:
        if path.stem in errors:
            failed += 1
            print(f"[FAIL] {path}: {errors[path.stem]}", file=sys.stderr)
            continue
        try:
            done = assign(
                path, exercises_dir=exercises_dir, build_dir=build_dir, key=keys[path.stem]
            )
        except (OSError, RuntimeError, spec.FormatError) as e:
            failed += 1
            print(f"[FAIL] {path}: {e}", file=sys.stderr)
            continue
        print(f"[OK] {path} -> {done.student_notebook}, {done.checks}")
    return 1 if failed else 0
