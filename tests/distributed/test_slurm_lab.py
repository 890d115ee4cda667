"""Lesson 14's predict-then-run on a real Slurm: the lesson's scripts do on the cluster what the
lesson says (a fifth GPU is refused at submission; backfill starts the small job before the big
one, and without backfill it waits; --nice, afterok and an array), the recording was made by this
code from the scripts the lesson's cells hold, and a prediction is checked as the lesson says.

The live tests skip where Slurm cannot run, with the reason; in CI (CI=true) that is a failure."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from course.distributed import slurm, slurm_lab

REASON = slurm.unavailable()
if REASON and os.environ.get("CI") == "true":
    raise RuntimeError(f"CI must run Slurm (.ci/run installs slurm-wlm and munge): {REASON}")
LESSON = Path(__file__).parents[2] / "notebooks" / "14_running_a_gpu_cluster.ipynb"


@pytest.fixture(scope="module")
def lesson():
    """The lesson's experiments, run live once."""
    with slurm_lab.start() as lab:
        assert lab.live, lab.source
        data = slurm_lab.run_lesson(lab)
        cluster = lab.cluster
    queues = {name: slurm_lab.QueueRun(**q) for name, q in data["queues"].items()}
    return data, queues, cluster


@pytest.mark.slow
@pytest.mark.skipif(bool(REASON), reason=f"no Slurm: {REASON}")
def test_a_fifth_gpu_on_a_four_gpu_node_is_refused_at_submission(lesson):
    too_many = slurm_lab.Submission(**lesson[0]["submissions"]["one_too_many"])
    assert not too_many.accepted and too_many.job_id is None
    assert too_many.outcome == "rejected: Requested node configuration is not available"


@pytest.mark.slow
@pytest.mark.skipif(bool(REASON), reason=f"no Slurm: {REASON}")
def test_backfill_starts_the_small_job_before_the_big_one(lesson):
    run = lesson[1]["backfill"]
    assert run.scheduler == "sched/backfill"
    assert run.start_order().index("C") < run.start_order().index("B")
    assert run.job("C")["scheduler"] == "Backfill" and run.job("B")["reasons"] == ["Resources"]
    assert run.job("C")["end_seconds"] <= run.job("B")["start_seconds"]
    assert "(Resources)" in run.squeue and "COMPLETED" in run.sacct


@pytest.mark.slow
@pytest.mark.skipif(bool(REASON), reason=f"no Slurm: {REASON}")
def test_without_backfill_the_small_job_waits_for_the_big_one(lesson):
    run = lesson[1]["builtin"]
    assert run.scheduler == "sched/builtin" and run.start_order() == ["A", "B", "C"]
    assert run.job("C")["start_seconds"] >= run.job("B")["end_seconds"]
    assert "Priority" in run.job("C")["reasons"]


@pytest.mark.slow
@pytest.mark.skipif(bool(REASON), reason=f"no Slurm: {REASON}")
def test_nice_dependency_and_array_do_what_the_lesson_says(lesson):
    run = lesson[1]["nice_dependency_array"]
    order = run.start_order()
    assert order.index("second") < order.index("first")  # --nice=100 lowers first's priority
    assert run.job("first")["priority"] < run.job("second")["priority"]
    after, second = run.job("after"), run.job("second")
    assert "Dependency" in after["reasons"] and after["start_seconds"] >= second["end_seconds"]
    tasks = [run.job(f"sweep_{i}") for i in range(4)]
    assert all(t["state"] == "COMPLETED" for t in tasks)
    assert len({t["id"] for t in tasks}) == 4  # each task is a job of its own
    assert "(Dependency)" in run.squeue


@pytest.mark.slow
@pytest.mark.skipif(bool(REASON), reason=f"no Slurm: {REASON}")
def test_the_lab_leaves_nothing_running(lesson):
    assert lesson[2].processes() == [] and not lesson[2].daemons


def test_the_recording_was_made_by_this_code_from_the_lessons_scripts():
    lab = slurm_lab.start(live=False)
    assert not lab.live and "recorded" in lab.source and "asked for" in lab.source
    for name, scripts in slurm_lab.LESSON_SCRIPTS.items():
        if name == "one_too_many":
            done = lab.submit(name, scripts["too_many"])
        else:
            done = lab.queue(name, scripts)
        assert "differs" not in done.note, name
    mine = lab.submit("one_too_many", "#!/bin/bash\n#SBATCH --gres=gpu:3\nsleep 1\n")
    assert "your script differs" in mine.note and not mine.accepted
    with pytest.raises(ValueError, match="name must be one of"):
        lab.queue("fifo", {})


def test_the_lessons_cells_hold_the_recorded_scripts():
    cells = "\n".join(
        "".join(c["source"])
        for c in json.loads(LESSON.read_text())["cells"]
        if c["cell_type"] == "code"
    )
    for scripts in slurm_lab.LESSON_SCRIPTS.values():
        for text in scripts.values():
            assert text in cells, text


def test_without_slurm_the_lab_replays_the_recording_and_says_why(monkeypatch):
    monkeypatch.setattr(
        slurm, "unavailable", lambda: "Slurm runs on Linux; this machine runs darwin."
    )
    lab = slurm_lab.start()
    assert not lab.live and "darwin" in str(lab)
    run = lab.restart("sched/builtin").queue("builtin", slurm_lab.LESSON_SCRIPTS["builtin"])
    assert run.start_order() == ["A", "B", "C"] and "recorded" in run.note
    lab.stop()


@pytest.mark.slow
@pytest.mark.skipif(bool(REASON), reason=f"no Slurm: {REASON}")
def test_a_queue_of_jobs_no_node_can_hold_ends_at_once_with_sbatchs_words(tmp_path):
    with slurm_lab.start() as lab:
        run = lab.queue("mine", {"huge": "#!/bin/bash\n#SBATCH --gres=gpu:9\nsleep 1\n"})
    assert run.jobs == () and "Requested node configuration is not available" in str(run)
