"""Benchmark: memory and CPU time of each lesson's kernel, for sizing a JupyterHub.

    .venv/bin/python benchmarks/lesson_resources.py [--lessons 00 04 ...] [--save out.json]

Executes each lesson notebook top to bottom (a copy in memory: nothing is written back) in a fresh
kernel, as a learner does with *Run all*, and samples the kernel's process tree every 0.2 s with
psutil: the kernel process and every process it starts (lesson 06's and 12's ``torch.distributed``
workers). It reports, per lesson, the peak resident memory of the kernel alone and of the whole tree
(a sum of RSS: pages shared between processes count twice, so it errs high), the CPU seconds the tree
used (user + system, each process's last sample: a worker that lives under 0.2 s is missed) and
the wall time. It also reports the peak shared memory (``/dev/shm``) the tree maps, the sum of the
distinct ``/dev/shm`` mappings in the processes' ``/proc/PID/maps`` (deleted files included, as
torch's shared tensors are): what a container's ``/dev/shm`` must hold (Docker's default is 64 MiB).
The machine's load average before and after is printed too: on a busy machine the wall time grows,
the CPU seconds and the memory much less. Not a test: nothing here asserts a size.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import threading
import time
from pathlib import Path

import nbformat
import psutil
from nbclient import NotebookClient

ROOT = Path(__file__).resolve().parents[1]
MIB = 1024**2


class TreeSampler(threading.Thread):
    """Samples every process below this one (the kernel and its children) until stopped."""

    def __init__(self, interval_s: float = 0.2) -> None:
        super().__init__(daemon=True)
        self.interval_s = interval_s
        self.stop = threading.Event()
        self.peak_tree_bytes = 0
        self.peak_process_bytes = 0
        self.cpu_s_by_pid: dict[tuple[int, float], float] = {}
        self.max_processes = 0
        self.peak_shm_bytes = 0

    def run(self) -> None:
        me = psutil.Process()
        while not self.stop.is_set():
            tree = 0
            procs = me.children(recursive=True)
            self.peak_shm_bytes = max(self.peak_shm_bytes, shm_bytes([p.pid for p in procs]))
            self.max_processes = max(self.max_processes, len(procs))
            for p in procs:
                try:
                    with p.oneshot():
                        rss = p.memory_info().rss
                        cpu = p.cpu_times()
                        key = (p.pid, p.create_time())
                except psutil.Error:
                    continue
                tree += rss
                self.peak_process_bytes = max(self.peak_process_bytes, rss)
                self.cpu_s_by_pid[key] = cpu.user + cpu.system
            self.peak_tree_bytes = max(self.peak_tree_bytes, tree)
            self.stop.wait(self.interval_s)


def shm_bytes(pids: list[int]) -> int:
    """Bytes of the distinct ``/dev/shm`` files the processes map (Linux; 0 elsewhere)."""
    extent: dict[str, int] = {}
    for pid in pids:
        try:
            lines = Path(f"/proc/{pid}/maps").read_text().splitlines()
        except OSError:
            continue
        for line in lines:
            if "/dev/shm/" not in line:
                continue
            start, end = (int(x, 16) for x in line.split()[0].split("-"))
            name = line[line.index("/dev/shm/") :]
            extent[name] = max(extent.get(name, 0), end - start)
    return sum(extent.values())


def measure(path: Path, timeout_seconds: int = 900) -> dict:
    nb = nbformat.read(path, as_version=4)
    client = NotebookClient(nb, timeout=timeout_seconds, kernel_name="python3",
                            resources={"metadata": {"path": str(path.parent)}})  # fmt: skip
    sampler = TreeSampler()
    sampler.start()
    start = time.monotonic()
    error = None
    try:
        client.execute()
    except Exception as exc:  # a failing lesson is reported, not hidden
        error = f"{type(exc).__name__}: {str(exc).splitlines()[0] if str(exc) else ''}"
    wall = time.monotonic() - start
    sampler.stop.set()
    sampler.join()
    return {
        "lesson": path.stem,
        "peak_kernel_rss_mib": round(sampler.peak_process_bytes / MIB),
        "peak_tree_rss_mib": round(sampler.peak_tree_bytes / MIB),
        "cpu_seconds": round(sum(sampler.cpu_s_by_pid.values()), 1),
        "wall_s": round(wall, 1),
        "max_processes": sampler.max_processes,
        "peak_dev_shm_mib": round(sampler.peak_shm_bytes / MIB, 1),
        "error": error,
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--lessons", nargs="*", help="two-digit numbers (default: all)")
    parser.add_argument("--save", help="also write the JSON report here")
    args = parser.parse_args(argv)
    paths = sorted((ROOT / "notebooks").glob("[0-9][0-9]_*.ipynb"))
    if args.lessons:
        paths = [p for p in paths if p.stem[:2] in args.lessons]
    report = {
        "machine": f"{os.cpu_count()} CPUs, {psutil.virtual_memory().total / 1024**3:.1f} GiB",
        "load_average_before": [round(x, 1) for x in os.getloadavg()],
        "lessons": [],
    }
    for path in paths:
        row = measure(path)
        print(json.dumps(row), file=sys.stderr, flush=True)
        report["lessons"].append(row)
        if args.save:
            Path(args.save).write_text(json.dumps(report, indent=1) + "\n")
    report["load_average_after"] = [round(x, 1) for x in os.getloadavg()]
    print(json.dumps(report, indent=1))
    if args.save:
        Path(args.save).write_text(json.dumps(report, indent=1) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
