"""Lesson 14's predict-then-run: the learner's own job scripts on the lesson's real Slurm.

:func:`start` starts one cluster (:func:`course.distributed.slurm.start`, four GPUs) that stays up
across cells: :meth:`Lab.submit` hands one script to ``sbatch`` and shows what Slurm said (the
job id, or the error) and, once the scheduler has looked at the job, the raw ``squeue`` and
``scontrol show job``; :meth:`Lab.queue` submits several scripts in one burst (a script may name
an earlier one's id as ``{name}``, for ``--dependency=afterok:{name}``), watches until each ended,
and keeps the raw ``squeue`` and ``sinfo`` of the moment every waiting job had its reason, and
``sacct``'s rows; :meth:`Lab.restart` starts the cluster again with another ``SchedulerType``
(``sched/builtin``: no backfill). :func:`check` sets a prediction beside what Slurm did.

Where Slurm cannot run (:func:`course.distributed.slurm.unavailable`), the lab replays the run
:func:`record` made with this code and the lesson's scripts (:data:`LESSON_SCRIPTS`), stored with
the job mix's recording, and says so; a script that differs from the recorded one is answered with
the recording of the lesson's script, with a note that says it.
"""

from __future__ import annotations

import contextlib
import datetime
import json
import re
import shutil
import subprocess
import tempfile
import time
from dataclasses import asdict, dataclass, field
from pathlib import Path

from course.distributed import job_mix, slurm
from course.facts import validate
from course.facts.data import reference

#: The reference run that holds the recording (the job mix's), file ``lab.json``.
RECORDED = job_mix.RECORDED

_ENDED = ("COMPLETED", "FAILED", "CANCELLED", "TIMEOUT", "NODE_FAIL", "OUT_OF_MEMORY")
_NEVER = "DependencyNeverSatisfied"


def _script(*lines: str, body: str = "sleep 1") -> str:
    return "\n".join(["#!/bin/bash", *(f"#SBATCH {line}" for line in lines), body, ""])


#: The scripts the lesson's cells hold, by experiment: what :func:`record` ran.
LESSON_SCRIPTS: dict[str, dict[str, str]] = {
    "one_too_many": {"too_many": _script("--gres=gpu:5", "--time=1")},
    "backfill": {
        "A": _script("--gres=gpu:2", "--time=3", body="sleep 3"),
        "B": _script("--gres=gpu:4", "--time=1"),
        "C": _script("--gres=gpu:1", "--time=1"),
    },
    "nice_dependency_array": {
        "block": _script("--gres=gpu:4", "--time=1"),
        "first": _script("--gres=gpu:4", "--time=1", "--nice=100"),
        "second": _script("--gres=gpu:4", "--time=1"),
        "after": _script("--gres=gpu:1", "--time=1", "--dependency=afterok:{second}"),
        "sweep": _script(
            "--gres=gpu:1",
            "--time=1",
            "--array=0-3",
            body='echo "task $SLURM_ARRAY_TASK_ID of job $SLURM_ARRAY_JOB_ID"; sleep 1',
        ),
    },
}
LESSON_SCRIPTS["builtin"] = LESSON_SCRIPTS["backfill"]


@dataclass(frozen=True)
class Submission:
    """One script handed to ``sbatch``: ``accepted`` or not, ``sbatch``'s own words, and where
    accepted the job's ``state`` and ``reason`` once the scheduler looked at it, with the raw
    ``squeue`` and ``scontrol show job`` of that moment."""

    name: str
    script: str
    accepted: bool
    sbatch: str
    job_id: int | None = None
    state: str = ""
    reason: str = ""
    squeue: str = ""
    scontrol: str = ""
    note: str = ""

    @property
    def outcome(self) -> str:
        """What happened, in Slurm's words: ``rejected: <sbatch's error>``, ``RUNNING``,
        ``PENDING (Resources)``..."""
        if not self.accepted:
            return "rejected: " + self.sbatch.strip().splitlines()[-1].rsplit(": ", 1)[-1]
        return f"PENDING ({self.reason})" if self.state == "PENDING" else self.state

    def __str__(self) -> str:
        parts = [self.note, f"$ sbatch {self.name}.sh", self.sbatch.strip()]
        if self.accepted:
            parts += ["$ squeue", self.squeue.rstrip(), f"$ scontrol show job {self.job_id}"]
            parts.append(self.scontrol.rstrip())
        return "\n".join(p for p in parts if p)

    def _repr_pretty_(self, printer, cycle: bool) -> None:
        printer.text(str(self))


@dataclass(frozen=True)
class QueueRun:
    """Several scripts submitted at once and watched until each ended. ``jobs``: one dict per
    job (an array's tasks as ``name_0``, ``name_1``...: ``name``, ``id``, ``state``, ``reasons``
    it waited for, ``scheduler`` that started it (Main or Backfill), ``priority``,
    ``start_seconds`` and ``end_seconds`` after the first submission, None for a job that never
    ran). ``squeue``, ``sinfo`` and ``scontrol`` (``scontrol show job`` of the first job that
    waited): raw, at the first moment every waiting job had a reason; ``sacct``: the rows of
    ``sacct --completion``."""

    name: str
    scheduler: str
    scripts: dict
    sbatch: str
    jobs: tuple[dict, ...]
    timeline: tuple[dict, ...]
    squeue: str
    sinfo: str
    sacct: str
    scontrol: str = ""
    note: str = ""

    def job(self, name: str) -> dict:
        """The job (or array task) called ``name``."""
        for job in self.jobs:
            if job["name"] == name:
                return job
        raise ValueError(f"name must be one of {[j['name'] for j in self.jobs]}, got {name!r}")

    def start_order(self) -> list[str]:
        """The jobs that ran, by start time (then job id)."""
        ran = [j for j in self.jobs if j["start_seconds"] is not None]
        return [j["name"] for j in sorted(ran, key=lambda j: (j["start_seconds"], j["id"]))]

    def starts(self) -> dict[str, float | None]:
        """Each job's start, seconds after the first submission (None: never ran)."""
        return {j["name"]: j["start_seconds"] for j in self.jobs}

    def table(self) -> str:
        """One line per job: priority, start, end, state, the reasons it waited, who started it."""
        head = (
            f"{'job':10} {'priority':>8} {'start_s':>7} {'end_s':>6}  {'state':10} "
            f"{'waited for':28} started by"
        )
        rows = [head]
        for j in sorted(self.jobs, key=lambda j: (j["start_seconds"] is None, j["id"])):
            start = "-" if j["start_seconds"] is None else f"{j['start_seconds']:.0f}"
            end = "-" if j["end_seconds"] is None else f"{j['end_seconds']:.0f}"
            reasons = ", ".join(j["reasons"]) or "-"
            rows.append(
                f"{j['name']:10} {j['priority']:>8} {start:>7} {end:>6}  {j['state']:10} "
                f"{reasons:28} {j['scheduler']}"
            )
        return "\n".join(rows)

    def __str__(self) -> str:
        parts = [
            self.note,
            f"SchedulerType={self.scheduler}",
            self.sbatch.rstrip(),
            "$ squeue   (the moment every waiting job had its reason)",
            self.squeue.rstrip(),
            "$ sinfo",
            self.sinfo.rstrip(),
            "$ scontrol show job   (the first job that waited, at the same moment)",
            self.scontrol.rstrip(),
            "$ sacct --completion   (after every job ended)",
            self.sacct.rstrip(),
            "What happened (scontrol show job, read every 0.2 s):",
            self.table(),
        ]
        return "\n".join(p for p in parts if p)

    def _repr_pretty_(self, printer, cycle: bool) -> None:
        printer.text(str(self))


@dataclass
class Lab:
    """The lesson's cluster across cells: live (``cluster`` set) or the recording."""

    source: str
    scheduler: str = "sched/backfill"
    cluster: slurm.Cluster | None = None
    recording: dict | None = None
    folder: Path | None = None
    _restarts: int = field(default=0, repr=False)

    @property
    def live(self) -> bool:
        return self.cluster is not None

    def __str__(self) -> str:
        return f"Slurm lab, SchedulerType={self.scheduler}: {self.source}"

    def submit(self, name: str, script: str) -> Submission:
        """``sbatch`` one script (its text); what Slurm said and did with it. A job that was
        accepted is cancelled once read, so the next experiment starts on an empty node."""
        if not self.live:
            return self._replayed("submissions", name, script, Submission)
        path = self._write(name, script)
        done = self._sbatch("--parsable", f"--job-name={name}", path)
        if done.returncode != 0:
            return Submission(name, script, False, done.stderr)
        job_id = int(done.stdout.strip().split(";")[0])
        fields = self._wait_for_reason(job_id)
        squeue = self.cluster.run("squeue")
        scontrol = self.cluster.run("scontrol", "show", "job", str(job_id))
        self._clear()
        return Submission(
            name,
            script,
            True,
            f"Submitted batch job {job_id}",
            job_id,
            fields.get("JobState", "?"),
            fields.get("Reason", "None"),
            squeue,
            scontrol,
        )

    def queue(self, name: str, scripts: dict[str, str], limit_seconds: float = 90.0) -> QueueRun:
        """Submit ``scripts`` (name -> text, in this order) in one burst and watch until every
        job ended (a job whose dependency can never be satisfied is cancelled at the end)."""
        if not self.live:
            return self._replayed("queues", name, scripts, QueueRun)
        ids: dict[str, int] = {}
        lines = []
        for job, text in scripts.items():
            for earlier, earlier_id in ids.items():
                text = text.replace("{" + earlier + "}", str(earlier_id))
            path = self._write(job, text)
            done = self._sbatch(f"--job-name={job}", path)
            lines.append(f"$ sbatch {path.name}\n{(done.stdout + done.stderr).strip()}")
            if done.returncode == 0:
                ids[job] = int(done.stdout.split()[-1])
        watched = self._watch(set(ids), limit_seconds)
        sacct = (
            ""
            if not watched["jobs"]
            else self.cluster.run(
                "sacct",
                "--completion",
                f"--jobs={','.join(str(j['id']) for j in watched['jobs'])}",
                "--format=JobID,JobName,State,ExitCode,Start,End",
            )
        )
        return QueueRun(
            name, self.scheduler, dict(scripts), "\n".join(lines), sacct=sacct, **watched
        )

    def restart(self, scheduler: str = "sched/builtin") -> Lab:
        """Stop the cluster and start it again with ``SchedulerType=scheduler``."""
        validate.choice("scheduler", scheduler, ("sched/backfill", "sched/builtin"))
        self.scheduler = scheduler
        if self.live:
            self.cluster.stop()
            self._restarts += 1
            folder = self.folder / f"cluster{self._restarts}"
            self.cluster = slurm.start(folder, scheduler=scheduler)
        return self

    def stop(self) -> None:
        """Stop the cluster (every process it started) and remove its folder."""
        if self.cluster is not None:
            self.cluster.stop()
            self.cluster = None
        if self.folder is not None:
            shutil.rmtree(self.folder, ignore_errors=True)
            self.folder = None

    def __enter__(self) -> Lab:
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop()

    # -- live helpers

    def _write(self, name: str, script: str) -> Path:
        path = self.cluster.folder / "jobs" / f"{name}.sh"
        path.write_text(script)
        return path

    def _sbatch(self, *args: str) -> subprocess.CompletedProcess:
        return subprocess.run(
            [
                slurm.program_path("sbatch") or "sbatch",
                f"--chdir={self.cluster.folder / 'out'}",
                *args,
            ],
            env=self.cluster.env,
            capture_output=True,
            text=True,
            timeout=30,
            check=False,
        )

    def _jobs(self) -> list[dict[str, str]]:
        lines = self.cluster.run("scontrol", "-d", "show", "job", "-o").strip().splitlines()
        return [f for f in map(job_mix.parse_job_line, lines) if "JobId" in f]

    def _wait_for_reason(self, job_id: int, seconds: float = 10.0) -> dict[str, str]:
        deadline = time.monotonic() + seconds
        while True:
            fields = next((f for f in self._jobs() if f["JobId"] == str(job_id)), {})
            waiting = fields.get("JobState") == "PENDING" and fields.get("Reason") == "None"
            if not waiting or time.monotonic() > deadline:
                return fields
            time.sleep(0.1)

    def _clear(self) -> None:
        with contextlib.suppress(RuntimeError):
            self.cluster.run("scancel", "--full", "--partition=gpu")
        deadline = time.monotonic() + 10
        while self.cluster.run("squeue", "-h").strip() and time.monotonic() < deadline:
            time.sleep(0.1)

    def _watch(self, names: set[str], limit_seconds: float) -> dict:
        t0, timeline, last = time.time(), [], None
        seen: dict[str, dict] = {}
        reasons: dict[str, list[str]] = {}
        squeue = sinfo = scontrol = ""
        while True:
            records = self._jobs()
            for f in records:
                key = _key(f)
                if key is None or re.sub(r"_\d+$", "", key) not in names:
                    continue
                seen[key] = f
                reason = f.get("Reason", "None")
                if f.get("JobState") == "PENDING" and reason != "None":
                    reasons.setdefault(key, [])
                    if reason not in reasons[key]:
                        reasons[key].append(reason)
            now = {k: _status(f) for k, f in sorted(seen.items(), key=lambda kv: _id(kv[1]))}
            if now != last:
                timeline.append({"t_seconds": round(time.time() - t0, 2), **now})
                last = now
            pending = [f for f in seen.values() if f.get("JobState") == "PENDING"]
            waiting = [f for f in records if f.get("JobState") == "PENDING"]
            if not squeue and waiting and all(f.get("Reason") != "None" for f in waiting):
                squeue, sinfo = self.cluster.run("squeue"), self.cluster.run("sinfo")
                first_waiting = min(waiting, key=_id)["JobId"]
                scontrol = self.cluster.run("scontrol", "show", "job", first_waiting)
            stuck = [f for f in pending if f.get("Reason") == _NEVER]
            if len(pending) == len(stuck) and all(
                f.get("JobState") in _ENDED for f in seen.values() if f not in stuck
            ):
                break
            if time.time() - t0 > limit_seconds:
                raise RuntimeError(f"the queue did not finish in {limit_seconds} s: {now}")
            time.sleep(0.2)
        self._clear()
        first = min((_epoch(f["SubmitTime"]) for f in seen.values()), default=0.0)
        jobs = []
        for key, f in sorted(seen.items(), key=lambda kv: _id(kv[1])):
            ran = f.get("JobState") in _ENDED and f.get("Reason") != _NEVER
            start, end = _epoch(f.get("StartTime", "")), _epoch(f.get("EndTime", ""))
            jobs.append(
                {
                    "name": key,
                    "id": _id(f),
                    "state": f["JobState"] if ran else "NEVER RAN",
                    "reasons": reasons.get(key, []),
                    "scheduler": f.get("Scheduler", "?") if ran else "-",
                    "priority": int(f.get("Priority", 0)),
                    "start_seconds": start - first if ran and start else None,
                    "end_seconds": end - first if ran and end else None,
                }
            )
        return {
            "jobs": tuple(jobs),
            "timeline": tuple(timeline),
            "squeue": squeue or "(no job waited)",
            "sinfo": sinfo,
            "scontrol": scontrol,
        }

    # -- the recording

    def _replayed(self, kind: str, name: str, given, cls):
        recorded = self.recording[kind]
        if name not in recorded:
            raise ValueError(f"name must be one of {sorted(recorded)}, got {name!r}")
        data = dict(recorded[name])
        if kind == "queues":
            data["jobs"], data["timeline"] = tuple(data["jobs"]), tuple(data["timeline"])
        mine = data["script" if kind == "submissions" else "scripts"]
        note = f"(recorded, {self.source})"
        if given != mine:
            note += (
                "\n(your script differs from the one recorded: this is what Slurm did with "
                "the lesson's script; run the lesson where Slurm runs to see yours)"
            )
        return cls(**{**data, "note": note})


def _key(fields: dict[str, str]) -> str | None:
    """A job's name; an array task's ``name_task``; None for an array's still-pending rest."""
    task = fields.get("ArrayTaskId")
    if task is None:
        return fields.get("JobName")
    return f"{fields.get('JobName')}_{task}" if task.isdigit() else None


def _id(fields: dict[str, str]) -> int:
    return int(fields["JobId"])


def _status(fields: dict[str, str]) -> str:
    state = fields.get("JobState", "?")
    return f"PENDING ({fields.get('Reason')})" if state == "PENDING" else state


def _epoch(stamp: str) -> float | None:
    if not stamp or stamp in ("Unknown", "None", "N/A"):
        return None
    return datetime.datetime.fromisoformat(stamp).timestamp()


def start(live: bool | None = None) -> Lab:
    """The lesson's lab: a cluster started here where Slurm runs (``live`` None or True), else
    the recording, with the reason in ``source``."""
    reason = slurm.unavailable()
    if live is False:
        reason = "asked for the recording"
    if reason is None:
        folder = Path(tempfile.mkdtemp(prefix="course-slurm-lab-"))
        try:
            cluster = slurm.start(folder / "cluster0")
        except RuntimeError as error:
            shutil.rmtree(folder, ignore_errors=True)
            reason = f"the live cluster did not start ({error})"
        else:
            version = cluster.run("sinfo", "-V").strip()
            return Lab(f"live on this machine ({version}, 4 GPUs)", cluster=cluster, folder=folder)
    data = reference.load(RECORDED, "lab")
    return Lab(f"{data['source']}; {reason}", recording=data)


def run_lesson(lab: Lab) -> dict:
    """The lesson's experiments with :data:`LESSON_SCRIPTS`, in the lesson's order (the lab ends
    on ``sched/builtin``): ``{"submissions": {...}, "queues": {...}}`` of plain dicts."""
    s = LESSON_SCRIPTS
    too_many = lab.submit("one_too_many", s["one_too_many"]["too_many"])
    backfill = lab.queue("backfill", s["backfill"])
    nice = lab.queue("nice_dependency_array", s["nice_dependency_array"])
    builtin = lab.restart("sched/builtin").queue("builtin", s["builtin"])
    return {
        "submissions": {"one_too_many": asdict(too_many)},
        "queues": {q.name: asdict(q) for q in (backfill, nice, builtin)},
    }


def record(path: str | Path) -> dict:
    """Run :func:`run_lesson` on a live cluster and write the recording to ``path``
    (``course/facts/data/reference/<RECORDED>/lab.json``)."""
    with start(live=True) as lab:
        if not lab.live:
            raise RuntimeError(f"recording needs a live Slurm: {lab.source}")
        data = run_lesson(lab)
        when = datetime.datetime.now(datetime.UTC).strftime("%Y-%m-%d")
        data["source"] = lab.source.replace(
            "live on this machine", "recorded with slurm_lab.record on a 2-core VM"
        ).replace(", 4 GPUs)", f", 4 GPUs, {when})")
    for kind in data.values():
        if isinstance(kind, dict):
            for entry in kind.values():
                entry.pop("note", None)
    Path(path).write_text(json.dumps(data, indent=1) + "\n")
    return data
