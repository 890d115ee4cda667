"""Exercises: build them from ``solutions/`` and grade folders of submissions (otter-grader).

Instructors use it through the command line (``python -m course assign``, ``python -m course grade
DIR --out grades.csv``); the tests in ``tests/test_grading.py`` and ``tests/test_exercises.py`` use
the functions directly. Layer 5 (entry-point helper): it runs ``otter`` in subprocesses.

Building (``assign_all``)
    ``otter assign`` turns each ``solutions/NN_slug.ipynb`` (otter's raw-cell format) into a student
    notebook, copied to ``exercises/NN_slug.ipynb``, and an autograder zip, kept as
    ``build/autograder/NN_slug.zip`` (built, never committed). Both are made deterministic (cell ids
    derived from position and content, fixed zip timestamps), so a test can regenerate them and
    compare with what is committed.

Grading (``grade_folder``)
    Every file in the folder is one submission (dotfiles and sub-folders are skipped). Which
    assignment it belongs to comes from otter's metadata in the notebook
    (``metadata.otter.assignment_name``, written by ``otter assign``); failing that, from the file
    name, which must contain the assignment's name (``00_units_and_memory-ada.ipynb``); failing
    that, when only one assignment exists, that one. Each submission is graded by ``otter run``
    (hidden tests included) in its own subprocess, working directory and ``HOME``, against copies of
    the submission and the zip, with a hard timeout after which the whole process tree is killed.
    Its output is captured, capped and written to a log file. A submission that raises, loops,
    prints megabytes, exits, deletes files or is not a notebook at all gets a row with a score
    (0 for whatever did not run) and a reason; the run goes on.

    This is not a security sandbox: a submission runs with the grader's user rights. Grade
    untrusted work as an unprivileged user or inside a container.
"""

from __future__ import annotations

import contextlib
import csv
import hashlib
import json
import os
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time
import uuid
import zipfile
from collections import deque
from collections.abc import Iterable, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path

import nbformat

from course import validate

REPO = Path(__file__).resolve().parent.parent
SOLUTIONS_DIR = REPO / "solutions"
EXERCISES_DIR = REPO / "exercises"
AUTOGRADER_DIR = REPO / "build" / "autograder"

OUTPUT_HEAD_BYTES = 8 * 1024  # kept from the start of a grading run's output
OUTPUT_TAIL_BYTES = 32 * 1024  # kept from its end; everything in between is dropped
_ZIP_DATE = (1980, 1, 1, 0, 0, 0)  # fixed timestamp: the same solution gives the same zip bytes
_TOKEN_VAR = "COURSE_GRADING_TOKEN"  # marks every process a grading run starts, to kill leftovers


# ---------------------------------------------------------------------------------------------
# Building: otter assign
# ---------------------------------------------------------------------------------------------


def _otter(*args: str, cwd: Path, timeout_s: float = 600) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "otter", *args],
        cwd=cwd,
        capture_output=True,
        text=True,
        timeout=timeout_s,
    )


def normalise_student_notebook(nb: nbformat.NotebookNode) -> nbformat.NotebookNode:
    """Make otter's student notebook deterministic: cell ids from position and content, no outputs.

    ``otter assign`` gives the cells it adds (init, check) fresh random ids on every run, and
    copies the solution's ``language_info`` (with the Python version it last ran on). Otter's
    "Initialize Otter" cell goes below the title, so a learner opens the notebook on its title.
    """
    cells = nb.cells
    if (
        len(cells) > 1
        and cells[0].cell_type == "code"
        and "otter.Notebook(" in cells[0].source
        and cells[1].cell_type == "markdown"
        and cells[1].source.lstrip().startswith("# ")
    ):
        cells[0], cells[1] = cells[1], cells[0]
    nb.metadata["language_info"] = {
        "name": nb.metadata.get("language_info", {}).get("name", "python")
    }
    for i, cell in enumerate(nb.cells):
        digest = hashlib.sha256(f"{i}\0{cell.cell_type}\0{cell.source}".encode()).hexdigest()
        cell["id"] = f"c{i:02d}-{digest[:8]}"
        if cell.cell_type == "code":
            cell["outputs"] = []
            cell["execution_count"] = None
    return nb


def _deterministic_zip(src: Path, dest: Path) -> None:
    """Copy a zip with its members sorted and their timestamps fixed."""
    with zipfile.ZipFile(src) as zin, zipfile.ZipFile(dest, "w", zipfile.ZIP_DEFLATED) as zout:
        for name in sorted(zin.namelist()):
            info = zipfile.ZipInfo(name, date_time=_ZIP_DATE)
            info.compress_type = zipfile.ZIP_DEFLATED
            info.external_attr = zin.getinfo(name).external_attr
            zout.writestr(info, zin.read(name))


def _solution_digest(solution: Path) -> str:
    return hashlib.sha256(solution.read_bytes()).hexdigest()


@dataclass(frozen=True)
class Assigned:
    """What ``assign`` produced for one solution notebook."""

    name: str
    student_notebook: Path
    autograder_zip: Path


def assign(
    solution: str | Path,
    *,
    exercises_dir: str | Path | None = EXERCISES_DIR,
    autograder_dir: str | Path = AUTOGRADER_DIR,
    run_tests: bool = True,
) -> Assigned:
    """Run ``otter assign`` on one solution notebook.

    Writes the student notebook to ``exercises_dir/<name>.ipynb`` (skipped when ``exercises_dir`` is
    None) and the autograder zip to ``autograder_dir/<name>.zip``, both deterministic. With
    ``run_tests`` otter also checks that the solutions pass their own tests. Raises RuntimeError
    with otter's output when otter fails.
    """
    solution = Path(solution).resolve()
    if not solution.is_file():
        raise FileNotFoundError(f"solution notebook not found: {solution}")
    name = solution.stem
    autograder_dir = Path(autograder_dir)
    autograder_dir.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(prefix=f"assign-{name}-") as tmp:
        out = Path(tmp) / "out"
        args = ["assign", *([] if run_tests else ["--no-run-tests"]), str(solution), str(out)]
        proc = _otter(*args, cwd=Path(tmp))
        zips = sorted((out / "autograder").glob("*.zip"))
        student = out / "student" / f"{name}.ipynb"
        if proc.returncode != 0 or not zips or not student.is_file():
            tail = (proc.stdout + proc.stderr)[-4000:]
            raise RuntimeError(
                f"otter assign failed for {solution.name} (exit {proc.returncode}; does its "
                f"ASSIGNMENT CONFIG say `generate: true`?):\n{tail}"
            )
        zip_path = autograder_dir / f"{name}.zip"
        _deterministic_zip(zips[0], zip_path)
        (autograder_dir / f"{name}.sha256").write_text(_solution_digest(solution) + "\n")
        target = None
        if exercises_dir is not None:
            nb = normalise_student_notebook(nbformat.read(student, as_version=4))
            target = Path(exercises_dir) / f"{name}.ipynb"
            target.parent.mkdir(parents=True, exist_ok=True)
            nbformat.write(nb, target)
    return Assigned(name=name, student_notebook=target, autograder_zip=zip_path)


def solution_notebooks(solutions_dir: str | Path = SOLUTIONS_DIR) -> list[Path]:
    """All solution notebooks, sorted by name."""
    return sorted(Path(solutions_dir).glob("*.ipynb"))


def assign_all(
    notebooks: Sequence[str] | None = None,
    *,
    exercises_dir: str | Path = EXERCISES_DIR,
    autograder_dir: str | Path = AUTOGRADER_DIR,
    run_tests: bool = True,
) -> int:
    """``python -m course assign``: build exercises/ and the autograder zips. Returns an exit status."""
    paths = [Path(p) for p in notebooks] if notebooks else solution_notebooks()
    if not paths:
        print("no solution notebooks found in solutions/", file=sys.stderr)
        return 1
    failed = 0
    for path in paths:
        try:
            done = assign(
                path,
                exercises_dir=exercises_dir,
                autograder_dir=autograder_dir,
                run_tests=run_tests,
            )
        except (OSError, RuntimeError, subprocess.TimeoutExpired) as e:
            failed += 1
            print(f"[FAIL] {path}: {e}", file=sys.stderr)
            continue
        print(f"[OK] {path} -> {done.student_notebook}, {done.autograder_zip}")
    return 1 if failed else 0


def ensure_autograder(
    name: str,
    *,
    solutions_dir: str | Path = SOLUTIONS_DIR,
    autograder_dir: str | Path = AUTOGRADER_DIR,
) -> Path:
    """The autograder zip of assignment ``name``, (re)built when missing or older than its solution.

    Builds the zip only (the committed exercises/ notebook is left alone). When there is no
    solution notebook, an existing zip is used as it is.
    """
    autograder_dir = Path(autograder_dir)
    zip_path = autograder_dir / f"{name}.zip"
    solution = Path(solutions_dir) / f"{name}.ipynb"
    if not solution.is_file():
        if zip_path.is_file():
            return zip_path
        raise FileNotFoundError(f"no solution notebook and no autograder zip for {name!r}")
    stamp = autograder_dir / f"{name}.sha256"
    fresh = (
        zip_path.is_file()
        and stamp.is_file()
        and stamp.read_text().strip() == _solution_digest(solution)
    )
    if not fresh:
        assign(solution, exercises_dir=None, autograder_dir=autograder_dir, run_tests=False)
    return zip_path


@dataclass(frozen=True)
class Question:
    name: str
    possible: float


def zip_questions(zip_path: str | Path) -> list[Question]:
    """The questions an autograder zip grades, in order, with their points (hidden tests included)."""
    from otter.test_files.ok_test import OKTestFile

    questions = []
    with tempfile.TemporaryDirectory() as tmp, zipfile.ZipFile(zip_path) as zf:
        names = sorted(
            (n for n in zf.namelist() if re.fullmatch(r"tests/[^/]+\.py", n)),
            key=_natural_key,
        )
        for n in names:
            path = Path(zf.extract(n, tmp))
            test = OKTestFile.from_file(str(path))
            questions.append(Question(name=test.name, possible=float(test.possible)))
    return questions


def _natural_key(text: str) -> list:
    return [int(t) if t.isdigit() else t for t in re.split(r"(\d+)", text)]


# ---------------------------------------------------------------------------------------------
# Grading: otter run, one subprocess per submission
# ---------------------------------------------------------------------------------------------


@dataclass
class Grade:
    """One row of the gradebook."""

    submission: str
    assignment: str = ""
    scores: dict[str, float] = field(default_factory=dict)  # question -> points earned
    possible: float = 0.0
    status: str = "ok"  # ok | error | timeout | not-a-notebook | unknown-assignment
    reason: str = ""
    seconds: float = 0.0

    @property
    def total(self) -> float:
        return sum(self.scores.values())


class _CappedReader(threading.Thread):
    """Drain a pipe, keeping the first and last bytes of it and counting the rest."""

    def __init__(self, stream, head: int = OUTPUT_HEAD_BYTES, tail: int = OUTPUT_TAIL_BYTES):
        super().__init__(daemon=True)
        self.stream, self.head_max, self.tail_max = stream, head, tail
        self.head = bytearray()
        self.tail: deque[bytes] = deque()
        self.tail_len = 0
        self.total = 0

    def run(self) -> None:
        try:
            while chunk := self.stream.read1(65536):
                self.total += len(chunk)
                room = self.head_max - len(self.head)
                if room > 0:
                    self.head += chunk[:room]
                    chunk = chunk[room:]
                if chunk:
                    self.tail.append(chunk)
                    self.tail_len += len(chunk)
                    while self.tail_len - len(self.tail[0]) >= self.tail_max:
                        self.tail_len -= len(self.tail.popleft())
        except (OSError, ValueError):
            pass

    def text(self) -> str:
        tail = b"".join(self.tail)[-self.tail_max :]
        dropped = self.total - len(self.head) - len(tail)
        middle = f"\n[... {dropped:,} bytes of output dropped ...]\n" if dropped > 0 else ""
        return bytes(self.head).decode(errors="replace") + middle + tail.decode(errors="replace")


def _kill_tree(root_pid: int, token: str) -> None:
    """Kill a grading run: its process group, its descendants, and anything carrying its token.

    Jupyter starts kernels in a session of their own, so killing the process group alone would
    leave a looping kernel behind; a submission may also start daemons of its own.
    """
    import psutil

    victims: dict[int, psutil.Process] = {}
    try:
        root = psutil.Process(root_pid)
        victims[root.pid] = root
        victims.update({p.pid: p for p in root.children(recursive=True)})
    except psutil.Error:
        pass
    for proc in psutil.process_iter():
        try:
            if proc.pid != os.getpid() and proc.environ().get(_TOKEN_VAR) == token:
                victims[proc.pid] = proc
        except psutil.Error:
            continue
    with contextlib.suppress(OSError):
        os.killpg(root_pid, signal.SIGKILL)
    for proc in victims.values():
        with contextlib.suppress(psutil.Error):
            proc.kill()
    psutil.wait_procs([p for pid, p in victims.items() if pid != root_pid], timeout=5)


def _read_submission(path: Path) -> tuple[nbformat.NotebookNode | None, str]:
    """The notebook in ``path``, or None and why it is not one."""
    try:
        with path.open("rb") as f:
            raw = f.read(50 * 1024 * 1024 + 1)
        if len(raw) > 50 * 1024 * 1024:
            return None, "file larger than 50 MB"
        data = json.loads(raw.decode("utf-8"))
    except (UnicodeDecodeError, json.JSONDecodeError) as e:
        return None, f"not JSON ({type(e).__name__}: {str(e)[:120]})"
    except OSError as e:
        return None, f"cannot read: {e}"
    if not isinstance(data, dict) or "cells" not in data or "nbformat" not in data:
        return None, "JSON but not a notebook (no 'cells'/'nbformat')"
    try:
        nb = nbformat.reads(json.dumps(data), as_version=4)
        nbformat.validate(nb)
    except Exception as e:  # nbformat raises many kinds for malformed notebooks
        return None, f"invalid notebook ({type(e).__name__}: {str(e)[:160]})"
    return nb, ""


def _identify(nb, path: Path, known: Sequence[str]) -> str | None:
    """Which assignment a submission belongs to: notebook metadata, then file name, then the only one."""
    if nb is not None:
        meta = nb.metadata.get("otter", {})
        name = meta.get("assignment_name") if isinstance(meta, dict) else None
        if name in known:
            return name
    by_name = [k for k in known if k in path.name]
    if by_name:
        return max(by_name, key=len)
    return known[0] if len(known) == 1 else None


def _summarise_failure(output: str, returncode: int | None) -> str:
    """A one-line reason from a failed otter run's output."""
    for pattern, reason in [
        (r"DeadKernelError|Kernel died", "the kernel died while running the notebook"),
        (r"CellTimeoutError", "a cell timed out"),
        (r"OtterRuntimeError: (.+)", None),
        (r"(\w*Error: .+)", None),
    ]:
        matches = re.findall(pattern, output)
        if matches:
            return reason or matches[-1][:200]
    return f"otter run exited with status {returncode} and no results"


def grade_submission(
    path: str | Path,
    assignment: str,
    zip_path: str | Path,
    questions: Sequence[Question],
    *,
    timeout_s: float = 120,
    nb: nbformat.NotebookNode | None = None,
    log_path: str | Path | None = None,
) -> Grade:
    """Grade one notebook with ``otter run`` in a subprocess; always returns a Grade, never raises."""
    path = Path(path)
    grade = Grade(submission=path.name, assignment=assignment)
    grade.scores = {q.name: 0.0 for q in questions}
    grade.possible = sum(q.possible for q in questions)
    start = time.monotonic()
    output = ""
    with tempfile.TemporaryDirectory(prefix="grade-") as tmp:
        work = Path(tmp)
        for sub in ("home", "tmp", "results"):
            (work / sub).mkdir()
        if nb is None:
            nb = nbformat.read(path, as_version=4)
        # Grade a copy: the right kernel and assignment name whatever the learner's Jupyter wrote.
        nb.metadata["kernelspec"] = {
            "name": "python3",
            "display_name": "Python 3 (ipykernel)",
            "language": "python",
        }
        if not isinstance(nb.metadata.get("otter"), dict):
            nb.metadata["otter"] = {}
        nb.metadata["otter"]["assignment_name"] = assignment
        nbformat.write(nb, work / f"{assignment}.ipynb")
        shutil.copy(zip_path, work / "autograder.zip")
        token = uuid.uuid4().hex
        env = {
            k: v
            for k, v in os.environ.items()
            if not k.startswith(("JUPYTER", "IPYTHON", "PYTEST", "MPL"))
        }
        env.update(
            {
                "HOME": str(work / "home"),
                "TMPDIR": str(work / "tmp"),
                "MPLBACKEND": "Agg",
                "PYTHONDONTWRITEBYTECODE": "1",
                _TOKEN_VAR: token,
            }
        )
        cmd = [sys.executable, "-m", "otter", "run", "--no-logo", "-a", "autograder.zip"]
        cmd += ["-o", "results", f"{assignment}.ipynb"]
        proc = subprocess.Popen(
            cmd,
            cwd=work,
            env=env,
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )
        reader = _CappedReader(proc.stdout)
        reader.start()
        timed_out = False
        try:
            proc.wait(timeout=timeout_s)
        except subprocess.TimeoutExpired:
            timed_out = True
        _kill_tree(proc.pid, token)  # also after a clean exit: a submission may leave daemons
        proc.wait()
        reader.join(timeout=10)
        proc.stdout.close()
        output = reader.text()
        grade.seconds = time.monotonic() - start
        results = work / "results" / "results.json"
        if timed_out:
            grade.status, grade.reason = "timeout", f"timed out after {timeout_s:g} s (killed)"
        elif results.is_file():
            _read_results(results, grade)
        else:
            grade.status = "error"
            grade.reason = _summarise_failure(output, proc.returncode)
    if log_path is not None:
        Path(log_path).write_text(output, errors="replace")
    return grade


def _read_results(results: Path, grade: Grade) -> None:
    """Fill a Grade from otter's results.json (Gradescope format)."""
    try:
        data = json.loads(results.read_text())
        tests = {t.get("name"): t for t in data.get("tests", []) if isinstance(t, dict)}
    except (OSError, ValueError, AttributeError) as e:
        grade.status, grade.reason = "error", f"unreadable results.json: {e}"
        return
    if "Autograder Failed" in tests or "Autograder Error" in tests:
        detail = tests.get("Autograder Exception") or tests.get("Autograder Error") or {}
        lines = [ln for ln in str(detail.get("output", "")).splitlines() if ln.strip()]
        grade.status = "error"
        grade.reason = "otter could not grade it: " + (lines[-1][:200] if lines else "no detail")
        return
    failed = []
    for q in grade.scores:
        test = tests.get(q, {})
        grade.scores[q] = float(test.get("score") or 0.0)
        if not test or grade.scores[q] < float(test.get("max_score") or 0.0):
            failed.append(q)
    grade.status = "ok"
    grade.reason = f"tests failed: {', '.join(failed)}" if failed else ""


def _submissions(folder: Path) -> tuple[list[Path], list[Path]]:
    files, skipped = [], []
    for p in sorted(folder.iterdir(), key=lambda p: p.name):
        (files if p.is_file() and not p.name.startswith(".") else skipped).append(p)
    return files, skipped


def _write_csv(out_csv: Path, grades: Iterable[Grade], columns: list[str]) -> None:
    out_csv.parent.mkdir(parents=True, exist_ok=True)
    with out_csv.open("w", newline="") as f:
        writer = csv.writer(f)
        writer.writerow(["submission", "assignment", *columns, "total", "possible"]
                        + ["status", "reason", "seconds"])  # fmt: skip
        for g in grades:
            scores = [_num(g.scores[c]) if c in g.scores else "" for c in columns]
            writer.writerow([g.submission, g.assignment, *scores, _num(g.total), _num(g.possible),
                             g.status, g.reason, f"{g.seconds:.1f}"])  # fmt: skip


def _num(x: float) -> str:
    return f"{x:g}"


def grade_folder(
    submissions_dir: str | Path,
    out_csv: str | Path,
    *,
    timeout_s: float = 120,
    solutions_dir: str | Path = SOLUTIONS_DIR,
    autograder_dir: str | Path = AUTOGRADER_DIR,
    log_dir: str | Path | None = None,
    assignment: str | None = None,
    jobs: int = 1,
) -> int:
    """``python -m course grade``: grade every file in a folder into a CSV gradebook.

    ``jobs`` submissions are graded at once (each in its own process; 2 on a 2-core machine
    roughly halves the wall time, since a kernel spends much of its time starting and waiting).

    With ``assignment`` (``--assignment`` on the command line), every file is graded as that
    assignment, the usual case of one folder per exercise set; without it, each file's assignment is
    found as the module docstring says, and a file that names none gets ``unknown-assignment``.

    One row per submission: ``submission, assignment, <one column per question>, total, possible,
    status, reason, seconds``. ``status`` is ``ok`` (graded; ``reason`` lists failed questions),
    ``error`` (otter could not grade it), ``timeout``, ``not-a-notebook`` or ``unknown-assignment``;
    every row has a score. Otter's output for each submission (capped) goes to ``log_dir``
    (default: ``<out_csv without .csv>_logs/``). Returns 0 when every submission got a row, even a
    failing one; non-zero only when the folder or the assignments cannot be used.
    """
    from tqdm.auto import tqdm

    jobs = validate.positive_int("jobs", jobs, maximum=64)

    folder = Path(submissions_dir)
    out_csv = Path(out_csv)
    if not folder.is_dir():
        print(f"not a folder of submissions: {folder}", file=sys.stderr)
        return 2
    known = sorted(
        {p.stem for p in solution_notebooks(solutions_dir)}
        | {p.stem for p in Path(autograder_dir).glob("*.zip")}
    )
    if not known:
        print(f"no assignments: nothing in {solutions_dir} or {autograder_dir}", file=sys.stderr)
        return 2
    if assignment is not None:
        if assignment not in known:
            print(
                f"assignment must be one of {', '.join(known)}; got {assignment!r}", file=sys.stderr
            )
            return 2
        known = [assignment]
    files, skipped = _submissions(folder)
    for p in skipped:
        print(f"skipped (not a file, or hidden): {p.name}", file=sys.stderr)
    log_dir = Path(log_dir) if log_dir else out_csv.with_name(out_csv.stem + "_logs")
    log_dir.mkdir(parents=True, exist_ok=True)

    autograders: dict[str, tuple[Path, list[Question]]] = {}

    def autograder(name: str) -> tuple[Path, list[Question]]:
        if name not in autograders:
            zip_path = ensure_autograder(
                name, solutions_dir=solutions_dir, autograder_dir=autograder_dir
            )
            autograders[name] = (zip_path, zip_questions(zip_path))
        return autograders[name]

    def grade_one(path: Path) -> Grade:
        nb, problem = _read_submission(path)
        name = _identify(nb, path, known)
        grade = Grade(submission=path.name, assignment=name or "")
        if name is None:
            grade.status = "unknown-assignment"
            grade.reason = (problem + "; " if problem else "") + (
                f"cannot tell which assignment ({', '.join(known)}): no otter metadata and "
                "no assignment name in the file name"
            )
        else:
            try:
                zip_path, questions = autograder(name)
            except Exception as e:  # a broken solution must not stop the other submissions
                zip_path, questions = None, []
                problem = f"no autograder for {name}: {str(e)[:300]}"
            if zip_path is None:
                grade.status, grade.reason = "error", problem
            elif nb is None:
                grade.scores = {q.name: 0.0 for q in questions}
                grade.possible = sum(q.possible for q in questions)
                grade.status, grade.reason = "not-a-notebook", problem
            else:
                log_path = log_dir / f"{path.name}.log"
                grade = grade_submission(
                    path, name, zip_path, questions, timeout_s=timeout_s, nb=nb, log_path=log_path
                )
        return grade

    # Autograder zips are built up front, one at a time; grading then runs ``jobs`` at once.
    for path in files:
        name = _identify(_read_submission(path)[0], path, known)
        if name is not None:
            with contextlib.suppress(Exception):  # reported per submission by grade_one
                autograder(name)
    grades: list[Grade] = []
    bar = tqdm(total=len(files), desc="grading", unit="submission")
    with ThreadPoolExecutor(max_workers=jobs) as pool:
        for grade in pool.map(grade_one, files):  # rows keep the folder's order
            grades.append(grade)
            bar.update(1)
            bar.write(
                f"{grade.submission}: {_num(grade.total)}/{_num(grade.possible)} "
                f"[{grade.status}] {grade.reason}".rstrip()
            )
    bar.close()

    columns: list[str] = []
    for g in grades:
        columns += [q for q in g.scores if q not in columns]
    _write_csv(out_csv, grades, columns)
    print(f"{len(grades)} submission(s) graded -> {out_csv}")
    return 0


__all__ = [
    "Assigned",
    "Grade",
    "Question",
    "assign",
    "assign_all",
    "ensure_autograder",
    "grade_folder",
    "grade_submission",
    "normalise_student_notebook",
    "solution_notebooks",
    "zip_questions",
]
