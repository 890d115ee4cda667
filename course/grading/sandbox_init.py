"""First process inside the sandbox's namespaces: hide files, drop rights, run the command.

Run by :mod:`course.grading.sandbox` as ``python sandbox_init.py CONFIG_JSON`` (a file, not ``-m``,
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
    os.mkdir(f"{STAGE}/work")
    _mount(config["workdir"], f"{STAGE}/work", None, MS_BIND)
    for path in config["hide_dirs"]:
        if path != STAGE:
            _mount("tmpfs", path, "tmpfs", MS_NOSUID | MS_NODEV, "mode=0755,size=64m")
    for path in config["hide_files"]:
        _mount("/dev/null", path, None, MS_BIND)
    for i, path in enumerate(keep):
        os.makedirs(path, exist_ok=True)
        _bind_ro(f"{STAGE}/k{i}", path)
    os.makedirs(INSIDE, exist_ok=True)
    _mount(f"{STAGE}/work", INSIDE, None, MS_BIND)
    _umount(STAGE)
    if config.get("new_proc"):
        _mount("proc", "/proc", "proc", MS_NOSUID | MS_NODEV)


def limit_and_drop(config: dict) -> None:
    """Step 4, in the child: session, limits, user nobody, no new privileges."""
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
    pid = os.fork()
    if pid == 0:
        try:
            limit_and_drop(config)
            os.chdir(cwd)
            os.execve(config["argv"][0], config["argv"], config["env"])
        except OSError as e:
            print(f"sandbox: cannot start the submission: {e}", file=sys.stderr)
            os._exit(97)
    while True:
        try:
            done, status = os.waitpid(-1, 0)
        except ChildProcessError:
            return 98
        if done == pid:
            return os.waitstatus_to_exitcode(status) & 0xFF


if __name__ == "__main__":
    sys.exit(main(sys.argv[1]))
