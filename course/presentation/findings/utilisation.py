"""What this machine's training-step utilisation (MFU) says, in words computed from the run.

Each function takes the record :func:`course.measure.mfu.measure_training_mfu` returned (any object
or mapping with its fields will do: tests pass synthetic ones) or ``None`` when nothing was
measured, and returns Markdown that fits the outcome: high, typical or low MFU, an inconsistent (>
100 %) or noisy measurement, a busy machine. Published figures come from
``course.facts.data.published_runs`` and the H100 reference run, never typed here. Used by
lesson 05.
"""

from __future__ import annotations

from course.facts.data import published_runs, reference
from course.presentation.findings._common import NOISY, get

#: Relative difference between counted FLOPs and a formula that still counts as agreement.
AGREE = 0.01


def _reference_mfu() -> float:
    return reference.load(reference.H100, "training2")["llama-style-L24-h2048"]["mfu_6n_vs_989"]


def _busy(record) -> str:
    load, cores = get(record, "load_average"), get(record, "cores", 1)
    spread = get(record, "step_spread_seconds", 0.0) / get(record, "step_seconds")
    notes = []
    if load is not None and load > cores:
        notes.append(f"the machine was busy (load average {load:.1f} on {cores} cores)")
    if spread > NOISY:
        notes.append(f"the step time varied by {100 * spread:.0f} % (IQR over median)")
    if not notes:
        return ""
    return (
        " **Noisy measurement:** " + " and ".join(notes) + ", so other programs shared the "
        "cores; rerun the cell on a quiet machine before trusting the figure."
    )


def training_mfu(record) -> str:
    """MFU of this machine's training step, with the explanation that fits its size."""
    if record is None:
        return (
            "No training step was measured in this run (the cell was skipped or ran out of "
            "budget), so there is no MFU to report: run the measurement cell."
        )
    m, busy = get(record, "mfu"), _busy(record)
    head = (
        f"On this machine a training step of *{get(record, 'model')}* ran at "
        f"{get(record, 'achieved_flop_per_s') / 1e9:.1f} GFLOP/s against a matmul rate of "
        f"{get(record, 'peak_flop_per_s') / 1e9:.1f} GFLOP/s measured beside it: **MFU "
        f"{100 * m:.1f} %**."
    )
    palm = published_runs.run("palm-540b").mfu
    ref = _reference_mfu()
    if m > 1:
        body = (
            " That is more than 100 %: the step cannot beat the machine's own matmul, so the "
            "peak was measured at a busier moment than the step (or the CPU changed its "
            "clock between the two). The figure is not usable: rerun."
        )
    elif m >= 0.5:
        body = (
            f" That is high: above PaLM's {100 * palm:.1f} % on 6,144 TPU v4 chips. The "
            "model's matmuls are large enough to run near the matmul rate, and nothing here "
            "waits on other chips."
        )
    elif m >= 0.2:
        llama3 = published_runs.run("llama-3-405b").mfu
        body = (
            f" That is in the range of large, well-tuned runs (PaLM {100 * palm:.1f} %, Llama "
            f"3 405B {100 * llama3:.0f} % on 16,384 H100s): most of the step is matmul, "
            "and the rest (norms, softmax, "
            "the optimizer's elementwise update) costs a fraction of it."
        )
    else:
        body = (
            f" That is low, as for the H100 reference run's 1.36 B model ({100 * ref:.1f} %): "
            "a small model's matmuls are too small to reach the peak rate, and the "
            "memory-bound work between them (norms, softmax, activations, the AdamW update, "
            "Python and dispatch overhead) takes a large share of the step."
        )
    return head + body + busy


def counter_vs_formula(counted_flops: float | None, formula_flops: float, what: str) -> str:
    """Does ``FlopCounterMode``'s count agree with a formula within 1 %? Says how far apart."""
    if counted_flops is None:
        return f"No FLOP count for {what}: the counting cell did not run."
    if counted_flops == 0:
        return (
            f"The counter saw **0 FLOPs** for {what}: the ops ran in a kernel it has no "
            "formula for (fused attention on the CPU). Count under "
            "`sdpa_kernel(SDPBackend.MATH)` or with plain-matmul attention."
        )
    diff = (counted_flops - formula_flops) / formula_flops
    if abs(diff) <= AGREE:
        return (
            f"For {what} the counter and the formula agree within 1 % ({100 * diff:+.2f} %): "
            "the formula counts every matmul the model runs."
        )
    side = "more" if diff > 0 else "fewer"
    return (
        f"For {what} the counter saw {100 * abs(diff):.1f} % {side} FLOPs than the formula: "
        "the formula leaves out (or adds) work this model does differently, such as the "
        "attention term, the LM head, or the first layer's missing input gradient."
    )


__all__ = ["AGREE", "counter_vs_formula", "training_mfu"]
