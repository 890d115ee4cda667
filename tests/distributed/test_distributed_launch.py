"""The launcher: results in rank order, a time limit, errors reported, nothing left behind."""

from __future__ import annotations

import os
import time

import psutil
import pytest

from course.distributed import launch as L


def _rank_and_sum():
    import torch
    import torch.distributed as dist

    t = torch.tensor([float(dist.get_rank() + 1)])
    dist.all_reduce(t)
    return dist.get_rank(), dist.get_world_size(), float(t), os.getpid()


def _second():
    import torch.distributed as dist

    return dist.get_backend()


def _raise_on_rank_1():
    import torch
    import torch.distributed as dist

    if dist.get_rank() == 1:
        raise ValueError("boom from rank 1")
    dist.all_reduce(torch.ones(1))  # rank 0 would wait here for ever without the launcher
    return "unreachable"


def _sleep():
    time.sleep(600)


def _children() -> list:
    return [
        p
        for p in psutil.Process().children(recursive=True)
        if p.is_running()
        and p.status() != psutil.STATUS_ZOMBIE
        and "resource_tracker" not in " ".join(p.cmdline())
    ]


def _ports_of(pids: set[int]) -> list:
    return [c for c in psutil.net_connections("tcp") if c.pid in pids]


@pytest.fixture
def recorded_port(monkeypatch):
    ports = []
    real = L.free_port

    def spy(*a, **k):
        ports.append(real(*a, **k))
        return ports[-1]

    monkeypatch.setattr(L, "free_port", spy)
    return ports


def test_launch_returns_each_rank_in_order_and_runs_a_list_in_one_group(recorded_port):
    before = {p.pid for p in _children()}
    out = L.launch([_rank_and_sum, _second], 2, timeout_seconds=120)
    assert [o[0][:3] for o in out] == [(0, 2, 3.0), (1, 2, 3.0)]
    assert out[0][1] == out[1][1] == "gloo"
    pids = {o[0][3] for o in out}
    assert len(pids) == 2 and os.getpid() not in pids
    assert not any(
        psutil.pid_exists(p) and psutil.Process(p).status() != psutil.STATUS_ZOMBIE for p in pids
    )
    assert {p.pid for p in _children()} <= before
    assert L.port_is_free(recorded_port[-1])
    single = L.launch(_second, 2, timeout_seconds=120)  # one function: each rank's result itself
    assert single == ["gloo", "gloo"]


def test_a_rank_that_raises_stops_all_and_leaves_nothing(recorded_port):
    before = {p.pid for p in _children()}
    with pytest.raises(L.WorkerError, match="boom from rank 1") as info:
        L.launch(_raise_on_rank_1, 2, timeout_seconds=120)
    assert info.value.rank == 1 and "ValueError" in info.value.remote_traceback
    assert {p.pid for p in _children()} <= before
    assert L.port_is_free(recorded_port[-1])


def test_the_time_limit_is_enforced(recorded_port):
    before = {p.pid for p in _children()}
    start = time.monotonic()
    with pytest.raises(TimeoutError, match="timeout_seconds=8"):
        L.launch(_sleep, 2, timeout_seconds=8)
    assert time.monotonic() - start < 8 + L.GRACE_SECONDS + 10
    assert {p.pid for p in _children()} <= before
    assert L.port_is_free(recorded_port[-1])


@pytest.mark.parametrize(
    "kwargs, match",
    [
        ({"nprocs": 0}, "nprocs"),
        ({"nprocs": 99}, "nprocs"),
        ({"timeout_seconds": 0}, "timeout_seconds"),
    ],
)
def test_bad_arguments_raise_value_error(kwargs, match):
    with pytest.raises(ValueError, match=match):
        L.launch(_second, **{"nprocs": 2, **kwargs})
    with pytest.raises(ValueError, match="fn"):
        L.launch([], 2)


def test_free_port_is_bindable_and_backend_is_gloo_without_cuda():
    port = L.free_port()
    assert 0 < port < 65536 and L.port_is_free(port)
    assert L.backend() == "gloo"
    assert L.rank() == 0 and L.world_size() == 1
    assert L.loopback_available()
    assert not L.loopback_available("192.0.2.1")  # TEST-NET-1: not an address of this machine


def test_the_earliest_error_is_reported_even_when_it_arrives_second():
    import queue
    from types import SimpleNamespace

    late = queue.Queue()
    late.put((1, "error", (100.0, "ValueError: boom from rank 1")))
    procs = [SimpleNamespace(exitcode=1), SimpleNamespace(exitcode=1)]
    consequence = {0: (100.5, "RuntimeError: Connection reset by peer")}
    assert L._first_error(late, procs, {}, consequence, wait_seconds=2.0) == (
        1,
        "ValueError: boom from rank 1",
    )


def _kill_rank_1():
    import signal

    import torch
    import torch.distributed as dist

    if dist.get_rank() == 1:
        os.kill(os.getpid(), signal.SIGKILL)
    dist.all_reduce(torch.ones(1))  # rank 0 then loses its peer: "connection reset"
    return "unreachable"


def _listening_and_threads():
    import psutil
    import torch
    import torch.distributed as dist

    dist.barrier()  # every rank's sockets are open now
    mine = [
        c.laddr.ip
        for c in psutil.Process().net_connections(kind="inet")
        if c.status == psutil.CONN_LISTEN
    ]
    dist.barrier()  # no rank closes its sockets before the others have looked
    return mine, torch.get_num_threads()


def test_a_rank_killed_by_a_signal_is_named_not_the_peer_it_disconnected(recorded_port):
    before = {p.pid for p in _children()}
    with pytest.raises(L.WorkerError, match="rank 1 was killed by SIGKILL") as info:
        L.launch(_kill_rank_1, 2, timeout_seconds=120)
    assert info.value.rank == 1 and info.value.killed
    assert {p.pid for p in _children()} <= before
    assert L.port_is_free(recorded_port[-1])


def test_ranks_listen_on_loopback_only_and_split_the_usable_cores():
    out = L.launch(_listening_and_threads, 2, timeout_seconds=120)
    addresses = [ip for listening, _ in out for ip in listening]
    assert out[0][0], "rank 0 holds the TCP store's listening socket"
    assert set(addresses) <= {"127.0.0.1", "::1"}, addresses  # never 0.0.0.0 or ::
    assert [threads for _, threads in out] == [max(1, L.usable_cores() // 2)] * 2
    assert L.usable_cores() == len(os.sched_getaffinity(0))


def test_ranks_die_with_the_process_that_launched_them():
    import signal
    import subprocess
    import sys

    code = (
        "import time; from course.distributed.launch import launch; "
        "launch(time.sleep, 2, args=(600,), timeout_seconds=600)"
    )
    parent = subprocess.Popen([sys.executable, "-c", code])
    try:
        deadline = time.monotonic() + 60
        ranks: list = []
        while time.monotonic() < deadline and len(ranks) < 2:
            time.sleep(0.5)
            ranks = [
                p
                for p in psutil.Process(parent.pid).children(recursive=True)
                if "spawn_main" in " ".join(p.cmdline())
            ]
        assert len(ranks) == 2, "the ranks did not start"
        time.sleep(2)  # past the start-up, inside time.sleep(600)
    finally:
        parent.send_signal(signal.SIGKILL)  # as a killed Jupyter kernel: no clean-up runs
        parent.wait()
    gone, alive = psutil.wait_procs(ranks, timeout=15)
    alive = [p for p in alive if p.is_running() and p.status() != psutil.STATUS_ZOMBIE]
    assert not alive, f"ranks outlived their parent: {alive}"


def test_the_backend_is_gloo_when_there_are_fewer_gpus_than_ranks(monkeypatch):
    import torch

    monkeypatch.setattr(torch.cuda, "is_available", lambda: True)
    monkeypatch.setattr(torch.cuda, "device_count", lambda: 1)
    assert L.backend(1) == "nccl" and L.backend(2) == "gloo"
    monkeypatch.setenv("LOCAL_WORLD_SIZE", "4")
    assert L.backend() == "gloo"


def test_a_worker_that_no_rank_can_import_is_refused_with_the_reason(monkeypatch):
    import sys
    import types

    notebook_main = types.ModuleType("__main__")  # a kernel's __main__ has no __file__
    monkeypatch.setitem(sys.modules, "__main__", notebook_main)
    exec("def cell_worker():\n    return 1", notebook_main.__dict__)
    with pytest.raises(ValueError, match="notebook cell.*put the function in a .py file"):
        L.launch(notebook_main.cell_worker, 2)
    with pytest.raises(ValueError, match="lambda or a nested function"):
        L.launch(lambda: 1, 2)


def test_torchrun_and_its_workers_die_with_the_process_that_started_it():
    """What :func:`course.distributed.elastic.run_torchrun` does from a notebook: torchrun started
    with :func:`L.popen_dying_with_parent`, each worker tied to torchrun as
    :func:`L.process_group` ties it (the workers here only sleep: no torch to import)."""
    import select
    import signal
    import subprocess
    import sys

    worker = (
        "import os, time; from course.distributed.launch import _die_with_parent; "
        "_die_with_parent(os.getppid()); print('ready', flush=True); time.sleep(600)"
    )
    code = (
        "import sys, time; from course.distributed.launch import popen_dying_with_parent; "
        "popen_dying_with_parent([sys.executable, '-m', 'torch.distributed.run', "
        "'--nproc-per-node=2', '--rdzv-backend=c10d', '--rdzv-endpoint=127.0.0.1:0', "
        f"'--no-python', sys.executable, '-c', {worker!r}]); time.sleep(600)"
    )
    parent = subprocess.Popen(
        [sys.executable, "-c", code],
        stdout=subprocess.PIPE,
        env={**os.environ, "OMP_NUM_THREADS": "1"},
    )
    try:
        out, deadline = b"", time.monotonic() + 120
        while out.count(b"ready") < 2 and time.monotonic() < deadline and parent.poll() is None:
            if select.select([parent.stdout], [], [], 1)[0]:
                out += os.read(parent.stdout.fileno(), 1024)
        assert out.count(b"ready") == 2, "the workers did not start"  # both tied to torchrun
        tree = psutil.Process(parent.pid).children(recursive=True)
        assert len(tree) == 3, tree  # torchrun and its 2 workers
    finally:
        parent.send_signal(signal.SIGKILL)  # as a killed Jupyter kernel: no clean-up runs
        parent.wait()
    gone, alive = psutil.wait_procs(tree, timeout=15)
    alive = [p for p in alive if p.is_running() and p.status() != psutil.STATUS_ZOMBIE]
    for p in alive:  # leave nothing behind, even when failing
        p.kill()
    assert not alive, f"outlived their parent: {alive}"


def test_each_restart_attempt_sees_none_of_the_previous_attempts_keys(monkeypatch):
    """torchrun's agent store outlives a failed attempt: what its rank 0 published (its address)
    must not be read by the next attempt (every demo under ``--max-restarts`` failed with
    "connection refused" before :func:`L.attempt_store`; the real restart is
    tests/distributed/test_distributed_scale.py's elastic run, through the same
    :func:`L.process_group`)."""
    import torch.distributed as dist

    shared = dist.HashStore()
    monkeypatch.setenv("TORCHELASTIC_USE_AGENT_STORE", "True")
    monkeypatch.setenv(L.ATTEMPT_ENV, "0")
    L.attempt_store(shared).set("rank0-address", "127.0.0.1:40000")
    monkeypatch.setenv(L.ATTEMPT_ENV, "1")
    again = L.attempt_store(shared)
    assert not again.check(["rank0-address"])
    again.set("rank0-address", "127.0.0.1:40001")
    monkeypatch.setenv(L.ATTEMPT_ENV, "0")
    assert L.attempt_store(shared).get("rank0-address") == b"127.0.0.1:40000"
    monkeypatch.delenv("TORCHELASTIC_USE_AGENT_STORE")  # a store of its own per attempt
    assert L.attempt_store(shared) is shared


def test_a_port_taken_before_rank_0_binds_it_is_tried_again(monkeypatch):
    """free_port's port is free when chosen and bound seconds later: another process (a second
    test worker) can take it first. The launch then runs again on a new port, not fail."""
    import socket

    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        ports = iter([taken.getsockname()[1]])
        real = L.free_port
        monkeypatch.setattr(L, "free_port", lambda: next(ports, None) or real())
        results = L.launch(_rank_and_sum, 2, timeout_seconds=120)
    assert [r[:3] for r in results] == [(0, 2, 3.0), (1, 2, 3.0)]


def test_a_failure_other_than_a_taken_port_is_not_retried(monkeypatch):
    calls = []
    real = L.free_port
    monkeypatch.setattr(L, "free_port", lambda: calls.append(1) or real())
    with pytest.raises(L.WorkerError):
        L.launch(_raise_on_rank_1, 2, timeout_seconds=120)
    assert len(calls) == 1
