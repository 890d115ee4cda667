"""Accounting, fair share and a QOS on lesson 14's real Slurm: MariaDB and slurmdbd beside it.

:func:`start` starts the cluster of :func:`course.distributed.slurm.start` with accounting: once
munged runs, it makes a MariaDB data folder in the cluster's folder (``mariadb-install-db``),
starts ``mariadbd`` on a socket and a 127.0.0.1 port of its own as root, creates the database user
slurmdbd logs in with, writes ``slurmdbd.conf`` (mode 0600, owned by root, the ``SlurmUser``) and
starts ``slurmdbd`` on ``accounting_storage/mysql``; then slurmctld starts with
``AccountingStorageType=accounting_storage/slurmdbd``,
``AccountingStorageEnforce=associations,limits,qos``, ``PriorityWeightFairshare=``
:data:`FAIR_SHARE_WEIGHT` and a short ``PriorityDecayHalfLife``. Both are children of this process
with the cluster's ``SLURM_CONF`` in their environment, so :meth:`Cluster.stop
<course.distributed.slurm.Cluster.stop>` stops them with the other daemons.

:func:`setup` then makes the cluster's accounts with ``sacctmgr -i`` (non-interactive): two
accounts with shares, the user (root, who submits here) in both, and a QOS with a limit of GPUs
per user. :func:`fair_share_run` is the lesson's experiment: one account uses the cluster, then
both submit the same job; :func:`qos_run` submits past the QOS's limit.

Where MariaDB, slurmdbd or Slurm cannot run (:func:`unavailable`), :func:`lesson_run` replays the
recording :func:`record` made with this code, and says so.

Sources (Slurm 22.05): slurm.conf(5) https://slurm.schedmd.com/slurm.conf.html (Accounting*,
Priority*), slurmdbd.conf(5) https://slurm.schedmd.com/slurmdbd.conf.html (Storage*, mode 0600
and owned by SlurmUser), sacctmgr(1) https://slurm.schedmd.com/sacctmgr.html (accounts, users,
Fairshare=, QOS MaxTRESPerUser=), sshare(1) https://slurm.schedmd.com/sshare.html, sprio(1)
https://slurm.schedmd.com/sprio.html, and the multifactor priority plugin,
https://slurm.schedmd.com/priority_multifactor.html (priority as a sum of weight x factor, the
half-life decay of usage, PriorityCalcPeriod), and the Fair Tree algorithm that computes the
fair-share factor by default since 19.05, https://slurm.schedmd.com/fair_tree.html.

Measured on the 2-core VM the recording comes from: the database and slurmdbd add 8 to 15 s to
the cluster's start (0.7 to 0.9 s without them; most of it ``mariadb-install-db``), and
:func:`lesson_run` takes about 40 s, the jobs' sleeps included.
"""

from __future__ import annotations

import datetime
import json
import secrets
import shutil
import socket
import subprocess
import tempfile
import time
from dataclasses import asdict, dataclass
from pathlib import Path

from course.distributed import job_mix, slurm
from course.distributed.launch import free_port
from course.facts.data import reference

#: Programs accounting needs besides Slurm's (Debian's ``mariadb-server`` and ``slurmdbd``).
PROGRAMS = (
    "mariadb-install-db",
    "mariadbd",
    "mariadb",
    "slurmdbd",
    "sacctmgr",
    "sshare",
    "sprio",
    "sacct",
)
#: ``PriorityWeightFairshare``: the fair-share factor (0 to 1) times this is a job's priority
#: from fair share (``PriorityWeightPartition=1000`` in the cluster's ``slurm.conf`` adds 1000).
FAIR_SHARE_WEIGHT = 10000
#: ``PriorityDecayHalfLife``: usage counts half after this long (days-hours:minutes).
HALF_LIFE = "0-00:10"
#: The accounts (name -> ``Fairshare=`` shares) and the QOS :func:`setup` makes.
ACCOUNTS = {"teama": 1, "teamb": 1}
QOS = "gpu2"
QOS_LIMIT = "gres/gpu=2"
#: The reference run that holds the recording, file ``accounting.json``.
RECORDED = job_mix.RECORDED
#: Seconds :func:`start` waits for mariadbd and slurmdbd to listen.
START_SECONDS = 30.0

#: A small database: a 4 MiB redo log (the default 96 MiB file is most of a new data folder) and a
#: 32 MiB buffer pool.
_SMALL = ("--innodb-log-file-size=4M", "--innodb-buffer-pool-size=32M")

_SLURMDBD_CONF = """\
AuthType=auth/munge
AuthInfo=socket={folder}/munge/munge.socket
DbdHost=localhost
DbdAddr=127.0.0.1
DbdPort={dbd_port}
SlurmUser=root
PidFile={folder}/slurmdbd.pid
LogFile={folder}/log/slurmdbd.log
StorageType=accounting_storage/mysql
StorageHost=127.0.0.1
StoragePort={db_port}
StorageUser=slurm
StoragePass={password}
StorageLoc=slurm_acct_db
"""


def unavailable() -> str | None:
    """None where :func:`start` can run accounting here, else why not (one sentence)."""
    reason = slurm.unavailable()
    if reason:
        return reason
    missing = [p for p in PROGRAMS if slurm.program_path(p) is None]
    if missing:
        return (
            f"Slurm's accounting is not installed here ({', '.join(missing)} not found): "
            "`apt-get install slurmdbd mariadb-server` on Debian or Ubuntu."
        )
    return None


def conf_lines(folder: Path, dbd_port: int) -> str:
    """The ``slurm.conf`` lines for accounting through slurmdbd on 127.0.0.1:``dbd_port``
    (``AccountingStoragePass``: the cluster's own munged socket, in ``folder``)."""
    return (
        "AccountingStorageType=accounting_storage/slurmdbd\n"
        f"AccountingStorageHost=127.0.0.1\nAccountingStoragePort={dbd_port}\n"
        f"AccountingStoragePass={Path(folder).resolve()}/munge/munge.socket\n"
        "AccountingStorageEnforce=associations,limits,qos\n"
        "AccountingStorageTRES=gres/gpu\n"
        "JobAcctGatherType=jobacct_gather/linux\nJobAcctGatherFrequency=1\n"
        f"PriorityDecayHalfLife={HALF_LIFE}\nPriorityCalcPeriod=1\n"
    )


def start(
    folder: str | Path,
    gpus: int = 4,
    cpus: int = 16,
    fair_share_weight: int = FAIR_SHARE_WEIGHT,
) -> slurm.Cluster:
    """A cluster with MariaDB, slurmdbd and multifactor priority with fair share (its weight
    ``fair_share_weight``), its accounts not yet made (:func:`setup`). Raises RuntimeError with
    the reason where it cannot (:func:`unavailable`)."""
    reason = unavailable()
    if reason:
        raise RuntimeError(reason)
    dbd_port = free_port()
    accounting = slurm.Accounting(
        conf_lines(folder, dbd_port),
        fair_share_weight,
        lambda cluster: _start_database(cluster, dbd_port),
    )
    return slurm.start(folder, gpus=gpus, cpus=cpus, accounting=accounting)


def _start_database(cluster: slurm.Cluster, dbd_port: int) -> None:
    """mariadbd in ``folder/mysql``, its user for slurmdbd, ``slurmdbd.conf``, slurmdbd."""
    folder, db_port, password = cluster.folder, free_port(), secrets.token_hex(16)
    data, sock = folder / "mysql", folder / "mysql.sock"
    subprocess.run(
        [
            slurm.program_path("mariadb-install-db"),
            "--no-defaults",
            "--user=root",
            f"--datadir={data}",
            "--auth-root-authentication-method=socket",
            "--skip-test-db",
            *_SMALL,
        ],
        capture_output=True,
        check=True,
        timeout=120,
    )
    cluster.launch(
        slurm.program_path("mariadbd"),
        "--no-defaults",
        "--user=root",
        f"--datadir={data}",
        f"--socket={sock}",
        f"--port={db_port}",
        "--bind-address=127.0.0.1",
        f"--pid-file={folder}/mysql.pid",
        f"--log-error={folder}/log/mariadb.log",
        *_SMALL,
    )
    _wait_until(lambda: _listening(db_port), "mariadbd", cluster)
    sql = (
        f"CREATE USER 'slurm'@'127.0.0.1' IDENTIFIED BY '{password}';"
        "GRANT ALL ON slurm_acct_db.* TO 'slurm'@'127.0.0.1';"
    )
    subprocess.run(
        [slurm.program_path("mariadb"), "--no-defaults", f"--socket={sock}", "-uroot", "-e", sql],
        capture_output=True,
        check=True,
        timeout=30,
    )
    conf = folder / "slurmdbd.conf"
    conf.touch(mode=0o600)
    conf.chmod(0o600)
    conf.write_text(
        _SLURMDBD_CONF.format(folder=folder, dbd_port=dbd_port, db_port=db_port, password=password)
    )
    cluster.launch(slurm.program_path("slurmdbd"), "-D")
    _wait_until(lambda: _listening(dbd_port), "slurmdbd", cluster)


def _listening(port: int) -> bool:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.settimeout(0.5)
        return s.connect_ex(("127.0.0.1", port)) == 0


def _wait_until(ready, what: str, cluster: slurm.Cluster) -> None:
    deadline = time.monotonic() + START_SECONDS
    while not ready():
        dead = [Path(d.args[0]).name for d in cluster.daemons if d.poll() is not None]
        if dead or time.monotonic() > deadline:
            raise RuntimeError(
                f"accounting did not start ({', '.join(dead) or 'timed out'} waiting for "
                f"{what}); see the logs in {cluster.folder / 'log'}"
            )
        time.sleep(0.05)


def setup(cluster: slurm.Cluster) -> str:
    """Make the accounts (:data:`ACCOUNTS`, each with its ``Fairshare=`` shares), put the user
    who submits here (root) in both, and make the QOS :data:`QOS` with
    ``MaxTRESPerUser=``:data:`QOS_LIMIT` that user may use; the ``sacctmgr`` commands run."""
    commands = [
        *(("add", "account", name, f"Fairshare={shares}") for name, shares in ACCOUNTS.items()),
        ("add", "user", "root", f"Account={','.join(ACCOUNTS)}"),
        ("add", "qos", QOS, f"MaxTRESPerUser={QOS_LIMIT}"),
        ("modify", "user", "root", "set", f"QOS+={QOS}"),
    ]
    for command in commands:
        cluster.run("sacctmgr", "-i", *command)
    return "\n".join("$ sacctmgr -i " + " ".join(command) for command in commands)


@dataclass(frozen=True)
class AccountingRun:
    """The lesson's accounting experiments on one cluster. ``setup``: the ``sacctmgr``
    commands; ``hog``: the job ``teama`` ran first (its ``sbatch`` options); ``sshare`` after it,
    ``sprio`` and ``squeue`` while both accounts' jobs waited, ``start_order`` and
    ``priorities`` of those two jobs (by account), ``sacct`` of every job; ``qos_squeue``,
    ``qos_scontrol`` and ``qos_reason`` of the job the QOS held; ``seff``: its output, or why
    none."""

    source: str
    fair_share_weight: int
    setup: str
    hog: str
    sshare: str
    sprio: str
    squeue: str
    start_order: tuple[str, ...]
    priorities: dict
    sacct: str
    qos_squeue: str
    qos_scontrol: str
    qos_reason: str
    seff: str
    note: str = ""

    def __str__(self) -> str:
        parts = [
            self.note or self.source,
            self.setup,
            f"$ sbatch --account=teama {self.hog} hog.sh   (teama uses the cluster first)",
            "$ sshare -a   (after it ended)",
            self.sshare.rstrip(),
            "$ sbatch --account=root --gres=gpu:4 block.sh; then teama.sh and teamb.sh, "
            "each --gres=gpu:4, in that order",
            "$ squeue",
            self.squeue.rstrip(),
            "$ sprio -l",
            self.sprio.rstrip(),
            f"start order: {', '.join(self.start_order)}",
            "$ sacct -X --format=JobID,JobName,Account,QOS,State,Start,End,Elapsed,AllocTRES%45",
            self.sacct.rstrip(),
            f"$ sbatch --qos={QOS} --gres=gpu:2 (twice)",
            self.qos_squeue.rstrip(),
            "$ scontrol show job   (the job that waits; its first lines)",
            "\n".join(self.qos_scontrol.splitlines()[:4]),
            "$ seff",
            self.seff.rstrip(),
        ]
        return "\n".join(p for p in parts if p)

    def _repr_pretty_(self, printer, cycle: bool) -> None:
        printer.text(str(self))


#: The job teama runs first: all 16 CPUs for a few seconds (usage is billed CPU-seconds).
HOG = ("--cpus-per-task=16", "--job-name=hog")


def fair_share_run(cluster: slurm.Cluster) -> dict:
    """``teama`` runs :data:`HOG`; slurmctld restarts (it computes every account's fair-share
    factor when it starts, else once a ``PriorityCalcPeriod``, a minute at least); then a job
    holds the four GPUs while ``teama`` and then ``teamb`` each submit a 4-GPU job."""
    hog = cluster.submit("--account=teama", *HOG, script="#!/bin/bash\nsleep 4\n")
    _until(lambda: _raw_usage(cluster, "teama") > 0, cluster, f"job {hog}'s usage")
    cluster.restart_controller()
    sshare = cluster.run("sshare", "-a")
    job = "#!/bin/bash\nsleep {}\n"
    ids = {
        "block": cluster.submit(
            "--account=root", "--gres=gpu:4", "--job-name=block", script=job.format(3)
        )
    }
    for account in ACCOUNTS:
        ids[account] = cluster.submit(
            f"--account={account}", "--gres=gpu:4", f"--job-name={account}", script=job.format(1)
        )
    _until(lambda: _reasons_given(cluster), cluster, "the reasons")
    squeue, sprio = cluster.run("squeue"), cluster.run("sprio", "-l")
    priorities = {
        a: int(cluster.run("squeue", "-h", "-j", str(ids[a]), "-o", "%Q").strip()) for a in ACCOUNTS
    }
    _until(lambda: not cluster.run("squeue", "-h").strip(), cluster, "the jobs to end")
    starts = {a: _sacct_field(cluster, ids[a], "Start") for a in ACCOUNTS}
    order = tuple(sorted(ACCOUNTS, key=lambda a: (starts[a], ids[a])))
    return {
        "hog": " ".join(HOG),
        "sshare": sshare,
        "sprio": sprio,
        "squeue": squeue,
        "start_order": order,
        "priorities": priorities,
    }


def qos_run(cluster: slurm.Cluster) -> dict:
    """Two 2-GPU jobs under the QOS :data:`QOS` (at most :data:`QOS_LIMIT` per user): the
    second waits though two GPUs are free; its reason, ``squeue`` and ``scontrol show job``."""
    script = "#!/bin/bash\nsleep 2\n"
    options = ("--account=teamb", f"--qos={QOS}", "--gres=gpu:2")
    cluster.submit(*options, "--job-name=qos1", script=script)
    second = cluster.submit(*options, "--job-name=qos2", script=script)
    _until(lambda: _looked_at(cluster, second), cluster, "the scheduler to look at the job")
    squeue = cluster.run("squeue")
    scontrol = cluster.run("scontrol", "show", "job", str(second))
    reason = cluster.run("squeue", "-h", "-j", str(second), "-o", "%r").strip()
    _until(lambda: not cluster.run("squeue", "-h").strip(), cluster, "the jobs to end")
    seff = slurm.program_path("seff")
    return {
        "qos_squeue": squeue,
        "qos_scontrol": scontrol,
        "qos_reason": reason,
        "seff": cluster.run(seff, str(second))
        if seff
        else (
            "(seff is not installed here: it is a contributed script in Slurm's source, "
            "contribs/seff, that some sites install; sacct's TotalCPU, Elapsed, AllocTRES and "
            "MaxRSS columns hold what it summarises)"
        ),
    }


def run_lesson(cluster: slurm.Cluster, source: str = "") -> AccountingRun:
    """:func:`setup`, :func:`fair_share_run` and :func:`qos_run` on ``cluster`` (from
    :func:`start`); the whole record."""
    made = setup(cluster)
    fair = fair_share_run(cluster)
    qos = qos_run(cluster)
    sacct = cluster.run(
        "sacct",
        "-X",
        "--format=JobID,JobName,Account,QOS,State,Start,End,Elapsed,AllocTRES%45",
    )
    weight = _conf_value(cluster, "PriorityWeightFairShare")
    return AccountingRun(source, int(weight), made, sacct=sacct, **fair, **qos)


def lesson_run(live: bool | None = None) -> AccountingRun:
    """The lesson's experiments: on a cluster started here (and stopped, its folder removed)
    where accounting runs (``live`` None or True), else the recording, with the reason."""
    reason = unavailable() if live is not False else "asked for the recording"
    if reason is None:
        folder = Path(tempfile.mkdtemp(prefix="course-slurm-accounting-"))
        try:
            cluster = start(folder / "cluster")
        except RuntimeError as error:
            shutil.rmtree(folder, ignore_errors=True)
            reason = f"the live cluster did not start ({error})"
        else:
            try:
                version = cluster.run("sinfo", "-V").strip()
                return run_lesson(cluster, f"live on this machine ({version}, slurmdbd on MariaDB)")
            finally:
                cluster.stop()
                shutil.rmtree(folder, ignore_errors=True)
    data = reference.load(RECORDED, "accounting")
    data["start_order"] = tuple(data["start_order"])
    return AccountingRun(**data, note=f"(recorded: {data['source']}; {reason})")


def record(path: str | Path) -> AccountingRun:
    """Run :func:`lesson_run` live and write it to ``path``
    (``course/facts/data/reference/<RECORDED>/accounting.json``)."""
    run = lesson_run(live=True)
    if "live" not in run.source:
        raise RuntimeError(f"recording needs a live Slurm with accounting: {run.note}")
    when = datetime.datetime.now(datetime.UTC).strftime("%Y-%m-%d")
    data = asdict(run)
    data.pop("note")
    data["source"] = run.source.replace(
        "live on this machine (", "recorded with slurm_accounting.record on a 2-core VM ("
    ).replace(")", f", {when})", 1)
    Path(path).write_text(json.dumps(data, indent=1) + "\n")
    return run


def _until(ready, cluster: slurm.Cluster, what: str, seconds: float = 60.0) -> None:
    deadline = time.monotonic() + seconds
    while not ready():
        if time.monotonic() > deadline:
            raise RuntimeError(f"waited {seconds:.0f} s for {what}: {cluster.run('squeue')}")
        time.sleep(0.2)


def _raw_usage(cluster: slurm.Cluster, account: str) -> int:
    rows = cluster.run("sshare", "-h", "-P", "-A", account, "-o", "RawUsage").split()
    return int(rows[0]) if rows else 0


def _reasons_given(cluster: slurm.Cluster) -> bool:
    """Every pending job has had the scheduler's look (a reason other than None)."""
    rows = cluster.run("squeue", "-h", "-t", "PENDING", "-o", "%r").split()
    return bool(rows) and "None" not in rows


def _looked_at(cluster: slurm.Cluster, job_id: int) -> bool:
    """The job runs, ended, or waits with a reason (not ``None``, the scheduler's not yet)."""
    return cluster.run("squeue", "-h", "-j", str(job_id), "-o", "%T %r").split() != [
        "PENDING",
        "None",
    ]


def _sacct_field(cluster: slurm.Cluster, job_id: int, name: str) -> str:
    return cluster.run("sacct", "-X", "-n", "-P", "-j", str(job_id), f"--format={name}").strip()


def _conf_value(cluster: slurm.Cluster, key: str) -> str:
    for line in cluster.run("scontrol", "show", "config").splitlines():
        if line.split("=")[0].strip() == key:
            return line.split("=", 1)[1].strip()
    raise ValueError(f"key must be a slurm.conf key scontrol shows, got {key!r}")
