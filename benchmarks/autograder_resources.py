"""Benchmark: the memory and time Gradescope's autograder of a set needs, measured here.

    .venv/bin/python benchmarks/autograder_resources.py [--set 00_units_and_memory ...]

For each set: builds the archive (``python -m teaching autograder gradescope``), unpacks it into an
``/autograder`` layout of its own, hands in the solution's answers (as ``grade_class.py`` builds a
learner) and runs ``run_autograder`` as Gradescope does, with this machine's Python. Every 0.1 s it
samples the resident memory of ``run_autograder`` and all its processes (the sandboxes included):
the peak of their sum is what the container's memory limit must hold (shared pages counted twice,
so it errs high). Prints JSON; the score says the run graded. Not a test: nothing here asserts.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import subprocess
import sys
import tempfile
import time
import zipfile
from pathlib import Path

import psutil
from grade_class import make_class

from course.measure.devices import describe_machine
from teaching.grading.authoring import REPO
from teaching.grading.exports import gradescope


def tree_rss_bytes(pid: int) -> int:
    total = 0
    with contextlib.suppress(psutil.Error):
        root = psutil.Process(pid)
        for p in [root, *root.children(recursive=True)]:
            with contextlib.suppress(psutil.Error):
                total += p.memory_info().rss
    return total


def measure(set_name: str) -> dict:
    with tempfile.TemporaryDirectory(prefix="autograder-bench-") as tmp:
        root = Path(tmp) / "autograder"
        (root / "submission").mkdir(parents=True)
        with zipfile.ZipFile(gradescope.archive(set_name, Path(tmp) / "a.zip", repo=REPO)) as z:
            z.extractall(root / "source")
            for info in z.infolist():
                os.chmod(root / "source" / info.filename, (info.external_attr >> 16) & 0o777)
        make_class(root / "submission", set_name, 1)
        env = {**os.environ, "AUTOGRADER_ROOT": str(root), "AUTOGRADER_PYTHON": sys.executable}
        start = time.monotonic()
        proc = subprocess.Popen(
            [str(root / "source" / "run_autograder")],
            env=env,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        peak = 0
        while proc.poll() is None:
            peak = max(peak, tree_rss_bytes(proc.pid))
            time.sleep(0.1)
        wall = time.monotonic() - start
        results = json.loads((root / "results" / "results.json").read_text())
    tests = results.get("tests", [])
    return {
        "set": set_name,
        "returncode": proc.returncode,
        "score": sum(t["score"] for t in tests),
        "max_score": sum(t["max_score"] for t in tests),
        "peak_rss_mib_all_processes": round(peak / 2**20),
        "wall_s": round(wall, 1),
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--set", nargs="+", default=["00_units_and_memory", "12_training_at_scale"])
    args = parser.parse_args(argv)
    load_before = os.getloadavg()
    runs = [measure(s) for s in args.set]
    report = {
        "runs": runs,
        "load_average_before": [round(x, 1) for x in load_before],
        "load_average_after": [round(x, 1) for x in os.getloadavg()],
        "cpus": os.cpu_count(),
        "machine": describe_machine(),
        "date": time.strftime("%Y-%m-%d", time.gmtime()),
    }
    print(json.dumps(report, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
