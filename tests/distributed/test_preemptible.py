"""Lesson 14's job that survives its time limit and preemption, on a real Slurm: warned by
SIGUSR1 (``--signal``) or preempted by a job in a higher partition (SIGTERM), it saves the whole
training state, exits 75, is requeued, and its second run ends bitwise where a run without the
interruption ends. Removing the handler, the requeue line or the generators from the checkpoint
makes these tests fail.

Skips where Slurm cannot run, with the reason; in CI (CI=true) that is a failure."""

from __future__ import annotations

import os
import signal

import pytest

from course.distributed import preemptible, slurm

REASON = slurm.unavailable()
if REASON and os.environ.get("CI") == "true":
    raise RuntimeError(f"CI must run Slurm (.ci/run installs slurm-wlm and munge): {REASON}")
live = pytest.mark.skipif(bool(REASON), reason=f"no Slurm: {REASON}")


@pytest.fixture(scope="module")
def demo(tmp_path_factory):
    """Both jobs of the lesson's demo, run once on a cluster with an ``urgent`` partition."""
    with slurm.running(tmp_path_factory.mktemp("slurm"), preemption=True) as cluster:
        run = preemptible.run_on_slurm(cluster)
    return {job.name: job for job in run.jobs}, run


@pytest.mark.slow
@live
@pytest.mark.parametrize(("name", "signal_name"), [("warned", "SIGUSR1"), ("preempted", "SIGTERM")])
def test_a_signalled_job_saves_is_requeued_and_resumes_where_it_saved(demo, name, signal_name):
    job = demo[0][name]
    assert job.state == "COMPLETED", job.output
    assert job.stopped_by == signal_name, job.output
    assert job.saved_at >= 3 and job.resumed_at == job.saved_at, job.output
    assert job.restarts == 1


@pytest.mark.slow
@live
@pytest.mark.parametrize("name", ["warned", "preempted"])
def test_the_requeued_job_ends_bitwise_where_an_uninterrupted_run_ends(demo, name):
    job, straight = demo[0][name], demo[1].straight
    assert job.losses == straight["losses"] and len(job.losses) == demo[1].steps
    assert job.digest == straight["digest"]


def test_a_stop_signal_is_noted_and_the_processs_own_handler_comes_back(tmp_path):
    before = signal.getsignal(signal.SIGTERM)
    with preemptible.stop_requests() as arrived:
        os.kill(os.getpid(), signal.SIGUSR1)
        os.kill(os.getpid(), signal.SIGTERM)
    assert arrived == ["SIGUSR1", "SIGTERM"]
    assert signal.getsignal(signal.SIGTERM) is before


def test_the_digest_changes_with_one_bit_of_the_state(tmp_path):
    assert preemptible.train(tmp_path / "a", steps=2, echo=False) == 0
    state = preemptible.resume.new_state(total_steps=2)
    before = preemptible.digest(state)
    with preemptible.torch.no_grad():
        first = next(state.model.parameters())
        first.view(-1)[0] = preemptible.torch.nextafter(first.view(-1)[0], first.new_tensor(9.0))
    assert preemptible.digest(state) != before
