"""Findings of lesson 06 (parallelism): what this run's distributed and CPU measurements say.

Each function takes the tidy records of ``course.distributed`` / ``course.measure.cpu_parallel``
(or a calculator's fit of them) and returns a sentence or short Markdown with the explanation that
fits the outcome, including "the machine was busy: rerun" and "nothing was measured". Layer 4.
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


def alpha_beta(fit: Any, link_bandwidth_bytes_per_s: float, link_name: str) -> str:
    """The fitted latency and bandwidth of this machine's all-reduce against a real link's."""
    if fit is None:
        return MISSING
    r2 = get(fit, "r_squared", 0.0)
    bw, lat = get(fit, "bandwidth_bytes_per_s"), get(fit, "latency_seconds")
    head = (f"Fitted on this machine ({get(fit, 'ranks')} gloo processes, loopback): latency "
            f"alpha = {fmt_seconds(lat)} per ring step, bandwidth B = {fmt_bandwidth(bw)}")  # fmt: skip
    if r2 < 0.8:
        return (f"{head}, but the straight line explains only {r2:.0%} of the variation in the "
                f"times: {RERUN}, or widen the range of sizes.")  # fmt: skip
    ratio = link_bandwidth_bytes_per_s / bw
    if ratio >= 1:
        return (f"{head} (the line fits: R² = {r2:.2f}). {link_name} moves "
                f"{fmt_bandwidth(link_bandwidth_bytes_per_s)} per direction, {times(ratio)} more: "
                "here every byte is copied by a CPU core through the kernel's loopback, while "
                "NCCL's GPU kernels drive dedicated links.")  # fmt: skip
    return (f"{head} (R² = {r2:.2f}): faster than {link_name}'s "
            f"{fmt_bandwidth(link_bandwidth_bytes_per_s)}. Messages this small stay in the CPU's "
            "caches, so the fit measures cache copies, not a link: fit larger messages.")  # fmt: skip


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
    head = (f"At {size / 1e6:.3g} MB, reduce-scatter took {fmt_seconds(rs[size])} and all-gather "
            f"{fmt_seconds(ag[size])}: {times(ratio)} the time")  # fmt: skip
    if ratio > 1 + SAME:
        return (f"{head}. The ring model says they cost the same (each moves (n-1)/n of the "
                "message); gloo on CPU does not run a ring reduce-scatter but reduces the whole "
                "buffer and keeps a slice, so its ratios are not NCCL's.")  # fmt: skip
    if ratio < 1 - SAME:
        return (f"{head}: reduce-scatter was the faster one here, against the ring model's "
                f"equal cost. Timings of a few milliseconds on a shared machine vary: {RERUN}.")  # fmt: skip
    return (f"{head}, as the ring model predicts (each moves (n-1)/n of the message), even though "
            "gloo builds reduce-scatter differently from NCCL.")  # fmt: skip


# ---------------------------------------------------------------------------------------------
# Data parallelism
# ---------------------------------------------------------------------------------------------


def ddp_overhead(timelines: Sequence[Mapping]) -> str:
    """What gradient synchronisation added to a DDP step (with vs without ``no_sync``)."""
    pairs = [(get(t, "sync_seconds"), get(t, "no_sync_seconds")) for t in timelines
             if get(t, "sync_seconds") and get(t, "no_sync_seconds")]  # fmt: skip
    if not pairs:
        return MISSING
    sync = statistics.median(p[0] for p in pairs)
    local = statistics.median(p[1] for p in pairs)
    head = (f"A DDP step took {fmt_seconds(sync)} with the gradient all-reduce and "
            f"{fmt_seconds(local)} without it (`no_sync`)")  # fmt: skip
    if sync <= local * (1 + SAME / 2):
        return (f"{head}: no measurable cost, or less than the noise of the shared machine. The "
                f"buckets' all-reduces overlapped the backward pass, or the timing was noisy: "
                f"{RERUN}.")  # fmt: skip
    share = 1 - local / sync
    if share > 0.5:
        return (f"{head}: communication was {share:.0%} of the step. The model is tiny, so each "
                "rank computes for a few milliseconds while every all-reduce pays gloo's fixed "
                "latency; on GPUs a large model computes for much longer per byte of gradient.")  # fmt: skip
    return (f"{head}: communication added {share:.0%}. The rest of the all-reduce time was "
            "hidden behind the backward pass, where DDP launches each bucket as soon as its "
            "gradients are ready.")  # fmt: skip


def ddp_overlap(events: Sequence[Mapping]) -> str:
    """How many gradient buckets started their all-reduce before the backward pass ended."""
    backward = [e for e in events if get(e, "kind") == "backward"]
    buckets = [e for e in events if get(e, "kind") == "all-reduce"]
    if not backward or not buckets:
        return MISSING
    end = max(get(e, "end") for e in backward)
    early = sum(1 for e in buckets if get(e, "start") < end)
    n = len(buckets)
    if early == n:
        return (f"All {n} buckets started their all-reduce while the backward pass was still "
                "running: communication overlapped computation, as DDP's bucketing intends.")  # fmt: skip
    if early == 0:
        return (f"None of the {n} buckets started before the backward pass ended: no overlap in "
                "this run (with one bucket, or a backward faster than the hook's launch).")  # fmt: skip
    return (f"{early} of {n} buckets started their all-reduce during the backward pass; the last "
            f"{n - early} waited for the end of it (the first layers' gradients come last).")  # fmt: skip


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
            why = "less: the forward and backward times were uneven, so the model's equal slots do not hold"
        else:
            why = "close to the formula"
        lines.append(f"{get(r, 'schedule')}: idle {measured:.0%} of the time, formula "
                     f"{formula:.0%} ({why})")  # fmt: skip
    by = {get(r, "schedule"): get(r, "bubble_fraction") for r in rows}
    if "Interleaved1F1B" in by and "1F1B" in by:
        if by["Interleaved1F1B"] < by["1F1B"] - 0.05:
            lines.append("Interleaving shrank the bubble, as Narayanan et al. 2021 predict.")
        else:
            lines.append("Interleaving did *not* shrink the measured bubble: it sends v times as "
                         "many messages, and each gloo message costs about as much as a tiny "
                         "stage's compute. On GPUs with NVLink the trade pays off; here it does not.")  # fmt: skip
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
        lines.append("Threads sped pure Python up: this interpreter may be a free-threaded build "
                     "(no GIL), or the serial run was slowed by another program: rerun.")  # fmt: skip
    else:
        lines.append("Threads gave no gain: only the thread holding the GIL runs Python bytecode, "
                     "so two threads take turns on one core's worth of work.")  # fmt: skip
    if p_speed > 1 + 2 * SAME:
        lines.append("Processes sped it up: each has its own interpreter and GIL, on its own core.")
    else:
        either = " either" if t_speed <= 1 + 2 * SAME else ""
        lines.append(f"Processes did not speed it up{either}: the second core was busy with other "
                     "programs (this machine is shared), and sending tasks between processes "
                     f"costs time: {RERUN}.")  # fmt: skip
    if None not in tc.values():
        ratio = tc["serial"] / tc["threads"]
        if ratio > 1 + 2 * SAME:
            lines.append(f"Torch matmuls: threads {times(ratio)} the serial speed; torch releases "
                         "the GIL inside its kernels, so threads run them at the same time.")  # fmt: skip
        else:
            lines.append(f"Torch matmuls: threads {times(ratio)} the serial speed; torch releases "
                         "the GIL inside kernels, but with one free core there is nothing to "
                         "overlap onto.")  # fmt: skip
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
    head = (f"With `num_workers=0` the loop waited for data {wait_share:.0%} of the epoch "
            f"({fmt_seconds(get(base, 'seconds'))})")  # fmt: skip
    if wait_share < 0.3:
        return (f"{head}: the model, not the data, was the bottleneck, so workers cannot help "
                "much. Workers pay off when preparing a batch takes longer than training on it.")  # fmt: skip
    if best_w > 0 and speed > 1 + 2 * SAME:
        waits = join(f"{w} workers {get(by[w], 'wait_seconds'):.2f} s" for w in sorted(by))
        return (f"{head}: data-bound. {best_w} worker(s) made the epoch {times(speed)} as fast: "
                "the workers prepare the next batches in other processes while the model trains "
                f"(time waiting for data: {waits}).")  # fmt: skip
    return (f"{head}: data-bound, but workers did not help here ({times(speed)} at best): each "
            "worker is a process that needs a free core, and this machine's cores were busy with "
            f"other programs: {RERUN}. On a machine with idle cores, workers would overlap "
            "loading with training.")  # fmt: skip


__all__ = ["MISSING", "alpha_beta", "dataloader", "ddp_overhead", "ddp_overlap", "gil",
           "gloo_reduce_scatter", "pipeline_bubbles"]  # fmt: skip
