"""A real Slurm, started by the course: lesson 14's job mix runs as the lesson says it does, each
scheduling mechanism the lesson names changes the result when it is removed (more GPUs: the big
job no longer waits; no backfill: the small job waits behind it; no --nice: submission order), the
shipped batch scripts are accepted, and stopping the cluster leaves no process behind.

Skips where Slurm cannot run (no slurm-wlm/munge, not root, not Linux), with the reason; in CI
(CI=true, where .ci/run installs both) that is a failure instead."""

from __future__ import annotations

import dataclasses
import os
import subprocess
import sys
import time

import pytest

from course.calculators import scheduling as model
from course.distributed import job_mix, slurm
from course.presentation.findings import slurm_run as found

REASON = slurm.unavailable()
if REASON and os.environ.get("CI") == "true":
    raise RuntimeError(f"CI must run Slurm (.ci/run installs slurm-wlm and munge): {REASON}")
pytestmark = [pytest.mark.slow, pytest.mark.skipif(bool(REASON), reason=f"no Slurm: {REASON}")]


@pytest.fixture(scope="module")
def live(tmp_path_factory):
    """The lesson's mix with the real DDP batch script; the processes alive during the run."""
    with slurm.running(tmp_path_factory.mktemp("slurm")) as cluster:
        accepted = {name: _test_only(cluster, name) for name in ("ddp", "elastic")}
        run = job_mix.run_mix(cluster, train=True)
        alive = cluster.processes()
    return run, accepted, alive, cluster


def _test_only(cluster: slurm.Cluster, name: str) -> str:
    """``sbatch --test-only``: Slurm parses the script and says when it would start it."""
    script = str(job_mix.JOBS_DIR / f"{name}.sbatch")
    done = subprocess.run(
        ["sbatch", "--test-only", script], env=cluster.env, capture_output=True, text=True
    )
    return done.stdout + done.stderr


def _mix(tmp_path_factory, **kwargs) -> job_mix.SchedulingRun:
    """train, big and small only (the jobs the mutated mechanism decides), sleeping."""
    with slurm.running(tmp_path_factory.mktemp("slurm"), **kwargs) as cluster:
        return job_mix.run_mix(cluster, train=False, jobs=job_mix.MIX[:3])


def test_the_ddp_job_runs_a_course_demo_on_the_gpus_slurm_gave_it(live):
    run = live[0]
    assert "== DDP on the tiny transformer ==" in run.output and "'buckets'" in run.output
    train = run.job("train")
    assert run.environment["CUDA_VISIBLE_DEVICES"] == ",".join(map(str, train["gpu_indices"]))
    assert len(train["gpu_indices"]) == 2 and run.environment["SLURM_JOB_ACCOUNT"] == "alice"


def test_the_big_job_waits_for_gpus_and_small_one_is_backfilled(live):
    run = live[0]
    train, big, small = run.job("train"), run.job("big"), run.job("small")
    assert "Resources" in big["reasons"] and big["start_seconds"] >= train["end_seconds"]
    assert small["start_seconds"] < big["start_seconds"] and small["scheduler"] == "Backfill"
    assert "waited" in found.waiting_job(run) and "backfill" in found.backfill(run)


def test_jobs_that_need_the_whole_node_start_in_priority_order(live):
    run = live[0]
    starts = [run.job(n)["start_seconds"] for n in ("high", "mid", "low")]
    assert starts == sorted(starts) and len(set(starts)) == 3
    assert found.priority_order(run).startswith("Priority decided")


def test_the_shipped_scripts_are_accepted_and_nothing_is_left_running(live):
    run, accepted, alive, cluster = live
    assert all("to start at" in text for text in accepted.values()), accepted
    assert alive and cluster.processes() == [] and not cluster.daemons
    for pid in alive:
        assert not os.path.exists(f"/proc/{pid}") or _zombie(pid)


def _zombie(pid: int) -> bool:
    try:
        with open(f"/proc/{pid}/stat") as stat:
            return stat.read().rsplit(")", 1)[1].split()[0] == "Z"
    except OSError:
        return True


def test_with_a_fifth_gpu_the_big_job_starts_at_once(tmp_path_factory):
    run = _mix(tmp_path_factory, gpus=5)  # mutation: the GRES count
    big, train = run.job("big"), run.job("train")
    assert big["start_seconds"] < train["end_seconds"] and "Resources" not in big["reasons"]
    assert "started at once" in found.waiting_job(run)


def test_without_backfill_the_small_job_waits_behind_the_big_one(tmp_path_factory):
    run = _mix(tmp_path_factory, scheduler="sched/builtin")  # mutation: no backfill
    small, big = run.job("small"), run.job("big")
    assert small["start_seconds"] >= big["start_seconds"]
    assert "no backfill" in found.backfill(run)


def test_the_recording_was_made_by_this_code():
    run = job_mix.recorded()
    assert not run.live and run.environment["CUDA_VISIBLE_DEVICES"]
    fields = {f.name for f in dataclasses.fields(job_mix.SchedulingRun)}
    assert set(dataclasses.asdict(run)) == fields


def test_the_backfill_model_predicts_the_live_order(live):
    run = live[0]
    starts = model.simulate(model.from_records(run.jobs), 4, "backfill").starts
    assert "in the order Slurm did" in found.model_against_slurm(run, starts)


def test_a_killed_kernel_takes_the_daemons_along(tmp_path):
    """A process (a Jupyter kernel) starts a cluster and is SIGKILLed: no daemon survives it."""
    code = (
        "import sys, time\nfrom course.distributed import slurm\n"
        f"slurm.start({str(tmp_path)!r})\nprint('up', flush=True)\ntime.sleep(60)\n"
    )
    kernel = subprocess.Popen([sys.executable, "-c", code], stdout=subprocess.PIPE, text=True)
    assert kernel.stdout.readline().strip() == "up"
    cluster = slurm.Cluster(tmp_path, gpus=4)
    assert len(cluster.processes()) >= 3  # munged, slurmctld, slurmd
    kernel.kill()
    kernel.wait()
    deadline = time.monotonic() + 10
    while cluster.processes() and time.monotonic() < deadline:
        time.sleep(0.1)
    left = cluster.processes()
    cluster.stop()  # (clean up before failing)
    assert left == []
