"""Run a command on a submission in a sandbox, and say which protections are on.

:func:`run` starts ``unshare`` (util-linux) with new mount, PID, network, IPC and UTS namespaces
(``--user --map-root-user`` as well when the grader is not root), whose first process is
:mod:`teaching.grading.sandbox_init`: see there for what is hidden and how rights are
dropped. The parent keeps only a capped copy of the output and kills the whole namespace at the
time limit.

:func:`protections` probes once what this platform allows. Where a protection is unavailable the run
still happens, and the list of what is off goes to the console and to the gradebook:

- ``pid-namespace``: everything the submission starts dies with it (else: process group and a
  scan for the run's token, which a detached process that clears its environment escapes);
- ``hidden-files``: the root is built from an allow-list (:func:`visible_inside`), so solutions,
  keys, other submissions and the gradebook are not there, and the submission can neither unmount,
  remount nor make a user namespace (off when a probe finds it can);
- ``no-network``: only a loopback interface that is down;
- ``unprivileged-user``: the submission runs as ``nobody`` or its slot's own uid (:data:`slots`);
  off without root, where it runs as root of a user namespace (the grader's own user) without
  capabilities;
- ``resource-limits``: CPU seconds, memory, file size, open files, processes (per uid: one per
  slot), a memory cgroup per slot where one can be made (:class:`_Cgroups`), and CPUs of its own
  per slot in the factory (:func:`slot_cpus`);
- ``process-limit``: the process limit (``RLIMIT_NPROC``, 512) binds; off in a user namespace that
  root started (``COURSE_SANDBOX=userns`` as root), whose processes belong to the host's root user,
  which the kernel exempts from that limit (``copy_process`` in kernel/fork.c skips the check for
  ``INIT_USER``): there 700 forks succeeded where root mode stops near 510. For any other user the
  limit holds, counted over all of that user's processes.
"""

from __future__ import annotations

import contextlib
import functools
import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time
import uuid
from collections import deque
from dataclasses import dataclass, field
from pathlib import Path

from teaching.grading import sandbox_init

INIT = Path(__file__).with_name("sandbox_init.py")
RUNNER = Path(__file__).with_name("runner.py")  # the only code that runs a submission
OUTPUT_HEAD_BYTES = 8 * 1024  # kept from the start of a run's output
OUTPUT_TAIL_BYTES = 32 * 1024  # kept from its end; everything in between is dropped
ALL = (
    "pid-namespace",
    "hidden-files",
    "no-network",
    "unprivileged-user",
    "resource-limits",
    "process-limit",
)
_TOKEN_VAR = "COURSE_SANDBOX_TOKEN"
# What the sandbox's first process gets (a forked sandbox can read its process's initial environment
# in /proc/self/environ, so the grader's own variables never go in).
_BARE_ENV = {"PATH": "/usr/local/bin:/usr/bin:/bin", "LANG": "C.UTF-8"}


FOLDER_LIMITS = (
    f"{sandbox_init.FOLDER_BYTES // 2**20} MiB or {sandbox_init.FOLDER_INODES:,} files and folders"
)
NOBODY = 65534
SLOT_UID_BASE = 2_000_000_000  # uids of the second and later sandboxes running at once


class _Slots:
    """A distinct user for each sandbox running at once (the first is ``nobody``): a limit on
    processes counts per user, so a fork bomb exhausts only its own sandbox's."""

    def __init__(self):
        self._lock = threading.Lock()
        self._busy: set[int] = set()

    @contextlib.contextmanager
    def uid(self):
        with self._lock:
            n = next(i for i in range(len(self._busy) + 1) if i not in self._busy)
            self._busy.add(n)
        try:
            yield NOBODY if n == 0 else SLOT_UID_BASE + n
        finally:
            with self._lock:
                self._busy.discard(n)


slots = _Slots()


def slot_cpus(uid: int, threads: int) -> list[int]:
    """The CPUs a slot's sandbox may run on: ``threads`` of the grader's own, the slots side by
    side (slot n from its uid), wrapping round when there are more slots than CPUs. A neighbour's
    busy processes then compete on their own CPUs only; the sandbox cannot widen its set (its
    seccomp filter refuses ``sched_setaffinity``)."""
    cpus = sorted(os.sched_getaffinity(0))
    n = 0 if uid == NOBODY else uid - SLOT_UID_BASE
    width = max(1, min(threads, len(cpus)))
    return [cpus[(n * width + i) % len(cpus)] for i in range(width)]


LEFTOVER_PREFIX = "course-sandboxes-"  # a factory's folder in the temporary folder
CGROUP_PREFIX = "course-sandboxes-"  # its cgroups; both named with the grader's pid


def _grader_gone(name: str, prefix: str) -> bool:
    """Was ``name`` made by a grader that is no longer running (``kill -9`` ends it without its
    clean-up)?"""
    pid = name.removeprefix(prefix).split("-", 1)[0]
    if not name.startswith(prefix) or not pid.isdigit():
        return False
    try:
        os.kill(int(pid), 0)
    except ProcessLookupError:
        return True
    except OSError:
        return False
    return False


def clear_leftovers() -> list[Path]:
    """Remove what a killed grader left (its factory's folder, its cgroups, after ending any
    process still in them); returns what was removed. Run as each factory starts."""
    removed = []
    for folder in Path(tempfile.gettempdir()).glob(f"{LEFTOVER_PREFIX}*"):
        if (
            folder.is_dir()
            and not folder.is_symlink()
            and _grader_gone(folder.name, LEFTOVER_PREFIX)
        ):
            shutil.rmtree(folder, ignore_errors=True)
            removed.append(folder)
    base = memory_cgroup()
    for root in base.glob(f"{CGROUP_PREFIX}*") if base is not None else []:
        if root.is_dir() and _grader_gone(root.name, CGROUP_PREFIX):
            _Cgroups.adopt(root).close()
            removed.append(root)
    return removed


def memory_cgroup() -> Path | None:
    """This process's memory cgroup, where this platform lets it make children (v2 or v1), or
    None."""
    try:
        lines = Path("/proc/self/cgroup").read_text().splitlines()
    except OSError:
        return None
    for line in lines:
        _, controllers, path = line.split(":", 2)
        if "memory" in controllers.split(","):
            base = Path("/sys/fs/cgroup/memory") / path.lstrip("/")
        elif controllers == "" and Path("/sys/fs/cgroup/cgroup.controllers").is_file():
            base = Path("/sys/fs/cgroup") / path.lstrip("/")
            if "memory" not in (base / "cgroup.controllers").read_text().split():
                continue
        else:
            continue
        if os.access(base, os.W_OK) and os.geteuid() == 0:
            return base
    return None


class _Cgroups:
    """A memory cgroup per sandbox slot (a neighbour's memory does not count against another's),
    in a folder of this run's own; None where there is none to make."""

    def __init__(self, memory_bytes: int, *, enabled: bool = True):
        base = memory_cgroup() if enabled else None
        self.root = None
        if base is None:
            return
        try:
            root = base / f"{CGROUP_PREFIX}{os.getpid()}-{uuid.uuid4().hex[:8]}"
            root.mkdir()
            self.root, self.memory_bytes, self.v2 = (
                root,
                memory_bytes,
                (root / "memory.max").exists(),
            )
        except OSError:
            return

    @classmethod
    def adopt(cls, root: Path) -> _Cgroups:
        """A killed grader's cgroups, to close."""
        cgroups = cls.__new__(cls)
        cgroups.root = root
        return cgroups

    def slot(self, uid: int) -> str | None:
        """The cgroup folder's name for a slot's uid (made on first use), or None."""
        if self.root is None:
            return None
        name = f"slot{uid}"
        path = self.root / name
        try:
            if not path.is_dir():
                path.mkdir()
                limit = "memory.max" if self.v2 else "memory.limit_in_bytes"
                (path / limit).write_text(str(self.memory_bytes))
            return name
        except OSError:
            return None

    def kill(self) -> None:
        """End every process in this run's cgroups now, whatever its parent did (a sandbox forked
        just before the factory died has not yet asked to die with it)."""
        if self.root is None or not self.root.exists():
            return
        for child in self.root.iterdir():
            if not child.is_dir():
                continue
            with contextlib.suppress(OSError):
                if (child / "cgroup.kill").exists():  # cgroup v2 (Linux 5.14+): all at once
                    (child / "cgroup.kill").write_text("1")
                    continue
                for pid in (child / "cgroup.procs").read_text().split():
                    with contextlib.suppress(OSError, ValueError):
                        os.kill(int(pid), signal.SIGKILL)

    def close(self) -> None:
        if self.root is None or not self.root.exists():  # none, or closed already
            return
        self.kill()
        for _ in range(100):  # the sandboxes' last processes die with the factory, just after it
            for child in self.root.iterdir():
                if child.is_dir():
                    with contextlib.suppress(OSError):
                        child.rmdir()
            with contextlib.suppress(OSError):
                self.root.rmdir()
            if not self.root.exists():
                return
            time.sleep(0.05)


@dataclass(frozen=True)
class Limits:
    """Resource limits of one sandboxed run."""

    cpu_seconds: int = 300
    memory_bytes: int = 8 * 2**30  # address space: torch alone maps a few GiB
    file_bytes: int = 64 * 2**20
    open_files: int = 256
    processes: int = 512

    def rlimits(self) -> dict[str, int]:
        return {
            "RLIMIT_CPU": self.cpu_seconds,
            "RLIMIT_AS": self.memory_bytes,
            "RLIMIT_FSIZE": self.file_bytes,
            "RLIMIT_NOFILE": self.open_files,
            "RLIMIT_NPROC": self.processes,
            "RLIMIT_CORE": 0,
        }


@dataclass
class Outcome:
    returncode: int | None
    output: str
    timed_out: bool
    seconds: float
    protections_off: tuple[str, ...] = field(default_factory=tuple)
    # why the sandbox never ran the command, or lost it (the grader's side, not the submission's):
    # its result is no grade at all ('' when it ran)
    failed_to_start: str = ""


class _CappedReader(threading.Thread):
    """Drain a pipe, keeping the first and last bytes of it and counting the rest."""

    def __init__(self, stream):
        super().__init__(daemon=True)
        self.stream = stream
        self.head = bytearray()
        self.tail: deque[bytes] = deque()
        self.tail_len = 0
        self.total = 0

    def run(self) -> None:
        try:
            while chunk := self.stream.read1(65536):
                self.total += len(chunk)
                room = OUTPUT_HEAD_BYTES - len(self.head)
                if room > 0:
                    self.head += chunk[:room]
                    chunk = chunk[room:]
                if chunk:
                    self.tail.append(chunk)
                    self.tail_len += len(chunk)
                    while self.tail_len - len(self.tail[0]) >= OUTPUT_TAIL_BYTES:
                        self.tail_len -= len(self.tail.popleft())
        except (OSError, ValueError):
            pass

    def text(self) -> str:
        tail = b"".join(self.tail)[-OUTPUT_TAIL_BYTES:]
        dropped = self.total - len(self.head) - len(tail)
        middle = f"\n[... {dropped:,} bytes of output dropped ...]\n" if dropped > 0 else ""
        return bytes(self.head).decode(errors="replace") + middle + tail.decode(errors="replace")


def _keep_paths() -> list[str]:
    """What the sandbox must still see besides the system: the interpreter, the environment, the
    learners' package and this folder (the code that runs a submission)."""
    import course

    candidates = [sys.base_prefix, sys.prefix, str(Path(course.__file__).resolve().parent)]
    candidates.append(str(Path(__file__).resolve().parent))  # the runner, zygote and sandbox_init
    candidates += [p for p in sys.path if p and Path(p).is_dir() and "site-packages" in p]
    resolved = sorted({str(Path(p).resolve()) for p in candidates}, key=len)
    keep: list[str] = []
    for p in resolved:
        top = Path(p).parts[1] if len(Path(p).parts) > 1 else ""
        if top in sandbox_init.SYSTEM or any(p == k or p.startswith(k + "/") for k in keep):
            continue
        keep.append(p)
    return keep


def package_parent() -> str:
    """The folder holding the ``course`` package: on the sandbox's ``sys.path`` however the grader
    found it (an editable install, ``PYTHONPATH``, a plain install)."""
    import course

    return str(Path(course.__file__).resolve().parents[1])


def visible_inside() -> list[str]:
    """Every host path a sandbox shows (read-only) besides its own folder: the allow-list."""
    return sandbox_init.visible(_keep_paths())


def exposed(paths: dict[str, str | Path]) -> list[str]:
    """Which of ``paths`` (``{label: path}``) a sandbox would see: each is a reason not to start."""
    shown = visible_inside()
    out = []
    for label, path in paths.items():
        real = os.path.realpath(path)
        for v in shown:
            if real == v or real.startswith(v.rstrip("/") + "/") or v == "/":
                out.append(f"the {label} ({path}) would be visible inside the sandbox (under {v})")
                break
    return out


@functools.cache
def mode() -> dict:
    """How sandboxes are started here, found by trying (cached for the process)."""
    unshare = shutil.which("unshare")
    is_root = os.geteuid() == 0
    forced = os.environ.get("COURSE_SANDBOX")  # "off" or "userns": for testing those paths
    if forced == "off":  # loud like any other
        return _fallback(is_root)
    flags = ["--mount", "--pid", "--fork", "--kill-child", "--net", "--ipc", "--uts"]
    attempts = []
    if unshare:
        if is_root and forced != "userns":
            attempts.append(([unshare, *flags], True))
        attempts.append(([unshare, "--user", "--map-root-user", *flags], False))
    for prefix, as_root in attempts:
        with tempfile.TemporaryDirectory(prefix="sandbox-probe-") as tmp:
            os.chmod(tmp, 0o755)
            config = _config(
                tmp,
                [os.path.abspath(sys.executable), "-c", _PROBE],
                {},
                Limits(),
                mounts=True,
                drop=as_root,
            )
            try:
                proc = subprocess.run(
                    [*prefix, os.path.abspath(sys.executable), "-I", str(INIT)],
                    input=json.dumps(config) + "\n",
                    capture_output=True,
                    text=True,
                    timeout=60,
                )
            except (OSError, subprocess.TimeoutExpired):
                continue
            if proc.returncode == 0:
                uid, confined = ((proc.stdout.strip().splitlines() or [""])[-1].split() + ["", ""])[
                    :2
                ]
                off = []
                if not as_root or uid != "65534":  # as root of a user namespace: the grader's user
                    off.append("unprivileged-user")
                if confined != "confined":  # it could unmount, or make a user namespace
                    off.append("hidden-files")
                if is_root and not as_root:  # the host's root: exempt from RLIMIT_NPROC
                    off.append("process-limit")
                return {"prefix": prefix, "mounts": True, "drop": as_root, "off": off}
    return _fallback(is_root)


# What a probe sandbox reports: its uid, and whether it can neither unmount nor make a user
# namespace.
_PROBE = (
    "import ctypes, os\n"
    "libc = ctypes.CDLL(None, use_errno=True)\n"
    "free = libc.umount2(b'/tmp', 2) == 0 or libc.unshare(0x10000000) == 0\n"
    "print(os.getuid(), 'free' if free else 'confined')\n"
)


def _fallback(is_root: bool) -> dict:
    """No namespaces: limits only, and user nobody where nobody can run this Python."""
    off = ["pid-namespace", "hidden-files", "no-network"]
    drop = False
    if is_root:
        with tempfile.TemporaryDirectory(prefix="sandbox-probe-") as tmp:
            os.chmod(tmp, 0o755)
            config = _config(
                tmp,
                [os.path.abspath(sys.executable), "-c", "pass"],
                {},
                Limits(),
                mounts=False,
                drop=True,
            )
            probe = subprocess.run(
                [os.path.abspath(sys.executable), "-I", str(INIT)],
                input=(json.dumps(config) + "\n").encode(),
                capture_output=True,
                timeout=60,
                env=_BARE_ENV,
            )
            drop = probe.returncode == 0
    if not drop:
        off.append("unprivileged-user")
    return {"prefix": [], "mounts": False, "drop": drop, "off": off}


def protections_off() -> tuple[str, ...]:
    return tuple(mode()["off"])


def describe() -> str:
    off = protections_off()
    if not off:
        return "sandbox: all protections on (" + ", ".join(ALL) + ")"
    return (
        "WARNING: sandbox protections OFF on this machine: " + ", ".join(off) + ". Submissions "
        "then run with fewer barriers (see README, 'For instructors'); grade untrusted work on "
        "Linux as root or with user namespaces enabled."
    )


def _config(
    workdir: str,
    argv: list[str],
    env: dict,
    limits: Limits,
    *,
    mounts: bool,
    drop: bool,
    uid: int = NOBODY,
) -> dict:
    return {
        "workdir": workdir,
        "argv": argv,
        "env": env,
        "limits": limits.rlimits(),
        "mounts": mounts,
        "new_proc": mounts,
        "keep": _keep_paths() if mounts else [],
        "uid": uid if drop else None,
        "gid": uid if drop else None,
        "drop_caps": mounts and not drop,  # root of a user namespace: keeps no capability
    }


def _kill_leftovers(root_pid: int, token: str) -> None:
    """Without a PID namespace: kill the process group, the descendants and the token's carriers."""
    import psutil

    victims: dict[int, psutil.Process] = {}
    with contextlib.suppress(psutil.Error):
        root = psutil.Process(root_pid)
        victims[root.pid] = root
        victims.update({p.pid: p for p in root.children(recursive=True)})
    for proc in psutil.process_iter():
        with contextlib.suppress(psutil.Error):
            if proc.pid != os.getpid() and proc.environ().get(_TOKEN_VAR) == token:
                victims[proc.pid] = proc
    with contextlib.suppress(OSError):
        os.killpg(root_pid, signal.SIGKILL)
    for proc in victims.values():
        with contextlib.suppress(psutil.Error):
            proc.kill()
    psutil.wait_procs([p for pid, p in victims.items() if pid != root_pid], timeout=5)


def _terminate_init(proc: subprocess.Popen) -> None:
    """Ask the sandbox's first process (under ``unshare``) to stop: it kills the submission and
    copies its results back to the grader's folder; after 5 s it is killed like the rest."""
    import psutil

    with contextlib.suppress(psutil.Error):
        for child in psutil.Process(proc.pid).children():
            child.send_signal(signal.SIGTERM)
    with contextlib.suppress(subprocess.TimeoutExpired):
        proc.wait(timeout=5)


def run(
    workdir: str | Path,
    argv: list[str],
    *,
    env: dict[str, str],
    timeout_seconds: float,
    limits: Limits = Limits(),
    uid: int = NOBODY,
) -> Outcome:
    """Run ``argv`` in ``workdir`` inside the sandbox; never raises for what the command does.

    Inside, the folder is at ``/tmp/submission`` (when files are hidden) and is the working
    directory; it must be readable and writable by ``nobody`` when rights are dropped.
    """
    m = mode()
    token = uuid.uuid4().hex
    env = {**env, _TOKEN_VAR: token}
    config = _config(str(workdir), argv, env, limits, mounts=m["mounts"], drop=m["drop"], uid=uid)
    # The config goes through a pipe, not the command line (which /proc/1/cmdline shows inside).
    cmd = [*m["prefix"], os.path.abspath(sys.executable), "-I", str(INIT)]
    start = time.monotonic()
    proc = subprocess.Popen(
        cmd,
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        start_new_session=True,
        cwd="/",
        env=_BARE_ENV,
    )
    with contextlib.suppress(OSError):
        proc.stdin.write((json.dumps(config) + "\n").encode())
        proc.stdin.close()
    reader = _CappedReader(proc.stdout)
    reader.start()
    timed_out = False
    try:
        proc.wait(timeout=timeout_seconds)
    except subprocess.TimeoutExpired:
        timed_out = True
        if m["mounts"]:  # the sandbox's first process copies back what was written, then ends it
            _terminate_init(proc)
    with contextlib.suppress(OSError):
        os.killpg(proc.pid, signal.SIGKILL)  # with a PID namespace, this ends all of it
    if not m["prefix"]:
        _kill_leftovers(proc.pid, token)
    proc.wait()
    reader.join(timeout=10)
    proc.stdout.close()
    return Outcome(
        returncode=proc.returncode,
        output=reader.text(),
        timed_out=timed_out,
        seconds=time.monotonic() - start,
        protections_off=tuple(m["off"]),
    )


def read_capped(path: Path) -> str:
    """Head and tail of an output file the submission wrote (no symlinks, no FIFOs)."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK)
    except OSError as e:
        return f"[no output: {e.strerror}]"
    try:
        import stat

        size = os.fstat(fd).st_size
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            return "[output is not a regular file]"
        head = os.pread(fd, OUTPUT_HEAD_BYTES, 0)
        start = max(len(head), size - OUTPUT_TAIL_BYTES)
        tail = os.pread(fd, OUTPUT_TAIL_BYTES, start) if size > len(head) else b""
    finally:
        os.close(fd)
    dropped = size - len(head) - len(tail)
    middle = f"\n[... {dropped:,} bytes of output dropped ...]\n" if dropped > 0 else ""
    return head.decode(errors="replace") + middle + tail.decode(errors="replace")


START_SECONDS = 60  # a sandbox the factory has not started by then never will


def slot_memory_bytes(total_bytes: int, jobs: int) -> int:
    """The memory cgroup limit of one sandbox slot: a third of the machine's memory shared by the
    ``jobs`` slots that run at once (so all of them together never hold more than that third),
    at most :attr:`Limits.memory_bytes`."""
    return min(Limits().memory_bytes, total_bytes // 3 // max(1, jobs))


class Zygote:
    """A warm sandbox factory (:mod:`teaching.grading.zygote`): imports once, forks one
    sandbox a run.

    Needs what :func:`mode` found for mounts (root, or unprivileged user namespaces). ``preload``:
    modules to import up front; ``threads``: OpenMP/MKL threads of each sandbox (set before torch
    is imported). Use as a context manager; :meth:`run` is safe from several threads.
    """

    def __init__(self, preload: list[str], *, threads: int = 1, jobs: int = 1):
        m = mode()
        if not m["mounts"]:
            raise RuntimeError("the sandbox factory needs mount namespaces")
        self.drop, self.threads = m["drop"], threads
        clear_leftovers()
        self.root = Path(tempfile.mkdtemp(prefix=f"{LEFTOVER_PREFIX}{os.getpid()}-"))
        total = os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES")
        self.cgroups = _Cgroups(slot_memory_bytes(total, jobs), enabled=self.drop)
        config = self._factory_config(preload, threads)
        prefix = [p for p in m["prefix"] if p != "--pid"]
        self._log = tempfile.TemporaryFile()  # noqa: SIM115 - closed in close()
        self.proc = subprocess.Popen(
            [
                *prefix,
                os.path.abspath(sys.executable),
                "-I",
                "-B",
                str(INIT.with_name("zygote.py")),
            ],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=self._log,
            start_new_session=True,
            cwd="/",
            text=True,
            env=_BARE_ENV,
        )
        self.proc.stdin.write(json.dumps(config) + "\n")  # not on the command line: /proc shows it
        self.proc.stdin.flush()
        first = self.proc.stdout.readline()
        try:
            hello = json.loads(first)
        except ValueError:
            hello = {}
        if not hello.get("ready"):
            self._log.seek(0)
            detail = self._log.read().decode(errors="replace")[-2000:]
            self.close()
            raise RuntimeError(f"the sandbox factory did not start: {detail}")
        self.preload_errors = hello.get("errors", [])
        self._lock = threading.Lock()
        self._waiting: dict[str, dict] = {}
        threading.Thread(target=self._listen, daemon=True).start()

    def _factory_config(self, preload: list[str], threads: int) -> dict:
        """What the factory is told on its stdin: its mounts (the sandboxes' folder, the slots'
        cgroups), the modules to preload and the environment they are imported with."""
        config = _config(str(self.root), [], {}, Limits(), mounts=True, drop=False)
        config.update(
            binds={
                str(self.root): "/.sandboxes",
                **({str(self.cgroups.root): "/.cgroups"} if self.cgroups.root else {}),
            },
            new_proc=False,  # no PID namespace of its own: each sandbox mounts its /proc
            preload=preload,
            sys_path=[package_parent()],
            runner=str(RUNNER),
            preload_env={
                "OMP_NUM_THREADS": str(threads),
                "MKL_NUM_THREADS": str(threads),
                "MPLBACKEND": "Agg",
                "HOME": "/tmp",
                "MPLCONFIGDIR": "/tmp/.mpl-zygote",
                "PYTHONDONTWRITEBYTECODE": "1",
            },
        )
        return config

    def _listen(self) -> None:
        for line in self.proc.stdout:
            try:
                message = json.loads(line)
            except ValueError:
                continue
            slot = self._waiting.get(message.get("id"))
            if slot is None:
                continue
            if "pid" in message:
                slot["pid"] = message["pid"]
                slot["started"].set()
            if "status" in message:
                slot["status"] = message["status"]
                slot["started"].set()
                slot["done"].set()
        for slot in list(self._waiting.values()):  # the factory died: release every waiter
            slot["started"].set()
            slot["done"].set()

    def new_dir(self) -> Path:
        path = self.root / uuid.uuid4().hex
        path.mkdir()
        return path

    def inside(self, workdir: Path) -> str:
        return "/tmp/submission"

    def run(
        self,
        workdir: Path,
        *,
        env: dict[str, str],
        timeout_seconds: float,
        limits: Limits = Limits(),
        uid: int = NOBODY,
    ) -> Outcome:
        ident = workdir.name
        slot = {"started": threading.Event(), "done": threading.Event()}
        self._waiting[ident] = slot
        request = {
            "id": ident,
            "dir": ident,
            "env": env,
            "limits": limits.rlimits(),
            "uid": uid if self.drop else None,
            "gid": uid if self.drop else None,
            "drop_caps": not self.drop,
            "cgroup": self.cgroups.slot(uid),
            "cpus": slot_cpus(uid, self.threads),
        }
        start = time.monotonic()
        with self._lock:
            self.proc.stdin.write(json.dumps(request) + "\n")
            self.proc.stdin.flush()
        failed = ""
        if not slot["started"].wait(START_SECONDS):
            failed = f"the sandbox did not start within {START_SECONDS} s"
        elif "pid" not in slot:  # an answer without a process, or the factory ended
            failed = "the sandbox factory could not start a sandbox for it"
        timed_out = False
        if not failed:
            timed_out = not slot["done"].wait(timeout_seconds)
        if timed_out and "pid" in slot:
            with contextlib.suppress(OSError):
                os.kill(slot["pid"], signal.SIGKILL)  # the holder: its PID namespace dies with it
            slot["done"].wait(10)
        if not failed and not timed_out and "status" not in slot:
            failed = "the sandbox factory ended while the submission ran"
        self._waiting.pop(ident, None)
        return Outcome(
            returncode=slot.get("status"),
            output=read_capped(workdir / "output.txt"),
            timed_out=timed_out,
            seconds=time.monotonic() - start,
            protections_off=protections_off(),
            failed_to_start=failed,
        )

    def close(self) -> None:
        """End the factory and every sandbox it started, and release every :meth:`run` waiting on
        one (a thread never waits for a factory that is gone: Ctrl-C ends a run at once)."""
        with contextlib.suppress(OSError, ValueError):
            self.proc.stdin.close()
        with contextlib.suppress(OSError):
            os.killpg(self.proc.pid, signal.SIGKILL)
        waiting = list(getattr(self, "_waiting", {}).values())
        for slot in waiting:
            if "pid" in slot:
                with contextlib.suppress(OSError):
                    os.kill(slot["pid"], signal.SIGKILL)  # the holder: its namespace dies with it
        self.cgroups.kill()
        self.proc.wait()
        for slot in waiting:
            slot["started"].set()
            slot["done"].set()
        shutil.rmtree(self.root, ignore_errors=True)
        self.cgroups.close()
        self._log.close()

    def __enter__(self) -> Zygote:
        return self

    def __exit__(self, *exc) -> None:
        self.close()


def start_factory(assignments, threads: int = 1, jobs: int = 1) -> Zygote | None:
    """A warm sandbox factory preloading what these sets import, or None where there is none
    (then each run starts a sandbox of its own, as :func:`run`: slower, same protections)."""
    from teaching.grading.spec import imported_modules

    if not mode()["mounts"]:
        return None
    preload = ["IPython.core.interactiveshell", "course.selfcheck.answers"]
    for a in assignments:
        preload += imported_modules(a.run_cells)
    try:
        return Zygote(list(dict.fromkeys(preload)), threads=threads, jobs=jobs)
    except RuntimeError as e:
        print(f"WARNING: {e}; starting a fresh sandbox per run instead", file=sys.stderr)
        return None
