"""Sentences computed from measured records: what this run found, on this machine.

A lesson never types a finding that depends on the machine (which dtype or library is faster and by
how much, cache sizes, thread scaling, a measured utilisation). It calls a function here that takes
the tidy records the measurement layer returned and returns a sentence or a short Markdown block,
with the explanation that fits the outcome, including "the machine was busy: rerun". One module per
topic (``course/presentation/findings/<topic>.py``): no measuring, no torch.

Modules: ``matmul_rates`` (libraries, dtypes, alignment, share of a peak), ``threads`` (thread
scaling), ``crossovers`` (fixed per-call costs, crossovers), ``caches`` (bandwidth per memory
level), ``batching`` (batching curve, decoding against its floor), ``precision_speed`` (autocast and
quantised inference speed), ``utilisation`` (a training step's MFU, FLOP counter against formula),
``gpu_inside`` (lesson 11: kernels against torch, stride sweep against the coalescing calculator, a
profiled fix), ``checkpointing`` (lesson 12: async saves, disk against a parallel filesystem, the
cost of a restart), ``power`` (a sustained-power trace), ``scheduling`` (lesson 14: what a real
Slurm did with a job mix), ``predictions`` (a learner's prediction beside what happened). Lessons
call them as ``findings.matmul_rates.dtype_speed(records, ...)``.
"""

from course.presentation.findings import (
    batching,
    caches,
    checkpointing,
    crossovers,
    gpu_inside,
    matmul_rates,
    power,
    precision_speed,
    predictions,
    slurm_run,
    threads,
    utilisation,
)

__all__ = [
    "batching",
    "caches",
    "checkpointing",
    "gpu_inside",
    "matmul_rates",
    "crossovers",
    "power",
    "precision_speed",
    "predictions",
    "slurm_run",
    "threads",
    "utilisation",
]
