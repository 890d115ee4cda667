"""A real single-node Slurm cluster, started in a folder of its own and stopped by process id.

:func:`start` writes a ``slurm.conf`` and a ``gres.conf`` into ``folder``, starts ``munged`` (its
own key and socket there), ``slurmctld`` and ``slurmd`` in the foreground as children of this
process, on 127.0.0.1 ports nobody listens on, and waits until the node is idle (about 0.3 s).
The node declares ``gpus`` GPUs of type ``h100`` (``Gres=gpu:h100:N``); ``gres.conf`` lists one
``File=`` per GPU, a *character device* made with ``mknod`` in the folder (slurmd rejects plain
files as "not a valid character or block device" and then leaves ``CUDA_VISIBLE_DEVICES``
empty). Slurm does the rest as on any cluster: it allocates those device files to jobs, sets
``CUDA_VISIBLE_DEVICES``, queues what does not fit, orders by priority, backfills. The GPUs are
stand-ins: a job sees their numbers, not an H100.

:meth:`Cluster.stop` cancels every job, then stops each process the cluster started (found by the
``SLURM_CONF`` in its environment: daemons, job steps and the jobs' own processes) by id, and
waits for them; nothing is left running (tests/distributed/test_slurm.py checks it). The daemons
also die with the process that started them (a killed Jupyter kernel takes them along).

``start(..., accounting=...)`` adds ``slurm.conf`` lines and starts more daemons before slurmctld
(MariaDB and slurmdbd: :mod:`course.distributed.slurm_accounting`); without it there is no
database and ``PriorityWeightFairshare=0`` (start costs a fraction of a second, against several
seconds with accounting). :meth:`Cluster.restart_controller` restarts slurmctld on its saved state.
``start(..., preemption=True)`` adds a partition ``urgent`` whose jobs preempt ``gpu``'s
(:data:`_PREEMPTION`). Two settings make a lesson's requeue take seconds, not minutes:
``cred_expire=10`` (a requeued job waits until its last run's credential expires, 120 s by
default) and ``sched_interval=1`` (the main scheduling loop, 60 s by default, starts a job whose
begin time has passed: no event wakes the scheduler for it).

It needs Linux, Debian's ``slurm-wlm`` and ``munge`` (``apt-get install slurm-wlm munge``) and
root (the daemons and ``mknod``): :func:`unavailable` says why not, in a sentence, where it cannot.
Configuration keys: Slurm 22.05 ``slurm.conf(5)`` and ``gres.conf(5)``,
https://slurm.schedmd.com/slurm.conf.html, https://slurm.schedmd.com/gres.conf.html.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path

from course.distributed.launch import free_port, popen_dying_with_parent
from course.facts import validate

#: Programs a cluster needs on the PATH (or in /usr/sbin, where Debian puts the daemons).
PROGRAMS = ("munged", "slurmctld", "slurmd", "sbatch", "squeue", "scontrol", "scancel", "sinfo")
#: Seconds :func:`start` waits for the node to come up idle.
START_SECONDS = 20.0
#: The node's name (``slurmd -N``): one name whatever the machine is called.
NODE = "node1"

_CONF = """\
ClusterName=course
SlurmctldHost={host}(127.0.0.1)
SlurmUser=root
SlurmdUser=root
SlurmctldPort={ctld_port}
SlurmdPort={d_port}
AuthType=auth/munge
CredType=cred/munge
AuthInfo=socket={folder}/munge/munge.socket,cred_expire=10
StateSaveLocation={folder}/state
SlurmdSpoolDir={folder}/spool
SlurmctldPidFile={folder}/slurmctld.pid
SlurmdPidFile={folder}/slurmd.pid
SlurmctldLogFile={folder}/log/slurmctld.log
SlurmdLogFile={folder}/log/slurmd.log
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
MpiDefault=none
MailProg=/bin/true
SelectType=select/cons_tres
SelectTypeParameters=CR_Core_Memory
GresTypes=gpu
SchedulerType={scheduler}
SchedulerParameters=bf_interval=1,sched_interval=1,batch_sched_delay=0,sched_min_interval=0
PriorityType=priority/multifactor
PriorityWeightAge=0
PriorityWeightFairshare={fair_share_weight}
PriorityWeightJobSize=0
PriorityWeightPartition=1000
JobCompType=jobcomp/filetxt
JobCompLoc={folder}/log/jobcomp.txt
{accounting}SlurmdParameters=config_overrides
DefMemPerCPU=100
ReturnToService=2
InactiveLimit=0
KillWait=2
MinJobAge=600
NodeName={node} NodeHostname={host} NodeAddr=127.0.0.1 CPUs={cpus} RealMemory={memory_mb} \
Gres=gpu:h100:{gpus} State=UNKNOWN
PartitionName=gpu Nodes={node} Default=YES MaxTime=60 State=UP{gpu_preemption}
{preemption}"""

#: With ``preemption=True``: a job in partition ``urgent`` (a higher ``PriorityTier``) that needs
#: the resources of running ``gpu`` jobs preempts them; they get SIGTERM, ``GraceTime`` seconds to
#: save their state, then SIGKILL, and go back in the queue (https://slurm.schedmd.com/preempt.html).
_PREEMPTION = """\
PreemptType=preempt/partition_prio
PreemptMode=REQUEUE
PartitionName=urgent Nodes={node} MaxTime=60 State=UP PriorityTier=2 PreemptMode=OFF
"""
_GPU_PREEMPTION = " PriorityTier=1 PreemptMode=REQUEUE GraceTime=30"


_MUNGE_FILES = {
    "socket": "munge.socket",
    "key-file": "munge.key",
    "pid-file": "munged.pid",
    "log-file": "munged.log",
    "seed-file": "seed",
}


def program_path(name: str) -> str | None:
    """The full path of a Slurm or munge program, or None where this machine lacks it."""
    return shutil.which(name) or shutil.which(name, path="/usr/sbin:/usr/bin:/sbin")


def unavailable() -> str | None:
    """None where :func:`start` can run a cluster here, else why not (one sentence)."""
    if not sys.platform.startswith("linux"):
        return f"Slurm runs on Linux; this machine runs {sys.platform}."
    missing = [p for p in PROGRAMS if program_path(p) is None]
    if missing:
        return (
            f"Slurm is not installed here ({', '.join(missing)} not found): "
            "`apt-get install slurm-wlm munge` on Debian or Ubuntu."
        )
    if os.geteuid() != 0:
        return "Slurm's daemons and device files need root here; this kernel is not root."
    return None


def config_text(
    folder: Path,
    gpus: int,
    cpus: int,
    ports: tuple[int, int],
    scheduler: str = "sched/backfill",
    preemption: bool = False,
    accounting: str = "",
    fair_share_weight: int = 0,
) -> tuple[str, str]:
    """``(slurm.conf, gres.conf)`` for a one-node cluster in ``folder`` with ``gpus`` GPUs; with
    ``preemption``, a partition ``urgent`` whose jobs preempt ``gpu``'s (:data:`_PREEMPTION`);
    ``accounting``: more lines (:func:`course.distributed.slurm_accounting.conf_lines`: slurmdbd,
    the decay of usage), with ``PriorityWeightFairshare=fair_share_weight`` (0: no fair share)."""
    gpus = validate.positive_int("gpus", gpus, maximum=16)
    cpus = validate.positive_int("cpus", cpus, maximum=256)
    validate.choice("scheduler", scheduler, ("sched/backfill", "sched/builtin"))
    fair_share_weight = validate.positive_int("fair_share_weight", fair_share_weight, minimum=0)
    conf = _CONF.format(
        host=socket.gethostname(),
        ctld_port=ports[0],
        d_port=ports[1],
        folder=folder,
        node=NODE,
        cpus=cpus,
        memory_mb=100 * cpus,
        gpus=gpus,
        scheduler=scheduler,
        gpu_preemption=_GPU_PREEMPTION if preemption else "",
        preemption=_PREEMPTION.format(node=NODE) if preemption else "",
        fair_share_weight=fair_share_weight,
        accounting=accounting,
    )
    lines = [f"NodeName={NODE} Name=gpu Type=h100 File={folder}/dev/gpu{i}" for i in range(gpus)]
    return conf, "AutoDetect=off\n" + "\n".join(lines) + "\n"


@dataclass(frozen=True)
class Accounting:
    """What :func:`start` adds for accounting: ``slurm.conf`` ``lines``, the fair-share
    ``weight`` and ``before_controller(cluster)``, run once munged is up, before slurmctld."""

    lines: str = ""
    weight: int = 0
    before_controller: Callable[[Cluster], None] | None = None


@dataclass
class Cluster:
    """A running cluster: run Slurm's commands with :meth:`run`, stop it with :meth:`stop`."""

    folder: Path
    gpus: int
    daemons: list[subprocess.Popen] = field(default_factory=list)

    @property
    def env(self) -> dict[str, str]:
        """The environment of Slurm's commands and so of the jobs: ``SLURM_CONF`` pointing at this
        cluster, this Python's folder first on the ``PATH`` (so a job finds ``torchrun``)."""
        path = f"{Path(sys.executable).parent}{os.pathsep}{os.environ.get('PATH', '')}"
        return {**os.environ, "SLURM_CONF": str(self.folder / "slurm.conf"), "PATH": path}

    def run(self, *args: str, timeout: float = 30.0) -> str:
        """Run one Slurm command (``run("squeue", "-h")``); its stdout. Raises on failure."""
        done = subprocess.run(
            [program_path(args[0]) or args[0], *args[1:]],
            env=self.env,
            capture_output=True,
            text=True,
            timeout=timeout,
            check=False,
        )
        if done.returncode != 0:
            raise RuntimeError(
                f"{' '.join(args)} failed ({done.returncode}): {done.stderr.strip()}"
            )
        return done.stdout

    def submit(self, *options: str, script: str) -> int:
        """``sbatch --parsable`` a script (its text); the job id."""
        path = self.folder / "jobs" / f"job{len(list((self.folder / 'jobs').glob('*')))}.sh"
        path.write_text(script)
        chdir = f"--chdir={self.folder / 'out'}"
        return int(self.run("sbatch", "--parsable", chdir, *options, str(path)).split(";")[0])

    def launch(self, *command: str) -> subprocess.Popen:
        """Start one daemon (in the foreground, its output discarded) as a child of this
        process that dies with it, with this cluster's environment; it is stopped by
        :meth:`stop`."""
        daemon = popen_dying_with_parent(
            command,
            env=self.env,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
            start_new_session=True,
        )
        self.daemons.append(daemon)
        return daemon

    def restart_controller(self) -> None:
        """Stop slurmctld (SIGTERM: it saves its state) and start it again on that state; wait
        until it answers."""
        for daemon in [d for d in self.daemons if str(d.args[0]).endswith("slurmctld")]:
            daemon.terminate()
            daemon.wait(timeout=30)
            self.daemons.remove(daemon)
        self.launch(program_path("slurmctld"), "-D", "-i")
        _wait_for(lambda: _idle(self), "slurmctld to answer again", self)

    def processes(self) -> list[int]:
        """Ids of every live process this cluster started (its ``SLURM_CONF`` in their
        environment): daemons, job steps, the jobs' programs."""
        marker = f"SLURM_CONF={self.folder / 'slurm.conf'}".encode()
        found = []
        for entry in Path("/proc").iterdir():
            if not entry.name.isdigit() or int(entry.name) == os.getpid():
                continue
            with contextlib.suppress(OSError):
                if marker in (entry / "environ").read_bytes().split(b"\0"):
                    state = (entry / "stat").read_text().rsplit(")", 1)[1].split()[0]
                    if state != "Z":
                        found.append(int(entry.name))
        return found

    def stop(self) -> None:
        """Cancel every job, stop every process the cluster started (by id), wait for them."""
        with contextlib.suppress(Exception):
            self.run("scancel", "--full", "--quiet", "--me", timeout=5)
        deadline = time.monotonic() + 5
        while self._jobs_running() and time.monotonic() < deadline:
            time.sleep(0.1)
        for sig in (signal.SIGTERM, signal.SIGKILL):
            for pid in self.processes():
                with contextlib.suppress(ProcessLookupError):
                    os.kill(pid, sig)
            for daemon in self.daemons:
                with contextlib.suppress(subprocess.TimeoutExpired):
                    daemon.wait(timeout=5)
            deadline = time.monotonic() + 5
            while self.processes() and time.monotonic() < deadline:
                time.sleep(0.05)
            if not self.processes():
                break
        self.daemons.clear()

    def _jobs_running(self) -> bool:
        try:
            return bool(self.run("squeue", "-h", "-t", "RUNNING,COMPLETING", timeout=5).strip())
        except Exception:
            return False

    def __enter__(self) -> Cluster:
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop()


def _make_folder(folder: Path, gpus: int) -> None:
    for sub in ("munge", "state", "spool", "log", "dev", "jobs", "out"):
        (folder / sub).mkdir(parents=True, exist_ok=True)
    (folder / "munge").chmod(0o700)
    key = folder / "munge" / "munge.key"
    key.write_bytes(os.urandom(1024))
    key.chmod(0o600)
    for i in range(gpus):
        device = folder / "dev" / f"gpu{i}"
        if not device.exists():  # a character device (/dev/null's numbers), as gres.conf needs
            os.mknod(device, 0o666 | 0o020000, os.makedev(1, 3))


def start(
    folder: str | Path,
    gpus: int = 4,
    cpus: int = 16,
    scheduler: str = "sched/backfill",
    preemption: bool = False,
    accounting: Accounting | None = None,
) -> Cluster:
    """Start munged, slurmctld and slurmd for a one-node cluster in ``folder`` (an empty folder
    of its own); the running :class:`Cluster`. ``accounting``: more ``slurm.conf`` lines, their
    fair-share weight, and what to start once munged runs, before slurmctld (MariaDB and
    slurmdbd: :func:`course.distributed.slurm_accounting.start`). Raises RuntimeError with the
    reason where it cannot (:func:`unavailable`) or when the node does not come up in
    ``START_SECONDS``."""
    reason = unavailable()
    if reason:
        raise RuntimeError(reason)
    folder = Path(folder).resolve()
    _make_folder(folder, gpus)
    extra = accounting or Accounting()
    ports = (free_port(), free_port())
    conf, gres = config_text(
        folder, gpus, cpus, ports, scheduler, preemption, extra.lines, extra.weight
    )
    (folder / "slurm.conf").write_text(conf)
    (folder / "gres.conf").write_text(gres)
    cluster = Cluster(folder, gpus)
    munge = folder / "munge"
    try:
        cluster.launch(
            program_path("munged"),
            "-F",
            "--force",
            *[f"--{k}={munge}/{v}" for k, v in _MUNGE_FILES.items()],
        )
        _wait_for(lambda: (munge / "munge.socket").exists(), "munged's socket", cluster)
        if extra.before_controller is not None:
            extra.before_controller(cluster)
        cluster.launch(program_path("slurmctld"), "-D", "-i")
        cluster.launch(program_path("slurmd"), "-D", "-N", NODE)
        _wait_for(lambda: _idle(cluster), "the node to come up idle", cluster)
    except BaseException:
        cluster.stop()
        raise
    return cluster


def _idle(cluster: Cluster) -> bool:
    try:
        return cluster.run("sinfo", "-h", "-p", "gpu", "-o", "%t", timeout=5).strip() == "idle"
    except Exception:
        return False


def _wait_for(ready, what: str, cluster: Cluster) -> None:
    deadline = time.monotonic() + START_SECONDS
    while not ready():
        dead = [d.args[0] for d in cluster.daemons if d.poll() is not None]
        if dead or time.monotonic() > deadline:
            logs = cluster.folder / "log"
            raise RuntimeError(
                f"Slurm did not start ({', '.join(dead) or 'timed out'} waiting for {what}); "
                f"see the logs in {logs}"
            )
        time.sleep(0.05)


@contextlib.contextmanager
def running(folder: str | Path, **kwargs) -> Iterator[Cluster]:
    """``with running(folder) as cluster:``: a started cluster, stopped on leaving."""
    cluster = start(folder, **kwargs)
    try:
        yield cluster
    finally:
        cluster.stop()
