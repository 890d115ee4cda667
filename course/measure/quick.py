"""``python -m course measure``: a one-minute portrait of this machine, from the lessons' sweeps.

Prints where it ran, checks each device with a verified matmul, then the best matmul rate per
device and dtype, and the read bandwidth of each cache level (one core) and of main memory (CUDA:
device memory and host <-> device copies too). Every figure is measured now, on this machine, as
a median over repeats; the budget bounds the whole run. Called by ``course.__main__``.

A portrait is also data: :func:`measure_portrait` returns it as a dict (the machine, when, and the
tidy records of each sweep, the format of ``course.measure``), ``--save run.json`` writes it, and
``--compare other.json`` prints this machine beside another's (:func:`compare_lines`), so a class
can compare its laptops; ``--compare h100`` compares with the shipped H100 SXM reference run.
"""

from __future__ import annotations

import datetime
import json
from pathlib import Path
from typing import Any

from course.facts import validate
from course.facts.data import reference
from course.facts.units import fmt_bandwidth, fmt_bytes, fmt_flop_rate
from course.measure import bandwidth, gpu_guards, matmul
from course.measure.devices import (
    available_devices,
    cpu_caches,
    describe_machine,
    machine_info,
    parse_cpu_flags,
    verify_devices,
)
from course.measure.timing import record_dict

#: dtypes worth a line per device (CPUs without bf16 units are slow at it: that is worth seeing).
DTYPES = {"cpu": ("fp32", "bf16"), "cuda": ("fp32", "tf32", "bf16"), "mps": ("fp32", "fp16")}
#: Format version of a saved portrait.
PORTRAIT_VERSION = 1


def _dtypes(device: str) -> tuple[str, ...]:
    """:data:`DTYPES`, plus fp16 on a GPU without bf16 Tensor Cores (a T4: tf32 and bf16 are
    skipped there, with ``gpu_guards``' reason, and fp16 is its Tensor Core dtype)."""
    extra = ("fp16",) if gpu_guards.tensor_core_dtype(device) == "fp16" else ()
    return DTYPES[device] + extra


def measure_portrait(budget_seconds: float = 30.0) -> dict[str, Any]:
    """Measure this machine within about ``budget_seconds`` seconds; the portrait as plain data."""
    budget_seconds = validate.number("budget_seconds", budget_seconds, minimum=3, maximum=3600)
    devices = available_devices()
    info = machine_info()
    tests = verify_devices()
    share = budget_seconds / (2 * len(devices) + 1)
    portrait: dict[str, Any] = {
        "version": PORTRAIT_VERSION,
        "machine": describe_machine(info),
        "cpu_features": list(info.cpu_features),
        "date": datetime.datetime.now(datetime.UTC).isoformat(timespec="seconds"),
        "budget_seconds": budget_seconds,
        "device_tests": [str(t) for t in tests],
        "matmul": [],
        "plateaus": [],
        "cuda_read": [],
        "host_device": [],
    }
    for device in devices:
        sweep = matmul.matmul_sweep(
            [256, 1024, 2048],
            dtypes=_dtypes(device),
            devices=(device,),
            budget_seconds=share,
            show_progress=False,
        )
        portrait["matmul"] += sweep.rows()
    # one thread: L1 and L2 belong to one core (with all threads, waking them costs as much as
    # reading a tiny working set, and L1 came out below L2 on a 16-core host)
    reads = bandwidth.working_set_sweep(threads=1, budget_seconds=share, show_progress=False)
    portrait["plateaus"] = [record_dict(p) for p in bandwidth.cache_plateaus(reads, cpu_caches())]
    if "cuda" in devices:
        portrait["cuda_read"] = bandwidth.working_set_sweep(
            [2**30], device="cuda", budget_seconds=share / 2
        ).rows()
        portrait["host_device"] = bandwidth.host_device_sweep(
            [256 * 2**20], pinned=(True,), budget_seconds=share / 2
        ).rows()
    return portrait


def _figures(portrait: dict[str, Any]) -> dict[str, tuple[float, str]]:
    """The portrait's headline figures: label -> (value, formatted text)."""
    out: dict[str, tuple[float, str]] = {}
    for r in portrait.get("matmul", []):
        key = f"matmul {r['device']} {r['dtype']}"
        if key not in out or r["flop_per_s"] > out[key][0]:
            text = f"{fmt_flop_rate(r['flop_per_s'])} (n = {r['size']}, median of {r['repeats']})"
            out[key] = (r["flop_per_s"], text)
    for p in portrait.get("plateaus", []):
        size = (
            f" ({fmt_bytes(p['capacity_bytes'], binary=True)})" if p.get("capacity_bytes") else ""
        )
        out[f"read bandwidth {p['level']}{size}, one core"] = (
            p["bytes_per_s"],
            fmt_bandwidth(p["bytes_per_s"]),
        )
    for r in portrait.get("cuda_read", []):
        out["read bandwidth cuda memory"] = (r["bytes_per_s"], fmt_bandwidth(r["bytes_per_s"]))
    for r in portrait.get("host_device", []):
        pinned = "pinned" if r.get("pinned") else "pageable"
        out[f"copy {r['kernel']} {pinned}"] = (r["bytes_per_s"], fmt_bandwidth(r["bytes_per_s"]))
    return out


def portrait_lines(portrait: dict[str, Any]) -> list[str]:
    """The report of one portrait, as lines of text."""
    lines = [portrait["machine"], *portrait.get("device_tests", [])]
    odd = set(
        bandwidth.out_of_order([bandwidth.Plateau(**p) for p in portrait.get("plateaus", [])])
    )
    for label, (_, text) in _figures(portrait).items():
        level = label.removeprefix("read bandwidth ").split(" ")[0]
        note = (
            "  [below the next level: per-call overhead at this working set, not the "
            "hardware; rerun]"
            if label.startswith("read") and level in odd
            else ""
        )
        lines.append(f"{label}: {text}{note}")
    return lines


def measure_machine(budget_seconds: float = 30.0) -> list[str]:
    """Measure this machine within about ``budget_seconds`` seconds; the report as lines of text."""
    return portrait_lines(measure_portrait(budget_seconds))


def save_portrait(portrait: dict[str, Any], path: str | Path) -> Path:
    """Write a portrait as JSON (UTF-8, indented) and return the path."""
    target = Path(path)
    target.write_text(json.dumps(portrait, indent=1) + "\n", encoding="utf-8")
    return target


#: Names ``--compare`` accepts for a shipped reference run instead of a file.
REFERENCE_NAMES = {"h100": reference.H100, reference.H100: reference.H100}


def reference_portrait(run: str = reference.H100) -> dict[str, Any]:
    """A shipped reference run as a portrait (same format as :func:`measure_portrait`).

    Its matmul records are the GPU's and its host CPU's sweeps; its memory figures are the GPU's
    device read at 1 GiB and the pinned host <-> device copies. It has no CPU cache plateaus.
    """
    machine = reference.load(run, "machine")
    mm, bw = reference.load(run, "matmul"), reference.load(run, "bandwidth")
    largest = max(r["working_set_bytes"] for r in bw["cuda_read"])
    return {
        "version": PORTRAIT_VERSION,
        "machine": f"{machine['describe_machine']} ({reference.label(run)})",
        "cpu_features": list(parse_cpu_flags(machine.get("lscpu", ""))),
        "date": machine.get("recorded", ""),
        "budget_seconds": None,
        "device_tests": [],
        "matmul": mm["matmul_sweep"] + mm["cpu_matmul_sweep"],
        "plateaus": [],
        "cuda_read": [r for r in bw["cuda_read"] if r["working_set_bytes"] == largest],
        "host_device": [
            r for r in bw["host_device"] if r["pinned"] and r["working_set_bytes"] == 256 * 2**20
        ],
    }


def load_portrait(path: str | Path) -> dict[str, Any]:
    """Read a portrait that ``--save`` wrote, or "h100" for the shipped H100 reference run."""
    if str(path) in REFERENCE_NAMES:
        return reference_portrait(REFERENCE_NAMES[str(path)])
    try:
        data = json.loads(Path(path).read_text(encoding="utf-8"))
    except (OSError, json.JSONDecodeError) as err:
        raise ValueError(
            f"path must be a portrait saved by `measure --save`, got {path!s}: {err}"
        ) from err
    if not isinstance(data, dict) or "machine" not in data or "matmul" not in data:
        raise ValueError(f"path must be a portrait saved by `measure --save`, got {path!s}")
    return data


def compare_lines(here: dict[str, Any], there: dict[str, Any]) -> list[str]:
    """Two portraits side by side: each figure here, there, and here / there."""
    a, b = _figures(here), _figures(there)
    labels = list(a) + [k for k in b if k not in a]
    width = max((len(k) for k in labels), default=10)
    lines = [
        f"A: {here['machine'].splitlines()[0]} ({here.get('date', '?')})",
        f"B: {there['machine'].splitlines()[0]} ({there.get('date', '?')})",
        f"{'figure':{width}}  {'A':>16}  {'B':>16}  {'A / B':>8}",
    ]
    for label in labels:
        va, vb = a.get(label), b.get(label)
        ratio = f"{va[0] / vb[0]:.3g}x" if va and vb else "-"
        lines.append(
            f"{label:{width}}  {va[1].split(' (')[0] if va else '-':>16}  "
            f"{vb[1].split(' (')[0] if vb else '-':>16}  {ratio:>8}"
        )
    return lines


def run_measure(
    budget_seconds: float = 30.0, *, save: str | None = None, compare: str | None = None
) -> int:
    """Print this machine's portrait (and a comparison); 1 if a device failed its verified
    matmul."""
    other = load_portrait(compare) if compare else None  # fail before measuring, not after
    portrait = measure_portrait(budget_seconds)
    print("\n".join(portrait_lines(portrait)))
    if save:
        print(f"saved to {save_portrait(portrait, save)}")
    if other is not None:
        print()
        print("\n".join(compare_lines(portrait, other)))
    return 1 if any(line.startswith("[FAIL]") for line in portrait["device_tests"]) else 0
