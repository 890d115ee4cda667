"""A warm sandbox factory: one process imports Python, IPython, torch and ``course`` once, then
forks a fresh sandbox for each submission (the import costs several seconds a submission otherwise).

Run by :class:`teaching.grading.sandbox.Zygote` as ``python zygote.py`` (a file, not
``-m``) inside ``unshare --mount --net --ipc --uts``, as root, its config the first line on stdin.
At start it builds the allow-listed root the way ``sandbox_init`` does (the folder of sandboxes at
``/.sandboxes``) and imports the modules to preload. Then, for each request line on stdin (``{"id",
"dir", "env", "limits"}``) it forks a *holder*, which takes new PID, mount, network, IPC and UTS
namespaces and forks their PID 1; PID 1 dies with the holder (``PR_SET_PDEATHSIG``), mounts a fresh
``/tmp`` holding only its own folder at ``/tmp/submission`` (and, read-only, kept paths that live
under ``/tmp``), unmounts ``/.sandboxes`` and ``/.work``, mounts a fresh ``/dev/shm`` and ``/proc``,
and forks the worker: its own session, every inherited file descriptor closed, output to
``output.txt``, resource limits, user ``nobody``, no new privileges, then the runner
(``runner.main``) in that already-warm interpreter. Replies on stdout: ``{"id", "pid"}`` (the
holder: kill it and the whole namespace dies) and, when it ends, ``{"id", "status"}``.

Each sandbox's folder is a size-limited tmpfs the factory mounts under ``/.work`` before forking the
holder (the grader's request copied in); when the holder ends, the factory copies the results and
the capped output back to the grader's folder in ``/.sandboxes`` and drops the tmpfs. What a
submission writes never reaches the grader's disk, and each folder is a filesystem of its own.
"""

from __future__ import annotations

import ctypes
import importlib
import importlib.util
import json
import os
import signal
import sys
import threading

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import sandbox_init  # noqa: E402  (same folder; imports nothing from course)

sys.path.remove(HERE)

CLONE_NEWNS, CLONE_NEWUTS, CLONE_NEWIPC, CLONE_NEWPID, CLONE_NEWNET = (
    0x00020000,
    0x04000000,
    0x08000000,
    0x20000000,
    0x40000000,
)
PR_SET_PDEATHSIG = 1
_libc = ctypes.CDLL(None, use_errno=True)
_lock = threading.Lock()
_ids: dict[int, tuple[str, str]] = {}  # holder's pid: (request id, folder)
_KEEP: list[str] = []  # the paths the root keeps (read-only), from the config


def _say(message: dict) -> None:
    with _lock:
        sys.__stdout__.write(json.dumps(message) + "\n")
        sys.__stdout__.flush()


def _worker(request: dict, runner) -> None:
    os.setsid()
    null = os.open("/dev/null", os.O_RDONLY)
    out = os.open("output.txt", os.O_WRONLY | os.O_CREAT | os.O_TRUNC | os.O_NOFOLLOW, 0o644)
    os.dup2(null, 0)
    os.dup2(out, 1)
    os.dup2(out, 2)
    os.closerange(3, 65536)
    sys.stdin = open(0, closefd=False)  # noqa: SIM115
    sys.stdout = sys.__stdout__ = open(1, "w", buffering=1, closefd=False)  # noqa: SIM115
    sys.stderr = sys.__stderr__ = open(2, "w", buffering=1, closefd=False)  # noqa: SIM115
    config = {
        "limits": request["limits"],
        "uid": request.get("uid"),
        "gid": request.get("gid"),
        "drop_caps": request.get("drop_caps"),
    }
    sandbox_init.limit_and_drop(config, new_session=False)
    os.environ.clear()
    os.environ.update(request["env"])
    import tempfile

    tempfile.tempdir = None  # the factory's cached temporary folder is not this sandbox's
    sys.argv = ["runner.py", "request.json"]
    code = runner.main("request.json")
    sys.stdout.flush()
    sys.stderr.flush()
    os._exit(code)


def _init(request: dict, holder: int, runner) -> None:
    _libc.prctl(PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0)  # (getppid() is 0 in a new PID ns)
    m = sandbox_init
    m._mount("none", "/", None, m.MS_REC | m.MS_PRIVATE)
    # A /tmp of its own: a fresh tmpfs holding its own folder at /tmp/submission and, read-only, the
    # paths to keep that live under /tmp (a checkout or an environment there), assembled in STAGE.
    m._mount("tmpfs", m.STAGE, "tmpfs", m.MS_NOSUID | m.MS_NODEV, m.scratch_options())
    for path in _KEEP:
        if path.startswith("/tmp/"):
            m._placeholder(path, m.STAGE + path[4:])
            m._mount(path, m.STAGE + path[4:], None, m.MS_BIND | m.MS_REC)
    os.mkdir(m.STAGE + "/submission")
    # its own folder: a size-limited tmpfs the factory made (never the grader's disk)
    m._mount(f"{m.WORK}/{request['dir']}", m.STAGE + "/submission", None, m.MS_BIND)
    m._mount(m.STAGE, "/tmp", None, m.MS_BIND | m.MS_REC)
    m._umount(m.STAGE)
    m._umount(m.WORK)  # no other sandbox's folder
    m._umount(m.SANDBOXES)  # nor the grader's
    if os.path.ismount("/.cgroups"):
        m._umount("/.cgroups")  # the holder has joined its slot's cgroup
    m._mount("tmpfs", "/dev/shm", "tmpfs", m.MS_NOSUID | m.MS_NODEV, m.scratch_options())
    m._mount("proc", "/proc", "proc", m.MS_NOSUID | m.MS_NODEV | m.MS_NOEXEC)
    os.chdir(sandbox_init.INSIDE)
    null = os.open("/dev/null", os.O_RDWR)
    os.dup2(null, 0)  # the factory's request and reply pipes stay out of the namespace
    os.dup2(null, 1)
    os.close(null)

    def spawn() -> int:
        worker = os.fork()
        if worker == 0:
            try:
                _worker(request, runner)
            except BaseException as e:  # the submission's own exceptions end in runner.main
                print(f"sandbox: worker failed: {e!r}", file=sys.stderr)
            os._exit(97)
        return worker

    os._exit(sandbox_init.supervise(spawn, sandbox_init.INSIDE))


def _holder(request: dict, runner) -> None:
    _libc.prctl(PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0)  # dies with the zygote
    if request.get("cgroup"):  # its slot's memory cgroup, before anything of the submission runs
        try:
            with open(f"/.cgroups/{request['cgroup']}/cgroup.procs", "w") as f:
                f.write(str(os.getpid()))
        except OSError as e:
            print(f"sandbox: no memory cgroup: {e}", file=sys.stderr)
    if request.get("cpus"):  # its slot's CPUs: a busy neighbour slows only its own
        try:
            os.sched_setaffinity(0, request["cpus"])
        except OSError as e:
            print(f"sandbox: no CPUs of its own: {e}", file=sys.stderr)
    flags = CLONE_NEWPID | CLONE_NEWNS | CLONE_NEWNET | CLONE_NEWIPC | CLONE_NEWUTS
    if _libc.unshare(flags) != 0:
        print(f"sandbox: unshare failed: {os.strerror(ctypes.get_errno())}", file=sys.stderr)
        os._exit(97)
    me = os.getpid()
    child = os.fork()
    if child == 0:
        try:
            _init(request, me, runner)
        except BaseException as e:
            print(f"sandbox: init failed: {e!r}", file=sys.stderr)
        os._exit(97)
    _, status = os.waitpid(child, 0)
    os._exit(os.waitstatus_to_exitcode(status) & 0xFF)


def _reap() -> None:
    while True:
        try:
            pid, status = os.waitpid(-1, 0)
        except ChildProcessError:
            threading.Event().wait(0.05)
            continue
        with _lock:
            entry = _ids.pop(pid, None)
        if entry is not None:
            ident, folder = entry
            _release(folder)
            _say({"id": ident, "status": os.waitstatus_to_exitcode(status)})


def _prepare(folder: str, uid: int | None) -> None:
    """The sandbox's folder: a tmpfs of its own under WORK, holding the grader's request."""
    m = sandbox_init
    os.mkdir(f"{m.WORK}/{folder}", 0o700)
    m.mount_folder(f"{m.WORK}/{folder}", uid)
    m.copy_in(f"{m.SANDBOXES}/{folder}", f"{m.WORK}/{folder}", uid)


def _release(folder: str) -> None:
    """Copy back what the grader reads, then drop the folder (its memory goes with it)."""
    m = sandbox_init
    path = f"{m.WORK}/{folder}"
    try:
        dest = os.open(f"{m.SANDBOXES}/{folder}", os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW)
        try:
            m.copy_out(path, dest)
        finally:
            os.close(dest)
    except OSError as e:
        print(f"sandbox: results not copied back: {e}", file=sys.stderr)
    try:
        m._umount(path)
        os.rmdir(path)
    except OSError as e:
        print(f"sandbox: folder not released: {e}", file=sys.stderr)


def main(raw: str) -> int:
    config = json.loads(raw)
    sandbox_init.hide_files(config)  # with config["binds"] = {the sandboxes folder: SANDBOXES}
    m = sandbox_init
    m._mount("tmpfs", m.WORK, "tmpfs", m.MS_NOSUID | m.MS_NODEV, "mode=0700,size=1m")
    _KEEP.extend(config["keep"])
    os.environ.update(config["preload_env"])
    sys.path.extend(p for p in config.get("sys_path", []) if p not in sys.path)
    spec = importlib.util.spec_from_file_location("course_grading_runner", config["runner"])
    runner = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(runner)
    errors = []
    for name in config["preload"]:
        try:
            importlib.import_module(name)
        except Exception as e:  # a module that fails here is imported (or fails) per submission
            errors.append(f"{name}: {type(e).__name__}: {e}")
    threading.Thread(target=_reap, daemon=True).start()
    _say({"ready": True, "errors": errors})
    for line in sys.stdin:
        try:
            request = json.loads(line)
        except ValueError:
            continue
        try:
            _prepare(request["dir"], request.get("uid"))
        except (OSError, KeyError, TypeError) as e:
            print(f"sandbox: no folder for the submission: {e}", file=sys.stderr)
            _say({"id": request.get("id"), "status": 97})
            continue
        with _lock:  # no reply is half-written when the child forks; the reaper waits for _ids
            pid = os.fork()
            if pid == 0:
                try:
                    _holder(request, runner)
                finally:
                    os._exit(97)
            _ids[pid] = (request["id"], request["dir"])
        _say({"id": request["id"], "pid": pid})
    return 0


if __name__ == "__main__":
    sys.exit(main(sandbox_init.read_config()))
