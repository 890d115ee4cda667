"""Profile a training step with ``torch.profiler``: top operators, a timeline, memory, a trace file.

- :func:`profile_training_step` runs a few training steps of a small transformer under
  ``torch.profiler.profile`` (``record_shapes``, ``profile_memory``), each phase labelled with
  ``record_function`` ("data", "forward", "backward", "optimizer"), writes the Chrome trace
  (open it at https://ui.perfetto.dev or chrome://tracing) and returns a :class:`StepProfile`:
  the top operators by self time (a ``report.Table`` that prints itself, times in seconds), the
  timeline of the last step's top-level events and the memory timeline, both read back from the
  trace file (so the plot shows exactly what the file holds).
- :func:`slow_and_fixed` builds the lesson's deliberately slow step (the largest embedding gradient
  logged by a Python loop, one tensor and one ``float()`` per element) and its fix (one torch call);
  :func:`paired_times` times two functions interleaved (A, B, A, B, ...), so a change in the
  machine's load hits both, and returns the per-pair ratios.

On a CUDA GPU the same code adds ``ProfilerActivity.CUDA``: the trace then shows kernels on the
GPU's stream and the gaps between their launches. Used by lesson 11.
"""

from __future__ import annotations

import json
import math
import statistics
import time
from collections import Counter
from collections.abc import Callable
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import torch
import torch.nn.functional as F
from torch.profiler import ProfilerActivity, profile, record_function

from course.facts import validate
from course.facts.models import TransformerConfig
from course.facts.report import Table
from course.measure.storage import scratch_dir
from course.measure.training_optimisations import SWEEP_CONFIG, random_tokens, seeded_model

PHASES = ("data", "forward", "backward", "logging", "optimizer")
#: The ``record_function`` label around each profiled step (the timeline shows the last one).
STEP = "train_step"


@dataclass(frozen=True)
class OpStat:
    """One operator's totals over the profiled steps, in seconds (the profiler counts in µs).

    ``self_seconds`` is nan where the events were read without their tree (``export=False``).
    """

    name: str
    calls: int
    self_seconds: float
    total_seconds: float

    @property
    def per_call_seconds(self) -> float:
        """Inclusive time of one call, on average."""
        return self.total_seconds / self.calls


@dataclass(frozen=True)
class StepProfile:
    """What :func:`profile_training_step` found; ``trace_path`` is the Chrome trace written."""

    device: str
    steps: int
    top_ops: Table  # of OpStat: the top operators, largest first
    timeline: list[dict[str, Any]]  # {name, start_us, duration_us, depth} of the last step
    memory: list[dict[str, Any]]  # {time_us, allocated_bytes} over the profiled steps
    phase_us: dict[str, float]  # median microseconds of each record_function phase
    trace_path: Path | None  # None when not exported
    extra: dict[str, Any] = field(default_factory=dict)


def _step_fn(
    model,
    optimizer,
    config: TransformerConfig,
    batch: int,
    seq_len: int,
    logging: str | None = None,
):
    """One labelled training step; ``logging`` adds a log of the largest embedding gradient,
    computed the slow way ("python": one tensor op and one ``float()`` per element) or in one
    torch call ("torch")."""
    step = {"i": 0}
    device = next(model.parameters()).device

    def run() -> None:
        step["i"] += 1
        with record_function("data"):
            inputs, targets = random_tokens(config, batch, seq_len, seed=step["i"])
            inputs, targets = inputs.to(device), targets.to(device)
        with record_function("forward"):
            logits = model(inputs)
            loss = F.cross_entropy(logits.reshape(-1, logits.shape[-1]), targets.reshape(-1))
        with record_function("backward"):
            loss.backward()
        if logging is not None:
            with record_function("logging"):
                grad = model.embed.weight.grad
                if logging == "python":  # the slow way: a tensor and a float() per element
                    step["log"] = max(abs(float(g)) for g in grad.reshape(-1))
                else:
                    step["log"] = grad.abs().max().item()
        with record_function("optimizer"):
            optimizer.step()
            optimizer.zero_grad(set_to_none=True)

    return run


def training_step(
    config: TransformerConfig = SWEEP_CONFIG,
    *,
    batch: int = 4,
    seq_len: int = 32,
    logging: str | None = None,
    seed: int = 0,
    device: str = "cpu",
):
    """A no-argument function running one AdamW training step of ``config`` (and its model)."""
    validate.choice("logging", logging, (None, "python", "torch"))
    model = seeded_model(config, seed).to(device)
    optimizer = torch.optim.AdamW(model.parameters(), lr=1e-3)
    return _step_fn(model, optimizer, config, batch, seq_len, logging), model


def _read_trace(path: Path) -> list[dict[str, Any]]:
    data = json.loads(path.read_text())
    return data["traceEvents"] if isinstance(data, dict) else data


def timeline_from_trace(events: list[dict[str, Any]], phase: str = "train_step") -> list[dict]:
    """Top-level CPU events inside the last step: name, start and duration (us), nesting depth.

    Depth 0 is the ``record_function`` phases; depth 1 the operators they call directly.
    """
    complete = [e for e in events if e.get("ph") == "X" and "dur" in e]
    steps = [e for e in complete if str(e.get("name", "")).startswith(phase)]
    if steps:
        last = max(steps, key=lambda e: e["ts"])
        t0, t1 = last["ts"], last["ts"] + last["dur"]
    else:
        t0 = min((e["ts"] for e in complete), default=0)
        t1 = max((e["ts"] + e["dur"] for e in complete), default=0)
    inside = [
        e
        for e in complete
        if t0 <= e["ts"]
        and e["ts"] + e["dur"] <= t1
        and not str(e["name"]).startswith((phase, "PyTorch Profiler"))
        and e.get("cat") != "python_function"
    ]
    inside.sort(key=lambda e: (e["ts"], -e["dur"]))
    out, stack = [], []
    for e in inside:
        while stack and e["ts"] >= stack[-1]:
            stack.pop()
        depth = len(stack)
        if depth <= 1:
            out.append(
                {
                    "name": e["name"],
                    "start_us": e["ts"] - t0,
                    "duration_us": e["dur"],
                    "depth": depth,
                }
            )
        stack.append(e["ts"] + e["dur"])
    return out


def memory_from_trace(events: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The profiler's ``[memory]`` instant events: total bytes allocated over time (us from
    start)."""
    mem = [e for e in events if e.get("name") == "[memory]" and "args" in e]
    if not mem:
        return []
    t0 = min(e["ts"] for e in mem)
    return [
        {"time_us": e["ts"] - t0, "allocated_bytes": e["args"].get("Total Allocated", 0)}
        for e in sorted(mem, key=lambda e: e["ts"])
    ]


def profile_training_step(
    config: TransformerConfig = SWEEP_CONFIG,
    *,
    batch: int = 4,
    seq_len: int = 32,
    steps: int = 2,
    logging: str | None = None,
    trace_dir: str | Path | None = None,
    top: int = 10,
    device: str | None = None,
    memory: bool = True,
    threads: int | None = 1,
    export: bool = True,
) -> StepProfile:
    """Profile ``steps`` training steps (after one warm-up) and write a Chrome trace.

    ``trace_dir``: where the trace goes (default: a fresh temporary directory, deleted when the
    process exits). On CUDA the GPU activity is recorded too and ``top_ops`` is sorted by self
    CUDA time. ``export=False``
    writes no trace (so no timeline or memory timeline): quicker for a step with many tiny ops.
    ``memory`` records
    shapes and allocations (the memory timeline); ``threads`` sets torch's intra-op threads while
    profiling (1 by default: on a small shared machine, two threads fighting for two busy cores
    make every small matmul wait).
    """
    n = validate.positive_int("steps", steps, maximum=50)
    device = device or ("cuda" if torch.cuda.is_available() else "cpu")
    run, _ = training_step(config, batch=batch, seq_len=seq_len, logging=logging, device=device)
    run()  # warm-up: first calls allocate and initialise
    activities = [ProfilerActivity.CPU] + ([ProfilerActivity.CUDA] if device == "cuda" else [])
    with (
        _threads(threads),
        profile(activities=activities, record_shapes=memory, profile_memory=memory) as prof,
    ):
        for _ in range(n):
            with record_function(STEP):
                run()
            if device == "cuda":
                torch.cuda.synchronize()
            prof.step()
    trace_path = None
    if export:
        out_dir = Path(trace_dir) if trace_dir else scratch_dir("course-trace-")
        out_dir.mkdir(parents=True, exist_ok=True)
        trace_path = out_dir / "training_step.trace.json"
        prof.export_chrome_trace(str(trace_path))
    if export:  # key_averages builds the event tree: exact self times, slow for many events
        key = "self_device_time_total" if device == "cuda" else "self_cpu_time_total"
        averages = [
            a
            for a in prof.key_averages()
            if a.key not in (*PHASES, STEP) and not a.key.startswith("ProfilerStep")
        ]
        averages.sort(key=lambda a: getattr(a, key, 0.0), reverse=True)
        top_ops = [
            OpStat(a.key, a.count, getattr(a, key, 0.0) / 1e6, a.cpu_time_total / 1e6)
            for a in averages[:top]
        ]
        phases = {
            a.key: a.cpu_time_total / max(a.count, 1)
            for a in prof.key_averages()
            if a.key in PHASES
        }
    else:
        top_ops, phases = _raw_stats(prof, top, n)
    events = _read_trace(trace_path) if trace_path else []
    return StepProfile(
        device,
        n,
        _ops_table(top_ops, device, n, tree=export),
        timeline_from_trace(events),
        memory_from_trace(events),
        phases,
        trace_path,
    )


def _ops_table(ops: list[OpStat], device: str, steps: int, *, tree: bool) -> Table:
    """The top operators as a table; without the event tree there is no self time to show."""
    order = "self time" if tree else "total time"
    return Table(
        ops,
        title=f"Top operators by {order}, {steps} step(s) on {device} (torch.profiler)",
        columns=(
            "name",
            "calls",
            *(("self_seconds",) if tree else ()),
            "total_seconds",
            "per_call_seconds",
        ),
    )


def _raw_stats(prof, top: int, steps: int) -> tuple[list[OpStat], dict[str, float]]:
    """Calls and inclusive time per operator from the raw events (no tree: self time is nan)."""
    calls: Counter[str] = Counter()
    total_ns: Counter[str] = Counter()
    for e in prof.profiler.kineto_results.events():
        calls[e.name()] += 1
        total_ns[e.name()] += e.duration_ns()
    names = [k for k in calls if k not in (*PHASES, STEP) and not k.startswith("ProfilerStep")]
    names.sort(key=lambda k: total_ns[k], reverse=True)
    ops = [OpStat(k, calls[k], math.nan, total_ns[k] / 1e9) for k in names[:top]]
    return ops, {k: total_ns[k] / 1e3 / max(calls[k], 1) for k in PHASES if k in calls}


@contextmanager
def _threads(n: int | None):
    previous = torch.get_num_threads()
    if n is not None:
        torch.set_num_threads(validate.positive_int("threads", n, maximum=4096))
    try:
        yield
    finally:
        torch.set_num_threads(previous)


@dataclass(frozen=True)
class Paired:
    """Interleaved timings of two functions: per-pair ratios ``a / b`` (> 1: b is faster)."""

    a_seconds: list[float]
    b_seconds: list[float]
    ratios: list[float]
    median_ratio: float
    low_ratio: float  # 25th percentile of the ratios
    high_ratio: float  # 75th percentile


def paired_times(
    a: Callable[[], Any],
    b: Callable[[], Any],
    *,
    repeats: int = 7,
    device: str = "cpu",
    threads: int | None = 1,
) -> Paired:
    """Time ``a`` and ``b`` alternately (``repeats`` pairs, order flipped every pair, one warm-up
    each) so that a change in the machine's load falls on both; ratios are per pair."""
    n = validate.positive_int("repeats", repeats, minimum=3, maximum=1000)

    def once(fn):
        if device == "cuda":
            torch.cuda.synchronize()
        t = time.perf_counter()
        fn()
        if device == "cuda":
            torch.cuda.synchronize()
        return time.perf_counter() - t

    ta, tb = [], []
    with _threads(threads):
        a(), b()
        for i in range(n):
            if i % 2:
                tb.append(once(b))
                ta.append(once(a))
            else:
                ta.append(once(a))
                tb.append(once(b))
    ratios = [x / y for x, y in zip(ta, tb, strict=True)]
    q = statistics.quantiles(ratios, n=4)
    return Paired(ta, tb, ratios, statistics.median(ratios), q[0], q[2])


def slow_and_fixed(
    config: TransformerConfig = SWEEP_CONFIG,
    *,
    batch: int = 4,
    seq_len: int = 32,
    device: str = "cpu",
):
    """The slow step (a Python loop over the embedding gradient) and the fixed one (one call)."""
    slow, _ = training_step(config, batch=batch, seq_len=seq_len, logging="python", device=device)
    fast, _ = training_step(config, batch=batch, seq_len=seq_len, logging="torch", device=device)
    return slow, fast


__all__ = [
    "OpStat",
    "PHASES",
    "Paired",
    "StepProfile",
    "memory_from_trace",
    "paired_times",
    "profile_training_step",
    "slow_and_fixed",
    "timeline_from_trace",
    "training_step",
]
