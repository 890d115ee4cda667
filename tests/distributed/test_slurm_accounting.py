"""Accounting on lesson 14's real Slurm: slurmdbd on MariaDB, started in the cluster's folder. After
``teama`` used its share, ``teamb``'s job starts first though submitted second (the fair-share
weight decides it: with ``PriorityWeightFairshare=0`` the two tie and ``teama``'s starts first),
a job past the QOS's GPUs-per-user limit waits with Slurm's reason, ``slurmdbd.conf`` is private,
stopping leaves no process (MariaDB and slurmdbd included), and the recording was made by this code.

The live tests skip where Slurm, slurmdbd or MariaDB cannot run, with the reason; in CI (CI=true,
where .ci/run installs them) that is a failure instead."""

from __future__ import annotations

import dataclasses
import os
import stat

import pytest

from course.distributed import slurm_accounting as accounting

REASON = accounting.unavailable()
if REASON and os.environ.get("CI") == "true":
    raise RuntimeError(
        f"CI must run Slurm's accounting (.ci/run installs slurmdbd and mariadb-server): {REASON}"
    )
live = pytest.mark.skipif(bool(REASON), reason=f"no accounting: {REASON}")


@pytest.fixture(scope="module")
def lesson(tmp_path_factory):
    """The lesson's experiments on one live cluster with accounting; what ran during them."""
    cluster = accounting.start(tmp_path_factory.mktemp("slurm") / "cluster")
    try:
        conf = (cluster.folder / "slurmdbd.conf").stat()
        alive = {pid: _name(pid) for pid in cluster.processes()}
        run = accounting.run_lesson(cluster, "live")
    finally:
        cluster.stop()
    return run, conf, alive, cluster


def _name(pid: int) -> str:
    with open(f"/proc/{pid}/comm") as comm:
        return comm.read().strip()


@pytest.mark.slow
@live
def test_the_account_that_used_its_share_waits_behind_the_other(lesson):
    run = lesson[0]
    assert run.start_order == ("teamb", "teama")  # teama submitted first
    assert run.priorities["teamb"] > run.priorities["teama"]
    assert run.fair_share_weight == accounting.FAIR_SHARE_WEIGHT > 0
    assert "FAIRSHARE" in run.sprio and "(Priority)" in run.squeue
    teama = next(line.split() for line in run.sshare.splitlines() if line.startswith("  teama"))
    assert int(teama[4]) > 0 and float(teama[-1]) < 1.0  # its usage; its fair-share factor


@pytest.mark.slow
@live
def test_a_job_past_the_qos_limit_waits_with_its_reason(lesson):
    run = lesson[0]
    assert run.qos_reason == "QOSMaxGRESPerUser"
    assert "(QOSMaxGRESPerUser)" in run.qos_squeue and "QOS=gpu2" in run.qos_scontrol
    assert "gpu2" in run.sacct and "COMPLETED" in run.sacct


@pytest.mark.slow
@live
def test_slurmdbd_conf_is_private_and_nothing_is_left_running(lesson):
    _, conf, alive, cluster = lesson
    assert stat.S_IMODE(conf.st_mode) == 0o600 and conf.st_uid == os.geteuid() == 0
    assert {"mariadbd", "slurmdbd", "slurmctld", "slurmd", "munged"} <= set(alive.values())
    assert cluster.processes() == [] and not cluster.daemons
    assert all(not os.path.exists(f"/proc/{pid}") for pid in alive)


def test_the_recording_was_made_by_this_code():
    run = accounting.lesson_run(live=False)
    assert "recorded" in run.note and "asked for the recording" in run.note
    fields = {f.name for f in dataclasses.fields(accounting.AccountingRun)}
    assert set(dataclasses.asdict(run)) == fields
    assert run.start_order == ("teamb", "teama") and run.qos_reason == "QOSMaxGRESPerUser"
    assert "teamb" in str(run) and "sprio" in str(run)


def test_without_slurmdbd_the_recording_stands_in_and_says_what_to_install(monkeypatch):
    monkeypatch.setattr(accounting.slurm, "unavailable", lambda: None)
    monkeypatch.setattr(
        accounting.slurm, "program_path", lambda name: None if name == "slurmdbd" else name
    )
    assert "apt-get install slurmdbd mariadb-server" in accounting.unavailable()
    run = accounting.lesson_run()  # the lesson's cell where slurmdbd is missing
    assert "recorded" in run.note and "apt-get install slurmdbd" in run.note
    assert "accounting_storage/slurmdbd" in accounting.conf_lines("/x", 7031)
