"""Surviving a failure: a training script under torchrun's elastic agent, killed and resumed.

:func:`main` is the training script (``python -m course.distributed.elastic``), meant to run under
``torchrun --nproc-per-node 2 --max-restarts 1``. It trains the tiny model sharded with FSDP2 for
``--steps`` steps and writes the whole training state of :mod:`course.distributed.resume` (model,
AdamW, scheduler, step, data position, each rank's generators) as a DCP checkpoint every ``--every``
steps, and appends what happens to a JSON-lines log (steps, checkpoint writes, starts,
resumes). Fault injection: on the first attempt, rank ``--fail-rank`` kills itself with SIGKILL
when it reaches step ``--fail-step`` (as a GPU falling off the bus would). The elastic agent sees
the rank die, stops the others, and starts the whole group again (``TORCHELASTIC_RESTART_COUNT``
= 1); the script finds the last complete checkpoint, loads the whole state and goes on. The steps
since that checkpoint are done again: the lost work. At the end rank 0 writes every rank's whole
state (:func:`course.distributed.resume.snapshot`) to ``final.pt``: a run with a failure ends with
the same state, and logs the same losses on every rank, as one without
(tests/distributed/test_distributed_scale.py).

:func:`run_torchrun` starts ``torchrun`` as a subprocess from Python (a notebook, a test) with a
rendezvous on the loopback interface, a time limit, and every process it started gone when it
returns; :func:`timeline` turns the log into the spans the lesson draws.

Run: ``torchrun --nproc-per-node 2 --max-restarts 1 -m course.distributed.elastic --fail-step 5``.

"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import re
import signal
import subprocess
import sys
import time
from pathlib import Path

from course.distributed.launch import free_port, popen_dying_with_parent, process_group

#: Seconds the agent's processes get to stop after SIGTERM before they are killed.
GRACE_SECONDS = 5.0


def _log(path: str, **event) -> None:
    event["t"] = time.time()
    with open(path, "a", encoding="utf-8") as f:  # one short line per write: appends do not mix
        f.write(json.dumps(event) + "\n")


def _latest(ckpt_dir: Path) -> int | None:
    marker = ckpt_dir / "latest"
    return int(marker.read_text()) if marker.exists() else None


def train_script(
    steps: int,
    every: int,
    ckpt_dir: str,
    log: str,
    fail_step: int | None = None,
    fail_rank: int = 1,
) -> None:
    """The body of the elastic training script (inside torchrun's process group): the whole
    training state of :mod:`course.distributed.resume` (model and AdamW sharded with FSDP2, the
    LR scheduler, the step, the data position and each rank's generators, seeded apart), saved
    every ``every`` steps and loaded after a restart, so the resumed losses are bitwise the
    uninterrupted run's."""
    import torch
    import torch.distributed as dist
    import torch.distributed.checkpoint as dcp

    from course.distributed import resume

    r, attempt = dist.get_rank(), int(os.environ.get("TORCHELASTIC_RESTART_COUNT", "0"))
    root = Path(ckpt_dir)
    resume.seed_everything(r)  # each rank its own numbers (a restarted process starts here too)
    state, data = resume.new_state(total_steps=steps), resume.corpus()
    if r == 0:
        _log(log, event="start", attempt=attempt, pid=os.getpid())
    last = _latest(root)
    if last is not None:
        t0 = time.time()
        resume.load(state, str(root / f"step_{last}"))
        if r == 0:
            _log(log, event="resume", attempt=attempt, step=state.step, t0=t0)
    for i in range(state.step, steps):
        if fail_step is not None and attempt == 0 and i == fail_step and r == fail_rank:
            _log(log, event="fail", attempt=attempt, step=i, rank=r)
            os.kill(os.getpid(), signal.SIGKILL)
        t0 = time.time()
        loss = resume.train_steps(state, 1, data)[0]  # this rank's share of the global batch
        losses = [None] * dist.get_world_size()
        dist.all_gather_object(losses, loss)
        if r == 0:
            _log(log, event="step", attempt=attempt, step=i, loss=losses[0], losses=losses, t0=t0)
        if (i + 1) % every == 0 and i + 1 < steps:
            t0 = time.time()
            dcp.save({"train": state}, checkpoint_id=str(root / f"step_{i + 1}"))
            dist.barrier()
            if r == 0:
                tmp = root / "latest.tmp"
                tmp.write_text(str(i + 1))
                os.replace(tmp, root / "latest")  # the marker moves only once the write is whole
                _log(log, event="checkpoint", attempt=attempt, step=i + 1, t0=t0)
    final = [None] * dist.get_world_size()  # every rank's whole state, its generators included
    dist.all_gather_object(final, resume.snapshot(state))
    if r == 0:
        torch.save(final, root / "final.pt")
        _log(log, event="done", attempt=attempt, step=steps)


#: The process group of each restart attempt: the shared one, restart-safe (its store keys are
#: kept apart per attempt, see :func:`course.distributed.launch.attempt_store`).
attempt_group = process_group


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--steps", type=int, default=10)
    ap.add_argument("--every", type=int, default=3)
    ap.add_argument("--ckpt-dir", default=None)
    ap.add_argument("--events-file", default=None)
    ap.add_argument("--fail-step", type=int, default=None)
    ap.add_argument("--fail-rank", type=int, default=1)
    a = ap.parse_args(argv)
    ckpt = a.ckpt_dir or os.path.join(os.getcwd(), "elastic-checkpoints")
    os.makedirs(ckpt, exist_ok=True)
    log = a.events_file or os.path.join(ckpt, "events.jsonl")
    with attempt_group():
        train_script(a.steps, a.every, ckpt, log, a.fail_step, a.fail_rank)


def _descendants(pid: int) -> list:
    import psutil

    try:
        return psutil.Process(pid).children(recursive=True)
    except psutil.NoSuchProcess:
        return []


def _stop_tree(proc: subprocess.Popen) -> None:
    import psutil

    kids = _descendants(proc.pid)
    if proc.poll() is None:
        proc.send_signal(signal.SIGTERM)  # the agent stops its workers on SIGTERM
        try:
            proc.wait(GRACE_SECONDS)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()
    for k in kids:
        with contextlib.suppress(psutil.NoSuchProcess):
            k.kill()
    psutil.wait_procs(kids, timeout=GRACE_SECONDS)


def run_torchrun(
    workdir: str | os.PathLike,
    *,
    nprocs: int = 2,
    steps: int = 10,
    every: int = 3,
    fail_step: int | None = None,
    fail_rank: int = 1,
    max_restarts: int = 1,
    timeout_seconds: float = 120.0,
) -> dict:
    """Run the elastic script under ``torchrun`` (a subprocess) in ``workdir``; return its events.

    The rendezvous listens on 127.0.0.1 at a free port. ``timeout_seconds`` bounds the whole run; on
    timeout, or if the caller is interrupted, the agent and every worker are stopped; if the
    caller is killed (a Jupyter kernel restarted), Linux kills torchrun with it and each worker
    with torchrun (``PR_SET_PDEATHSIG``; tests/distributed/test_distributed_launch.py). Returns
    ``{"returncode", "events", "final", "command", "output", "agent_log"}`` (``final``: the path
    of the final state, or None if the run did not finish; ``agent_log``: :func:`agent_lines` of
    the whole output).
    """
    work = Path(workdir)
    work.mkdir(parents=True, exist_ok=True)
    log = work / "events.jsonl"
    cmd = [
        sys.executable,
        "-m",
        "torch.distributed.run",
        f"--nproc-per-node={nprocs}",
        "--nnodes=1",
        f"--max-restarts={max_restarts}",
        "--monitor-interval=0.2",
        "--rdzv-backend=c10d",
        f"--rdzv-endpoint=127.0.0.1:{free_port()}",
        f"--log-dir={work / 'torchrun-logs'}",  # not a torchelastic_* folder left in /tmp
        "-m",
        "course.distributed.elastic",
        f"--steps={steps}",
        f"--every={every}",
        f"--ckpt-dir={work}",
        f"--events-file={log}",
        f"--fail-rank={fail_rank}",
    ]
    if fail_step is not None:
        cmd.append(f"--fail-step={fail_step}")
    env = {**os.environ, "OMP_NUM_THREADS": "1", "PYTHONUNBUFFERED": "1"}
    out_path = work / "torchrun.out"
    with open(out_path, "w") as out:
        proc = popen_dying_with_parent(
            cmd, stdout=out, stderr=subprocess.STDOUT, env=env, start_new_session=True
        )
        try:
            proc.wait(timeout_seconds)
        except subprocess.TimeoutExpired:
            _stop_tree(proc)
            raise TimeoutError(
                f"torchrun did not finish within timeout_seconds={timeout_seconds:g} s; "
                f"stopped. Its output: {out_path}"
            ) from None
        finally:
            _stop_tree(proc)
    events = [json.loads(line) for line in log.read_text().splitlines()] if log.exists() else []
    final = work / "final.pt"
    return {
        "returncode": proc.returncode,
        "events": events,
        "final": str(final) if final.exists() else None,
        "command": " ".join(cmd[1:]),
        "output": out_path.read_text()[-4000:],
        "agent_log": agent_lines(out_path.read_text()),
    }


#: A line torchrun's own logger writes: level, date, time, pid, the module, the message.
_AGENT_LINE = re.compile(r"^([IWE])\d{4} [\d:.]+ \d+ \S*?torch/distributed/(\S+):\d+\] (.*)$")


def agent_lines(output: str) -> list[str]:
    """What the elastic agent itself logged (its failures, signals and restarts), without the
    workers' tracebacks: ``"W multiprocessing/api.py: Sending process ... SIGTERM"``."""
    found = (_AGENT_LINE.match(line) for line in output.splitlines())
    return [f"{m[1]} {m[2]}: {m[3]}" for m in found if m]


def timeline(events: list[dict]) -> dict:
    """Spans for the lesson's picture, from the log: each step ``(attempt, step, t0, t1)``, each
    checkpoint write, the failure, each (re)start and resume, and the lost work (steps done after
    the last checkpoint before the failure, which the restart repeats). Times from the first
    event, in seconds."""
    if not events:
        raise ValueError("events: the run logged nothing (did torchrun start?)")
    t_first = min(e.get("t0", e["t"]) for e in events)
    rel = lambda t: t - t_first  # noqa: E731
    steps = [
        (e["attempt"], e["step"], rel(e["t0"]), rel(e["t"])) for e in events if e["event"] == "step"
    ]
    ckpts = [(e["step"], rel(e["t0"]), rel(e["t"])) for e in events if e["event"] == "checkpoint"]
    fails = [(e["step"], rel(e["t"]), e["rank"]) for e in events if e["event"] == "fail"]
    starts = [(e["attempt"], rel(e["t"])) for e in events if e["event"] == "start"]
    resumes = [(e["step"], rel(e["t0"]), rel(e["t"])) for e in events if e["event"] == "resume"]
    lost = []
    if fails and resumes:
        resumed_from = resumes[0][0]
        lost = [s for s in steps if s[0] == 0 and s[1] >= resumed_from]
    done = [e for e in events if e["event"] == "done"]
    total = rel(done[-1]["t"]) if done else max(s[3] for s in steps) if steps else 0.0
    return {
        "steps": steps,
        "checkpoints": ckpts,
        "failures": fails,
        "starts": starts,
        "resumes": resumes,
        "lost_steps": [s[1] for s in lost],
        "lost_seconds": sum(s[3] - s[2] for s in lost),
        "total_seconds": total,
        "restart_seconds": (resumes[0][2] - fails[0][1]) if fails and resumes else None,
    }


if __name__ == "__main__":
    main()

__all__ = ["agent_lines", "main", "run_torchrun", "timeline", "train_script"]
