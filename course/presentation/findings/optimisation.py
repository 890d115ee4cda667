"""Findings of lesson 07 (optimisation strategies): what each technique bought or cost in this run.

Every function takes the records a ``course.measure`` function returned (or plain objects with the
same fields) and returns Markdown that states the outcome of *this* run and the explanation that
fits it: faster, slower, about the same, too noisy to say (rerun), or missing data.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from course.facts import units
from course.presentation.findings._common import compare_seconds, noisy

compare = compare_seconds


def _b(x: float) -> str:
    return units.fmt_bytes(x, binary=True)


def _t(x: float) -> str:
    return units.fmt_seconds(x)


NOISY_TEXT = (
    "The spread between repeats was as large as the difference: other programs shared the "
    "cores. Rerun the cell when the machine is quieter before drawing a conclusion."
)


def accumulation(records: Sequence[Any]) -> str:
    """Memory and time per sample against the micro-batch size (``AccumulationRecord``s)."""
    if len(records) < 2:
        return "Too few micro-batch sizes were measured (the budget ran out): rerun the cell."
    small, big = (
        min(records, key=lambda r: r.micro_batch),
        max(records, key=lambda r: r.micro_batch),
    )
    mem = (
        f"A micro-batch of {small.micro_batch} peaked at {_b(small.peak_bytes)}, one of "
        f"{big.micro_batch} at {_b(big.peak_bytes)}: accumulating {small.accumulation_steps} "
        f"micro-batches instead of {big.accumulation_steps} keeps "
        f"{_b(big.peak_bytes - small.peak_bytes)} off the peak for the same gradient. "
    )
    verdict = compare(
        small.seconds_per_sample, small.iqr_seconds, big.seconds_per_sample, big.iqr_seconds
    )
    ratio = small.seconds_per_sample / big.seconds_per_sample
    if verdict == "noisy":
        return mem + "Time per sample could not be judged. " + NOISY_TEXT
    if verdict == "faster":
        return mem + (
            f"The larger micro-batch processed each sample {ratio:.1f}x faster: larger "
            "matrix multiplies use the cores better and per-call overhead is spread over "
            "more samples, so accumulate only as much as memory forces you to."
        )
    if verdict == "slower":
        return mem + (
            f"Here the larger micro-batch was {1 / ratio:.1f}x *slower* per sample: its "
            "activations no longer fit the CPU's caches, so the small micro-batch lost "
            "nothing. On a GPU the larger batch usually wins until memory runs out."
        )
    return mem + (
        "Time per sample was about the same for both: on this CPU the small model's "
        "matmuls were already efficient at a micro-batch of "
        f"{small.micro_batch}, so accumulation cost no speed here."
    )


def recomputation(records: Sequence[Any]) -> str:
    """Selective and full recomputation against none (``RecomputeRecord``s).

    A mode timed only once (``repeats == 1``) has no spread, so its time is not judged; and since
    full recomputation redoes more of the forward than selective, selective measured slower than
    full is reported as noise, not as a result.
    """
    by = {r.recompute: r for r in records}
    if "none" not in by or len(by) < 2:
        return (
            "The baseline or the recomputed runs are missing (the budget ran out): rerun the cell."
        )
    base = by["none"]
    once = [m for m, r in by.items() if getattr(r, "repeats", 0) == 1]
    lines = []
    for mode in ("selective", "full"):
        if mode not in by:
            lines.append(f"- **{mode}**: not measured (budget).")
            continue
        r = by[mode]
        saved = 1 - r.activations_bytes / base.activations_bytes
        verdict = compare(base.step_seconds, base.iqr_seconds, r.step_seconds, r.iqr_seconds)
        cost = r.step_seconds / base.step_seconds - 1
        if {"none", mode} & set(once):
            timing = (
                "it was timed only once (no spread to judge noise by), so its time is not "
                "judged: rerun with a larger budget"
            )
        elif verdict == "noisy":
            timing = "its time overhead could not be told apart from noise (rerun)"
        elif verdict == "slower":
            timing = f"it cost {cost:.0%} more time per step (the recomputed forward)"
        elif verdict == "faster":
            timing = (
                f"the step was even {-cost:.0%} faster (less memory traffic, or noise: "
                "recomputation adds work, so rerun before believing it)"
            )
        else:
            timing = "the time per step stayed within 10 % of the baseline"
        lines.append(
            f"- **{mode}**: activations {_b(base.activations_bytes)} -> "
            f"{_b(r.activations_bytes)} ({saved:.0%} less); {timing}."
        )
    sel, full = by.get("selective"), by.get("full")
    if (
        sel is not None
        and full is not None
        and not {"selective", "full"} & set(once)
        and compare(full.step_seconds, full.iqr_seconds, sel.step_seconds, sel.iqr_seconds)
        == "slower"
    ):
        lines.append(
            "- Selective took longer than full, which recomputes strictly more of the "
            "forward pass: that is noise from other programs on the cores, not a result. "
            "Rerun when the machine is quieter."
        )
    return "\n".join(lines)


def attention(records: Sequence[Any]) -> str:
    """Naive vs fused attention at the longest sequence both were measured at."""
    naive = {r.seq_len: r for r in records if r.kind == "naive"}
    fused = {r.seq_len: r for r in records if r.kind == "sdpa"}
    common = sorted(set(naive) & set(fused))
    if not common:
        return "No sequence length was measured with both kinds (the budget ran out): rerun."
    s = common[-1]
    n, f = naive[s], fused[s]
    mem = (
        f"At {s:,} tokens naive attention peaked at {_b(n.peak_bytes)} (its score matrix alone is "
        f"{_b(n.scores_bytes)}), `scaled_dot_product_attention` at {_b(f.peak_bytes)}: "
        f"{n.peak_bytes / f.peak_bytes:.1f}x less memory, and the gap grows with the square of "
        "the length. "
    )
    verdict = compare(n.median_seconds, n.iqr_seconds, f.median_seconds, f.iqr_seconds)
    ratio = n.median_seconds / f.median_seconds
    if verdict == "noisy":
        return mem + "Speed could not be judged. " + NOISY_TEXT
    if verdict == "faster":
        return mem + f"It was also {ratio:.1f}x faster: it never writes the scores out to memory."
    if verdict == "slower":
        return mem + (
            f"On this CPU it was {1 / ratio:.1f}x slower: the fused CPU kernel trades "
            "speed for memory at these sizes; on a GPU it wins both (reference run below)."
        )
    return mem + "Speed was about the same: at these lengths the saving is memory, not time."


def precision(records: Sequence[Any], skipped: Sequence[str] = ()) -> str:
    """Serving variants (``ServeRecord``s) against fp32, per batch; skipped variants with
    reasons."""
    base = {r.batch: r for r in records if r.variant == "fp32"}
    if not base:
        return "The fp32 baseline is missing (the budget ran out): rerun the cell."
    lines = []
    for r in records:
        if r.variant == "fp32" or r.batch not in base:
            continue
        b = base[r.batch]
        verdict = compare(b.step_seconds, b.iqr_seconds, r.step_seconds, r.iqr_seconds)
        ratio = b.step_seconds / r.step_seconds
        speed = {
            "faster": f"{ratio:.1f}x the fp32 tokens/s",
            "slower": f"{1 / ratio:.1f}x *slower* than fp32 (this CPU's kernels for it are slow)",
            "same": "about fp32's speed",
            "noisy": "speed too noisy to call (rerun)",
        }[verdict]
        lines.append(
            f"- **{r.variant}**, batch {r.batch}: weights {_b(r.weights_bytes)} "
            f"({r.weights_bytes / b.weights_bytes:.0%} of fp32), {speed}, logits within "
            f"{r.relative_error:.2%} of fp32."
        )
    for reason in skipped:
        lines.append(f"- not run: {reason}")
    if not lines:
        return "Only fp32 was measured: rerun the cell with a larger budget."
    return "\n".join(lines)


def batching(records: Sequence[Any]) -> str:
    """Latency and throughput against the batch size (``BatchRecord``s)."""
    if len(records) < 2:
        return "Too few batch sizes were measured (the budget ran out): rerun the cell."
    one, big = records[0], records[-1]
    verdict = compare(
        one.step_seconds * big.batch, one.iqr_seconds * big.batch, big.step_seconds, big.iqr_seconds
    )
    gain = big.tokens_per_s / one.tokens_per_s
    slower = big.step_seconds / one.step_seconds
    head = (
        f"From batch {one.batch} to {big.batch}, each step took {slower:.1f}x longer "
        f"({_t(one.step_seconds)} -> {_t(big.step_seconds)}) while throughput rose "
        f"{gain:.1f}x ({one.tokens_per_s:,.0f} -> {big.tokens_per_s:,.0f} tokens/s). "
    )
    if verdict == "noisy":
        return head + NOISY_TEXT
    if verdict == "faster":
        return head + (
            "Batching paid: the weights are read once per step whatever the batch, so "
            "more sequences share that cost, at the price of each user's latency."
        )
    return head + (
        "Throughput did not grow with the batch here: on this CPU the step is already "
        "compute-bound at small batches, so batching only adds latency."
    )


def compile_speedup(result: Any) -> str:
    """``torch.compile``'s compile time and per-call speed-up (a ``CompileResult``)."""
    if getattr(result, "failure", None):
        return f"torch.compile did not run here: {result.failure}."
    if not result.records:
        return f"Compiled in {_t(result.compile_seconds)}, but no call was timed: rerun."
    lines = [f"Compiling took **{_t(result.compile_seconds)}** (paid once, on the first call)."]
    for r in result.records:
        verdict = compare(
            r.eager_seconds, r.eager_iqr_seconds, r.compiled_seconds, r.compiled_iqr_seconds
        )
        saved = r.eager_seconds - r.compiled_seconds
        if verdict == "faster":
            calls = result.compile_seconds / saved
            lines.append(
                f"- batch {r.batch}: {_t(r.eager_seconds)} eager vs "
                f"{_t(r.compiled_seconds)} compiled ({r.speedup:.1f}x); the compile time "
                f"pays for itself after about {calls:,.0f} calls."
            )
        elif verdict == "slower":
            lines.append(
                f"- batch {r.batch}: compiled was *slower* ({_t(r.compiled_seconds)} vs "
                f"{_t(r.eager_seconds)} eager): compiling did not help here. At small sizes "
                "its guards and wrapper can cost more than fusion saves; at large ones the "
                "time is in matrix multiplies that compiling does not speed up."
            )
        elif verdict == "same":
            lines.append(
                f"- batch {r.batch}: no gain ({_t(r.eager_seconds)} eager vs "
                f"{_t(r.compiled_seconds)} compiled): the matrix multiplies dominate and "
                "were already library calls, so compiling did not help."
            )
        else:
            lines.append(f"- batch {r.batch}: " + NOISY_TEXT)
    return "\n".join(lines)


def lora(records: Sequence[Any]) -> str:
    """LoRA step vs full fine-tuning step (``FineTuneRecord``s)."""
    by = {r.method: r for r in records}
    if not {"full", "lora"} <= set(by):
        return "One of the two fine-tuning steps is missing: rerun the cell."
    full, lo = by["full"], by["lora"]
    mem = (
        f"LoRA trained {lo.trainable_params:,} of {full.trainable_params:,} parameters "
        f"({lo.trainable_params / full.trainable_params:.1%}); gradients and AdamW states took "
        f"{_b(lo.gradients_and_states_bytes)} instead of {_b(full.gradients_and_states_bytes)}. "
    )
    verdict = compare(full.step_seconds, full.iqr_seconds, lo.step_seconds, lo.iqr_seconds)
    ratio = full.step_seconds / lo.step_seconds
    if verdict == "noisy":
        return mem + "Step time could not be judged. " + NOISY_TEXT
    if verdict == "faster":
        return mem + (
            f"The step was {ratio:.1f}x faster: no weight gradients for the frozen "
            "matrices and a far smaller optimizer step (activation gradients are still "
            "computed through every layer)."
        )
    if verdict == "slower":
        return mem + (
            f"The step was {1 / ratio:.1f}x slower: the adapters' extra small matmuls "
            "cost more than the skipped weight gradients saved on this tiny model."
        )
    return mem + (
        "The step took about as long: the backward pass still runs through every "
        "layer, and on a model this small the optimizer step is a small share."
    )


def offload(step: Any, cost: Any) -> str:
    """The measured CPU optimizer step (``OptimizerStepRecord``) scaled by the offload model."""
    if step is None or cost is None:
        return "The CPU optimizer step was not measured: rerun the cell."
    rate = 1 / step.seconds_per_param
    text = (
        f"This CPU updated {rate / 1e6:,.0f} M parameters/s with AdamW ({step.threads} "
        f"threads). At that rate a {cost.params / 1e9:,.0f} B-parameter model's offloaded step "
        f"takes {_t(cost.cpu_optimizer_seconds)} on the CPU plus {_t(cost.link_time_seconds)} "
        f"on the link, against {_t(cost.compute_seconds)} of GPU compute: "
    )
    if noisy(step.step_seconds, step.iqr_seconds):
        return text + f"{cost.slowdown:.1f}x the step time. " + NOISY_TEXT
    if cost.slowdown > 1.5:
        return text + (
            f"{cost.slowdown:.1f}x the step time. The CPU step dominates: servers use "
            "dozens of cores and overlap it with the GPU (ZeRO-Offload's delayed update)."
        )
    return text + (
        f"{cost.slowdown:.2f}x the step time: offloading is nearly free here because "
        "the GPU's compute hides the link and the CPU work."
    )


__all__ = [
    "accumulation",
    "attention",
    "batching",
    "compare",
    "compile_speedup",
    "lora",
    "offload",
    "precision",
    "recomputation",
]
