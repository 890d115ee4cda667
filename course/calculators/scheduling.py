"""Scheduling a shared GPU cluster as a calculation (lesson 14).

- :func:`gpu_hours_by_account`: accounting, GPU-hours = GPUs allocated x hours held, summed per
  account (what Slurm's ``sreport`` reports for the ``gres/gpu`` TRES;
  https://slurm.schedmd.com/tres.html).
- :func:`queue_wait`: a cluster as an M/M/c queue of job slots (lesson 13's
  :func:`course.calculators.queueing.mmc`): the wait a job meets at a utilisation.
- :func:`fragmentation`: free GPUs scattered over nodes that a k-GPU single-node job cannot use.
- :func:`idle_reserved_usd`: what reserved GPUs cost while they sit idle.
- :func:`simulate`: one pool of GPUs, jobs that need all their GPUs at once (gang scheduling),
  first-come-first-served against EASY backfill (Lifka 1995, "The ANL/IBM SP scheduling system",
  JSSPP; Mu'alem & Feitelson 2001, IEEE TPDS 12(6)): the head-of-line blocking of a big job and
  what backfill recovers, event by event, deterministic.
- :func:`spare_nodes`: failures turned into spare capacity: nodes down on average = failures per
  node-day x nodes x repair days (Little's law), spares = the Poisson 99th percentile of that.

Standard library only.
"""

from __future__ import annotations

import math
import random
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from types import MappingProxyType

from course.calculators import queueing
from course.facts import validate
from course.facts.report import Report

#: Most GPUs, nodes or jobs these calculators accept.
MAX_GPUS = 1_000_000
MAX_JOBS = 10_000


def gpu_hours_by_account(jobs: Iterable[Mapping]) -> dict[str, float]:
    """GPU-hours per account from job records with ``account``, ``gpus``, ``start_seconds`` and
    ``end_seconds``: ``sum(gpus x (end - start)) / 3600``, accounts in alphabetical order."""
    total: dict[str, float] = {}
    for job in jobs:
        gpus = validate.positive_int("gpus", job["gpus"], maximum=MAX_GPUS)
        held = validate.non_negative(
            "end_seconds - start_seconds", job["end_seconds"] - job["start_seconds"]
        )
        total[job["account"]] = total.get(job["account"], 0.0) + gpus * held / 3600
    return dict(sorted(total.items()))


def queue_wait(
    utilisation: float, gpus: int, gpus_per_job: int, job_seconds: float
) -> queueing.MMc:
    """A cluster of ``gpus`` GPUs running jobs of ``gpus_per_job`` GPUs each, exponential job
    lengths of mean ``job_seconds``, Poisson submissions at the rate that keeps it ``utilisation``
    busy: an M/M/c queue with ``c = gpus // gpus_per_job`` slots (assumes every slot is usable,
    no fragmentation)."""
    u = validate.fraction("utilisation", utilisation, allow_zero=True)
    n = validate.positive_int("gpus", gpus, maximum=MAX_GPUS)
    k = validate.positive_int("gpus_per_job", gpus_per_job, maximum=n)
    s = validate.number("job_seconds", job_seconds, minimum=0, maximum=1e9, strict_min=True)
    slots = n // k
    return queueing.mmc(u * slots / s, s, slots)


@dataclass(frozen=True)
class Fragmentation(Report):
    """Free GPUs per node against one job size: how many such jobs fit, how many are stranded."""

    _title = "Fragmentation"

    gpus_per_job: int
    free_gpus: int
    jobs_that_fit: int
    stranded_gpus: int  # free but unusable by this job size
    stranded_fraction: float  # of the free GPUs


def fragmentation(free_gpus_per_node: Sequence[int], gpus_per_job: int) -> Fragmentation:
    """Single-node jobs of ``gpus_per_job`` GPUs on nodes with these free GPUs: each node fits
    ``free // gpus_per_job`` of them; the rest of its free GPUs are stranded for this size."""
    k = validate.positive_int("gpus_per_job", gpus_per_job, maximum=MAX_GPUS)
    free = [
        validate.positive_int("free GPUs", f, minimum=0, maximum=MAX_GPUS)
        for f in free_gpus_per_node
    ]
    fit = sum(f // k for f in free)
    total = sum(free)
    stranded = total - fit * k
    return Fragmentation(k, total, fit, stranded, stranded / total if total else 0.0)


def idle_reserved_usd(
    gpus: int, hours: float, utilisation: float, usd_per_gpu_hour: float
) -> float:
    """USD paid for reserved GPUs while idle: ``gpus x hours x (1 - utilisation) x price``."""
    n = validate.positive_int("gpus", gpus, maximum=MAX_GPUS)
    h = validate.non_negative("hours", hours)
    u = validate.fraction("utilisation", utilisation, allow_zero=True)
    price = validate.non_negative("usd_per_gpu_hour", usd_per_gpu_hour)
    return n * h * (1 - u) * price


@dataclass(frozen=True)
class SimJob:
    """A job for :func:`simulate`: submitted at ``submit_seconds``, needs ``gpus`` at once, runs
    ``run_seconds``, asks for a time limit of ``limit_seconds`` (>= the run; backfill trusts it).
    Waiting jobs are considered highest ``priority`` first, then in submission order."""

    name: str
    submit_seconds: float
    gpus: int
    run_seconds: float
    limit_seconds: float
    priority: float = 0.0


def from_records(jobs: Iterable[Mapping]) -> list[SimJob]:
    """Jobs a scheduler ran (records with ``name``, ``submit_seconds``, ``gpus``, ``start_seconds``,
    ``end_seconds``, ``time_minutes``, ``priority``) as :class:`SimJob`: the run time they took (at
    least 1 s, the resolution of Slurm's timestamps), the limit and priority they were given."""
    return [
        SimJob(
            j["name"],
            j["submit_seconds"],
            j["gpus"],
            max(j["end_seconds"] - j["start_seconds"], 1),
            60 * j["time_minutes"],
            j["priority"],
        )
        for j in jobs
    ]


@dataclass(frozen=True)
class Schedule(Report):
    """What a policy did with a job mix on one pool of GPUs."""

    _title = "Schedule"
    _formats = MappingProxyType({"utilisation": "percent"})

    policy: str
    makespan_seconds: float  # first submit to last end
    mean_wait_seconds: float
    utilisation: float  # GPU-seconds used / (GPUs x makespan)
    starts: tuple[tuple[str, float], ...]  # (job, start_seconds) in job order


def _validate_jobs(jobs: Sequence[SimJob], gpus: int) -> list[SimJob]:
    if not 1 <= len(jobs) <= MAX_JOBS:
        raise ValueError(f"jobs must hold 1 to {MAX_JOBS} jobs, got {len(jobs)}")
    if len({j.name for j in jobs}) != len(jobs):
        raise ValueError("jobs must have distinct names")
    for j in jobs:
        validate.positive_int("gpus of a job", j.gpus, maximum=gpus)
        validate.non_negative("submit_seconds", j.submit_seconds)
        validate.number("run_seconds", j.run_seconds, minimum=0, maximum=1e9, strict_min=True)
        validate.number("limit_seconds", j.limit_seconds, minimum=j.run_seconds, maximum=1e9)
    return sorted(jobs, key=lambda j: (j.submit_seconds, j.name))


def simulate(jobs: Sequence[SimJob], gpus: int, policy: str = "fifo") -> Schedule:
    """Schedule ``jobs`` on ``gpus`` GPUs. ``"fifo"``: jobs start in order (priority, then
    submission, then their order in ``jobs``); the first that does not fit blocks all behind it.
    ``"backfill"`` (EASY): the first waiting job gets a reservation at the earliest time enough
    GPUs free up (by running jobs' *limits*); a later job starts now if it fits in the free GPUs
    and either ends (by its limit) before that reservation or leaves the reserved GPUs free."""
    n = validate.positive_int("gpus", gpus, maximum=MAX_GPUS)
    validate.choice("policy", policy, ("fifo", "backfill"))
    queue = _validate_jobs(jobs, n)
    position = {j.name: i for i, j in enumerate(jobs)}
    pending = list(queue)
    running: list[tuple[float, float, SimJob]] = []  # (end, limit end, job)
    start: dict[str, float] = {}
    now = 0.0
    while pending or running:
        arrived = sorted(
            (j for j in pending if j.submit_seconds <= now),
            key=lambda j: (-j.priority, j.submit_seconds, position[j.name]),
        )
        free = n - sum(j.gpus for _, _, j in running)
        for job in _startable(arrived, running, free, now, policy):
            start[job.name] = now
            running.append((now + job.run_seconds, now + job.limit_seconds, job))
            pending.remove(job)
        events = [e for e, _, _ in running] + [
            j.submit_seconds for j in pending if j.submit_seconds > now
        ]
        now = min(events)
        running = [r for r in running if r[0] > now]
    ends = [start[j.name] + j.run_seconds for j in queue]
    span = max(ends) - queue[0].submit_seconds
    used = sum(j.gpus * j.run_seconds for j in queue)
    waits = [start[j.name] - j.submit_seconds for j in queue]
    return Schedule(
        policy=policy,
        makespan_seconds=span,
        mean_wait_seconds=sum(waits) / len(waits),
        utilisation=used / (n * span),
        starts=tuple((j.name, start[j.name]) for j in jobs),
    )


def _startable(
    arrived: list[SimJob], running: list, free: int, now: float, policy: str
) -> list[SimJob]:
    chosen: list[SimJob] = []
    for i, job in enumerate(arrived):
        if job.gpus <= free:
            chosen.append(job)
            free -= job.gpus
            continue
        if policy == "fifo":
            break
        # EASY: reserve for this head job, then backfill the rest around the reservation
        shadow, spare = _reservation(job, running, chosen, free, now)
        for later in arrived[i + 1 :]:
            fits = later.gpus <= free
            if fits and (now + later.limit_seconds <= shadow or later.gpus <= spare):
                chosen.append(later)
                free -= later.gpus
                if now + later.limit_seconds > shadow:
                    spare -= later.gpus
        break
    return chosen


def _reservation(
    head: SimJob, running: list, chosen: list[SimJob], free: int, now: float
) -> tuple[float, int]:
    """When ``head`` can start by the running jobs' limits, and the GPUs spare at that time."""
    ends = [(limit, j.gpus) for _, limit, j in running]
    ends = sorted(ends + [(now + j.limit_seconds, j.gpus) for j in chosen])
    available = free
    for when, released in ends:
        available += released
        if available >= head.gpus:
            return when, available - head.gpus
    return math.inf, 0


def job_mix(
    count: int, gpus: int, seed: int = 0, mean_gap_seconds: float = 600.0
) -> tuple[SimJob, ...]:
    """A seeded mix of ``count`` jobs for a pool of ``gpus``: sizes 1, 2, 4, 8 GPUs and a
    whole-pool job now and then, run times 10 min to 4 h, limits 1.5x the run time (users
    overestimate), Poisson submissions with mean gap ``mean_gap_seconds``."""
    c = validate.positive_int("count", count, maximum=MAX_JOBS)
    n = validate.positive_int("gpus", gpus, minimum=8, maximum=MAX_GPUS)
    rng = random.Random(seed)
    t, out = 0.0, []
    for i in range(c):
        size = rng.choice([1, 1, 2, 2, 4, 8, n])
        run = rng.uniform(600, 4 * 3600)
        out.append(SimJob(f"j{i}", round(t), size, round(run), round(1.5 * run)))
        t += rng.expovariate(1 / mean_gap_seconds)
    return tuple(out)


def offered_load(jobs: Sequence[SimJob], gpus: int) -> float:
    """The load a job mix offers a pool of ``gpus``: GPU-seconds of work over GPU-seconds of
    capacity while the jobs arrive (first to last submission). Above 1 the queue only grows
    (every policy drains a backlog and its mean wait grows with the length of the trace); a
    policy comparison means most below 1."""
    n = validate.positive_int("gpus", gpus, maximum=MAX_GPUS)
    if not jobs:
        raise ValueError("jobs must hold at least one job, got none")
    span = max(j.submit_seconds for j in jobs) - min(j.submit_seconds for j in jobs)
    if span <= 0:
        raise ValueError("jobs must arrive over some time (first to last submission), got 0 s")
    return sum(j.gpus * j.run_seconds for j in jobs) / (n * span)


def spare_nodes(
    nodes: int, failures_per_node_day: float, repair_days: float, quantile: float = 0.99
) -> tuple[float, int]:
    """``(mean nodes down, spares)``: a node fails at ``failures_per_node_day`` and is out for
    ``repair_days``, so by Little's law ``nodes x rate x repair_days`` are down on average;
    spares = the smallest k with P(Poisson(mean) <= k) >= ``quantile``."""
    n = validate.positive_int("nodes", nodes, maximum=MAX_GPUS)
    rate = validate.non_negative("failures_per_node_day", failures_per_node_day)
    days = validate.non_negative("repair_days", repair_days)
    q = validate.number("quantile", quantile, minimum=0.5, maximum=0.9999)
    mean = n * rate * days
    k, term = 0, math.exp(-mean)
    cdf = term
    while cdf < q:
        k += 1
        term *= mean / k
        cdf += term
    return mean, k
