"""Findings on batching and on LLM decoding against its bandwidth floor (lesson 02 §4).

- :func:`curve`: the batching sweep of ``course.measure.kernels.batching_sweep`` (records with
  batch, seconds, flop_per_s): how much throughput the batch bought, and at what cost in time.
- :func:`decode_vs_floor`: a measured decode (records as in the shipped H100 run's
  ``inference_7b.json``: batch, cuda_graph, seconds_per_step, tokens_per_s, weight_bytes,
  kv_bytes_read) set beside the floor weights / datasheet bandwidth, with what separates them.

"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from course.facts.units import fmt_bandwidth, fmt_bytes, fmt_flop_rate, fmt_seconds
from course.presentation.findings._common import NOISY, RERUN, get, relative_spread, times


def curve(records: Sequence[Any]) -> str:
    """Throughput gained from batch 1 to the best batch, and what it cost in time per step."""
    rows = sorted(records, key=lambda r: get(r, "batch"))
    if len(rows) < 2:
        return "Fewer than two batch sizes were measured (the budget ran out): rerun the cell."
    one = rows[0]
    best = max(rows, key=lambda r: get(r, "flop_per_s"))
    gain = get(best, "flop_per_s") / get(one, "flop_per_s")
    cost = get(best, "seconds") / get(one, "seconds")
    head = (
        f"Batch {get(one, 'batch')}: {fmt_flop_rate(get(one, 'flop_per_s'))}; batch "
        f"{get(best, 'batch')}: {fmt_flop_rate(get(best, 'flop_per_s'))}, {times(gain)} the "
        f"throughput for {times(cost)} the time per step"
    )
    noisy = max(relative_spread(r) for r in rows) > NOISY
    if gain < 1.5:
        return f"{head}. Batching bought little here: " + (
            f"the timings are noisy; {RERUN}."
            if noisy
            else "the layer was not limited by reading its weights at batch 1 (they may fit in a "
            "cache), so reusing them does not help."
        )
    text = (
        f"{head}. Each weight read from memory is used {get(best, 'batch')} times instead of "
        "once, so the work grows much faster than the time"
    )
    knee = next((r for r in rows if get(r, "seconds") > 2 * get(one, "seconds")), None)
    if knee is None:
        text += (
            ": over the whole range the time per step stayed within 2× of batch 1's, so extra "
            "sequences in a batch were almost free (below the ridge)."
        )
    else:
        free = rows[rows.index(knee) - 1]
        text += (
            f". The time per step stayed within 2× of batch 1's up to batch {get(free, 'batch')}"
            "; beyond it the time grows with the batch: the layer turns compute-bound near "
            "there (the ridge, in batch terms)."
        )
    return text + (f" Some points were noisy; {RERUN}." if noisy else "")


def decode_vs_floor(decode: Sequence[Any], bandwidth_bytes_per_s: float, *, label: str) -> str:
    """A measured decode beside the floor weights / ``bandwidth``, and what separates the two."""
    eager = {get(r, "batch"): r for r in decode if not get(r, "cuda_graph")}
    graph = {get(r, "batch"): r for r in decode if get(r, "cuda_graph")}
    if 1 not in eager and 1 not in graph:
        return f"{label}: no batch-1 decode step in the records."
    first = graph.get(1) or eager[1]
    weights = get(first, "weight_bytes")
    floor = weights / bandwidth_bytes_per_s
    lines = [
        f"- Floor at batch 1: {fmt_bytes(weights)} of weights / "
        f"{fmt_bandwidth(bandwidth_bytes_per_s, digits=2)} "
        f"(datasheet) = {fmt_seconds(floor)} per token."
    ]
    if 1 in graph:
        step = get(graph[1], "seconds_per_step")
        lines.append(
            f"- Measured with CUDA graphs ({label}): {fmt_seconds(step)} per token, "
            f"{times(step / floor)} the floor: it moved "
            f"{fmt_bandwidth((weights + get(graph[1], 'kv_bytes_read', 0)) / step)} of "
            f"weights and KV cache, {(weights / step) / bandwidth_bytes_per_s:.0%} of the "
            "datasheet bandwidth for the weights alone. Real kernels do not reach the datasheet "
            "figure, and each layer's small kernels leave gaps."
        )
    if 1 in eager and 1 in graph:
        extra = get(eager[1], "seconds_per_step") - get(graph[1], "seconds_per_step")
        lines.append(
            f"- Without CUDA graphs: {fmt_seconds(get(eager[1], 'seconds_per_step'))}, "
            f"{fmt_seconds(extra)} more per token: the CPU launching hundreds of small "
            "kernels one by one; a graph replays them in one launch."
        )
    largest = max(graph or eager)
    if largest > 1:
        r = (graph or eager)[largest]
        lines.append(
            f"- Batch {largest}: {fmt_seconds(get(r, 'seconds_per_step'))} per step = "
            f"{get(r, 'tokens_per_s'):,.0f} tokens/s, {times(get(r, 'seconds_per_step') / floor)}"
            f" the batch-1 floor for {largest}× the tokens: the weights are read once per "
            f"step, but each sequence reads its own KV cache "
            f"({fmt_bytes(get(r, 'kv_bytes_read', 0))} per step here)."
        )
    return "\n".join(lines)
