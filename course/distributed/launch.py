"""Run a function on N local processes joined in a ``torch.distributed`` process group.

:func:`launch` does from Python what ``torchrun --nproc-per-node N`` does from the shell: it starts
N processes (the ``spawn`` start method, so the worker must be an importable module-level function,
which also makes it work where spawn or forkserver is the default, as on macOS), gives each the
environment torchrun would (``MASTER_ADDR``, ``MASTER_PORT``, ``RANK``, ``WORLD_SIZE``,
``LOCAL_RANK``), initialises the process group (gloo on CPU, nccl where each rank has a GPU), calls
the worker, and returns the ranks' results in rank order.

Guarantees (tests/distributed/test_distributed_launch.py checks each): a time limit is enforced;
when a rank raises, the others are stopped and :class:`WorkerError` carries the rank's traceback; a
rank killed by a signal is named as such (not the peer that then lost its connection); in every case
all worker processes are gone and the rendezvous port is free again when :func:`launch` returns. On
Linux the ranks also die with the process that launched them (``PR_SET_PDEATHSIG``): a killed
Jupyter kernel leaves no rank behind. Ranks meet on the loopback interface only: rank 0's TCP store
listens on 127.0.0.1 (not on every interface, as ``init_process_group`` would make it) and gloo's
(and NCCL's bootstrap) sockets are bound to the loopback device. nccl is used only when every rank
has a GPU of its own (Kaggle's two T4s run 2 ranks on NCCL, over PCIe), with gloo beside it for
CPU tensors (:data:`GPU_BACKENDS`); with fewer GPUs than ranks the launch falls back to gloo.

Each launch pays for importing torch in every process (about 2 s), so a lesson passes a *list* of
workers to run several demos in one process group.
"""

from __future__ import annotations

import contextlib
import ctypes
import datetime
import gc
import multiprocessing as mp
import os
import pickle
import queue
import signal
import socket
import sys
import time
import traceback
from collections.abc import Callable, Sequence
from typing import Any

from course.facts import validate

#: Most processes one launch may start on this machine.
MAX_PROCS = 16
#: Seconds a worker that did not stop by itself gets after being asked to (then it is killed).
GRACE_SECONDS = 3.0
#: Seconds a collective may wait for the other ranks before the process group gives up.
PG_TIMEOUT_SECONDS = 300


class WorkerError(RuntimeError):
    """A rank raised: ``rank`` and the worker's formatted ``remote_traceback``."""

    def __init__(self, rank: int, remote_traceback: str) -> None:
        self.rank, self.remote_traceback = rank, remote_traceback
        self.killed = remote_traceback.startswith("was killed by")
        if self.killed or remote_traceback.startswith("exited with code"):
            super().__init__(f"rank {rank} {remote_traceback}")
            return
        last = remote_traceback.strip().splitlines()[-1] if remote_traceback.strip() else "?"
        super().__init__(
            f"rank {rank} raised: {last}\n--- traceback of rank {rank} ---\n{remote_traceback}"
        )


#: Launches tried when rank 0 finds its store's port taken: :func:`free_port` returns a port that is
#: free now, and another process (a second test worker, another launch) can bind it first.
PORT_ATTEMPTS = 3


def free_port(host: str = "127.0.0.1") -> int:
    """A TCP port nobody listens on right now (the OS picks it); the caller binds it soon after."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind((host, 0))
        return int(s.getsockname()[1])


def port_is_free(port: int, host: str = "127.0.0.1") -> bool:
    """True if no process listens on ``port`` (it can be bound with ``SO_REUSEADDR``, as
    torch's TCPStore binds it; connections of a finished run in TIME_WAIT do not count)."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            s.bind((host, port))
        except OSError:
            return False
        return True


def loopback_available(host: str = "127.0.0.1") -> bool:
    """True if this process can listen on and connect to ``host`` (where ranks meet).

    False in a sandbox without a network (the course's grading sandbox has its loopback
    interface down), where no process group can form.
    """
    try:
        with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as server:
            server.bind((host, 0))
            server.listen(1)
            with socket.create_connection(server.getsockname(), timeout=2):
                return True
    except OSError:
        return False


def backend(local_ranks: int | None = None) -> str:
    """The backend for ``local_ranks`` processes on this host (default: torchrun's
    ``LOCAL_WORLD_SIZE``, else 1): nccl when each has a GPU of its own, gloo otherwise (a laptop
    with one GPU running 2 ranks would otherwise ask rank 1 for a second GPU)."""
    import torch

    n = local_ranks or int(os.environ.get("LOCAL_WORLD_SIZE", "1"))
    return "nccl" if torch.cuda.is_available() and torch.cuda.device_count() >= n else "gloo"


#: The process group's backends when each rank has a GPU: NCCL for CUDA tensors, gloo for the few
#: CPU tensors the demos exchange (a loss to average, a stop flag): NCCL has no CPU path, and a
#: CPU tensor in an NCCL-only group raises. torch routes each collective by the tensor's device.
GPU_BACKENDS = "cpu:gloo,cuda:nccl"


def group_backend(name: str) -> str:
    """What :func:`process_group` passes to ``init_process_group`` for ``backend()``'s ``name``."""
    return GPU_BACKENDS if name == "nccl" else name


def transport() -> str:
    """How this process group moves bytes between ranks 0 and 1: "gloo, loopback" on the CPU;
    "nccl, NVLink (NV4)" or "nccl, PCIe (PHB: ...)" on GPUs, read from ``nvidia-smi topo -m``
    (two T4s on Kaggle: PCIe, no NVLink; ``course.measure.gpu_guards``)."""
    if device().type != "cuda":
        return "gloo, loopback"
    from course.measure import gpu_guards

    return f"nccl, {gpu_guards.gpu_link(0, 1) or 'a link nvidia-smi does not show'}"


def usable_cores() -> int:
    """CPU cores this process may run on (``os.sched_getaffinity``: a container's or a job's
    share, not the machine's total), at least 1."""
    getter = getattr(os, "sched_getaffinity", None)
    return max(1, len(getter(0)) if getter else (os.cpu_count() or 1))


def loopback_interface() -> str | None:
    """The name of the loopback network interface (``lo`` on Linux, ``lo0`` on macOS), or None."""
    with contextlib.suppress(OSError, AttributeError):
        for _, name in socket.if_nameindex():
            if name.startswith("lo"):
                return name
    return None


def device():
    """This rank's device: its GPU (``cuda:LOCAL_RANK``) under nccl, else the CPU."""
    import torch
    import torch.distributed as dist

    if dist.is_initialized() and "nccl" in str(dist.get_backend()):
        return torch.device("cuda", int(os.environ.get("LOCAL_RANK", "0")))
    return torch.device("cpu")


def rank() -> int:
    import torch.distributed as dist

    return dist.get_rank() if dist.is_initialized() else 0


def world_size() -> int:
    import torch.distributed as dist

    return dist.get_world_size() if dist.is_initialized() else 1


@contextlib.contextmanager
def process_group(backend_name: str | None = None):
    """Initialise the default process group from torchrun's environment; destroy it on exit.

    Used by every demo's ``main()`` (under ``torchrun``) and by :func:`launch`'s workers. Under
    torchrun each worker dies with its agent (``PR_SET_PDEATHSIG``) and each restart attempt
    keeps its keys apart in the agent's store (:func:`attempt_store`), so every demo survives
    ``--max-restarts``.
    """
    import torch
    import torch.distributed as dist

    name = backend_name or backend()
    if name == "nccl":
        torch.cuda.set_device(int(os.environ.get("LOCAL_RANK", "0")))
    timeout = datetime.timedelta(seconds=PG_TIMEOUT_SECONDS)
    if os.environ.get("COURSE_LOOPBACK_STORE"):
        dist.init_process_group(
            group_backend(name),
            timeout=timeout,
            store=_loopback_store(timeout),
            rank=int(os.environ["RANK"]),
            world_size=int(os.environ["WORLD_SIZE"]),
        )
    elif ATTEMPT_ENV in os.environ:  # under torchrun's elastic agent
        _die_with_parent(os.getppid())  # the agent: a SIGKILLed torchrun leaves no worker
        store, rank, world = next(dist.rendezvous("env://", timeout=timeout))
        dist.init_process_group(
            group_backend(name),
            timeout=timeout,
            store=attempt_store(store),
            rank=rank,
            world_size=world,
        )
    else:
        dist.init_process_group(group_backend(name), timeout=timeout)
    try:
        yield
        # Free what the worker left in reference cycles (DDP reducers, hooks, futures holding
        # the group and tensors) while the interpreter is whole, then wait for every rank.
        gc.collect()
        dist.barrier()  # only on success: a rank that raised must not wait for the others
    finally:
        dist.destroy_process_group()
        gc.collect()


#: What torchrun's agent sets in each worker: 0 on the first attempt, 1 after the first restart...
ATTEMPT_ENV = "TORCHELASTIC_RESTART_COUNT"


def attempt_store(store):
    """``store`` with this restart attempt's keys under a prefix of their own.

    torchrun's agent keeps one TCP store for every attempt (``TORCHELASTIC_USE_AGENT_STORE`` =
    True in the workers; ``TORCH_DISABLE_SHARE_RDZV_TCP_STORE=1`` for torchrun turns it off), so
    after a restart (``--max-restarts``) a rank can read the address the previous attempt's rank 0
    published and fail with "connection refused" before the new rank 0 overwrites it (every demo
    did, with torch 2.13). Prefixing the keys with ``TORCHELASTIC_RESTART_COUNT`` keeps the
    attempts apart. On several nodes an agent whose own workers were still healthy restarts them
    without counting an attempt, so the counts can differ between nodes: there, start torchrun
    with ``TORCH_DISABLE_SHARE_RDZV_TCP_STORE=1`` (each attempt then has a store of its own, and
    no prefix is added).
    """
    import torch.distributed as dist

    if os.environ.get("TORCHELASTIC_USE_AGENT_STORE") != "True":
        return store
    return dist.PrefixStore(f"course-attempt-{os.environ.get(ATTEMPT_ENV, '0')}", store)


def popen_dying_with_parent(cmd: Sequence[str], **kwargs):
    """``subprocess.Popen(cmd, **kwargs)`` whose process Linux SIGKILLs when this one dies.

    For a launcher started from a notebook (torchrun): a killed kernel takes it along, and its
    workers, which :func:`process_group` ties to it the same way, follow. (Linux only; Linux sends
    the signal when the *thread* that started the process ends: start it from the main thread.)
    """
    import subprocess

    if sys.platform.startswith("linux"):
        kwargs["preexec_fn"] = _set_pdeathsig
    return subprocess.Popen(list(cmd), **kwargs)


def _set_pdeathsig() -> None:
    with contextlib.suppress(OSError, AttributeError):
        ctypes.CDLL(None, use_errno=True).prctl(1, signal.SIGKILL, 0, 0, 0)  # PR_SET_PDEATHSIG


def _loopback_store(timeout: datetime.timedelta):
    """Torch's TCP store for a local launch, its server on 127.0.0.1 only (rank 0 binds the socket
    and hands it to the store: ``TCPStore`` itself would listen on every interface)."""
    import torch.distributed as dist

    host, port = os.environ["MASTER_ADDR"], int(os.environ["MASTER_PORT"])
    world = int(os.environ["WORLD_SIZE"])
    if int(os.environ["RANK"]) != 0:
        return dist.TCPStore(host, port, world, is_master=False, timeout=timeout)
    server = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    server.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    server.bind((host, port))
    server.listen(128)
    store = dist.TCPStore(
        host, port, world, is_master=True, timeout=timeout, master_listen_fd=server.detach()
    )
    return store


def _die_with_parent(parent_pid: int) -> None:
    """Ask Linux to SIGKILL this process when its parent dies; exit now if it already has."""
    if not sys.platform.startswith("linux"):
        return
    _set_pdeathsig()
    if os.getppid() != parent_pid:  # the parent died before prctl took effect
        os._exit(1)


def _worker(fns, args, kwargs, env: dict, threads: int, results) -> None:
    _die_with_parent(int(env["COURSE_PARENT_PID"]))
    os.environ.update(env)
    r = int(env["RANK"])
    failed_at = None
    try:
        import torch

        torch.set_num_threads(threads)
        with process_group(env.get("COURSE_BACKEND") or None):
            try:
                out = [fn(*args, **kwargs) for fn in fns]
            except BaseException:
                failed_at = time.time()  # before the group's teardown makes the peers fail
                raise
        results.put((r, "ok", pickle.dumps(out)))
    except BaseException:  # noqa: BLE001 - reported to the parent, which raises it
        results.put((r, "error", (failed_at or time.time(), traceback.format_exc())))
        raise SystemExit(1) from None


def _first_error(results, procs: Sequence, done: dict, errors: dict, wait_seconds: float = 3.0):
    """The rank whose error came first, after waiting up to ``wait_seconds`` for the others to
    report.

    When one rank raises, its peers soon fail too ("connection reset by peer" from gloo or nccl):
    the earliest error is the cause, whichever message reached the parent first.
    """
    deadline = time.monotonic() + wait_seconds
    while time.monotonic() < deadline:
        pending = [i for i, p in enumerate(procs) if i not in done and i not in errors]
        if not pending or all(procs[i].exitcode is not None for i in pending) and results.empty():
            break
        try:
            r, status, payload = results.get(timeout=0.1)
        except queue.Empty:
            continue
        if status == "error":
            errors[r] = payload
    killed = [
        i
        for i, p in enumerate(procs)
        if i not in errors and p.exitcode is not None and p.exitcode < 0
    ]
    if killed:  # a rank killed by a signal reports nothing; its peers then blame the connection
        return killed[0], _signal_message(procs[killed[0]].exitcode)
    rank = min(errors, key=lambda k: errors[k][0])
    return rank, errors[rank][1]


def _signal_message(exitcode: int) -> str:
    """What a negative exit code means: the process was killed by that signal."""
    try:
        name = signal.Signals(-exitcode).name
    except ValueError:
        name = f"signal {-exitcode}"
    why = " (out of memory, or killed by hand)" if name == "SIGKILL" else ""
    return f"was killed by {name}{why}: it raised nothing; its peers then lost their connection"


def _check_importable(fns: Sequence[Callable]) -> None:
    """Each rank is a fresh process that imports the worker by module and name: refuse a function
    it cannot find there (a notebook cell's, a lambda, a nested function) with the reason."""
    main = sys.modules.get("__main__")
    for f in fns:
        module, qual = getattr(f, "__module__", None), getattr(f, "__qualname__", "")
        if module == "__main__" and not getattr(main, "__file__", None):
            raise ValueError(
                f"the worker {qual!r} is defined in a notebook cell (module __main__); each rank "
                "is a new process that imports the worker by its module, and a notebook is not "
                "importable: put the function in a .py file next to the notebook and import it"
            )
        if "<locals>" in qual or "<lambda>" in qual:
            raise ValueError(
                f"the worker {qual!r} is a lambda or a nested function; each rank imports the "
                "worker by module and name: define it at the top level of a module"
            )


def _stop(procs: Sequence) -> None:
    for p in procs:
        if p.is_alive():
            p.terminate()
    deadline = time.monotonic() + GRACE_SECONDS
    for p in procs:
        p.join(max(0.0, deadline - time.monotonic()))
    for p in procs:
        if p.is_alive():
            p.kill()
            p.join()


def launch(
    fn: Callable | Sequence[Callable],
    nprocs: int = 2,
    *,
    args: tuple = (),
    kwargs: dict | None = None,
    timeout_seconds: float = 120.0,
    backend_name: str | None = None,
    threads_per_rank: int | None = None,
) -> list[Any]:
    """Run ``fn(*args, **kwargs)`` on ``nprocs`` ranks; return the results, rank 0 first.

    ``fn`` may be a list of functions: they run one after another in the *same* process group (one
    torch import per rank for several demos), and each rank's result is then the list of their
    results. Results travel back pickled, so return tensors, numbers, dicts or dataclasses.
    ``timeout_seconds`` bounds the whole launch (raises ``TimeoutError``); a rank that raises makes
    the launch raise :class:`WorkerError`. ``threads_per_rank`` defaults to the CPU cores divided
    among the ranks (at least 1). ``backend_name`` defaults to nccl on CUDA, gloo elsewhere. A
    launch whose port another process took first is tried again on a new one
    (:data:`PORT_ATTEMPTS`).
    """
    many = not callable(fn)
    fns = list(fn) if many else [fn]
    if not fns or not all(callable(f) for f in fns):
        raise ValueError(f"fn must be a function or a non-empty list of functions, got {fn!r}")
    n = validate.positive_int("nprocs", nprocs, maximum=MAX_PROCS)
    limit = validate.number(
        "timeout_seconds", timeout_seconds, minimum=0, maximum=3600, strict_min=True
    )
    _check_importable(fns)
    threads = threads_per_rank or max(1, usable_cores() // n)
    attempts = PORT_ATTEMPTS
    while True:
        try:
            done = _run_ranks(
                fns,
                n,
                (args, kwargs or {}),
                limit,
                backend_name or backend(n),
                threads,
                free_port(),
            )
            break
        except WorkerError as error:
            attempts -= 1
            if attempts == 0 or not _port_taken(error):
                raise
    return [done[r] if many else done[r][0] for r in range(n)]


def _port_taken(error: WorkerError) -> bool:
    """Whether a rank failed because its store's port was taken (EADDRINUSE)."""
    text = error.remote_traceback
    return "EADDRINUSE" in text or "address already in use" in text.lower()


def _run_ranks(
    fns: list[Callable],
    n: int,
    call: tuple[tuple, dict],
    limit: float,
    backend_name: str,
    threads: int,
    port: int,
) -> dict[int, Any]:
    """One launch of ``fns`` on ``n`` ranks whose store listens on ``port``: rank -> its results
    (see :func:`launch`; ``call`` is the functions' ``(args, kwargs)``)."""
    args, kwargs = call
    ctx = mp.get_context("spawn")
    results = ctx.Queue()
    procs = []
    base = {
        "MASTER_ADDR": "127.0.0.1",
        "MASTER_PORT": str(port),
        "WORLD_SIZE": str(n),
        "LOCAL_WORLD_SIZE": str(n),
        "COURSE_BACKEND": backend_name,
        "COURSE_LOOPBACK_STORE": "1",
        "COURSE_PARENT_PID": str(os.getpid()),
    }
    lo = loopback_interface()
    for var in ("GLOO_SOCKET_IFNAME", "NCCL_SOCKET_IFNAME"):
        if lo and var not in os.environ:
            base[var] = lo
    done: dict[int, Any] = {}
    try:
        for r in range(n):
            env = {**base, "RANK": str(r), "LOCAL_RANK": str(r), "GROUP_RANK": "0"}
            p = ctx.Process(
                target=_worker,
                args=(fns, args, kwargs, env, threads, results),
                name=f"course-rank-{r}",
                daemon=True,
            )
            p.start()
            procs.append(p)
        deadline = time.monotonic() + limit
        while len(done) < n:
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                raise TimeoutError(
                    f"launch did not finish within timeout_seconds={limit:g} s "
                    f"({len(done)} of {n} ranks done); all ranks stopped"
                )
            try:
                r, status, payload = results.get(timeout=min(remaining, 0.2))
            except queue.Empty:
                dead = [i for i, p in enumerate(procs) if i not in done and p.exitcode is not None]
                if dead and results.empty():
                    time.sleep(0.2)  # a last message may still be in the pipe
                    if results.empty():
                        i = dead[0]
                        code = procs[i].exitcode
                        raise WorkerError(
                            i,
                            _signal_message(code)
                            if code < 0
                            else f"exited with code {code} without a result",
                        ) from None
                continue
            if status == "error":
                raise WorkerError(*_first_error(results, procs, done, {r: payload}))
            done[r] = pickle.loads(payload)
        for p in procs:
            p.join(GRACE_SECONDS)
    finally:
        _stop(procs)
        results.close()
        results.join_thread()
    return done


def launch_named(fns: Sequence[Callable], nprocs: int = 2, **kwargs) -> list[dict[str, Any]]:
    """:func:`launch` a list of workers in one process group; each rank's results as a dict
    keyed by the workers' ``__name__`` (rank 0 first). ``kwargs`` go to :func:`launch`."""
    out = launch(list(fns), nprocs, **kwargs)
    names = [f.__name__ for f in fns]
    return [dict(zip(names, results, strict=True)) for results in out]


__all__ = [
    "MAX_PROCS",
    "WorkerError",
    "backend",
    "device",
    "loopback_interface",
    "free_port",
    "launch",
    "launch_named",
    "loopback_available",
    "port_is_free",
    "process_group",
    "attempt_store",
    "popen_dying_with_parent",
    "rank",
    "usable_cores",
    "world_size",
]
