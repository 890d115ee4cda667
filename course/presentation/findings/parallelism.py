"""Findings of lesson 06 (parallelism): what this run's distributed and CPU measurements say.

Each function takes the tidy records of ``course.distributed`` / ``course.measure.cpu_parallel``
(or a calculator's fit of them) and returns a sentence or short Markdown with the explanation that
fits the outcome, including "the machine was busy: rerun" and "nothing was measured".
"""

from __future__ import annotations

import statistics
from collections.abc import Mapping, Sequence
from typing import Any

from course.facts.units import fmt_bandwidth, fmt_seconds
from course.presentation.findings._common import RERUN, SAME, get, join, times

MISSING = (
    "Nothing was measured (the cell that measures did not run or ran out of budget): rerun it."
)


# ---------------------------------------------------------------------------------------------
# Collectives
# ---------------------------------------------------------------------------------------------


def alpha_beta(
    fit: Any, link_bandwidth_bytes_per_s: float, link_name: str, transport: str = "gloo, loopback"
) -> str:
    """The fitted latency and bandwidth of this machine's all-reduce against a real link's.

    ``transport`` is what the records were timed over (``collectives.transport_of``): "gloo,
    loopback", or "nccl, <link>" on GPUs (two T4s: "nccl, PCIe (PHB: ...)")."""
    if fit is None:
        return MISSING
    r2 = get(fit, "r_squared", 0.0)
    bw, lat = get(fit, "bandwidth_bytes_per_s"), get(fit, "latency_seconds")
    backend, _, link = transport.partition(", ")
    head = (
        f"Fitted on this machine ({get(fit, 'ranks')} {backend} processes, {link}): latency "
        f"alpha = {fmt_seconds(lat)} per ring step, bandwidth B = {fmt_bandwidth(bw)}"
    )
    if r2 < 0.8:
        return (
            f"{head}, but the straight line explains only {r2:.0%} of the variation in the "
            f"times: {RERUN}, or widen the range of sizes."
        )
    ratio = link_bandwidth_bytes_per_s / bw
    if ratio >= 1:
        if backend != "nccl":
            why = (
                "here every byte is copied by a CPU core through the kernel's loopback, while "
                "NCCL's GPU kernels drive dedicated links."
            )
        elif link.startswith("NVLink"):
            why = (
                "NCCL ran on NVLink here too, but messages of at most a few MB are dominated by "
                "the latency alpha and do not reach a link's peak."
            )
        else:
            why = f"NCCL's GPU kernels ran here, but over {link}, not NVLink."
        return (
            f"{head} (the line fits: R² = {r2:.2f}). {link_name} moves "
            f"{fmt_bandwidth(link_bandwidth_bytes_per_s)} per direction, {times(ratio)} more: "
            + why
        )
    if backend == "nccl":
        return (
            f"{head} (R² = {r2:.2f}): faster than {link_name}'s "
            f"{fmt_bandwidth(link_bandwidth_bytes_per_s)}, which no single link reaches: the "
            "sizes were too few or too small for the fit, so fit larger messages."
        )
    return (
        f"{head} (R² = {r2:.2f}): faster than {link_name}'s "
        f"{fmt_bandwidth(link_bandwidth_bytes_per_s)}. Messages this small stay in the CPU's "
        "caches, so the fit measures cache copies, not a link: fit larger messages."
    )


def gloo_reduce_scatter(records: Sequence[Any]) -> str:
    """Reduce-scatter against all-gather at the largest size both were timed at.

    The ring model gives them the same time; gloo builds reduce-scatter from an all-reduce.
    """
    times_at: dict[str, dict[float, float]] = {}
    for r in records:
        times_at.setdefault(get(r, "collective"), {})[get(r, "bytes")] = get(r, "seconds")
    rs, ag = times_at.get("reduce_scatter", {}), times_at.get("all_gather", {})
    common = sorted(set(rs) & set(ag))
    if not common:
        return MISSING
    size = common[-1]
    ratio = rs[size] / ag[size]
    head = (
        f"At {size / 1e6:.3g} MB, reduce-scatter took {fmt_seconds(rs[size])} and all-gather "
        f"{fmt_seconds(ag[size])}: {times(ratio)} the time"
    )
    if ratio > 1 + SAME:
        return (
            f"{head}. The ring model says they cost the same (each moves (n-1)/n of the "
            "message); gloo on CPU does not run a ring reduce-scatter but reduces the whole "
            "buffer and keeps a slice, so its ratios are not NCCL's."
        )
    if ratio < 1 - SAME:
        return (
            f"{head}: reduce-scatter was the faster one here, against the ring model's "
            f"equal cost. Timings of a few milliseconds on a shared machine vary: {RERUN}."
        )
    return (
        f"{head}, as the ring model predicts (each moves (n-1)/n of the message), even though "
        "gloo builds reduce-scatter differently from NCCL."
    )


# ---------------------------------------------------------------------------------------------
# Data parallelism
# ---------------------------------------------------------------------------------------------


#: Share of paired steps that must agree on which of the pair was slower before a difference
#: counts as measured (a sign test: 4 of 5 pairs, 8 of 10).
AGREE = 0.8


def ddp_overhead(timelines: Sequence[Mapping]) -> str:
    """What gradient synchronisation added to a DDP step, from paired, interleaved steps.

    Each timeline's ``pairs`` are (step with the all-reduce, step without it under ``no_sync``),
    taken back to back in alternating order, so both of a pair see the same state of the machine.
    The cost counts as measured only when at least :data:`AGREE` of the pairs agree on its sign;
    otherwise the machine's drift from step to step was larger than the cost, and the finding says
    so.
    """
    pairs = [(a, b) for t in timelines for a, b in (get(t, "pairs", None) or []) if a and b]
    if len(pairs) < 3:
        return MISSING
    diffs = [a - b for a, b in pairs]
    sync = statistics.median(a for a, _ in pairs)
    local = statistics.median(b for _, b in pairs)
    slower = sum(d > 0 for d in diffs)
    head = (
        f"Over {len(pairs)} pairs of back-to-back steps, a DDP step took {fmt_seconds(sync)} "
        f"with the gradient all-reduce and {fmt_seconds(local)} without it (`no_sync`); "
        f"{slower} of {len(pairs)} pairs were slower with it"
    )
    if slower < AGREE * len(pairs) and len(pairs) - slower < AGREE * len(pairs):
        return (
            f"{head}: the cost of communication was smaller than the step-to-step noise of "
            f"this shared machine, so this run cannot say what it was: {RERUN}."
        )
    if slower < AGREE * len(pairs):
        return (
            f"{head}: steps *without* communication were the slower ones, which no model "
            f"explains: other programs took the cores in a pattern that matched the pairs: "
            f"{RERUN}."
        )
    share = statistics.median(diffs) / sync
    if share > 0.5:
        return (
            f"{head}: communication was {share:.0%} of the step. The model is tiny, so each "
            "rank computes for a few milliseconds while every all-reduce pays gloo's fixed "
            "latency; on GPUs a large model computes for much longer per byte of gradient."
        )
    return (
        f"{head}: communication added {share:.0%} of the step. The rest of the all-reduce "
        "time was hidden behind the backward pass, where DDP launches each bucket as soon "
        "as its gradients are ready."
    )


def ddp_overlap(timeline: Mapping) -> str:
    """How many gradient buckets started their all-reduce before the last gradient was computed.

    ``timeline``: one rank's :func:`course.distributed.ddp.ddp_timeline` (``events`` and
    ``gradients_ready_seconds``). The yardstick is the instant the last gradient was ready, not
    the end of the backward pass: DDP makes the backward wait for every bucket, so every bucket
    "starts before the backward ends" by construction.
    """
    events = get(timeline, "events", None) or []
    ready = get(timeline, "gradients_ready_seconds", None)
    buckets = [e for e in events if get(e, "kind") == "all-reduce"]
    if not buckets or ready is None:
        return MISSING
    n = len(buckets)
    early = [e for e in buckets if get(e, "start") < ready]
    total = sum(get(e, "end") - get(e, "start") for e in buckets)
    before = sum(max(0.0, min(get(e, "end"), ready) - get(e, "start")) for e in buckets)
    hidden = f"{before / total:.0%} of the all-reduce time" if total > 0 else "none of it"
    when = f"the last gradient was ready {fmt_seconds(ready)} into the step"
    if not early:
        return (
            f"None of the {n} buckets started its all-reduce before {when}: no overlap in "
            "this run (one bucket, or a backward pass so short that every bucket became "
            "ready at its end)."
        )
    if len(early) == n:
        return (
            f"All {n} buckets started before {when}: the hook that timed the gradients "
            "fired after DDP had launched the last bucket, so this run's yardstick failed: "
            "rerun, and report it if it persists."
        )
    return (
        f"{len(early)} of {n} buckets started their all-reduce before {when}: they ran "
        f"while the backward pass was still computing ({hidden} overlapped it). The last "
        f"{n - len(early)} could not: a bucket is sent when its last gradient is ready, and "
        "the first layers' gradients come last, so the step waits for that all-reduce "
        "whatever the bucketing."
    )


# ---------------------------------------------------------------------------------------------
# Pipeline parallelism
# ---------------------------------------------------------------------------------------------


def pipeline_bubbles(rows: Sequence[Mapping]) -> str:
    """Measured idle fraction of each schedule against (p - 1)/(v m + p - 1).

    ``rows``: ``{"schedule", "bubble_fraction" (measured), "formula"}``.
    """
    if not rows:
        return MISSING
    lines = []
    for r in rows:
        measured, formula = get(r, "bubble_fraction"), get(r, "formula")
        if measured > formula + 0.1:
            why = "more: sends, receives and waiting on the busy CPU count as idle here"
        elif measured < formula - 0.1:
            why = (
                "less: the forward and backward times were uneven, so the model's equal slots "
                "do not hold"
            )
        else:
            why = "close to the formula"
        lines.append(
            f"{get(r, 'schedule')}: idle {measured:.0%} of the time, formula {formula:.0%} ({why})"
        )
    by = {get(r, "schedule"): get(r, "bubble_fraction") for r in rows}
    if "Interleaved1F1B" in by and "1F1B" in by:
        if by["Interleaved1F1B"] < by["1F1B"] - 0.05:
            lines.append("Interleaving shrank the bubble, as Narayanan et al. 2021 predict.")
        else:
            lines.append(
                "Interleaving did *not* shrink the measured bubble: it sends v times as "
                "many messages, and each gloo message costs about as much as a tiny "
                "stage's compute. On GPUs with NVLink the trade pays off; here it does not."
            )
    return "\n".join(f"- {line}" for line in lines)


# ---------------------------------------------------------------------------------------------
# CPU parallelism
# ---------------------------------------------------------------------------------------------


def _seconds(records: Sequence[Any], kind: str, mode: str) -> float | None:
    for r in records:
        if get(r, "kind") == kind and get(r, "mode") == mode:
            return get(r, "seconds")
    return None


def gil(records: Sequence[Any]) -> str:
    """Threads vs processes for pure Python and for torch: what the GIL did on this run."""
    py = {m: _seconds(records, "pure Python", m) for m in ("serial", "threads", "processes")}
    tc = {m: _seconds(records, "torch matmul", m) for m in ("serial", "threads", "processes")}
    if None in py.values():
        return MISSING
    t_speed, p_speed = py["serial"] / py["threads"], py["serial"] / py["processes"]
    lines = [f"Pure Python: threads {times(t_speed)}, processes {times(p_speed)} the serial speed."]
    if t_speed > 1 + 2 * SAME:
        lines.append(
            "Threads sped pure Python up: this interpreter may be a free-threaded build "
            "(no GIL), or the serial run was slowed by another program: rerun."
        )
    else:
        lines.append(
            "Threads gave no gain: only the thread holding the GIL runs Python bytecode, "
            "so two threads take turns on one core's worth of work."
        )
    if p_speed > 1 + 2 * SAME:
        lines.append("Processes sped it up: each has its own interpreter and GIL, on its own core.")
    else:
        either = " either" if t_speed <= 1 + 2 * SAME else ""
        lines.append(
            f"Processes did not speed it up{either}: the second core was busy with other "
            "programs (this machine is shared), and sending tasks between processes "
            f"costs time: {RERUN}."
        )
    if None not in tc.values():
        ratio = tc["serial"] / tc["threads"]
        if ratio > 1 + 2 * SAME:
            lines.append(
                f"Torch matmuls: threads {times(ratio)} the serial speed; torch releases "
                "the GIL inside its kernels, so threads run them at the same time."
            )
        else:
            lines.append(
                f"Torch matmuls: threads {times(ratio)} the serial speed; torch releases "
                "the GIL inside kernels, but with one free core there is nothing to "
                "overlap onto."
            )
    return " ".join(lines)


def dataloader(records: Sequence[Any]) -> str:
    """Did DataLoader workers remove a data-loading bottleneck on this run?"""
    by = {get(r, "num_workers"): r for r in records}
    if 0 not in by or len(by) < 2:
        return MISSING
    base = by[0]
    wait_share = get(base, "wait_seconds") / get(base, "seconds")
    best_w = min(by, key=lambda w: get(by[w], "seconds"))
    speed = get(base, "seconds") / get(by[best_w], "seconds")
    head = (
        f"With `num_workers=0` the loop waited for data {wait_share:.0%} of the epoch "
        f"({fmt_seconds(get(base, 'seconds'))})"
    )
    if wait_share < 0.3:
        return (
            f"{head}: the model, not the data, was the bottleneck, so workers cannot help "
            "much. Workers pay off when preparing a batch takes longer than training on it."
        )
    if best_w > 0 and speed > 1 + 2 * SAME:
        waits = join(f"{w} workers {get(by[w], 'wait_seconds'):.2f} s" for w in sorted(by))
        return (
            f"{head}: data-bound. {best_w} worker(s) made the epoch {times(speed)} as fast: "
            "the workers prepare the next batches in other processes while the model trains "
            f"(time waiting for data: {waits})."
        )
    return (
        f"{head}: data-bound, but workers did not help here ({times(speed)} at best): each "
        "worker is a process that needs a free core, and this machine's cores were busy with "
        f"other programs: {RERUN}. On a machine with idle cores, workers would overlap "
        "loading with training."
    )


__all__ = [
    "AGREE",
    "MISSING",
    "alpha_beta",
    "dataloader",
    "ddp_overhead",
    "ddp_overlap",
    "gil",
    "gloo_reduce_scatter",
    "pipeline_bubbles",
]
