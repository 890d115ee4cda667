"""The real thing, twice: Gradescope's ``run_autograder`` from the archive, run here as Gradescope
runs it (``/autograder/source``, ``/autograder/submission``, ``/autograder/results``), grades a
submission in the sandbox and writes a results.json that follows Gradescope's specification; and
Ctrl-C (a real SIGINT) to ``python -m teaching grade`` while it grades ends it at once, with no
process left, no export or gradebook written and the earlier run's files untouched."""

from __future__ import annotations

import contextlib
import json
import os
import signal
import subprocess
import sys
import time
import zipfile

import nbformat
import psutil
import pytest
from grading_cases import POSSIBLE, SET, filled_in, with_cell
from teaching.grading import autograder, sandbox
from teaching.grading.authoring import REPO
from teaching.grading.exports import gradescope

pytestmark = [pytest.mark.slow, pytest.mark.sandbox]  # real sandboxes (tests/conftest.py)
VISIBILITY = {"hidden", "after_due_date", "after_published", "visible"}


def test_the_gradescope_archive_grades_a_submission_as_gradescope_runs_it(tmp_path):
    root = tmp_path / "autograder"
    source, submission = root / "source", root / "submission"
    submission.mkdir(parents=True)
    # where this machine lacks a protection Gradescope's run needs, the archive must opt in
    # (tests/teaching/test_grading_exports_gradescope.py checks that it refuses otherwise)
    unprotected = bool(set(autograder.REQUIRED) & set(sandbox.protections_off()))
    archive = gradescope.archive(SET, tmp_path / "ag.zip", repo=REPO, allow_unprotected=unprotected)
    with zipfile.ZipFile(archive) as z:
        z.extractall(source)
        for info in z.infolist():  # zipfile does not restore modes; Gradescope's unzip does
            os.chmod(source / info.filename, (info.external_attr >> 16) & 0o777)
    nbformat.write(filled_in(), submission / "my work (final).ipynb")
    env = {**os.environ, "AUTOGRADER_ROOT": str(root), "AUTOGRADER_PYTHON": sys.executable}
    done = subprocess.run(
        [str(source / "run_autograder")], env=env, capture_output=True, text=True, timeout=300
    )
    assert done.returncode == 0, done.stderr[-2000:]
    results = json.loads((root / "results" / "results.json").read_text())
    tests = results["tests"]
    assert [t["name"] for t in tests] == [f"q{i}" for i in range(1, len(tests) + 1)]
    assert sum(t["score"] for t in tests) == sum(t["max_score"] for t in tests) == POSSIBLE
    for t in tests:
        assert t["status"] == "passed" and t["visibility"] in VISIBILITY
    assert results["visibility"] == "after_due_date"
    assert str(source) in done.stderr or "graded 1 file" in done.stderr


def descendants(pid: int, seen: dict[int, float]) -> None:
    """Record every process under ``pid`` now (sandboxes in PID namespaces included: they are
    still its descendants on the host), with its start time (a reused PID is another process)."""
    with contextlib.suppress(psutil.Error):
        for c in psutil.Process(pid).children(recursive=True):
            with contextlib.suppress(psutil.Error):
                seen[c.pid] = c.create_time()


def alive(seen: dict[int, float]) -> list[tuple]:
    """The recorded processes still running (a zombie has ended: it only waits to be reaped)."""
    out = []
    for pid, t in seen.items():
        with contextlib.suppress(psutil.Error):
            p = psutil.Process(pid)
            if p.create_time() == t and p.status() != psutil.STATUS_ZOMBIE:
                out.append((pid, p.status(), p.cmdline()[:3]))
    return out


def default_sigint() -> None:
    """SIGINT as a terminal's grader gets it: a shell without job control starts background jobs
    (CI's, or ``pytest &``) with SIGINT ignored, and Python keeps an ignored SIGINT ignored."""
    signal.signal(signal.SIGINT, signal.SIG_DFL)


def test_ctrl_c_while_grading_ends_every_sandbox_and_writes_nothing(tmp_path):
    subs, out = tmp_path / "subs", tmp_path / "out"
    subs.mkdir()
    out.mkdir()
    nbformat.write(
        with_cell("import time\ntime.sleep(120)", before_answer=0), subs / f"{SET}-a.ipynb"
    )
    earlier = {"grades.csv": "submission\nearlier run\n", "grades-gradescope/x/results.json": "{}"}
    for name, text in earlier.items():
        (out / name).parent.mkdir(parents=True, exist_ok=True)
        (out / name).write_text(text)
    log = (tmp_path / "stderr.txt").open("w")
    cmd = [sys.executable, "-m", "teaching", "grade", str(subs), "--out", str(out / "grades.csv")]
    cmd += ["--export", "gradescope,prairielearn", "--timeout", "200", "--cell-timeout", "150"]
    cmd += ["--replace"]  # the earlier gradebook has no class record to merge into
    proc = subprocess.Popen(
        cmd, stderr=log, cwd=REPO, start_new_session=True, preexec_fn=default_sigint
    )
    try:
        interrupted(proc, tmp_path, out, earlier)
    finally:
        if proc.poll() is None:  # a failed test leaves no grader behind either
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait()


def interrupted(proc, tmp_path, out, earlier) -> None:
    seen: dict[int, float] = {}
    start = time.monotonic()
    while time.monotonic() - start < 120 and proc.poll() is None:
        descendants(proc.pid, seen)
        if "grading:" in (tmp_path / "stderr.txt").read_text():
            break
        time.sleep(0.1)
    for _ in range(20):  # two seconds into the sleeping submission
        descendants(proc.pid, seen)
        time.sleep(0.1)
    proc.send_signal(signal.SIGINT)
    sent = time.monotonic()
    assert proc.wait(timeout=60) == 130
    took = time.monotonic() - sent
    survivors = alive(seen)
    for _ in range(50):  # SIGKILL reaches a PID namespace's processes within moments, not at once
        if not survivors:
            break
        time.sleep(0.1)
        survivors = alive(seen)
    assert seen and not survivors, f"outlived the grader: {survivors}"
    assert took < 15, f"Ctrl-C took {took:.1f} s: the sandboxes were waited for, not ended"
    assert "interrupted: no gradebook" in (tmp_path / "stderr.txt").read_text()
    left = sorted(str(p.relative_to(out)) for p in out.rglob("*") if p.is_file())
    assert [p for p in left if not p.startswith("grades_logs")] == sorted(earlier)
    for name, text in earlier.items():
        assert (out / name).read_text() == text
