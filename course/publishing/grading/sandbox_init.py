"""First process inside the sandbox's namespaces: hide files, drop rights, run the command.

Run by :mod:`course.publishing.grading.sandbox` as ``python sandbox_init.py CONFIG_JSON`` (a file, not ``-m``,
so that it imports nothing from ``course``), as root inside fresh mount, PID, network, IPC and UTS
namespaces (or as far as the platform allows). It

1. makes every mount private, then mounts an empty tmpfs over every top-level directory that is not
   part of the operating system (``/root``, ``/home``, ``/tmp``, ``/work``, ``/mnt``, ...) and an empty
   file over top-level files, so that solutions, answer keys, other submissions and the gradebook
   are not there to read;
2. mounts back, read-only, only what Python needs (the interpreter, the virtual environment, the
   ``course`` package) at their usual paths, and the submission's folder at ``/tmp/submission``;
3. mounts a fresh ``/proc`` for the new PID namespace;
4. forks: the child starts its own session, sets resource limits (CPU time, address space, file
   size, open files, processes, no core dumps), drops to user ``nobody`` (no groups, no new
   privileges) and execs the command; this process, PID 1 of the namespace, waits for it and exits
   with its status, and the kernel then kills everything else the submission started.

Any step the config marks as required that fails ends the run with status 97 before the command runs.
"""

from __future__ import annotations

import contextlib
import ctypes
import json
import os
import resource
import sys

MS_RDONLY, MS_NOSUID, MS_NODEV, MS_REMOUNT, MS_BIND, MS_REC, MS_PRIVATE = (
    1, 2, 4, 32, 4096, 16384, 1 << 18
)  # fmt: skip
MNT_DETACH = 2
PR_SET_NO_NEW_PRIVS = 38
STAGE = "/mnt"
SCRATCH = ("/tmp", "/var/tmp", "/dev/shm")
INSIDE = "/tmp/submission"

_libc = ctypes.CDLL(None, use_errno=True)


def _mount(source: str, target: str, fstype: str | None, flags: int, data: str | None = None):
    rc = _libc.mount(
        source.encode(), target.encode(), fstype.encode() if fstype else None, flags,
        data.encode() if data else None,
    )  # fmt: skip
    if rc != 0:
        err = ctypes.get_errno()
        raise OSError(err, f"mount {source} on {target}: {os.strerror(err)}")


def _umount(target: str) -> None:
    if _libc.umount2(target.encode(), MNT_DETACH) != 0:
        err = ctypes.get_errno()
        raise OSError(err, f"umount {target}: {os.strerror(err)}")


def _bind_ro(source: str, target: str) -> None:
    _mount(source, target, None, MS_BIND | MS_REC)
    _mount("none", target, None, MS_REMOUNT | MS_BIND | MS_RDONLY | MS_NOSUID | MS_NODEV)


def hide_files(config: dict) -> None:
    """Steps 1-3 of the module docstring."""
    _mount("none", "/", None, MS_REC | MS_PRIVATE)
    _mount("tmpfs", STAGE, "tmpfs", MS_NOSUID | MS_NODEV, "mode=0755,size=1m")
    keep = config["keep"]
    for i, path in enumerate(keep):
        os.mkdir(f"{STAGE}/k{i}")
        _mount(path, f"{STAGE}/k{i}", None, MS_BIND | MS_REC)
    binds = config.get("binds") or {config["workdir"]: INSIDE}
    for i, source in enumerate(binds):
        os.mkdir(f"{STAGE}/b{i}")
        _mount(source, f"{STAGE}/b{i}", None, MS_BIND)
    for path in config["hide_dirs"]:
        if path != STAGE:
            mode = "1777" if path in SCRATCH else "0755"  # scratch space, private to this sandbox
            _mount("tmpfs", path, "tmpfs", MS_NOSUID | MS_NODEV, f"mode={mode},size=256m")
    for path in config["hide_files"]:
        _mount("/dev/null", path, None, MS_BIND)
    for i, path in enumerate(keep):
        os.makedirs(path, exist_ok=True)
        _bind_ro(f"{STAGE}/k{i}", path)
    for i, target in enumerate(binds.values()):
        os.makedirs(target, exist_ok=True)
        _mount(f"{STAGE}/b{i}", target, None, MS_BIND)
    _umount(STAGE)
    if config.get("new_proc"):
        _mount("proc", "/proc", "proc", MS_NOSUID | MS_NODEV)


def limit_and_drop(config: dict, *, new_session: bool = True) -> None:
    """Step 4, in the child: session, limits, user nobody, no new privileges."""
    if new_session:
        os.setsid()
    for name, value in config["limits"].items():
        resource.setrlimit(getattr(resource, name), (value, value))
    if config.get("uid") is not None:
        os.setgroups([])
        os.setgid(config["gid"])
        os.setuid(config["uid"])
    _libc.prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0)


def main(raw: str) -> int:
    config = json.loads(raw)
    if config.get("mounts"):
        try:
            hide_files(config)
        except OSError as e:
            print(f"sandbox: cannot hide files: {e}", file=sys.stderr)
            return 97
    cwd = INSIDE if config.get("mounts") else config["workdir"]

    def spawn() -> int:
        pid = os.fork()
        if pid == 0:
            try:
                limit_and_drop(config)
                os.chdir(cwd)
                os.execve(config["argv"][0], config["argv"], config["env"])
            except OSError as e:
                print(f"sandbox: cannot start the submission: {e}", file=sys.stderr)
            os._exit(97)
        return pid

    return supervise(spawn, cwd)


GRACE_S = 5.0  # beyond a cell's own limit before it is killed from outside


def _read_small_json(path: str):
    """A small JSON file the submission may have tampered with: no symlink, no FIFO, bounded."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK)
    except OSError:
        return None
    try:
        import stat

        if not stat.S_ISREG(os.fstat(fd).st_mode):
            return None
        return json.loads(os.read(fd, 65536))
    except (OSError, ValueError):
        return None
    finally:
        os.close(fd)


def _write_fresh(path: str, data: dict) -> None:
    """Replace a file in the submission's folder without following anything it put there."""
    with contextlib.suppress(FileNotFoundError):
        os.unlink(path)
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW, 0o644)
    with os.fdopen(fd, "w") as f:
        json.dump(data, f)


def _kill_all_but_me(worker: int) -> None:
    import signal

    if os.getpid() == 1:  # PID 1 of the sandbox's own namespace: everything else is the submission
        for entry in os.listdir("/proc"):
            if entry.isdigit() and int(entry) != 1:
                with contextlib.suppress(OSError):
                    os.kill(int(entry), signal.SIGKILL)
    else:
        for target in (
            lambda: os.killpg(worker, signal.SIGKILL),
            lambda: os.kill(worker, signal.SIGKILL),
        ):
            with contextlib.suppress(OSError):
                target()


def supervise(spawn, workdir: str) -> int:
    """Run the worker; when a cell overruns its limit by ``GRACE_S`` (its own alarm failed: stuck in C
    code, or the alarm was caught), kill the submission and run it again without that cell.

    Returns the worker's exit status. The request is read once, before any submission code runs.
    """
    import time

    request_path = os.path.join(workdir, "request.json")
    try:
        with open(request_path) as f:  # before any submission code has run
            request = json.load(f)
    except (OSError, ValueError):
        request = None
    if not isinstance(request, dict):  # not a runner request: just wait for the command
        worker = spawn()
        while True:
            try:
                done, status = os.waitpid(-1, 0)
            except ChildProcessError:
                return 98
            if done == worker:
                return os.waitstatus_to_exitcode(status) & 0xFF
    limit = float(request.get("cell_timeout", 60)) + GRACE_S
    progress_path = os.path.join(workdir, request.setdefault("progress", "progress.json"))
    skips: list[int] = []
    while True:
        worker = spawn()
        overran = None
        while overran is None:
            try:
                done, status = os.waitpid(-1, os.WNOHANG)
            except ChildProcessError:
                return 98
            if done == worker:
                return os.waitstatus_to_exitcode(status) & 0xFF
            if done:
                continue  # an orphan of the submission: reaped
            progress = _read_small_json(progress_path)
            if isinstance(progress, dict) and isinstance(progress.get("cell"), int):
                started = progress.get("started")
                cell = progress["cell"]
                if (
                    isinstance(started, int | float)
                    and time.time() - started > limit
                    and cell not in skips
                ):
                    overran = cell
            time.sleep(0.2)
        skips.append(overran)
        _kill_all_but_me(worker)
        while True:  # reap what was killed
            try:
                if os.waitpid(-1, 0)[0] == worker:
                    break
            except ChildProcessError:
                break
        request["skip"] = skips
        _write_fresh(request_path, request)
        with contextlib.suppress(OSError):
            os.unlink(progress_path)


if __name__ == "__main__":
    sys.exit(main(sys.argv[1]))
