"""The sandbox's last holes (issue 35), each with a real sandbox: kernel keyrings (a key one
submission added was read by the next one in its slot, and by a host process as ``nobody``), no CPU
share per slot, and what a grader killed with ``kill -9`` left behind."""

from __future__ import annotations

import os
import sys
import time

import pytest
from teaching.grading import sandbox

pytestmark = [pytest.mark.slow, pytest.mark.sandbox]

KEYRING = r"""
import ctypes, os, platform
libc = ctypes.CDLL(None, use_errno=True)
ADD_KEY, KEYCTL = {"x86_64": (248, 250), "aarch64": (217, 219)}[platform.machine()]
USER_KEYRING, SESSION_KEYRING, KEYCTL_GET_KEYRING_ID = -4, -3, 0
for ring in (USER_KEYRING, SESSION_KEYRING):
    key = libc.syscall(ADD_KEY, b"user", b"left-by-a-submission", b"secret", 6, ring)
    print("ADD_KEY", ring, key, os.strerror(ctypes.get_errno()) if key < 0 else "added")
got = libc.syscall(KEYCTL, KEYCTL_GET_KEYRING_ID, USER_KEYRING, 0)
print("KEYCTL", got, os.strerror(ctypes.get_errno()) if got < 0 else "reached")
"""


@pytest.mark.skipif(sys.platform != "linux", reason="keyrings and seccomp are Linux's")
def test_kernel_keyrings_are_out_of_a_submissions_reach(tmp_path):
    tmp_path.chmod(0o777)
    out = sandbox.run(
        tmp_path, [sys.executable, "-I", "-c", KEYRING], env={}, timeout_seconds=60
    ).output
    lines = [line for line in out.splitlines() if line.startswith(("ADD_KEY", "KEYCTL"))]
    assert len(lines) == 3, out
    for line in lines:
        assert line.endswith(os.strerror(1)), line  # EPERM: refused, nothing added or read


IO_URING = r"""
import ctypes, os
libc = ctypes.CDLL(None, use_errno=True)
params = ctypes.create_string_buffer(120)  # struct io_uring_params
fd = libc.syscall(425, 8, params)  # io_uring_setup: the same number on x86_64 and aarch64
print("IO_URING", fd, os.strerror(ctypes.get_errno()) if fd < 0 else "a ring")
"""


@pytest.mark.skipif(sys.platform != "linux", reason="io_uring and seccomp are Linux's")
def test_io_uring_is_refused_to_a_submission(tmp_path):
    """Issue 42: io_uring's SQPOLL kernel threads run outside the slot's CPUs (a hog pinned them
    to the neighbour's CPU and an honest neighbour lost 2 points): the sandbox refuses the ring."""
    tmp_path.chmod(0o777)
    out = sandbox.run(
        tmp_path, [sys.executable, "-I", "-c", IO_URING], env={}, timeout_seconds=60
    ).output
    (line,) = [x for x in out.splitlines() if x.startswith("IO_URING")]
    assert line.endswith(os.strerror(1)), line  # EPERM: no ring


AFFINITY = """
import os, multiprocessing
mine = sorted(os.sched_getaffinity(0))
try:
    os.sched_setaffinity(0, range(os.cpu_count()))
    escaped = "widened"
except OSError as e:
    escaped = type(e).__name__
def busy(_):
    return sorted(os.sched_getaffinity(0))
with multiprocessing.get_context("fork").Pool(4) as pool:  # a neighbour's busy processes
    children = pool.map(busy, range(4))
import torch
torch.manual_seed(0)
matmul_ok = bool(torch.isfinite(torch.randn(64, 64) @ torch.randn(64, 64)).all())
print("CPUS", mine, escaped, all(c == mine for c in children), matmul_ok)
"""


@pytest.mark.skipif(len(os.sched_getaffinity(0)) < 2, reason="one CPU: no share to give")
def test_each_slot_runs_on_cpus_of_its_own():
    """Issue 35: a neighbour's 16 busy processes slowed an honest notebook 2.7x. Two sandboxes
    graded at once run on disjoint CPUs, their children stay there, and neither can widen its
    set (a torch matmul still runs)."""
    from concurrent.futures import ThreadPoolExecutor

    import nbformat
    from teaching.grading import extract

    zygote = sandbox.start_factory([], threads=1)
    if zygote is None:
        pytest.skip("no sandbox factory here")
    nb = nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell(AFFINITY)])

    def one(_):
        ext = extract.run_cells(
            extract.notebook_cells(nb),
            {},
            execution=extract.Execution(
                timeout_seconds=120, cell_timeout_seconds=100, zygote=zygote
            ),
        )
        printed = "".join(str(c.get("output", "")) for c in ext.cells)
        [line] = [x for x in printed.splitlines() if x.startswith("CPUS")]
        return line

    try:
        with ThreadPoolExecutor(2) as pool:
            lines = list(pool.map(one, range(2)))
    finally:
        zygote.close()
    cpus = [set(eval(line.split(" ", 1)[1].rsplit(" ", 3)[0])) for line in lines]  # noqa: S307
    assert all(line.endswith("PermissionError True True") for line in lines), lines
    assert all(len(c) == 1 for c in cpus) and not cpus[0] & cpus[1], lines


KILLED = """
from teaching.grading import sandbox
z = sandbox.start_factory([], threads=1)
print(z.root, z.cgroups.root, flush=True)
import time
time.sleep(600)
"""


def test_what_a_killed_grader_left_is_removed_as_the_next_one_starts():
    """Issue 35: ``kill -9`` of the grader left its temporary folder and its cgroup."""
    import subprocess
    from pathlib import Path

    if not sandbox.mode()["mounts"]:
        pytest.skip("no sandbox factory here")
    grader = subprocess.Popen([sys.executable, "-c", KILLED], stdout=subprocess.PIPE, text=True)
    folder, cgroup = grader.stdout.readline().split()
    grader.kill()  # kill -9: no clean-up of its own
    grader.wait()
    left = [Path(folder)] + ([Path(cgroup)] if cgroup != "None" else [])
    assert all(p.exists() for p in left), left  # what the hole was
    for _ in range(50):  # the factory dies with its grader, its last processes just after
        removed = sandbox.clear_leftovers()
        if not any(p.exists() for p in left):
            break
        time.sleep(0.1)
    assert not any(p.exists() for p in left), (left, removed)
    zygote = sandbox.start_factory([], threads=1)  # a live grader's folder is kept
    try:
        assert zygote is None or zygote.root not in sandbox.clear_leftovers()
        assert zygote is None or zygote.root.exists()
    finally:
        if zygote is not None:
            zygote.close()


def test_the_slots_memory_is_divided_between_the_jobs(monkeypatch):
    """All slots together hold at most a third of the machine, whatever --jobs is; the factory
    that sets each slot's limit is given --jobs."""
    total = 24 * 2**30
    assert sandbox.slot_memory_bytes(total, 1) == 8 * 2**30
    assert sandbox.slot_memory_bytes(total, 4) == 2 * 2**30
    assert 8 * sandbox.slot_memory_bytes(total, 8) <= total // 3
    seen = {}
    monkeypatch.setattr(sandbox, "mode", lambda: {"mounts": True})
    monkeypatch.setattr(sandbox, "Zygote", lambda preload, **kw: seen.update(kw) or "zygote")
    assert sandbox.start_factory([], threads=1, jobs=4) == "zygote" and seen["jobs"] == 4
