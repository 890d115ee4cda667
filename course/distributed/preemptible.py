"""A training job that survives Slurm's time limit and preemption: save, requeue, resume bitwise.

:func:`main` (``python -m course.distributed.preemptible --ckpt-dir DIR``) trains the tiny model of
:mod:`course.distributed.resume` one step at a time. It is the program of
``jobs/preemptible.sbatch``, which asks Slurm for ``--signal=USR1@90`` and ``--requeue``:

- **SIGUSR1** (Slurm's warning ``--signal`` seconds before the time limit) and **SIGTERM** (what
  Slurm sends a job it preempts or cancels, ``GraceTime`` seconds before SIGKILL) only set a flag
  (a handler must not do the work: the step in flight finishes first);
- after each step the program looks at the flag; if set, it saves the **whole training state**
  (model, AdamW, scheduler, step, data position, generators: :class:`resume.TrainingState`) with
  ``dcp.save`` and exits with **75** (``EX_TEMPFAIL``, sysexits.h: "temporary failure, retry");
- the batch script turns 75 into ``scontrol requeue $SLURM_JOB_ID``: the job goes back in the queue
  with the same id, so the same ``--ckpt-dir``, and its next run (``SLURM_RESTART_COUNT`` 1) loads
  the checkpoint and trains on.

At the end it writes ``final.json``: the step, every step's loss (one line per step in
``losses.jsonl``, appended by each run) and a SHA-256 :func:`digest` of the final model and
optimizer. A run that was signalled and requeued ends with the digest of a run that was not
(tests/distributed/test_preemptible.py, on the real Slurm). ``--step-seconds`` makes each step last
that long (the tiny model's step takes milliseconds), so a signal lands while the job trains.

Sources: sbatch(1) ``--signal``, ``--requeue``, ``--open-mode``; scontrol(1) ``requeue``;
https://slurm.schedmd.com/preempt.html (GraceTime: SIGCONT and SIGTERM, then SIGKILL).
"""

from __future__ import annotations

import argparse
import contextlib
import datetime
import hashlib
import json
import os
import re
import shutil
import signal
import sys
import tempfile
import time
from dataclasses import asdict, dataclass, replace
from pathlib import Path

import torch
import torch.distributed.checkpoint as dcp

from course.distributed import resume, slurm
from course.distributed.checkpoint import single_process
from course.distributed.job_mix import JOBS_DIR, RECORDED
from course.facts.data import reference

#: The exit status that asks the batch script to requeue the job (EX_TEMPFAIL, sysexits.h).
REQUEUE_STATUS = 75
#: The signals that mean "save and stop": Slurm's --signal warning and its preemption notice.
STOP_SIGNALS = (signal.SIGUSR1, signal.SIGTERM)


def digest(state: resume.TrainingState) -> str:
    """SHA-256 of the model's and optimizer's tensors and numbers, in key order: equal digests mean
    bitwise-equal training states."""
    h = hashlib.sha256()
    for name, value in sorted(_flat(resume.snapshot(state)["state"]).items()):
        h.update(name.encode())
        if isinstance(value, torch.Tensor):
            h.update(value.detach().reshape(-1).view(torch.uint8).numpy().tobytes())
        else:
            h.update(repr(value).encode())
    return h.hexdigest()


def _flat(tree, prefix: str = "") -> dict:
    if isinstance(tree, dict):
        out = {}
        for key, value in tree.items():
            out.update(_flat(value, f"{prefix}{key}."))
        return out
    return {prefix.rstrip("."): tree}


@contextlib.contextmanager
def stop_requests():
    """A list that names each stop signal as it arrives, while the block runs; the process's own
    handlers are put back after it (a notebook kernel keeps its SIGTERM)."""
    arrived: list[str] = []
    before = {sig: signal.getsignal(sig) for sig in STOP_SIGNALS}
    for sig in STOP_SIGNALS:
        signal.signal(sig, lambda number, frame: arrived.append(signal.Signals(number).name))
    try:
        yield arrived
    finally:
        for sig, handler in before.items():
            signal.signal(sig, handler)


def train(ckpt_dir: Path, steps: int, step_seconds: float = 0.0, echo: bool = True) -> int:
    """Train to ``steps`` steps from the checkpoint in ``ckpt_dir`` if there is one, else from the
    start; save and return :data:`REQUEUE_STATUS` as soon as a stop signal has arrived; 0 at the
    end. ``echo``: print each step (the job's output)."""
    say = print if echo else (lambda *args, **kwargs: None)
    with stop_requests() as stop:
        return _train(ckpt_dir, steps, step_seconds, stop, say)


def _train(ckpt_dir: Path, steps: int, step_seconds: float, stop: list[str], say) -> int:
    ckpt_dir.mkdir(parents=True, exist_ok=True)
    saved = ckpt_dir / "state"
    resume.seed_everything(0)
    state, data = resume.new_state(total_steps=steps), resume.corpus()
    if (saved / ".metadata").exists():
        resume.load(state, str(saved))
    say(f"run {os.environ.get('SLURM_RESTART_COUNT', '0')}: starts at step {state.step}")
    with open(ckpt_dir / "losses.jsonl", "a", encoding="utf-8") as losses:
        while state.step < steps:
            (loss,) = resume.train_steps(state, 1, data)
            losses.write(json.dumps({"step": state.step, "loss": loss}) + "\n")
            losses.flush()
            say(f"step {state.step} loss {loss:.6f}", flush=True)
            if stop:
                with single_process():
                    dcp.save({"train": state}, checkpoint_id=str(saved))
                say(f"{stop[0]} received: saved step {state.step}, exit {REQUEUE_STATUS}")
                return REQUEUE_STATUS
            time.sleep(step_seconds)
    final = {"step": state.step, "digest": digest(state), "losses": _losses(ckpt_dir)}
    (ckpt_dir / "final.json").write_text(json.dumps(final))
    say(f"done at step {state.step}: digest {final['digest'][:16]}")
    return 0


def final(ckpt_dir: str | Path) -> dict:
    """What a finished run wrote: its step, each step's loss and the :func:`digest` of its state."""
    return json.loads((Path(ckpt_dir) / "final.json").read_text())


def _losses(ckpt_dir: Path) -> list[float]:
    """Each step's loss, the last run's where a step was trained twice."""
    by_step = {}
    for line in (ckpt_dir / "losses.jsonl").read_text().splitlines():
        record = json.loads(line)
        by_step[record["step"]] = record["loss"]
    return [by_step[s] for s in sorted(by_step)]


@dataclass(frozen=True)
class Requeued:
    """One job of :func:`run_on_slurm`: Slurm's end state for it (``scontrol show job``), how it
    was stopped, the step it saved, the step its second run started at, Slurm's restart count,
    and the training state it ended with (no digest where it did not finish)."""

    name: str
    job_id: int
    state: str
    stopped_by: str
    saved_at: int
    resumed_at: int
    restarts: int
    digest: str
    losses: list[float]
    output: str


@dataclass(frozen=True)
class RequeueRun:
    """The lesson's demo: both jobs, the uninterrupted run's ``{step, digest, losses}``, the id
    of the ``urgent`` job, the steps, where it ran (``source``) and, for a recording, why
    (``note``). Prints itself: one line per job, then each job's own output."""

    jobs: list[Requeued]
    straight: dict
    urgent: int
    steps: int
    source: str = ""
    note: str = ""

    def __str__(self) -> str:
        lines = [self.note or self.source]
        for job in self.jobs:
            same = "the same" if job.digest == self.straight["digest"] else "NOT the same"
            lines.append(
                f"{job.name} (job {job.job_id}): {job.state}, stopped by {job.stopped_by or '-'} "
                f"after step {job.saved_at}, Restarts={job.restarts}, second run from step "
                f"{job.resumed_at}; digest {job.digest[:12] or '-'}: {same} as uninterrupted "
                f"({self.straight['digest'][:12]})"
            )
        for job in self.jobs:
            lines += ["", f"$ cat {job.name}-{job.job_id}.out", job.output.rstrip()]
        return "\n".join(lines)


def run_on_slurm(
    cluster: slurm.Cluster, steps: int = 12, step_seconds: float = 0.3, timeout: float = 300.0
) -> dict:
    """On a cluster started with ``preemption=True``, two runs of ``jobs/preemptible.sbatch`` at
    once: ``warned`` gets SIGUSR1 (what ``--signal=USR1@90`` sends 90 s before the time limit; sent
    now with ``scancel --signal=USR1``), ``preempted`` holds the 4 GPUs until a job in partition
    ``urgent`` needs 2 of them. Each is signalled once it has trained 3 steps. Also, while the
    jobs start, the same training straight through in this process. A record: ``{"jobs":
    [Requeued, ...], "straight": {step, digest, losses}, "urgent": job id, "steps": steps}``."""
    script = str(JOBS_DIR / "preemptible.sbatch")
    args = ("--steps", str(steps), "--step-seconds", str(step_seconds))
    ids = {
        name: _sbatch(cluster, f"--job-name={name}", *options, script, *args)
        for name, options in (("warned", ()), ("preempted", ("--gres=gpu:4",)))
    }
    with tempfile.TemporaryDirectory() as folder:  # while the jobs start
        train(Path(folder), steps, echo=False)
        straight = final(folder)
    _wait_for_output(cluster, "warned", ids["warned"], "step 3", timeout)
    cluster.run("scancel", "--signal=USR1", str(ids["warned"]))
    _wait_for_output(cluster, "preempted", ids["preempted"], "step 3", timeout)
    urgent = _sbatch(cluster, "--partition=urgent", "--gres=gpu:2", "--wrap=sleep 2")
    deadline = time.monotonic() + timeout
    while cluster.run("squeue", "-h").strip():
        if time.monotonic() > deadline:
            raise TimeoutError(f"the requeue demo's jobs did not end in {timeout:.0f} s")
        time.sleep(0.5)
    jobs = [_requeued(cluster, name, job_id) for name, job_id in ids.items()]
    return RequeueRun(jobs, straight, urgent, steps)


def _sbatch(cluster: slurm.Cluster, *args: str) -> int:
    out = cluster.folder / "out"
    return int(cluster.run("sbatch", "--parsable", f"--chdir={out}", *args).split(";")[0])


def _output(cluster: slurm.Cluster, name: str, job_id: int) -> Path:
    return cluster.folder / "out" / f"{name}-{job_id}.out"


def _wait_for_output(
    cluster: slurm.Cluster, name: str, job_id: int, text: str, timeout: float
) -> None:
    path, deadline = _output(cluster, name, job_id), time.monotonic() + timeout
    while not (path.exists() and text in path.read_text()):
        if time.monotonic() > deadline:
            raise TimeoutError(f"job {job_id} ({name}) did not print {text!r} in {timeout:.0f} s")
        time.sleep(0.1)


def _requeued(cluster: slurm.Cluster, name: str, job_id: int) -> Requeued:
    output = _output(cluster, name, job_id).read_text()
    stopped = re.search(r"(SIG\w+) received: saved step (\d+)", output)
    resumed = re.search(r"run 1: starts at step (\d+)", output)
    shown = cluster.run("scontrol", "show", "job", str(job_id))
    restarts = re.search(r"Restarts=(\d+)", shown)
    ckpt = cluster.folder / "out" / f"ckpt-{job_id}"
    done = final(ckpt) if (ckpt / "final.json").exists() else {"digest": "", "losses": []}
    return Requeued(
        name=name,
        job_id=job_id,
        state=re.search(r"JobState=(\w+)", shown)[1],
        stopped_by=stopped[1] if stopped else "",
        saved_at=int(stopped[2]) if stopped else -1,
        resumed_at=int(resumed[1]) if resumed else -1,
        restarts=int(restarts[1]) if restarts else 0,
        digest=done["digest"],
        losses=done["losses"],
        output=output,
    )


def lesson_run(live: bool | None = None) -> RequeueRun:
    """The lesson's demo on a cluster started here (and stopped, its folder removed) where Slurm
    runs (``live`` None or True), else the recording (``preemption.json``), with the reason."""
    reason = slurm.unavailable() if live is not False else "asked for the recording"
    if reason is None:
        folder = Path(tempfile.mkdtemp(prefix="course-slurm-requeue-"))
        try:
            with slurm.running(folder / "cluster", preemption=True) as cluster:
                version = cluster.run("sinfo", "-V").strip()
                run = run_on_slurm(cluster)
                return replace(run, source=f"live ({version})")
        finally:
            shutil.rmtree(folder, ignore_errors=True)
    data = reference.load(RECORDED, "preemption")
    jobs = [Requeued(**job) for job in data.pop("jobs")]
    return RequeueRun(jobs=jobs, **data, note=f"(recorded: {data['source']}; {reason})")


def record(path: str | Path) -> RequeueRun:
    """Run :func:`lesson_run` live and write it to ``path``
    (``course/facts/data/reference/<RECORDED>/preemption.json``)."""
    run = lesson_run(live=True)
    when = datetime.datetime.now(datetime.UTC).strftime("%Y-%m-%d")
    data = asdict(run)
    data.pop("note")
    data["source"] = f"recorded with preemptible.record on a 2-core VM ({run.source[6:-1]}, {when})"
    Path(path).write_text(json.dumps(data, indent=1) + "\n")
    return run


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--ckpt-dir", type=Path, required=True, help="the job's checkpoint folder")
    parser.add_argument("--steps", type=int, default=12, help="steps in the whole run")
    parser.add_argument("--step-seconds", type=float, default=0.0, help="seconds each step lasts")
    args = parser.parse_args(argv)
    sys.exit(train(args.ckpt_dir, args.steps, args.step_seconds))


if __name__ == "__main__":
    main()
