"""Failures at scale: how often a job is interrupted, how often to checkpoint, what is lost.

A synchronous training job stops when any one of its parts fails, so with independent,
exponentially distributed failures its mean time between failures (MTBF) is a part's MTBF divided
by the number of parts (:func:`job_mtbf_seconds`); a published failure log gives the per-part MTBF
back (:func:`component_mtbf_seconds`). Checkpointing every ``tau`` seconds of work, each checkpoint
costing ``d`` seconds and each restart ``R``, Young (1974) and Daly (2006) give the interval that
minimises the expected wall clock, and Daly's expectation of that wall clock
(:func:`expected_wall_clock_seconds`) gives the **goodput**: useful work / wall time
(:func:`goodput_fraction`). :func:`checkpoint_bytes` counts what a checkpoint holds with
:func:`course.calculators.memory.model_state_bytes`.

Sources: J. W. Young, "A first order approximation to the optimum checkpoint interval", CACM 17(9),
1974; J. T. Daly, "A higher order estimate of the optimum checkpoint interval for restart dumps",
Future Generation Computer Systems 22 (2006) 303-312. Validated against the Llama 3 405B and
OPT-175B failure logs (:mod:`course.facts.data.failure_logs`) in
tests/calculators/test_reliability.py. Used by lessons 09 (spot capacity, through
:mod:`course.calculators.cloud`) and 12.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from course.calculators import memory
from course.facts import validate
from course.facts.report import Report

#: torch's CPU generator state (``torch.get_rng_state().numel()``: the Mersenne Twister's 624
#: words and bookkeeping); a CUDA generator adds 16 bytes (seed and offset).
TORCH_CPU_RNG_BYTES = 5056
#: Bytes of a data loader's position: one int64 sample index (a stateful sampler may keep more).
DATALOADER_POSITION_BYTES = 8
MAX_SECONDS = 1e12
MAX_COMPONENTS = 10**9


def _seconds(name: str, value: object, *, allow_zero: bool = False) -> float:
    return validate.number(name, value, minimum=0, maximum=MAX_SECONDS, strict_min=not allow_zero)


def checkpoint_args(checkpoint_seconds: object, mtbf_seconds: object) -> tuple[float, float]:
    """``(checkpoint_seconds, mtbf_seconds)`` checked: a checkpoint write of (0, 1e7] s and a mean
    time between failures of [1, 1e10] s (the inputs Young's and Daly's formulas share)."""
    delta = validate.number(
        "checkpoint_seconds", checkpoint_seconds, minimum=0, maximum=1e7, strict_min=True
    )
    mtbf = validate.number("mtbf_seconds", mtbf_seconds, minimum=1, maximum=1e10)
    return delta, mtbf


# ---------------------------------------------------------------------------------------------
# How often a job fails
# ---------------------------------------------------------------------------------------------


def job_mtbf_seconds(components: int, component_mtbf_seconds: float) -> float:
    """MTBF of a job that stops when any of ``components`` (GPUs, nodes) fails.

    Independent exponential failures add their rates: 1/M_job = N / M_part, so M_job = M_part / N.
    16,384 GPUs of 50,000 h MTBF each: one interruption every 3.05 h.
    """
    n = validate.positive_int("components", components, maximum=MAX_COMPONENTS)
    return _seconds("component_mtbf_seconds", component_mtbf_seconds) / n


def component_mtbf_seconds(interruptions: float, window_seconds: float, components: int) -> float:
    """Per-part MTBF implied by a failure log: ``components x window / interruptions``.

    Llama 3 405B (Table 5): 419 unexpected interruptions in 54 days on 16,384 GPUs: 50,680 h per
    GPU, assuming all 16,384 GPUs ran for all 54 days (the paper gives no GPU-hours), and that
    every interruption was one part's failure.
    """
    k = validate.number("interruptions", interruptions, minimum=0, maximum=1e9, strict_min=True)
    n = validate.positive_int("components", components, maximum=MAX_COMPONENTS)
    return _seconds("window_seconds", window_seconds) * n / k


def expected_interruptions(run_seconds: float, mtbf_seconds: float) -> float:
    """Failures expected over ``run_seconds`` of wall clock: run / MTBF (a Poisson mean)."""
    return _seconds("run_seconds", run_seconds, allow_zero=True) / _seconds(
        "mtbf_seconds", mtbf_seconds
    )


def probability_no_failure(run_seconds: float, mtbf_seconds: float) -> float:
    """Chance a run of ``run_seconds`` sees no failure at all: exp(-run / MTBF)."""
    return math.exp(-expected_interruptions(run_seconds, mtbf_seconds))


# ---------------------------------------------------------------------------------------------
# How often to checkpoint (Young 1974, Daly 2006)
# ---------------------------------------------------------------------------------------------


def young_interval_seconds(checkpoint_seconds: float, mtbf_seconds: float) -> float:
    """Young (1974): compute time between checkpoints sqrt(2 x checkpoint time x MTBF).

    J. W. Young, "A first order approximation to the optimum checkpoint interval", CACM 17(9),
    1974. A 5-minute checkpoint and a preemption every 24 h on average: sqrt(2 x 300 x 86,400) =
    7,200 s = 2 h.
    """
    delta, mtbf = checkpoint_args(checkpoint_seconds, mtbf_seconds)
    return math.sqrt(2 * delta * mtbf)


def daly_interval_seconds(checkpoint_seconds: float, mtbf_seconds: float) -> float:
    """Daly (2006) higher-order optimum: sqrt(2dM) [1 + (1/3) sqrt(d/2M) + (d/2M)/9] - d for
    d < 2M, else M (d = checkpoint time, M = mean time between failures).

    J. T. Daly, "A higher order estimate of the optimum checkpoint interval for restart dumps",
    Future Generation Computer Systems 22 (2006) 303-312. Close to Young's when d << M. With
    d = 5 min: M = 24 h -> 117 min, 6 h -> 57 min, 15 min -> 9.1 min (the paper's Figs. 3-5).
    """
    delta, mtbf = checkpoint_args(checkpoint_seconds, mtbf_seconds)
    if delta >= 2 * mtbf:
        return mtbf
    x = delta / (2 * mtbf)
    return math.sqrt(2 * delta * mtbf) * (1 + math.sqrt(x) / 3 + x / 9) - delta


def expected_wall_clock_seconds(
    solve_seconds: float,
    interval_seconds: float,
    checkpoint_seconds: float,
    mtbf_seconds: float,
    *,
    restart_seconds: float = 0.0,
) -> float:
    """Daly's (2006) expected wall clock of a job of ``solve_seconds`` of work, checkpointed every
    ``interval_seconds`` of work, with exponentially distributed failures (preemptions):

        T = M e^(R/M) (e^((tau + d)/M) - 1) T_s / tau

    (M = MTBF, R = restart time, d = checkpoint time, tau = interval, T_s = solve time). ValueError
    when (tau + d + R) / M is so large that the job effectively never finishes.
    """
    solve = validate.number(
        "solve_seconds", solve_seconds, minimum=0, maximum=MAX_SECONDS, strict_min=True
    )
    tau = validate.number(
        "interval_seconds", interval_seconds, minimum=0, maximum=MAX_SECONDS, strict_min=True
    )
    delta, mtbf = checkpoint_args(checkpoint_seconds, mtbf_seconds)
    restart = validate.number("restart_seconds", restart_seconds, minimum=0, maximum=1e7)
    exponent = (tau + delta + restart) / mtbf
    if exponent > 50:
        raise ValueError(
            f"interval_seconds + checkpoint_seconds + restart_seconds must be under "
            f"50 x mtbf_seconds (the job would never finish), got {exponent:.3g} x"
        )
    return mtbf * math.exp(restart / mtbf) * math.expm1((tau + delta) / mtbf) * solve / tau


def goodput_fraction(
    interval_seconds: float,
    checkpoint_seconds: float,
    mtbf_seconds: float,
    *,
    restart_seconds: float = 0.0,
) -> float:
    """Useful work / wall clock when checkpointing every ``interval_seconds`` of work: the
    inverse of Daly's expected wall clock per unit of work (:func:`expected_wall_clock_seconds`).

    What it loses: the checkpoint writes (d per tau), the work redone after each failure (on
    average about (tau + d) / 2) and the restarts (R per failure). No failures and free
    checkpoints give 1.
    """
    return 1.0 / expected_wall_clock_seconds(
        1.0, interval_seconds, checkpoint_seconds, mtbf_seconds, restart_seconds=restart_seconds
    )


@dataclass(frozen=True)
class FailurePlan(Report):
    """A synchronous job on many parts: its failures, its checkpoint interval and its goodput."""

    _title = "Failures and checkpoints of a training job"

    components: int
    job_mtbf_seconds: float
    young_interval_seconds: float
    interval_seconds: float  # the interval used (Daly's unless given)
    checkpoint_seconds: float
    restart_seconds: float
    goodput_fraction: float
    wall_clock_seconds: float  # expected, for ``work_seconds`` of useful training
    expected_interruptions: float  # over that wall clock
    lost_work_seconds: float  # redone work and restarts, all failures together
    checkpointing_seconds: float  # time spent writing checkpoints
    deadline_met: str  # "yes" / "no" / "no deadline"


def failure_plan(
    work_seconds: float,
    components: int,
    component_mtbf_seconds: float,
    *,
    checkpoint_seconds: float,
    restart_seconds: float = 0.0,
    interval_seconds: float | None = None,
    deadline_seconds: float | None = None,
) -> FailurePlan:
    """Everything at once for ``work_seconds`` of training on ``components`` parts.

    Checkpoints every :func:`daly_interval_seconds` (or ``interval_seconds``); the expected wall
    clock is Daly's; interruptions = wall clock / job MTBF. ``deadline_met`` compares the
    expected wall clock with ``deadline_seconds`` (an expectation: half of real runs take longer).
    """
    mtbf = job_mtbf_seconds(components, component_mtbf_seconds)
    delta, _ = checkpoint_args(checkpoint_seconds, mtbf)
    tau = daly_interval_seconds(delta, mtbf) if interval_seconds is None else interval_seconds
    wall = expected_wall_clock_seconds(
        work_seconds, tau, delta, mtbf, restart_seconds=restart_seconds
    )
    work = float(work_seconds)
    writing = work / float(tau) * delta
    if deadline_seconds is None:
        met = "no deadline"
    else:
        met = "yes" if wall <= _seconds("deadline_seconds", deadline_seconds) else "no"
    return FailurePlan(
        components=int(components),
        job_mtbf_seconds=mtbf,
        young_interval_seconds=young_interval_seconds(delta, mtbf),
        interval_seconds=float(tau),
        checkpoint_seconds=delta,
        restart_seconds=float(restart_seconds),
        goodput_fraction=work / wall,
        wall_clock_seconds=wall,
        expected_interruptions=wall / mtbf,
        lost_work_seconds=max(wall - work - writing, 0.0),
        checkpointing_seconds=writing,
        deadline_met=met,
    )


# ---------------------------------------------------------------------------------------------
# What a checkpoint holds and how long it takes to write
# ---------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class CheckpointSize(Report):
    """Bytes of a training checkpoint: what a restart needs to continue exactly."""

    _title = "Checkpoint size"

    params: float
    weights_bytes: float  # the fp32 master copy in mixed precision (else the weights)
    optimizer_states_bytes: float
    rng_bytes: float  # every rank's generator states
    dataloader_bytes: float  # every rank's position in the data
    total_bytes: float
    model_state_bytes: float  # lesson 04's training memory of the same states, gradients included
    write_seconds: float  # at ``bandwidth_bytes_per_s`` (0 when none is given)
    half_weights_bytes: float = 0.0  # the 16-bit copy, when ``keep_16bit_weights``


def checkpoint_bytes(
    params: float,
    *,
    ranks: int = 1,
    precision: str = "mixed",
    optimizer: str = "adam",
    rng_bytes_per_rank: float = TORCH_CPU_RNG_BYTES,
    dataloader_bytes_per_rank: float = DATALOADER_POSITION_BYTES,
    bandwidth_bytes_per_s: float | None = None,
    keep_16bit_weights: bool = False,
) -> CheckpointSize:
    """What a checkpoint saves, from :func:`course.calculators.memory.model_state_bytes`.

    Saved: the weights at full precision (the fp32 master copy in mixed precision: the 16-bit
    copy is re-made from it; fp32 training saves its weights), the optimizer states (Adam's m and
    v), every rank's RNG state and data-loader position. Not saved: the gradients (a step starts
    from zero gradients). Mixed-precision Adam: 4 + 8 = 12 bytes/param, the minimum;
    ``keep_16bit_weights`` adds the 16-bit copy frameworks also write, 14 bytes/param (Megatron-LM's
    1T model: a 13.8 TB checkpoint, Narayanan et al. 2021, SC21, sec. 5.10).
    ``write_seconds`` = total / ``bandwidth_bytes_per_s``.
    """
    state = memory.model_state_bytes(params, precision=precision, optimizer=optimizer)
    n = validate.positive_int("ranks", ranks, maximum=MAX_COMPONENTS)
    rng = validate.number("rng_bytes_per_rank", rng_bytes_per_rank, minimum=0, maximum=1e9) * n
    loader = (
        validate.number(
            "dataloader_bytes_per_rank", dataloader_bytes_per_rank, minimum=0, maximum=1e9
        )
        * n
    )
    weights = state.master_weights_bytes or state.weights_bytes
    half = state.weights_bytes if keep_16bit_weights and state.master_weights_bytes else 0.0
    total = weights + half + state.optimizer_states_bytes + rng + loader
    seconds = 0.0 if bandwidth_bytes_per_s is None else write_seconds(total, bandwidth_bytes_per_s)
    return CheckpointSize(
        params=state.params,
        weights_bytes=weights,
        optimizer_states_bytes=state.optimizer_states_bytes,
        rng_bytes=rng,
        dataloader_bytes=loader,
        total_bytes=total,
        model_state_bytes=state.total_bytes,
        write_seconds=seconds,
        half_weights_bytes=half,
    )


def write_seconds(total_bytes: float, bandwidth_bytes_per_s: float) -> float:
    """Seconds to write ``total_bytes`` at a sustained ``bandwidth_bytes_per_s``."""
    b = validate.number("total_bytes", total_bytes, minimum=0, maximum=memory.MAX_BYTES)
    bw = validate.number("bandwidth_bytes_per_s", bandwidth_bytes_per_s, minimum=1, maximum=1e16)
    return b / bw


__all__ = [
    "checkpoint_args",
    "DATALOADER_POSITION_BYTES",
    "TORCH_CPU_RNG_BYTES",
    "CheckpointSize",
    "FailurePlan",
    "checkpoint_bytes",
    "component_mtbf_seconds",
    "daly_interval_seconds",
    "expected_interruptions",
    "expected_wall_clock_seconds",
    "failure_plan",
    "goodput_fraction",
    "job_mtbf_seconds",
    "probability_no_failure",
    "write_seconds",
    "young_interval_seconds",
]
