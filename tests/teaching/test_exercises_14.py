"""Exercise set 14: known wrong answers get the hint written for them; the job script is read by the
course's one ``#SBATCH`` parser whatever spelling the learner uses, and where Slurm runs a real
``sbatch --test-only`` accepts the solution's script; the predicted schedule and the Xid actions
are the keys' own (the simulator, the Xid table), so a change to either shows here. (The solution
passing every public check, full marks and a blank's 0 are tested for every set in
tests/project/test_exercises.py.)"""

from __future__ import annotations

import pytest
from solution_run import feedback_with, solution_namespace

from course.distributed import job_mix, slurm

SET = "14_running_a_gpu_cluster"
REASON = slurm.unavailable()


@pytest.fixture(scope="module")
def namespace() -> dict:
    return solution_namespace(SET)


@pytest.mark.parametrize(
    ("question", "name", "value", "hint"),
    [
        ("q2", "gpus_held", 10, "per node"),
        ("q4", "jobs_that_fit", 6, "pools the GPUs"),
        ("q6", "start_now", ["ft"], "minutes:seconds"),
        ("q7", "total_gpus", 4, "per pod"),
        ("q8", "gpu_hours", {"alice": 12.0, "bob": 26.0}, "multiply the hours"),
        ("q10", "max_gpus_per_user", 21, "whole node free"),
    ],
)
def test_known_wrong_answers_get_their_hint(namespace, monkeypatch, question, name, value, hint):
    monkeypatch.delenv("COURSE_GRADING", raising=False)
    text = feedback_with(SET, namespace, question, name, value)
    assert f"{name}: not right yet" in text and hint in text


SPELLED_OTHERWISE = """#!/bin/bash
#SBATCH -N 2 --ntasks-per-node=1
#SBATCH --gpus-per-node=h100:8 -c 96
#SBATCH -t 180
#SBATCH --requeue --signal=SIGUSR1@90
srun torchrun --nnodes=2 --nproc-per-node=8 train.py
"""


@pytest.mark.parametrize(
    ("script", "right", "hint"),
    [
        (SPELLED_OTHERWISE, True, ""),
        (SPELLED_OTHERWISE.replace("-t 180", "-t 3:00"), False, "minutes:seconds"),
        (SPELLED_OTHERWISE.replace("-c 96", "-c 12"), False, "the CPUs of the whole node"),
        (
            SPELLED_OTHERWISE.replace("h100:8 -c 96", "h100:16 --cpus-per-gpu=12"),
            False,
            "is per node",
        ),
        (job_mix.job_script("ddp"), False, ""),  # the lesson's own script answers nothing
    ],
)
def test_the_job_script_is_judged_by_what_it_asks_for(namespace, monkeypatch, script, right, hint):
    monkeypatch.delenv("COURSE_GRADING", raising=False)
    text = feedback_with(SET, namespace, "q1", "script", script)
    assert ("not right yet" not in text) == right and hint in text


@pytest.mark.slow
@pytest.mark.skipif(bool(REASON), reason=f"no Slurm: {REASON}")
def test_a_real_sbatch_accepts_the_solutions_script(namespace, tmp_path):
    # The lesson's cluster is one node whose partition allows 60 minutes: the node count and the
    # limit are overridden on the command line (they are checked by the parser above); sbatch and
    # slurmctld check every other directive (GRES, CPUs per GPU, the signal, requeue).
    script = tmp_path / "job.sh"
    script.write_text(namespace["script"])
    with slurm.running(tmp_path / "cluster", gpus=8, cpus=96) as cluster:
        done = cluster.run("sbatch", "--test-only", "--nodes=1", "--time=60", str(script))
        assert done == ""  # sbatch --test-only answers on stderr and submits nothing
        assert cluster.run("squeue", "-h") == ""
        with pytest.raises(RuntimeError, match="Requested node configuration is not available"):
            cluster.run("sbatch", "--test-only", "--time=60", str(script))  # two nodes: one here


def test_the_predicted_schedule_is_the_simulators(namespace):
    # by hand (the question's explanation): FIFO holds C, D and E behind B; backfill starts C and E
    # in the gap before B's reservation at A's limit, and not D, whose limit crosses it
    assert namespace["fifo_start_minutes"] == {"A": 0, "B": 120, "C": 180, "D": 180, "E": 180}
    assert namespace["backfill_start_minutes"] == {"A": 0, "B": 120, "C": 10, "D": 180, "E": 20}


def test_the_xid_actions_and_the_maintenance_window_follow_their_keys(namespace):
    actions = [namespace[f"action_b0{i}"] for i in range(1, 5)]
    assert actions == ["none", "drain, reset GPU", "drain, reboot node", "drain, reset GPU"]
    assert namespace["start_now"] == ["ft", "probe"]
