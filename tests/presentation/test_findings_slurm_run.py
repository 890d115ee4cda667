"""Lesson 14's findings say what the run did, each way it can go (synthetic runs), and the shipped
recording of the real Slurm run reads as the lesson says."""

from __future__ import annotations

import dataclasses
from types import SimpleNamespace

from course.distributed import job_mix, preemptible
from course.presentation.findings import slurm_run as found


def _run(**starts_ends) -> SimpleNamespace:
    jobs = []
    for name, (start, end, *rest) in starts_ends.items():
        gpus, prio = (rest + [1, 1000])[:2] if rest else (1, 1000)
        fixed = {"gpu_indices": [0], "scheduler": "Backfill", "reasons": ["Resources"]}
        jobs.append(
            {"name": name, "account": "a", "gpus": gpus, "priority": prio, "time_minutes": 1}
            | {"start_seconds": start, "end_seconds": end}
            | fixed
        )
    return SimpleNamespace(jobs=jobs)


def test_waiting_job_both_ways():
    assert "waited 9 s" in found.waiting_job(_run(train=(0, 9), big=(9, 10)))
    assert "started at once" in found.waiting_job(_run(train=(0, 9), big=(0, 1)))
    assert "no `big`" in found.waiting_job(_run(train=(0, 9)))


def test_backfill_both_ways():
    assert "backfill, because" in found.backfill(_run(big=(9, 10), small=(0, 1)))
    assert "no backfill" in found.backfill(_run(big=(9, 10), small=(10, 11)))


def test_priority_order_both_ways():
    ordered = _run(low=(14, 15, 4, 700), high=(10, 11, 4, 990), mid=(12, 13, 4, 850))
    assert found.priority_order(ordered).startswith("Priority decided")
    fifo = _run(low=(10, 11, 4, 700), high=(12, 13, 4, 990), mid=(14, 15, 4, 850))
    assert found.priority_order(fifo).startswith("Priority did not decide")


def test_accounting_sums_gpu_seconds_per_account():
    run = _run(a=(0, 10, 2), b=(0, 5, 4))
    assert "| a | 40 |" in found.accounting(run)


def test_the_recording_shows_every_mechanism_the_lesson_names():
    run = job_mix.recorded()
    assert not run.live and "recorded" in run.source
    assert "waited" in found.waiting_job(run) and "backfill, because" in found.backfill(run)
    assert found.priority_order(run).startswith("Priority decided")
    assert run.environment["CUDA_VISIBLE_DEVICES"] == "0,1"
    assert "== DDP on the tiny transformer ==" in run.output


def test_model_against_slurm_both_ways():
    run = _run(train=(0, 9), big=(9, 10), small=(0, 1))
    for i, job in enumerate(run.jobs):
        job["id"] = i
    same = [("train", 0.0), ("big", 9.0), ("small", 0.0)]
    assert "in the order Slurm did" in found.model_against_slurm(run, same)
    fifo = [("train", 0.0), ("big", 9.0), ("small", 9.0)]
    assert "differs from Slurm's" in found.model_against_slurm(run, fifo)


def test_end_states_both_ways_and_a_failed_holder_is_named_as_failed():
    run = _run(train=(0, 9), big=(9, 10))
    for job in run.jobs:
        job |= {"state": "COMPLETED", "exit_code": "0:0"}
    assert found.end_states(run).startswith("All 2 jobs ended `COMPLETED`")
    assert "ended at 9 s" in found.waiting_job(run)
    run.jobs[0] |= {"state": "FAILED", "exit_code": "1:0"}
    said = found.end_states(run)
    assert "`train` ended `FAILED` (exit code `1:0`" in said and "non-zero code" in said
    assert "charged all the same" in said
    assert "ended **FAILED** (exit code 1:0) at 9 s" in found.waiting_job(run)
    assert "FAILED" in found.accounting(run)


def test_requeued_says_a_bitwise_resume_and_says_when_it_is_not():
    run = preemptible.lesson_run(live=False)  # the recording
    said = found.requeued(run)
    assert "`warned` got SIGUSR1 after step" in said and "`preempted` got SIGTERM" in said
    assert "1 restart," in said and "ended COMPLETED" in said and "a bitwise resume" in said
    warned, preempted = run.jobs
    broken = dataclasses.replace(
        run,
        jobs=[
            dataclasses.replace(warned, digest="0" * 64, state="FAILED"),
            dataclasses.replace(preempted, stopped_by="", saved_at=-1),
        ],
    )
    said = found.requeued(broken)
    assert "`warned` did **not** end with the weights" in said and "not a bitwise resume" in said
    assert "ended **FAILED**" in said and "`preempted` saw no stop signal" in said
