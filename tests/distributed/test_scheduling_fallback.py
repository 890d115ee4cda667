"""Where Slurm cannot run, lesson 14 shows the recorded run with the reason and no error; the
reasons ``slurm.unavailable`` gives; the configuration the course writes. (No Slurm needed.)"""

from __future__ import annotations

import pytest

from course.distributed import scheduling, slurm


def test_without_slurm_the_demo_is_the_recording_and_says_why(monkeypatch):
    monkeypatch.setattr(
        slurm, "unavailable", lambda: "Slurm runs on Linux; this machine runs darwin."
    )
    run = scheduling.demo()
    assert not run.live and "recorded" in run.source and "darwin" in run.source
    assert run.jobs == scheduling.recorded().jobs


def test_a_failed_start_falls_back_to_the_recording(monkeypatch):
    def broken(*args, **kwargs):
        raise RuntimeError("Slurm did not start (slurmd timed out)")

    monkeypatch.setattr(slurm, "unavailable", lambda: None)
    monkeypatch.setattr(slurm, "start", broken)
    run = scheduling.demo()
    assert not run.live and "the live run failed (Slurm did not start" in run.source


def test_unavailable_names_what_is_missing(monkeypatch):
    monkeypatch.setattr(slurm.sys, "platform", "win32")
    assert "Linux" in slurm.unavailable()
    monkeypatch.setattr(slurm.sys, "platform", "linux")
    monkeypatch.setattr(slurm, "_program", lambda name: None)
    assert "apt-get install slurm-wlm munge" in slurm.unavailable()


def test_the_configuration_declares_the_gpus_as_devices(tmp_path):
    conf, gres = slurm.config_text(tmp_path, gpus=3, cpus=8, ports=(7001, 7002))
    assert "Gres=gpu:h100:3" in conf and "SelectType=select/cons_tres" in conf
    assert "SlurmctldPort=7001" in conf and "127.0.0.1" in conf
    assert gres.splitlines()[0] == "AutoDetect=off"
    assert [line.split("File=")[1] for line in gres.splitlines()[1:]] == [
        f"{tmp_path}/dev/gpu{i}" for i in range(3)
    ]
    with pytest.raises(ValueError, match="scheduler"):
        slurm.config_text(tmp_path, 3, 8, (1, 2), scheduler="sched/wiki")
