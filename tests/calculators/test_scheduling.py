"""Lesson 14's scheduling calculators against cases worked by hand, and their input checks."""

from __future__ import annotations

import math

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from course.calculators import queueing
from course.calculators import scheduling as sch
from course.facts.data import reference

J = sch.SimJob


def test_gpu_hours_sum_gpus_times_hours_per_account():
    jobs = [
        {"account": "bob", "gpus": 8, "start_seconds": 0, "end_seconds": 3600},  # 8 GPU-h
        {"account": "alice", "gpus": 2, "start_seconds": 100, "end_seconds": 1900},  # 2 x 0.5 h = 1
        {"account": "bob", "gpus": 1, "start_seconds": 0, "end_seconds": 7200},  # 2
    ]
    assert sch.gpu_hours_by_account(jobs) == {"alice": 1.0, "bob": 10.0}
    with pytest.raises(ValueError, match="end_seconds - start_seconds"):
        sch.gpu_hours_by_account(
            [{"account": "a", "gpus": 1, "start_seconds": 5, "end_seconds": 1}]
        )


def test_queue_wait_is_lesson_13s_queue_with_slots_of_whole_jobs():
    # 64 GPUs, 8-GPU jobs: 8 slots; 1 h jobs at 90 % -> 7.2 jobs/h
    q = sch.queue_wait(0.9, 64, 8, 3600)
    assert q.servers == 8 and q.utilisation == pytest.approx(0.9)
    assert q.mean_wait_seconds == pytest.approx(queueing.mmc(7.2 / 3600, 3600, 8).mean_wait_seconds)
    assert sch.queue_wait(0.5, 64, 8, 3600).mean_wait_seconds < q.mean_wait_seconds
    with pytest.raises(ValueError, match="gpus_per_job"):
        sch.queue_wait(0.5, 4, 8, 3600)


def test_fragmentation_counts_stranded_gpus():
    # nodes with 3, 5, 1, 6 free GPUs; 4-GPU jobs: 0 + 1 + 0 + 1 fit, 15 - 8 = 7 stranded
    f = sch.fragmentation([3, 5, 1, 6], 4)
    assert (f.free_gpus, f.jobs_that_fit, f.stranded_gpus) == (15, 2, 7)
    assert f.stranded_fraction == pytest.approx(7 / 15)
    assert sch.fragmentation([8, 8], 8).stranded_gpus == 0


def test_idle_reserved_cost():
    # 64 GPUs for 720 h at 60 % busy and $2/GPU-h: 64 x 720 x 0.4 x 2
    assert sch.idle_reserved_usd(64, 720, 0.6, 2.0) == pytest.approx(36_864)
    with pytest.raises(ValueError, match="utilisation"):
        sch.idle_reserved_usd(64, 720, 1.5, 2.0)


MIX = [J("a", 0, 2, 100, 200), J("big", 0, 4, 50, 60), J("small", 0, 2, 50, 100)]


def test_fifo_blocks_behind_the_big_job_and_backfill_does_not():
    # 4 GPUs. FIFO: a at 0; big needs all 4 -> waits for a (100); small waits behind big (150).
    fifo = dict(sch.simulate(MIX, 4, "fifo").starts)
    assert fifo == {"a": 0, "big": 100, "small": 150}
    # EASY: big is reserved at a's limit (200); small's limit (100) ends before it -> starts at 0
    easy = sch.simulate(MIX, 4, "backfill")
    assert dict(easy.starts) == {"a": 0, "big": 100, "small": 0}
    assert easy.makespan_seconds == 150 and easy.mean_wait_seconds == pytest.approx(100 / 3)


def test_backfill_never_delays_the_reserved_job():
    # small's limit (300) runs past big's reservation (a's limit, 200) and it would need big's GPUs
    mix = [J("a", 0, 2, 100, 200), J("big", 0, 4, 50, 60), J("small", 0, 2, 50, 300)]
    assert dict(sch.simulate(mix, 4, "backfill").starts)["small"] == 150


@settings(max_examples=40, deadline=None)
@given(st.integers(0, 10_000), st.sampled_from([8, 16, 32]))
def test_schedules_respect_the_pool_and_backfill_is_not_slower(seed, gpus):
    mix = sch.job_mix(30, gpus, seed=seed)
    runs = {p: sch.simulate(mix, gpus, p) for p in ("fifo", "backfill")}
    for run in runs.values():
        starts = dict(run.starts)
        for t in sorted(starts.values()):  # GPUs in use at every start never exceed the pool
            busy = sum(j.gpus for j in mix if starts[j.name] <= t < starts[j.name] + j.run_seconds)
            assert busy <= gpus
        assert all(starts[j.name] >= j.submit_seconds for j in mix) and 0 < run.utilisation <= 1
    assert runs["backfill"].mean_wait_seconds <= runs["fifo"].mean_wait_seconds * 1.5


def test_spare_nodes_from_failures():
    # 1,000 nodes, one failure per node-year, 3 days out: 8.2 down on average
    mean, spares = sch.spare_nodes(1000, 1 / 365, 3)
    assert mean == pytest.approx(3000 / 365)
    cdf = lambda k: sum(math.exp(-mean) * mean**i / math.factorial(i) for i in range(k + 1))  # noqa: E731
    assert cdf(spares) >= 0.99 > cdf(spares - 1)
    assert sch.spare_nodes(10, 0, 3) == (0.0, 0)


@pytest.mark.parametrize(
    ("call", "label"),
    [
        (lambda: sch.simulate(MIX, 2), "gpus of a job"),
        (lambda: sch.simulate(MIX, 4, "lifo"), "policy"),
        (lambda: sch.simulate([J("x", 0, 1, 10, 5)], 4), "limit_seconds"),
        (lambda: sch.fragmentation([3, -1], 4), "free GPUs"),
        (lambda: sch.spare_nodes(0, 0.1, 1), "nodes"),
    ],
)
def test_bad_input_names_its_label(call, label):
    with pytest.raises(ValueError, match=label):
        call()


def _slurm_jobs() -> list[sch.SimJob]:
    """The job mix lesson 14 ran on a real Slurm, as the model's jobs (recorded in
    course/facts/data/reference/slurm-2core-vm-2026-11-28)."""
    return sch.from_records(reference.load("slurm-2core-vm-2026-11-28", "scheduling")["jobs"])


def _order(starts) -> list[str]:
    return [name for name, _ in sorted(starts, key=lambda s: s[1])]


def test_the_backfill_model_starts_the_jobs_in_the_order_the_real_slurm_did():
    real = reference.load("slurm-2core-vm-2026-11-28", "scheduling")["jobs"]
    slurm_order = _order((j["name"], j["start_seconds"] + j["id"] / 100) for j in real)
    model = sch.simulate(_slurm_jobs(), 4, "backfill")
    assert _order((name, t + i / 100) for i, (name, t) in enumerate(model.starts)) == slurm_order
    # without backfill the model holds the small job back, as Slurm's sched/builtin does
    fifo = dict(sch.simulate(_slurm_jobs(), 4, "fifo").starts)
    assert fifo["small"] >= fifo["big"]


def test_offered_load_of_the_lessons_mix_is_overload():
    # The reviewers' check of lesson 14 (job_mix(300, gpus=64, seed=14)): the 300 jobs arrive in
    # 2.13 days and carry 5.6 days of 64-GPU work (load 2.6); 51 of them need the whole pool; with
    # mean_gap_seconds=1725 the same seed offers about 0.92
    mix = sch.job_mix(300, gpus=64, seed=14)
    assert sch.offered_load(mix, 64) == pytest.approx(2.6, abs=0.1)
    assert sum(j.gpus == 64 for j in mix) == 51
    light = sch.job_mix(300, gpus=64, seed=14, mean_gap_seconds=1725)
    assert sch.offered_load(light, 64) == pytest.approx(0.92, abs=0.03)
    with pytest.raises(ValueError, match="gpus"):
        sch.offered_load(mix, 0)
