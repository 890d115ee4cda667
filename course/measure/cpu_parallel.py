"""CPU parallelism measured: threads vs processes under the GIL, and DataLoader workers.

:func:`gil_comparison` runs the same number of equal tasks one after another, on a thread pool and
on a process pool, for two kinds of task: pure-Python arithmetic (holds CPython's global interpreter
lock, so threads take turns) and a torch matrix multiply (torch releases the GIL inside its kernels,
so threads can overlap). :func:`dataloader_sweep` feeds a small model from a
``torch.utils.data.DataLoader`` whose samples cost CPU time to prepare (as decoding and augmenting
images do), with 0, 1, 2 ... worker processes, and splits each epoch into time spent waiting for
data and time spent in the model. Both return tidy records; the findings are printed from them by
``course.presentation.findings.parallelism``. Worker functions are module-level so that spawn works
(macOS, Windows).
"""

from __future__ import annotations

import multiprocessing
import os
import time
from concurrent.futures import ProcessPoolExecutor, ThreadPoolExecutor

import torch
from torch import nn
from torch.utils.data import DataLoader, Dataset

from course.facts import validate
from course.facts.report import Table

KINDS = ("pure Python", "torch matmul")
MODES = ("serial", "threads", "processes")


def python_task(n: int = 1_000_000) -> int:
    """Pure-Python arithmetic: holds the GIL the whole time."""
    total = 0
    for i in range(n):
        total += i * i % 7
    return total


def torch_task(size: int = 384, repeats: int = 16) -> float:
    """Matrix multiplies in torch on one thread: the GIL is released inside each kernel."""
    torch.set_num_threads(1)
    a = torch.ones(size, size)
    for _ in range(repeats):
        a = (a @ a) / size
    return float(a[0, 0])


def _run(kind: str, work: int = 1_000_000) -> object:
    return python_task(work) if kind == KINDS[0] else torch_task()


def _warm(_: int) -> int:
    return os.getpid()


def gil_comparison(tasks: int = 4, workers: int = 2, work: int = 1_000_000) -> Table:
    """Seconds to run ``tasks`` equal tasks serially, on ``workers`` threads and on ``workers``
    processes, for each of :data:`KINDS`. Process pools are started (and warmed up) before the
    clock starts: ``startup_seconds`` records what starting them cost. The pool uses the
    ``spawn`` start method: a forked child of a process whose OpenMP thread pool has run (torch's
    CPU kernels) can hang in its first parallel region.

    ``work`` is the pure-Python task's loop length. Records, in a :class:`Table`: ``{"kind",
    "mode", "workers", "tasks", "seconds", "startup_seconds"}``.
    """
    n = validate.positive_int("tasks", tasks, maximum=64)
    w = validate.positive_int("workers", workers, maximum=16)
    size = validate.positive_int("work", work, maximum=10**9)
    threads_before = torch.get_num_threads()
    records = []
    try:
        for kind in KINDS:
            t0 = time.perf_counter()
            for _ in range(n):
                _run(kind, size)
            records.append(
                {
                    "kind": kind,
                    "mode": "serial",
                    "workers": 1,
                    "tasks": n,
                    "seconds": time.perf_counter() - t0,
                    "startup_seconds": 0.0,
                }
            )
            with ThreadPoolExecutor(w) as pool:
                t0 = time.perf_counter()
                list(pool.map(_run, [kind] * n, [size] * n))
                records.append(
                    {
                        "kind": kind,
                        "mode": "threads",
                        "workers": w,
                        "tasks": n,
                        "seconds": time.perf_counter() - t0,
                        "startup_seconds": 0.0,
                    }
                )
            s0 = time.perf_counter()
            with ProcessPoolExecutor(w, mp_context=multiprocessing.get_context("spawn")) as pool:
                list(pool.map(_warm, range(w)))
                startup = time.perf_counter() - s0
                t0 = time.perf_counter()
                list(pool.map(_run, [kind] * n, [size] * n))
                records.append(
                    {
                        "kind": kind,
                        "mode": "processes",
                        "workers": w,
                        "tasks": n,
                        "seconds": time.perf_counter() - t0,
                        "startup_seconds": startup,
                    }
                )
    finally:
        torch.set_num_threads(threads_before)
    return Table(records, title="The same tasks serially, on threads and on processes")


class SlowDataset(Dataset):
    """``length`` samples, each costing about ``work`` iterations of pure-Python preparation
    (a stand-in for decoding and augmenting), then a seeded vector of ``features`` floats."""

    def __init__(self, length: int = 256, features: int = 256, work: int = 20_000) -> None:
        self.length, self.features, self.work = length, features, work

    def __len__(self) -> int:
        return self.length

    def __getitem__(self, index: int):
        acc = 0
        for i in range(self.work):
            acc += (i * index) % 3
        g = torch.Generator().manual_seed(index)
        x = torch.randn(self.features, generator=g)
        return x, torch.tensor(acc % 10)


def dataloader_sweep(
    workers=(0, 1, 2), *, length: int = 256, batch: int = 32, work: int = 20_000, hidden: int = 128
) -> Table:
    """One epoch of a small MLP fed by a DataLoader with each number of ``workers``.

    Records: ``{"num_workers", "seconds", "wait_seconds", "compute_seconds", "batches",
    "startup_seconds"}``; ``wait_seconds`` is time blocked in ``next(loader)`` (the data-loading
    bottleneck), ``compute_seconds`` the forward, backward and optimizer step. Worker processes
    are started before the clock (``startup_seconds``). The model runs on one thread.
    """
    data = SlowDataset(validate.positive_int("length", length, maximum=100_000), work=work)
    b = validate.positive_int("batch", batch, maximum=4096)
    with torch.random.fork_rng(devices=[]):
        torch.manual_seed(0)
        model = nn.Sequential(nn.Linear(data.features, hidden), nn.ReLU(), nn.Linear(hidden, 10))
    opt = torch.optim.SGD(model.parameters(), lr=0.01)
    records = []
    threads_before = torch.get_num_threads()
    torch.set_num_threads(1)  # the model on one core: the workers are the parallelism measured
    try:
        records = _epochs(workers, data, b, model, opt)
    finally:
        torch.set_num_threads(threads_before)
    return Table(records, title="One epoch by DataLoader workers")


def _epochs(workers, data, b, model, opt) -> list[dict]:
    records = []
    for w in workers:
        w = validate.positive_int("workers", w, minimum=0, maximum=16)
        s0 = time.perf_counter()
        loader = DataLoader(data, batch_size=b, num_workers=w, persistent_workers=False)
        it = iter(loader)
        startup = time.perf_counter() - s0
        wait = compute = 0.0
        batches = 0
        t0 = time.perf_counter()
        while True:
            a = time.perf_counter()
            try:
                x, y = next(it)
            except StopIteration:
                break
            c = time.perf_counter()
            loss = nn.functional.cross_entropy(model(x), y)
            loss.backward()
            opt.step()
            opt.zero_grad()
            wait += c - a
            compute += time.perf_counter() - c
            batches += 1
        records.append(
            {
                "num_workers": w,
                "seconds": time.perf_counter() - t0,
                "wait_seconds": wait,
                "compute_seconds": compute,
                "batches": batches,
                "startup_seconds": startup,
            }
        )
        del it, loader
    return records


__all__ = [
    "KINDS",
    "MODES",
    "SlowDataset",
    "dataloader_sweep",
    "gil_comparison",
    "python_task",
    "torch_task",
]
