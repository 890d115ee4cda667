"""Reference runs: measurements recorded with the course's own code on machines a learner may lack.

``load("h100-sxm-2026-11-22", "inference_7b")`` returns that run's ``inference_7b.json`` as a dict.
Each run's folder holds the raw JSON files as recorded and a README with the provenance (machine,
driver, torch version, what each file holds).
"""

from __future__ import annotations

import json
from functools import cache
from pathlib import Path

from course.facts.report import Table

ROOT = Path(__file__).parent / "reference"
H100 = "h100-sxm-2026-11-22"
"""The H100 80GB HBM3 (SXM) run of 2026-11-22: driver 580.159.04, torch 2.11.0+cu130, 16-core Xeon."""
CPU_SWEEP = "cpu-2core-2026-11-29"
"""Lesson 13's load sweep at full length on a quiet 2-core CPU VM, 2026-11-29 (torch 2.13.0+cpu)."""


def runs() -> list[str]:
    """Names of the shipped reference runs."""
    return sorted(p.name for p in ROOT.iterdir() if p.is_dir())


@cache
def _load(run: str, name: str) -> str:
    return (ROOT / run / f"{name}.json").read_text()


def load(run: str, name: str) -> dict:
    """The file ``name`` (without ``.json``) of reference run ``run``, as a fresh dict."""
    if run not in runs():
        raise ValueError(f"run must be one of {runs()}, got {run!r}")
    files = sorted(p.stem for p in (ROOT / run).glob("*.json"))
    if name not in files:
        raise ValueError(f"name must be one of {files} for run {run!r}, got {name!r}")
    return json.loads(_load(run, name))


#: How every figure from a run is labelled in a lesson.
LABELS = {
    H100: "H100 SXM, reference run 2026-11-22",
    CPU_SWEEP: "2-core CPU VM (quiet), recorded sweep 2026-11-29",
}


def label(run: str) -> str:
    """The label a lesson puts on a figure from ``run``: 'H100 SXM, reference run 2026-11-22'."""
    return LABELS.get(run, run)


def records(run: str, name: str, part: str) -> Table:
    """The tidy records of one sweep of a run (``records(H100, "matmul", "alignment")``).

    Each is a dict in the format ``course.measure`` records take as dicts (``MatmulRecord``,
    ``BandwidthRecord``, ``KernelRecord`` fields), with ``machine`` set to :func:`label`, so a
    lesson can plot them beside its own records (``dict(record_dict(r), machine="this machine")``).
    They come as a :class:`course.facts.report.Table`, which prints itself.
    """
    data = load(run, name)
    if part not in data or not isinstance(data[part], list):
        parts = sorted(k for k, v in data.items() if isinstance(v, list))
        raise ValueError(f"part must be one of {parts} for {name!r} of run {run!r}, got {part!r}")
    return Table([dict(r, machine=label(run)) for r in data[part]], title=f"{label(run)}: {part}")
