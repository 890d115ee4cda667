"""Benchmark: lesson 13's load sweep at full length, recorded once and shipped as reference data.

    .venv/bin/python benchmarks/serving_sweep.py [--out DIR] [--repeats 3] [--point-seconds 10]

The lesson's live sweep has to fit in about a minute, so each load holds a few hundred requests
once. This runs the same server and load generator (:func:`course.measure.loadgen.serving_run`)
with longer points (at least 300 requests and ``--point-seconds`` each, the first 10 % left out as
warm-up), every load ``--repeats`` times with fresh seeds, and static against continuous batching
as often. It writes ``serving_sweep.json`` (settings, the machine, the load average before and
after, every load point and batching point) and ``machine.json`` into ``--out``, a reference run
folder that :mod:`course.facts.data.reference` loads. On a shared machine the load average says how
much the neighbours took. Not a test: nothing here asserts a result.
"""

from __future__ import annotations

import argparse
import dataclasses
import datetime
import json
import os
import platform
from pathlib import Path

import torch

from course.measure import devices, loadgen

ROOT = Path(__file__).resolve().parents[1]
FRACTIONS = (0.3, 0.5, 0.7, 0.8, 0.9, 1.0, 1.2)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--out", type=Path, required=True)
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--point-seconds", type=float, default=10.0)
    ap.add_argument("--requests", type=int, default=300)
    args = ap.parse_args()
    torch.set_num_threads(1)  # as the lesson: one core computes, the other carries the clients
    torch.manual_seed(0)
    settings = dict(
        fractions=FRACTIONS,
        requests_per_point=args.requests,
        point_seconds=args.point_seconds,
        repeats=args.repeats,
        warmup_fraction=0.1,
        batching_repeats=args.repeats,
        budget_seconds=3000,
        seed=0,
    )
    before = os.getloadavg()
    started = datetime.datetime.now(datetime.UTC)
    run = loadgen.serving_run(**settings)
    after = os.getloadavg()
    data = {
        "recorded": started.strftime("%Y-%m-%d %H:%M UTC"),
        "describe_machine": devices.describe_machine(),
        "load_average_1_5_15_min_before": before,
        "load_average_1_5_15_min_after": after,
        "settings": settings,
        "capacity_per_s": run.capacity_per_s,
        "unloaded_ttft_seconds": run.unloaded_ttft_seconds,
        "max_batch": run.max_batch,
        "ttft_slo_seconds": run.ttft_slo_seconds,
        "tpot_slo_seconds": run.tpot_slo_seconds,
        "elapsed_seconds": run.elapsed_seconds,
        "skipped": run.skipped,
        "sweep": [dataclasses.asdict(p) for p in run.sweep],
        "batching": [dataclasses.asdict(p) for p in run.batching],
    }
    args.out.mkdir(parents=True, exist_ok=True)
    (args.out / "serving_sweep.json").write_text(json.dumps(data, indent=1) + "\n")
    machine = {
        "recorded": started.strftime("%Y-%m-%d"),
        "torch": torch.__version__,
        "python": platform.python_version(),
        "describe_machine": devices.describe_machine(),
    }
    (args.out / "machine.json").write_text(json.dumps(machine, indent=1) + "\n")
    print(f"wrote {args.out} in {run.elapsed_seconds:.0f} s; skipped: {run.skipped or 'nothing'}")


if __name__ == "__main__":
    main()
