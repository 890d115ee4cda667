"""A demo's torchrun entry point (``run_script``): it prints rank 0's result, destroys the group and
ends the process without the interpreter's teardown, where gloo's threads that still hold Python
objects aborted lesson 14's DDP job (SIGABRT, "terminate called without an active exception")."""

from __future__ import annotations

import os
import subprocess
import sys

from course.distributed.launch import free_port

_PROBE = """
import atexit, sys
from course.distributed._script import run_script
atexit.register(lambda: open(sys.argv[1], "w").write("the interpreter finalized"))
def work():
    if sys.argv[2] == "raise":
        raise RuntimeError("the worker failed")
    return {"ok": 1}
run_script(work, "probe")
"""


def _probe(tmp_path, how: str) -> tuple[subprocess.CompletedProcess, bool]:
    marker = tmp_path / f"finalized-{how}"
    env = {
        **os.environ,
        "COURSE_LOOPBACK_STORE": "1",
        "MASTER_ADDR": "127.0.0.1",
        "MASTER_PORT": str(free_port()),
        "RANK": "0",
        "WORLD_SIZE": "1",
        "OMP_NUM_THREADS": "1",
    }
    done = subprocess.run(
        [sys.executable, "-c", _PROBE, str(marker), how],
        capture_output=True,
        text=True,
        timeout=120,
        env=env,
    )
    return done, marker.exists()


def test_a_demo_prints_and_exits_without_the_interpreters_teardown(tmp_path):
    done, finalized = _probe(tmp_path, "ok")
    assert done.returncode == 0, done.stderr[-2000:]
    assert "== probe ==" in done.stdout and "'ok': 1" in done.stdout  # flushed before os._exit
    assert not finalized  # atexit never ran: no interpreter finalization with gloo threads alive


def test_a_failing_worker_still_fails_the_rank(tmp_path):
    done, _ = _probe(tmp_path, "raise")
    assert done.returncode != 0 and "the worker failed" in done.stderr
