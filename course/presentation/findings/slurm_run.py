"""Findings of lesson 14: what a real Slurm did with the job mix
(``course.distributed.job_mix``).

Each function takes the run (an object with ``jobs``, a list of job dicts with ``name``,
``account``, ``gpus``, ``nice``, ``priority``, ``start_seconds``, ``end_seconds``, ``gpu_indices``,
``scheduler``, ``reasons``, ``state`` and ``exit_code`` as ``sacct`` reported them) and says what
happened, whichever way it went: a job that did not end ``COMPLETED`` is named as such wherever its
times are quoted.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from course.calculators import scheduling


def _job(run: Any, name: str) -> dict | None:
    return next((j for j in run.jobs if j["name"] == name), None)


def _ended(job: dict) -> str:
    """ "ended" for a job ``sacct`` reported COMPLETED, else "ended FAILED (exit code 1:0)"."""
    state = job.get("state", "?")
    if state == "COMPLETED":
        return "ended"
    return f"ended **{state}** (exit code {job.get('exit_code', '?')})"


#: What ``sacct``'s end states mean (Slurm, sacct(1), "JOB STATE CODES").
STATE_MEANINGS = {
    "COMPLETED": "every process of the job exited with code 0",
    "FAILED": "the batch script exited with a non-zero code (or a step it waited for failed)",
    "TIMEOUT": "the job reached its time limit and was killed",
    "CANCELLED": "scancel, or an administrator, ended it",
    "OUT_OF_MEMORY": "a process exceeded the job's memory",
    "NODE_FAIL": "its node failed",
    "PREEMPTED": "a higher-priority job took its resources",
}


def end_states(run: Any) -> str:
    """How each job ended, as ``sacct`` read it from Slurm's job-completion log; what a state
    other than COMPLETED means, where there is one."""
    states = {j["name"]: j.get("state", "?") for j in run.jobs}
    bad = [j for j in run.jobs if j.get("state") != "COMPLETED"]
    if not bad:
        return (
            f"All {len(states)} jobs ended `COMPLETED` (exit code 0:0), as `sacct` reports: "
            f"{STATE_MEANINGS['COMPLETED']}."
        )
    lines = [
        f"`{j['name']}` ended `{j.get('state')}` (exit code `{j.get('exit_code', '?')}`: the "
        "script's code, then the signal that killed it): "
        f"{STATE_MEANINGS.get(j.get('state'), 'see sacct(1), JOB STATE CODES')}."
        for j in bad
    ]
    return (
        " ".join(lines)
        + " Its GPUs were charged all the same: Slurm bills the allocation, not the result. "
        "Read its output file (`%x-%j.out`) for the cause, then resubmit."
    )


def waiting_job(run: Any, name: str = "big", holder: str = "train") -> str:
    """Whether the ``name`` job waited for GPUs that ``holder`` held, and why Slurm said so."""
    job, held = _job(run, name), _job(run, holder)
    if job is None or held is None:
        return f"The run has no `{name}` or `{holder}` job to compare."
    asks = f"`{name}` ({job['account']}, {job['gpus']} GPUs)"
    if job["start_seconds"] >= held["end_seconds"]:
        why = ", ".join(f"`{r}`" for r in job["reasons"]) or "no reason recorded"
        waited = job["start_seconds"] - job.get("submit_seconds", 0)
        return (
            f"{asks} waited {waited:.0f} s (reason {why}) while `{holder}` held "
            f"{held['gpus']} of the node's GPUs: `{holder}` {_ended(held)} at "
            f"{held['end_seconds']:.0f} s "
            f"and `{name}` started at {job['start_seconds']:.0f} s, on GPUs {job['gpu_indices']}."
        )
    return (
        f"{asks} started at once ({job['start_seconds']:.0f} s) beside `{holder}`: enough GPUs "
        "were free, so nothing waited."
    )


def backfill(run: Any, small: str = "small", big: str = "big") -> str:
    """Whether the small job started before the waiting big job (backfill) or queued behind it."""
    s, b = _job(run, small), _job(run, big)
    if s is None or b is None:
        return f"The run has no `{small}` or `{big}` job to compare."
    if s["start_seconds"] < b["start_seconds"]:
        return (
            f"`{small}` ({s['gpus']} GPU, time limit {s['time_minutes']} min) was submitted after "
            f"`{big}` but started first, at {s['start_seconds']:.0f} s, by the {s['scheduler']} "
            f"scheduler: backfill, because it would end before `{big}` could start anyway."
        )
    return (
        f"`{small}` started at {s['start_seconds']:.0f} s, not before `{big}` "
        f"({b['start_seconds']:.0f} s): no backfill, the queue went strictly in order and its "
        "free GPU sat idle."
    )


def priority_order(run: Any, names: tuple[str, ...] = ("low", "high", "mid")) -> str:
    """The order the whole-node jobs started in, against their submission order and priorities."""
    jobs = [j for j in (_job(run, n) for n in names) if j is not None]
    if len(jobs) < 2:
        return "The run has too few whole-node jobs to show an order."
    by_start = sorted(jobs, key=lambda j: j["start_seconds"])
    by_priority = sorted(jobs, key=lambda j: -j["priority"])
    order = ", ".join(f"`{j['name']}` (priority {j['priority']})" for j in by_start)
    submitted = ", ".join(f"`{j['name']}`" for j in jobs)
    if [j["name"] for j in by_start] == [j["name"] for j in by_priority]:
        return (
            f"Priority decided: submitted as {submitted}, they started as {order}; "
            "`--nice` lowered each job's priority by its value."
        )
    return f"Priority did not decide: submitted as {submitted}, they started as {order}."


def accounting(run: Any) -> str:
    """GPU-seconds (and GPU-hours) per account, summed from the jobs' allocations, with the end
    states of the jobs charged (a failed job is charged too)."""
    hours = scheduling.gpu_hours_by_account(run.jobs)
    rows = []
    for account, h in hours.items():  # one table row per account
        states = sorted({j.get("state", "?") for j in run.jobs if j["account"] == account})
        rows.append(f"| {account} | {h * 3600:,.0f} | {h:.4f} | {', '.join(states)} |")
    head = "| account | GPU-seconds | GPU-hours | jobs ended |\n|---|---:|---:|---|\n"
    return head + "\n".join(rows)


def model_against_slurm(run: Any, starts: Sequence[tuple[str, float]]) -> str:
    """Whether a model's start order (``(name, start_seconds)`` in job order) is the order in which
    the real Slurm started the same jobs (ties broken by submission order)."""
    real = [j["name"] for j in sorted(run.jobs, key=lambda j: (j["start_seconds"], j["id"]))]
    rank = {name: i for i, (name, _) in enumerate(starts)}
    model = [name for name, t in sorted(starts, key=lambda s: (s[1], rank[s[0]]))]
    listed = ", ".join(f"`{n}`" for n in real)
    if model == real:
        return f"The model starts the jobs in the order Slurm did: {listed}."
    return (
        f"The model's order ({', '.join(f'`{n}`' for n in model)}) differs from Slurm's "
        f"({listed}): the model leaves out something Slurm did."
    )


def requeued(run: Any) -> str:
    """What happened to each job of lesson 14's requeue demo (``course.distributed.preemptible``:
    ``run.jobs`` with ``name``, ``state``, ``stopped_by``, ``saved_at``, ``resumed_at``,
    ``restarts``, ``digest``; ``run.straight["digest"]``), whichever way it went."""
    said = []
    for job in run.jobs:
        name = f"`{job.name}`"
        if not job.stopped_by:
            said.append(f"{name} saw no stop signal and {_ended(vars(job))}.")
            continue
        resumed = (
            f"its second run started at step {job.resumed_at}"
            if job.resumed_at >= 0
            else "it never ran again"
        )
        ended = "ended COMPLETED" if job.state == "COMPLETED" else _ended(vars(job))
        restarts = f"{job.restarts} restart" + ("" if job.restarts == 1 else "s")
        said.append(
            f"{name} got {job.stopped_by} after step {job.saved_at}, saved its whole training "
            f"state and exited 75; Slurm counted {restarts}, {resumed} and the job {ended}."
        )
    same = [job.name for job in run.jobs if job.digest == run.straight["digest"]]
    differ = [f"`{job.name}`" for job in run.jobs if job.name not in same]
    if differ:
        said.append(
            f"{' and '.join(differ)} did **not** end with the weights and optimizer state of the "
            "run never interrupted: not a bitwise resume."
        )
    else:
        said.append(
            "Each ended with the SHA-256 digest of the run never interrupted "
            f"(`{run.straight['digest'][:12]}`): a bitwise resume."
        )
    return " ".join(said)
