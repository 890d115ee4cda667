"""Lesson 14's job mix on a real Slurm: a job that waits for GPUs, backfill, priority, accounting.

:func:`run_mix` submits :data:`MIX` to a running :class:`~course.distributed.slurm.Cluster` (four
GPUs) in one burst and watches it with ``scontrol -d show job`` every ``poll_seconds`` until the
queue is empty, then reads each job's end state from Slurm's job-completion log with ``sacct
--completion`` (this cluster keeps no accounting database; ``JobCompType=jobcomp/filetxt``):
``COMPLETED``, or ``FAILED`` with the exit code, ``TIMEOUT``, ``CANCELLED``... Slurm decides
everything: which job starts, on which GPU indices, which waits and
why (``Reason=Resources``: not enough free GPUs; ``Reason=Priority``: a job ahead of it waits), the
order of the waiting jobs (``--nice`` lowers a job's priority), and which small job the backfill
scheduler starts early because it ends before the waiting big job could start. The first job,
``train``, is the course's own batch script ``jobs/ddp.sbatch`` (lesson 06's DDP demo under
``srun torchrun``) where ``train=True``; the others sleep one second.

:func:`demo` is what the lesson calls: the live run where :func:`slurm.unavailable` is None, else
(macOS, Windows, no Slurm, not root) the run recorded with this code and shipped in
``course/facts/data/reference/`` (:data:`RECORDED`), saying which.
"""

from __future__ import annotations

import datetime
import json
import re
import tempfile
import time
from dataclasses import asdict, dataclass
from pathlib import Path

from course.distributed import slurm
from course.facts.data import reference
from course.measure.timing import progress

#: The shipped batch scripts (they run unchanged on a real cluster).
JOBS_DIR = Path(__file__).parent / "jobs"
#: The reference run that holds the recorded job mix.
RECORDED = "slurm-2core-vm-2026-11-28"


@dataclass(frozen=True)
class JobSpec:
    """One job of the mix: a name, the account it is charged to, GPUs, time limit, nice."""

    name: str
    account: str
    gpus: int
    time_minutes: int
    nice: int = 0


#: Submitted in this order, all at once. ``big`` cannot start while ``train`` holds two of the
#: four GPUs; ``small`` fits beside ``train`` and ends (time limit 1 min) before ``train``'s limit
#: (3 min), so backfill may start it ahead of ``big``; ``low``, ``high`` and ``mid`` need the whole
#: node and differ only in ``--nice``.
MIX = (
    JobSpec("train", "alice", 2, 3),
    JobSpec("big", "bob", 3, 1),
    JobSpec("small", "carol", 1, 1),
    JobSpec("low", "bob", 4, 1, nice=300),
    JobSpec("high", "alice", 4, 1, nice=10),
    JobSpec("mid", "carol", 4, 1, nice=150),
)

_ENDED = ("COMPLETED", "FAILED", "CANCELLED", "TIMEOUT", "NODE_FAIL", "OUT_OF_MEMORY")
_SLEEP = "#!/bin/bash\nsleep {seconds}\n"
_FIELD = re.compile(r"(\S+?)=(\S*)")


def job_script(name: str) -> str:
    """The text of a shipped batch script: ``"ddp"`` or ``"elastic"``."""
    scripts = sorted(p.stem for p in JOBS_DIR.glob("*.sbatch"))
    if name not in scripts:
        raise ValueError(f"name must be one of {scripts}, got {name!r}")
    return (JOBS_DIR / f"{name}.sbatch").read_text()


def parse_job_line(line: str) -> dict[str, str]:
    """One line of ``scontrol -d show job -o`` as a dict of its ``Key=Value`` fields."""
    return dict(_FIELD.findall(line))


def parse_sacct(text: str) -> list[dict[str, str]]:
    """``sacct --parsable2`` output (a header line, then ``|``-separated rows) as dicts."""
    lines = [line for line in text.strip().splitlines() if line]
    if not lines:
        return []
    head = lines[0].split("|")
    return [dict(zip(head, line.split("|"), strict=False)) for line in lines[1:]]


#: sbatch's short options that a job script's request uses, by their long names (sbatch(1)).
_SHORT = {"N": "nodes", "n": "ntasks", "c": "cpus-per-task", "t": "time", "G": "gpus"}
_TIME = re.compile(r"(?:(\d+)-)?(\d+)(?::(\d+))?(?::(\d+))?")
_SIGNAL = re.compile(r"(?:([RB]{1,2}):)?(?:SIG)?(\w+?)(?:@(\d+))?")


def sbatch_options(text: str) -> dict[str, str]:
    """The ``#SBATCH`` options of a batch script as sbatch reads them: from the top until the first
    command (sbatch(1): "before any executable commands"), long (``--time=3:00:00`` or ``--time
    3:00:00``) or short (``-N 2``, by its long name); a flag (``--requeue``) maps to ``""``."""
    out: dict[str, str] = {}
    for line in text.splitlines():
        stripped = line.strip()
        if not stripped or (stripped.startswith("#") and not stripped.startswith("#SBATCH")):
            continue
        if not stripped.startswith("#SBATCH"):
            break
        words = stripped.removeprefix("#SBATCH").split("#")[0].split()
        for i, option in enumerate(words):
            given = words[i + 1] if i + 1 < len(words) and words[i + 1][:1] != "-" else ""
            if option.startswith("--"):
                key, equals, value = option[2:].partition("=")
                out[key] = value if equals else given
            elif option.startswith("-"):
                out[_SHORT.get(option[1:2], option[1:2])] = option[2:] or given
    return out


def time_seconds(value: str) -> int:
    """A Slurm time limit in seconds, in any of sbatch(1)'s ``--time`` forms: ``minutes``,
    ``minutes:seconds``, ``hours:minutes:seconds``, ``days-hours``, ``days-hours:minutes``,
    ``days-hours:minutes:seconds``. Raises ValueError naming ``--time`` on anything else."""
    match = _TIME.fullmatch(value.strip())
    if not match:
        raise ValueError(f"--time must be minutes or [days-]hours:minutes:seconds, got {value!r}")
    days, *parts = match.groups()
    numbers = [int(p) for p in parts if p is not None]
    if days is not None:
        hours, minutes, seconds = [*numbers, 0, 0][:3]
        return ((int(days) * 24 + hours) * 60 + minutes) * 60 + seconds
    if len(numbers) < 3:
        return numbers[0] * 60 + sum(numbers[1:])
    return (numbers[0] * 60 + numbers[1]) * 60 + numbers[2]


def _count(value: str) -> int:
    """The count at the end of a GPU request: ``8``, ``h100:8``, ``gpu:h100:8`` -> 8; a request
    without a count (``gpu``, ``h100``) is for one."""
    last = value.split(",")[0].rsplit(":", 1)[-1]
    return int(last) if last.isdigit() else int(bool(last))


def job_request(text: str) -> dict:
    """What a batch script asks Slurm for, read from its ``#SBATCH`` lines (:func:`sbatch_options`),
    whichever spelling it uses: ``nodes`` (the minimum of ``--nodes=min-max``), ``gpus_per_node``
    (``--gres=gpu:N``, ``--gpus-per-node``, or ``--gpus`` over the nodes), ``cpus_per_gpu``
    (``--cpus-per-gpu``, or ``--cpus-per-task`` x tasks per node over the node's GPUs),
    ``time_seconds`` (``--time``; 0 where it is missing: the partition's default), ``requeue``
    (``--requeue``), ``signal`` and ``warn_seconds`` (``--signal=[B:]SIG@seconds``: sbatch's default
    is 60 s where ``@`` is missing; ``B:`` sends it to the batch shell only)."""
    options = sbatch_options(text)
    nodes = int(options.get("nodes", "1").split("-")[0])
    if "gres" in options:
        gpus = _count(next((g for g in options["gres"].split(",") if "gpu" in g), "0"))
    elif "gpus-per-node" in options:
        gpus = _count(options["gpus-per-node"])
    else:
        gpus = _count(options.get("gpus", "0")) // nodes
    tasks = int(options.get("ntasks-per-node", "1"))
    if "cpus-per-gpu" in options:
        cpus_per_gpu = float(options["cpus-per-gpu"])
    else:
        cpus_per_gpu = int(options.get("cpus-per-task", "1")) * tasks / gpus if gpus else 0.0
    signal = _SIGNAL.fullmatch(options.get("signal", "") or "NONE@0")
    if signal is None:
        raise ValueError(f"--signal must be [B:]SIG[@seconds], got {options['signal']!r}")
    where, name, warn = signal.groups()
    sent = "" if name == "NONE" else f"{'B:' if where and 'B' in where else ''}{name.upper()}"
    return {
        "nodes": nodes,
        "gpus_per_node": gpus,
        "cpus_per_gpu": cpus_per_gpu,
        "time_seconds": time_seconds(options["time"]) if "time" in options else 0,
        "requeue": "requeue" in options,
        "signal": sent,
        "warn_seconds": int(warn) if warn else (60 if sent else 0),
    }


def _epoch(stamp: str) -> float | None:
    if not stamp or stamp in ("Unknown", "None", "N/A"):
        return None
    return datetime.datetime.fromisoformat(stamp).timestamp()


def gpu_indices(fields: dict[str, str]) -> list[int]:
    """The GPU indices a job was given, from ``GRES=gpu:h100:2(IDX:0-1)`` ([] if none yet)."""
    match = re.search(r"IDX:([\d,\-]+)", fields.get("GRES", ""))
    if not match:
        return []
    out: list[int] = []
    for part in match.group(1).split(","):
        lo, _, hi = part.partition("-")
        out.extend(range(int(lo), int(hi or lo) + 1))
    return out


@dataclass(frozen=True)
class SchedulingRun:
    """What Slurm did with the mix. ``jobs``: one dict per job (``name``, ``account``, ``gpus``,
    ``nice``, ``priority``, ``submit_seconds``/``start_seconds``/``end_seconds`` after the first
    submit,
    ``gpu_indices``, ``scheduler`` (Main or Backfill), ``state`` and ``exit_code`` as ``sacct``
    reported them, ``reasons`` it waited for).
    ``timeline``: the queue whenever it changed (``t_seconds``, then name -> ``STATE`` or
    ``PENDING (Reason)``). ``environment``: the ``train`` job's ``CUDA_VISIBLE_DEVICES`` and
    ``SLURM_*`` lines; ``output``: its output; ``sacct``: ``sacct --completion``'s own text
    for the jobs. ``live``: run here now, or the recording."""

    live: bool
    source: str
    slurm_version: str
    node: str
    jobs: tuple[dict, ...]
    timeline: tuple[dict, ...]
    environment: dict
    output: str
    sacct: str = ""

    def job(self, name: str) -> dict:
        """The job called ``name``."""
        for job in self.jobs:
            if job["name"] == name:
                return job
        raise ValueError(f"name must be one of {[j['name'] for j in self.jobs]}, got {name!r}")

    def result(self) -> str:
        """What the ``train`` job printed as its result (from ``== `` on); where it printed none
        (it failed), its state and its last lines, without the traceback's long paths."""
        if "== " in self.output:
            return self.output[self.output.find("== ") :]
        train = self.job("train")
        tail = [line.rsplit("/", 1)[-1] for line in self.output.strip().splitlines()[-6:]]
        return (
            f"train ended {train['state']} (exit code {train.get('exit_code', '?')}); "
            "its last lines:\n" + "\n".join(tail)
        )

    def to_json(self) -> str:
        return json.dumps(asdict(self), indent=1)


def _submit(cluster: slurm.Cluster, spec: JobSpec, train: bool) -> int:
    options = [
        f"--job-name={spec.name}",
        f"--account={spec.account}",
        f"--gres=gpu:{spec.gpus}",
        f"--time={spec.time_minutes}",
        f"--nice={spec.nice}",
        "--output=%x-%j.out",
    ]
    if spec.name == "train" and train:
        return cluster.submit(*options, script=job_script("ddp"))
    return cluster.submit(*options, script=_SLEEP.format(seconds=3 if spec.name == "train" else 1))


def _status(fields: dict[str, str]) -> str:
    state = fields.get("JobState", "?")
    return f"PENDING ({fields.get('Reason')})" if state == "PENDING" else state


def run_mix(
    cluster: slurm.Cluster,
    train: bool = True,
    poll_seconds: float = 0.2,
    limit_seconds: float = 420.0,
    jobs: tuple[JobSpec, ...] = MIX,
    show_progress: bool | None = None,
) -> SchedulingRun:
    """Submit ``jobs`` (:data:`MIX`; its first job is ``train``) to ``cluster`` at once, watch
    until every job ended (a ``tqdm`` bar counts them); the run."""
    ids = {_submit(cluster, spec, train): spec for spec in jobs}
    bar = progress(len(ids), desc="Slurm jobs ended", budget_seconds=10, show=show_progress)
    t0, timeline, last = time.time(), [], None
    seen: dict[int, dict] = {}
    reasons: dict[int, list[str]] = {i: [] for i in ids}
    while True:
        lines = cluster.run("scontrol", "-d", "show", "job", "-o").strip().splitlines()
        jobs = {int(f["JobId"]): f for f in map(parse_job_line, lines) if "JobId" in f}
        for i, fields in jobs.items():
            if i in ids:
                idx = gpu_indices(fields) or seen.get(i, {}).get("idx", [])
                seen[i] = {**seen.get(i, {}), **fields, "idx": idx}
                reason = fields.get("Reason", "None")
                if fields.get("JobState") == "PENDING" and reason not in reasons[i]:
                    reasons[i].append(reason)
        now = {ids[i].name: _status(f) for i, f in sorted(jobs.items()) if i in ids}
        if now != last:
            timeline.append({"t_seconds": round(time.time() - t0, 2), **now})
            last = now
        ended = sum(seen.get(i, {}).get("JobState") in _ENDED for i in ids)
        if ended > bar.n:
            bar.update(ended - bar.n)
        if ended == len(ids):
            bar.close()
            break
        if time.time() - t0 > limit_seconds:
            bar.close()
            raise RuntimeError(f"the job mix did not finish in {limit_seconds} s: {now}")
        time.sleep(poll_seconds)
    sacct = cluster.run(
        "sacct",
        "--completion",
        "--parsable2",
        "--jobs",
        ",".join(map(str, ids)),
        "--format=JobID,JobName,Account,AllocTRES,State,ExitCode,Elapsed",
    )
    ended_as = {int(row["JobID"]): row for row in parse_sacct(sacct)}
    train_id = next(i for i, s in ids.items() if s.name == "train")
    output = (cluster.folder / "out" / f"train-{train_id}.out").read_text()
    first = min(_epoch(seen[i]["SubmitTime"]) for i in ids)
    jobs_out = []
    for i, spec in ids.items():
        f = seen[i]
        jobs_out.append(
            {
                **asdict(spec),
                "id": i,
                "priority": int(f.get("Priority", 0)),
                "submit_seconds": _epoch(f["SubmitTime"]) - first,
                "start_seconds": _epoch(f["StartTime"]) - first,
                "end_seconds": _epoch(f["EndTime"]) - first,
                "gpu_indices": f["idx"],
                "scheduler": f.get("Scheduler", "?"),
                "state": ended_as.get(i, {}).get("State", f["JobState"]),
                "exit_code": ended_as.get(i, {}).get("ExitCode", f.get("ExitCode", "?")),
                "reasons": [r for r in reasons[i] if r != "None"],
            }
        )
    env = dict(
        line.split("=", 1)
        for line in output.splitlines()
        if re.match(r"^(CUDA_VISIBLE_DEVICES|SLURM_\w+)=", line)
    )
    node = cluster.run("scontrol", "show", "node", slurm.NODE, "-o").strip()
    version = cluster.run("sinfo", "-V").strip()
    when = datetime.datetime.now(datetime.UTC).strftime("%Y-%m-%d")
    return SchedulingRun(
        live=True,
        source=f"run live on this machine ({version}, {when})",
        slurm_version=version,
        node=node,
        jobs=tuple(jobs_out),
        timeline=tuple(timeline),
        environment=env,
        output=output,
        sacct=sacct,
    )


def recorded() -> SchedulingRun:
    """The job mix as recorded with :func:`run_mix` (see the run's README for the machine)."""
    data = reference.load(RECORDED, "scheduling")
    data["jobs"], data["timeline"] = tuple(data["jobs"]), tuple(data["timeline"])
    data["live"] = False
    data.setdefault("sacct", "")
    return SchedulingRun(**data)


def demo(train: bool = True) -> SchedulingRun:
    """The job mix live on a Slurm started here, or, where that cannot run, the recording, with
    the reason in ``source``."""
    reason = slurm.unavailable()
    if reason is None:
        try:
            with (
                tempfile.TemporaryDirectory(prefix="course-slurm-") as folder,
                slurm.running(folder) as cluster,
            ):
                return run_mix(cluster, train=train)
        except RuntimeError as error:
            reason = f"the live run failed ({error})"
    run = recorded()
    source = f"recorded ({run.source.replace('run live on this machine ', '')}): {reason}"
    return SchedulingRun(**{**asdict(run), "source": source, "live": False})
