"""First process inside the sandbox's namespaces: a root built from an allow-list, rights dropped,
the command.

Run by :mod:`teaching.grading.sandbox` as ``python sandbox_init.py`` (a file, not ``-m``,
so that it imports nothing from ``course``) with its config as the first line on stdin (never on the
command line, which ``/proc/1/cmdline`` shows inside), as root inside fresh mount, PID, network, IPC
and UTS namespaces (or as far as the platform allows). It

1. makes every mount private and assembles a new root on a tmpfs, in a folder of this mount
   namespace only (:data:`BUILD_AT`): read-only binds of the system's program folders
   (:data:`SYSTEM`), a few files of ``/etc`` (:data:`ETC`), harmless devices, and what Python needs
   (the interpreter, the environment, the ``course`` package) at their usual paths; a private,
   size-limited ``/tmp`` and ``/dev/shm``; the submission's folder at ``/tmp/submission``, a tmpfs
   of its own (:data:`FOLDER_BYTES`, :data:`FOLDER_INODES`) holding a copy of the grader's request,
   whose results are copied back to the grader's folder when the run ends (:func:`copy_out`).
   Nothing else of the host is there: not ``/var``, ``/home``, ``/mnt``, the rest of ``/etc``, the
   checkout, the submissions folder or the output, wherever they live;
2. mounts a fresh ``/proc`` for the new PID namespace, switches to the new root (``pivot_root``),
   detaches the old one (so there is nothing under any mount to uncover) and makes ``/`` read-only;
3. forks: the child starts its own session, sets resource limits (CPU time, address space, file
   size, open files, processes, no core dumps), drops to user ``nobody`` (no groups, no new
   privileges; in a user namespace, every capability is dropped instead) and execs the command;
   this process, PID 1 of the namespace, waits for it and exits with its status, and the kernel then
   kills everything else the submission started.

Any step the config marks as required that fails ends the run with status 97 before the command
runs.
"""

from __future__ import annotations

import contextlib
import ctypes
import json
import os
import resource
import sys

MS_RDONLY, MS_NOSUID, MS_NODEV, MS_NOEXEC, MS_REMOUNT, MS_BIND, MS_REC, MS_PRIVATE = (
    1,
    2,
    4,
    8,
    32,
    4096,
    16384,
    1 << 18,
)
MS_NOATIME, MS_NODIRATIME, MS_RELATIME = 1024, 2048, 1 << 21
MNT_DETACH = 2
PR_SET_NO_NEW_PRIVS = 38
# The new root's contents: the operating system's program folders, a few files of /etc that the
# loader and Python read, harmless devices, a private /tmp and /dev/shm, /proc. Nothing else.
SYSTEM = ("usr", "bin", "sbin", "lib", "lib32", "lib64", "libx32")
ETC = (
    "ld.so.cache",
    "ld.so.conf",
    "ld.so.conf.d",
    "localtime",
    "nsswitch.conf",
    "passwd",
    "group",
    "host.conf",
    "mime.types",
)
DEVICES = ("null", "zero", "full", "random", "urandom")
# Where the new root is assembled, in this process's own mount namespace only: the first of these
# that no path to keep lies under. Once the root is switched the old one is detached: no way back.
BUILD_AT = ("/mnt", "/media", "/srv", "/opt", "/boot", "/run", "/home", "/root", "/var")
STAGE = "/.stage"  # an empty folder in the new root, where a forked sandbox assembles its /tmp
SANDBOXES = "/.sandboxes"  # the factory's folder of sandboxes (each sandbox sees only its own)
SCRATCH_BYTES = 256 * 2**20  # each of /tmp and /dev/shm
SCRATCH_INODES = 16_384  # files and folders in each of them
FOLDER_BYTES = (
    256 * 2**20
)  # the submission's own folder: a tmpfs of its own, never the grader's disk
FOLDER_INODES = 4_096
INSIDE = "/tmp/submission"
WORK = "/.work"  # where the factory mounts each sandbox's folder (a size-limited tmpfs) to copy out
RESULTS = ("results.json", "output.txt")  # what is copied back to the grader from the folder
FULL = "folder-full"  # left in the grader's folder when the submission's folder was full
RESULT_BYTES = {"results.json": 32 * 2**20, "output.txt": 40 * 1024}
_SYS_PIVOT_ROOT = {"x86_64": 155, "aarch64": 41}

_libc = ctypes.CDLL(None, use_errno=True)


def _mount(source: str, target: str, fstype: str | None, flags: int, data: str | None = None):
    rc = _libc.mount(
        source.encode(),
        target.encode(),
        fstype.encode() if fstype else None,
        flags,
        data.encode() if data else None,
    )
    if rc != 0:
        err = ctypes.get_errno()
        raise OSError(err, f"mount {source} on {target}: {os.strerror(err)}")


def _umount(target: str) -> None:
    if _libc.umount2(target.encode(), MNT_DETACH) != 0:
        err = ctypes.get_errno()
        raise OSError(err, f"umount {target}: {os.strerror(err)}")


def _kept_flags(path: str) -> int:
    """The flags a read-only remount must keep (a user namespace may not clear them)."""
    f = os.statvfs(path).f_flag
    pairs = (
        (os.ST_NOEXEC, MS_NOEXEC),
        (os.ST_NOATIME, MS_NOATIME),
        (os.ST_NODIRATIME, MS_NODIRATIME),
        (getattr(os, "ST_RELATIME", 4096), MS_RELATIME),
    )
    return sum(ms for st, ms in pairs if f & st)


def _bind_ro(source: str, target: str) -> None:
    _mount(source, target, None, MS_BIND | MS_REC)
    flags = MS_REMOUNT | MS_BIND | MS_RDONLY | MS_NOSUID | MS_NODEV | _kept_flags(target)
    _mount("none", target, None, flags)


def _placeholder(source: str, target: str) -> None:
    """An empty folder or file at ``target`` to mount ``source`` on."""
    if os.path.isdir(source):
        os.makedirs(target, exist_ok=True)
    else:
        os.makedirs(os.path.dirname(target), exist_ok=True)
        open(target, "a").close()  # noqa: SIM115


def _pivot(new_root: str) -> None:
    import platform

    os.chdir(new_root)
    number = _SYS_PIVOT_ROOT.get(platform.machine())
    if number is None or _libc.syscall(number, b".", b".") != 0:
        err = ctypes.get_errno() if number else 38
        raise OSError(err, f"pivot_root: {os.strerror(err)}")
    _umount(".")  # the old root, stacked on the new one by pivot_root(".", "."), goes
    os.chdir("/")


def build_at(keep: list[str]) -> str:
    for place in BUILD_AT:
        if (
            os.path.isdir(place)
            and not os.path.islink(place)
            and not any(k == place or k.startswith(place + "/") for k in keep)
        ):
            return place
    raise OSError(2, "no folder to build the sandbox's root in")


def visible(keep: list[str]) -> list[str]:
    """Every host path the sandbox's root shows (read-only), besides its own folders."""
    paths = [os.path.realpath("/" + d) for d in SYSTEM if os.path.isdir("/" + d)]
    paths += [os.path.realpath("/etc/" + e) for e in ETC if os.path.exists("/etc/" + e)]
    return sorted(set(paths) | set(keep))


def scratch_options(mode: str = "1777") -> str:
    return f"mode={mode},size={SCRATCH_BYTES},nr_inodes={SCRATCH_INODES}"


def mount_folder(target: str, uid: int | None) -> None:
    """The submission's folder: a tmpfs of its own, at most :data:`FOLDER_BYTES` and
    :data:`FOLDER_INODES` files, owned by the user it runs as (what it writes never reaches the
    grader's disk, and a neighbour's folder is another filesystem)."""
    _mount(
        "tmpfs",
        target,
        "tmpfs",
        MS_NOSUID | MS_NODEV,
        f"mode=0755,size={FOLDER_BYTES},nr_inodes={FOLDER_INODES}",
    )
    if uid is not None:
        os.chown(target, uid, uid)


def copy_in(source: str, target: str, uid: int | None) -> None:
    """The grader's request (its only file) into the folder."""
    try:
        with open(os.path.join(source, "request.json"), "rb") as f:
            data = f.read()
    except FileNotFoundError:  # not a runner's run (a probe)
        return
    fd = os.open(os.path.join(target, "request.json"), os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o644)
    with os.fdopen(fd, "wb") as f:
        f.write(data)
    if uid is not None:
        os.chown(os.path.join(target, "request.json"), uid, uid)


def copy_out(folder: str, dest_fd: int) -> None:
    """What the grader reads, from the submission's folder to the grader's (an open folder): regular
    files only, never through a link, bounded (the output's head and tail)."""
    import stat

    with contextlib.suppress(OSError):
        room = os.statvfs(folder)
        if room.f_bavail * room.f_frsize < 2**20 or room.f_favail < 8:  # (nearly) full: say so
            fd = os.open(
                FULL, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW, 0o644, dir_fd=dest_fd
            )
            os.close(fd)
    for name in RESULTS:
        try:
            fd = os.open(os.path.join(folder, name), os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK)
        except OSError:
            continue
        try:
            info = os.fstat(fd)
            if not stat.S_ISREG(info.st_mode):
                continue
            limit = RESULT_BYTES[name]
            if name == "output.txt" and info.st_size > limit:
                head = os.pread(fd, 8 * 1024, 0)
                tail = os.pread(fd, limit - len(head), info.st_size - (limit - len(head)))
                note = (
                    f"\n[... {info.st_size - len(head) - len(tail):,} bytes of output "
                    "dropped ...]\n"
                )
                data = head + note.encode() + tail
            elif info.st_size > limit:
                continue
            else:
                data = os.pread(fd, limit + 1, 0)
        finally:
            os.close(fd)
        with contextlib.suppress(FileNotFoundError):
            os.unlink(name, dir_fd=dest_fd)
        out = os.open(
            name, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW, 0o644, dir_fd=dest_fd
        )
        with os.fdopen(out, "wb") as f:
            f.write(data)


def hide_files(config: dict) -> None:
    """Steps 1-3 of the module docstring: a new root holding only what is on the allow-list."""
    _mount("none", "/", None, MS_REC | MS_PRIVATE)
    keep = sorted(config["keep"], key=len)
    binds = config.get("binds") or {config["workdir"]: INSIDE}
    new = build_at(keep + list(binds))
    _mount("tmpfs", new, "tmpfs", MS_NOSUID | MS_NODEV, "mode=0755,size=16m")
    for name in SYSTEM:
        host = "/" + name
        if os.path.islink(host):
            os.symlink(os.readlink(host), new + host)
        elif os.path.isdir(host):
            os.mkdir(new + host)
            _bind_ro(host, new + host)
    os.mkdir(new + "/etc")
    for name in ETC:
        host = os.path.realpath("/etc/" + name)
        if os.path.exists(host):
            _placeholder(host, f"{new}/etc/{name}")
            _bind_ro(host, f"{new}/etc/{name}")
    os.mkdir(new + "/dev")
    _mount("tmpfs", new + "/dev", "tmpfs", MS_NOSUID | MS_NOEXEC, "mode=0755,size=64k")
    for name in DEVICES:
        if os.path.exists("/dev/" + name):
            open(f"{new}/dev/{name}", "a").close()  # noqa: SIM115
            _mount("/dev/" + name, f"{new}/dev/{name}", None, MS_BIND)
    for name, target in (
        ("fd", "/proc/self/fd"),
        ("stdin", "/proc/self/fd/0"),
        ("stdout", "/proc/self/fd/1"),
        ("stderr", "/proc/self/fd/2"),
    ):
        os.symlink(target, f"{new}/dev/{name}")
    os.mkdir(new + "/dev/shm")
    _mount("tmpfs", new + "/dev/shm", "tmpfs", MS_NOSUID | MS_NODEV, scratch_options())
    os.mkdir(new + "/tmp")
    _mount("tmpfs", new + "/tmp", "tmpfs", MS_NOSUID | MS_NODEV, scratch_options())
    for path in keep:
        _placeholder(path, new + path)
        _bind_ro(path, new + path)
    for source, target in binds.items():
        os.makedirs(new + target, exist_ok=True)
        if target == INSIDE:  # the submission's folder: a size-limited tmpfs, filled from source
            mount_folder(new + target, config.get("uid"))
            copy_in(source, new + target, config.get("uid"))
        else:
            _mount(source, new + target, None, MS_BIND)
    os.mkdir(new + "/proc")
    if config.get("new_proc"):  # this PID namespace's own, mounted while the host's is visible
        _mount("proc", new + "/proc", "proc", MS_NOSUID | MS_NODEV | MS_NOEXEC)
    else:  # the factory (no PID namespace of its own): each sandbox mounts its own over it
        _mount("/proc", new + "/proc", None, MS_BIND | MS_REC)
    os.mkdir(new + STAGE, 0o700)
    os.mkdir(new + WORK, 0o700)
    _pivot(new)
    _mount("none", "/", None, MS_REMOUNT | MS_BIND | MS_RDONLY | MS_NOSUID | MS_NODEV)


_SECCOMP = {  # machine: (audit arch, clone, unshare, setns, clone3)
    "x86_64": (0xC000003E, 56, 272, 308, 435),
    "aarch64": (0xC00000B7, 220, 97, 268, 435),
}
_REFUSED_CALLS = {  # machine: add_key, request_key, keyctl, sched_setaffinity, io_uring_*
    "x86_64": (248, 249, 250, 203, 425, 426, 427),
    "aarch64": (217, 218, 219, 122, 425, 426, 427),
}
CLONE_NEWUSER = 0x10000000


def refuse_namespaces() -> None:
    """A seccomp filter: no new user namespace (``clone``/``unshare`` with ``CLONE_NEWUSER``), no
    ``setns``, no ``clone3`` (whose flags a filter cannot read; the C library falls back to
    ``clone``), no foreign system-call ABI, and no kernel keyring (``add_key``, ``request_key``,
    ``keyctl``: a user's keyring outlives its processes, so a key one submission added was read by
    the next in its slot and by any process of that user), no ``sched_setaffinity`` (a
    sandbox keeps its slot's CPUs), and no io_uring (``io_uring_setup``, ``_enter``,
    ``_register``: its SQPOLL kernel threads run outside the slot's CPUs and cgroup; Docker's
    default profile refuses it too). Needs no-new-privileges set first."""
    import platform
    import struct

    arch, clone, unshare, setns, clone3 = _SECCOMP[platform.machine()]
    allow, eperm, enosys = 0x7FFF0000, 0x00050000 | 1, 0x00050000 | 38
    ld, jeq, jge, jset, ret = 0x20, 0x15, 0x35, 0x45, 0x06
    prog = [
        (ld, 0, 0, 4),
        (jeq, 1, 0, arch),
        (ret, 0, 0, enosys),  # another ABI: nothing
        (ld, 0, 0, 0),
        (jge, 0, 1, 0x40000000),
        (ret, 0, 0, enosys),  # x32 numbers
        *(
            insn
            for call in _REFUSED_CALLS[platform.machine()]
            for insn in ((jeq, 0, 1, call), (ret, 0, 0, eperm))
        ),
        (jeq, 0, 1, clone3),
        (ret, 0, 0, enosys),
        (jeq, 0, 1, setns),
        (ret, 0, 0, eperm),
        (jeq, 1, 0, clone),
        (jeq, 0, 3, unshare),
        (ld, 0, 0, 16),
        (jset, 0, 1, CLONE_NEWUSER),
        (ret, 0, 0, eperm),
        (ret, 0, 0, allow),
    ]
    raw = b"".join(struct.pack("HBBI", *insn) for insn in prog)
    buf = ctypes.create_string_buffer(raw)
    fprog = struct.pack("HxxxxxxP", len(prog), ctypes.addressof(buf))
    fbuf = ctypes.create_string_buffer(fprog)
    if (
        _libc.prctl(22, 2, ctypes.c_void_p(ctypes.addressof(fbuf)), 0, 0) != 0
    ):  # SET_SECCOMP, FILTER
        err = ctypes.get_errno()
        raise OSError(err, f"seccomp: {os.strerror(err)}")


def drop_capabilities() -> None:
    """Root of a user namespace keeps no capability, now or after an exec (bounding set emptied,
    ``SECBIT_NOROOT`` locked): it can no longer mount, unmount or change any namespace."""
    for cap in range(64):
        if _libc.prctl(24, cap, 0, 0, 0) != 0 and ctypes.get_errno() == 22:  # PR_CAPBSET_DROP
            break
    _libc.prctl(47, 4, 0, 0, 0)  # PR_CAP_AMBIENT, PR_CAP_AMBIENT_CLEAR_ALL
    if _libc.prctl(28, 0x2F, 0, 0, 0) != 0:  # PR_SET_SECUREBITS: NOROOT, NO_SETUID_FIXUP, locked
        err = ctypes.get_errno()
        raise OSError(err, f"securebits: {os.strerror(err)}")
    header = (ctypes.c_uint32 * 2)(0x20080522, 0)
    data = (ctypes.c_uint32 * 6)()
    if _libc.syscall(126 if os.uname().machine == "x86_64" else 91, header, data) != 0:  # capset
        err = ctypes.get_errno()
        raise OSError(err, f"capset: {os.strerror(err)}")


def limit_and_drop(config: dict, *, new_session: bool = True) -> None:
    """Step 3, in the child: session, limits, user nobody (or no capability), no new privileges,
    no new namespaces."""
    if new_session:
        os.setsid()
    for name, value in config["limits"].items():
        resource.setrlimit(getattr(resource, name), (value, value))
    if config.get("uid") is not None:
        os.setgroups([])
        os.setgid(config["gid"])
        os.setuid(config["uid"])
    elif config.get("drop_caps"):
        drop_capabilities()
    _libc.prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0)
    if config.get("seccomp", True):
        refuse_namespaces()


def read_config() -> str:
    """The config, the first line on stdin (not the command line, which /proc shows), then stdin
    becomes /dev/null (in the factory: the rest of stdin is its requests)."""
    line = sys.stdin.readline()
    return line


def main(raw: str) -> int:
    config = json.loads(raw)
    back = None  # the grader's folder, open: what the grader reads is copied back there at the end
    if config.get("mounts"):
        try:
            back = os.open(config["workdir"], os.O_RDONLY | os.O_DIRECTORY)
            hide_files(config)
        except OSError as e:
            print(f"sandbox: cannot hide files: {e}", file=sys.stderr)
            return 97
    cwd = INSIDE if config.get("mounts") else config["workdir"]
    null = os.open("/dev/null", os.O_RDONLY)
    os.dup2(null, 0)
    os.close(null)
    worker_box: list[int] = []

    def stop(signum, frame):  # the grader's time limit: keep what the submission had written
        _kill_all_but_me(worker_box[-1] if worker_box else 0)
        if back is not None:
            with contextlib.suppress(OSError):
                copy_out(INSIDE, back)
        os._exit(124)

    import signal

    signal.signal(signal.SIGTERM, stop)

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
        worker_box.append(pid)
        return pid

    status = supervise(spawn, cwd)
    if back is not None:
        with contextlib.suppress(OSError):
            copy_out(INSIDE, back)
    return status


GRACE_SECONDS = 5.0  # beyond a cell's own limit before it is killed from outside


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
    """Run the worker; when a cell overruns its limit by ``GRACE_SECONDS`` (its own alarm failed:
    stuck in C code, or the alarm was caught), kill the submission and run it again without that
    cell.

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
    limit = float(request.get("cell_timeout", 60)) + GRACE_SECONDS
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
    sys.exit(main(read_config()))
