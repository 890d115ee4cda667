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


@pytest.mark.parametrize("name", ["ddp", "elastic"])
def test_the_batch_scripts_are_right_for_a_real_gpu_node(name):
    # SchedMD sbatch(1): from 22.05 srun does not inherit --cpus-per-task (SRUN_CPUS_PER_TASK);
    # srun(1) --kill-on-bad-exit; the anchors: torchtitan multinode_trainer.slurm, ml-engineering
    # torchrun-launcher.slurm
    text = job_mix.job_script(name)
    options = job_mix.sbatch_options(text)
    assert options["ntasks-per-node"] == "1" and options["gres"].startswith("gpu:")
    assert int(options["cpus-per-task"]) >= 2 * int(options["gres"].split(":")[-1])
    assert "mem-per-gpu" in options or "mem" in options
    assert "export SRUN_CPUS_PER_TASK=$SLURM_CPUS_PER_TASK" in text
    assert "srun --kill-on-bad-exit=1 torchrun" in text
    assert "--exclusive" in text  # explained as the option for whole nodes


def test_the_elastic_script_requeues_itself_before_its_time_limit():
    text = job_mix.job_script("elastic")
    options = job_mix.sbatch_options(text)
    assert options["signal"].startswith("B:USR1@") and "requeue" in options
    trap = next(line for line in text.splitlines() if line.startswith("trap "))
    assert 'scontrol requeue "$SLURM_JOB_ID"' in trap and trap.endswith(" USR1")
    # a trap runs only between commands: srun in the background, then wait
    assert "--fail-step 5 &\nwait" in text


def test_sbatch_options_reads_the_directives_as_sbatch_does():
    # sbatch(1): options in #SBATCH lines "before any executable commands"; long or short forms
    text = (
        "#!/bin/bash\n# a comment\n#SBATCH -N 2 --gpus-per-node=h100:8\n#SBATCH --time 0-3\n"
        "#SBATCH --requeue  # go back to the queue\n##SBATCH --mem=1G\nsrun true\n#SBATCH -c 4\n"
    )
    options = job_mix.sbatch_options(text)
    assert options == {"nodes": "2", "gpus-per-node": "h100:8", "time": "0-3", "requeue": ""}


@pytest.mark.parametrize(
    ("value", "seconds"),
    [
        ("180", 10800),
        ("3:00", 180),
        ("3:00:00", 10800),
        ("0-3", 10800),
        ("1-2:30", 95400),
        ("1-0:0:5", 86405),
    ],
)
def test_time_seconds_reads_every_form_of_slurms_time_limit(value, seconds):
    assert job_mix.time_seconds(value) == seconds


def test_time_seconds_names_the_option_on_a_bad_limit():
    with pytest.raises(ValueError, match="--time"):
        job_mix.time_seconds("3h")


def test_job_request_is_the_same_whichever_spelling_the_script_uses():
    need = {
        "nodes": 2,
        "gpus_per_node": 8,
        "cpus_per_gpu": 12.0,
        "time_seconds": 3 * 3600,
        "requeue": True,
        "signal": "USR1",
        "warn_seconds": 90,
    }
    one = "#SBATCH --nodes=2\n#SBATCH --gres=gpu:8\n#SBATCH --cpus-per-gpu=12\n#SBATCH -t 3:00:00\n"
    other = "#SBATCH -N 2-4 --gpus=16\n#SBATCH --ntasks-per-node=1 -c 96\n#SBATCH -t 180\n"
    tail = "#SBATCH --requeue\n#SBATCH --signal=SIGUSR1@90\n"
    assert job_mix.job_request(one + tail) == job_mix.job_request(other + tail) == need
    shell = job_mix.job_request("#SBATCH --gres=gpu\n#SBATCH --signal=B:USR1\n")
    assert (shell["gpus_per_node"], shell["signal"], shell["warn_seconds"]) == (1, "B:USR1", 60)
