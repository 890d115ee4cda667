"""Where Slurm cannot run, lesson 14 shows the recorded run with the reason and no error; the
reasons ``slurm.unavailable`` gives; the configuration the course writes. (No Slurm needed.)"""

from __future__ import annotations

import pytest

from course.distributed import job_mix, slurm


def test_without_slurm_the_demo_is_the_recording_and_says_why(monkeypatch):
    monkeypatch.setattr(
        slurm, "unavailable", lambda: "Slurm runs on Linux; this machine runs darwin."
    )
    run = job_mix.demo()
    assert not run.live and "recorded" in run.source and "darwin" in run.source
    assert run.jobs == job_mix.recorded().jobs


def test_a_failed_start_falls_back_to_the_recording(monkeypatch):
    def broken(*args, **kwargs):
        raise RuntimeError("Slurm did not start (slurmd timed out)")

    monkeypatch.setattr(slurm, "unavailable", lambda: None)
    monkeypatch.setattr(slurm, "start", broken)
    run = job_mix.demo()
    assert not run.live and "the live run failed (Slurm did not start" in run.source


def test_unavailable_names_what_is_missing(monkeypatch):
    monkeypatch.setattr(slurm.sys, "platform", "win32")
    assert "Linux" in slurm.unavailable()
    monkeypatch.setattr(slurm.sys, "platform", "linux")
    monkeypatch.setattr(slurm, "program_path", lambda name: None)
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


def _sbatch_options(text: str) -> dict[str, str]:
    """The ``#SBATCH --key=value`` lines of a batch script (flags map to "")."""
    out = {}
    for line in text.splitlines():
        if line.startswith("#SBATCH --"):
            key, _, value = line.removeprefix("#SBATCH --").partition("=")
            out[key.strip()] = value.strip()
    return out


@pytest.mark.parametrize("name", ["ddp", "elastic"])
def test_the_batch_scripts_are_right_for_a_real_gpu_node(name):
    # SchedMD sbatch(1): from 22.05 srun does not inherit --cpus-per-task (SRUN_CPUS_PER_TASK);
    # srun(1) --kill-on-bad-exit; the anchors: torchtitan multinode_trainer.slurm, ml-engineering
    # torchrun-launcher.slurm
    text = job_mix.job_script(name)
    options = _sbatch_options(text)
    assert options["ntasks-per-node"] == "1" and options["gres"].startswith("gpu:")
    assert int(options["cpus-per-task"]) >= 2 * int(options["gres"].split(":")[-1])
    assert "mem-per-gpu" in options or "mem" in options
    assert "export SRUN_CPUS_PER_TASK=$SLURM_CPUS_PER_TASK" in text
    assert "srun --kill-on-bad-exit=1 torchrun" in text
    assert "--exclusive" in text  # explained as the option for whole nodes


def test_the_elastic_script_requeues_itself_before_its_time_limit():
    text = job_mix.job_script("elastic")
    options = _sbatch_options(text)
    assert options["signal"].startswith("B:USR1@") and "requeue" in options
    trap = next(line for line in text.splitlines() if line.startswith("trap "))
    assert 'scontrol requeue "$SLURM_JOB_ID"' in trap and trap.endswith(" USR1")
    # a trap runs only between commands: srun in the background, then wait
    assert "--fail-step 5 &\nwait" in text
