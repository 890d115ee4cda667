"""A class on a real JupyterHub, end to end in a browser: log in, pull the release, run a lesson and
an exercise set, submit, collect, grade (instructors/guide.md, "A JupyterHub kit", says the same).

What the test starts, all on loopback ports, and stops again (nothing is left behind):

- two local users created for the test (``useradd``; removed with their homes afterwards), their
  homes mode 0700, under a folder of the test's own;
- the student release (``python -m teaching release``) committed to the branch ``release`` of a
  bare git repository, served by ``git daemon`` (the hub's machine reads the release from a remote,
  as it would from GitHub);
- JupyterHub (from the instructors' lock) with its Node proxy (``configurable-http-proxy``,
  requirements/package-lock.json), ``DummyAuthenticator`` (one shared password: the test's stand-in
  for the hub's real login) and ``LocalProcessSpawner``: each learner's JupyterLab runs as that user
  from this repository's ``.venv``, where the course is installed as the kit's image installs it;
- headless Chromium (Debian's, through Playwright), one browser context per learner.

Learner A logs in, clicks the nbgitpuller link ``teaching.hosted_links.nbgitpuller_url`` writes for
lesson 00 (the release lands in the home, the lesson opens), runs it (the install cell prints
nothing, the widgets render, no error), then the exercise set's link: answers Q1, runs the set (its
self-check answers), saves. The instructor changes the release; A's second click merges the change
and keeps A's answer. Learner B logs in while A's server runs and pulls; neither can read the
other's home. A link to a branch that does not exist shows nbgitpuller's error naming it. Then
``teaching collect`` copies each learner's set into the layout ``grade --roster`` reads, names the
roster's learner with no home, and ``grade`` scores A above B.

Needs root (``useradd``), Debian's chromium, npm's proxy (``make install-instructors``) and git:
skipped without them, failed in CI. Screenshots of each step, and of a failure, are kept in the
test's ``tmp_path`` (pytest keeps the last three runs). Per-user memory and CPU and the time from
login to a running lesson 00 are printed and written to ``hub-measurements.json`` there.
"""

from __future__ import annotations

import contextlib
import csv
import json
import os
import pwd
import re
import secrets
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
import urllib.request
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

import pytest
from browser_setup import CHROMIUM_ARGS, _unavailable
from teaching.hosted_links import nbgitpuller_url

ROOT = Path(__file__).resolve().parents[2]
VENV_BIN = Path(sys.executable).parent
PROXY = ROOT / "requirements" / "node_modules" / ".bin" / "configurable-http-proxy"
SET = "00_units_and_memory"
LESSON = "notebooks/00_setup.ipynb"
EXERCISE = f"exercises/{SET}.ipynb"
FOLDER = "course"  # the release repository's name: the folder nbgitpuller clones into each home
Q1_ANSWER = (
    "weights_bytes = params * 2\n"
    "weights_gb = weights_bytes / GB\n"
    "weights_gib = weights_bytes / GiB\n"
    "weights_gb, weights_gib"
)
START_S = 180  # the hub, a single-user server: seconds on a loaded 2-core machine
KERNEL_MS = 120_000  # a kernel's start, torch's import
RUN_MS = 240_000  # lesson 00 or the exercise set, top to bottom
PULL_MS = 120_000  # nbgitpuller's clone or merge, then JupyterLab's first load


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _run(*cmd: str | Path, **kw) -> subprocess.CompletedProcess:
    done = subprocess.run([str(c) for c in cmd], capture_output=True, text=True, **kw)
    assert done.returncode == 0, f"{cmd}: {done.stdout}{done.stderr}"
    return done


def _git(where: Path, *args: str) -> str:
    ident = ["-c", "user.name=Instructor", "-c", "user.email=instructor@example.edu"]
    return _run("git", "-C", where, *ident, *args).stdout


def _wait_http(url: str, proc: subprocess.Popen, log: Path, what: str) -> None:
    deadline = time.monotonic() + START_S
    while True:
        if proc.poll() is not None:
            pytest.fail(f"{what} exited with {proc.returncode}:\n{log.read_text()[-4000:]}")
        try:
            urllib.request.urlopen(url, timeout=5).close()
            return
        except OSError:
            if time.monotonic() > deadline:
                pytest.fail(f"{what} did not answer in {START_S} s:\n{log.read_text()[-4000:]}")
            time.sleep(0.3)


def _stop(proc: subprocess.Popen) -> None:
    """TERM the process's group, then KILL what is left."""
    with contextlib.suppress(ProcessLookupError):
        os.killpg(proc.pid, signal.SIGTERM)
    with contextlib.suppress(subprocess.TimeoutExpired):
        proc.wait(timeout=30)
    with contextlib.suppress(ProcessLookupError):
        os.killpg(proc.pid, signal.SIGKILL)
    proc.wait(timeout=10)


def _pids_of(uid: int) -> list[int]:
    pids = []
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            with contextlib.suppress(OSError):
                if entry.stat().st_uid == uid:
                    pids.append(int(entry.name))
    return pids


def _usage(uid: int) -> tuple[float, float, int]:
    """(resident MiB, CPU seconds, processes) of every process the user runs now: the
    single-user server and its kernels."""
    rss_kib, ticks, pids = 0, 0, _pids_of(uid)
    for pid in pids:
        with contextlib.suppress(OSError):
            status = Path(f"/proc/{pid}/status").read_text()
            found = re.search(r"^VmRSS:\s+(\d+) kB", status, re.M)
            rss_kib += int(found.group(1)) if found else 0
            fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
            ticks += int(fields[11]) + int(fields[12])  # utime, stime
    return rss_kib / 1024, ticks / os.sysconf("SC_CLK_TCK"), len(pids)


@dataclass
class Hub:
    url: str
    base: Path
    homes: Path
    repo: Path  # the bare repository the git daemon serves
    repo_url: str
    work: Path  # the instructor's clone of the release branch
    users: dict[str, str]  # name -> role ("a", "b")
    python: Path  # the learners' Python (the spawn environment), which every user may run
    password: str
    log: Path
    measured: dict[str, object] = field(default_factory=dict)

    def home(self, user: str) -> Path:
        return self.homes / user

    def link(self, path: str, branch: str = "release") -> str:
        return nbgitpuller_url(self.url, self.repo_url, branch, path)


def _require() -> None:
    if os.geteuid() != 0:
        _unavailable("the hub test creates local users (useradd): run it as root, as CI does")
    for tool in ("useradd", "userdel", "runuser", "git"):
        if shutil.which(tool) is None:
            _unavailable(f"{tool} is not installed")
    if not PROXY.exists():
        _unavailable(
            f"JupyterHub's proxy is not installed ({PROXY}): make install-instructors runs "
            "`npm ci` in requirements/ (needs Node.js and npm)"
        )
    for module in ("jupyterhub", "nbgitpuller"):
        try:
            __import__(module)
        except ImportError:
            _unavailable(f"{module} is not installed (make install-instructors)")


def _make_release(base: Path) -> tuple[Path, Path]:
    """The student release (what ``make release`` writes, by its own function) committed to the
    branch ``release`` of a new bare repository. It is released from HEAD's files with exercise
    set 00's solution only, so that one solution runs for the answer keys, not fourteen."""
    from teaching.grading.release import write_release

    source = base / "course-src"
    source.mkdir()
    archive = subprocess.run(
        ["git", "-C", str(ROOT), "archive", "HEAD"], capture_output=True, check=True
    )
    subprocess.run(["tar", "-x", "-C", str(source)], input=archive.stdout, check=True)
    for solution in (source / "solutions").glob("[0-9][0-9]_*.ipynb"):
        if solution.stem != SET:
            solution.unlink()
    _git(source, "init", "-q")
    _git(source, "add", "-A")
    _git(source, "commit", "-q", "-m", "course")
    work = base / "release-work"
    record = base / "release-record"  # not the checkout's build/grading/released.json
    assert write_release(work, repo=source, record_dir=record) == 0, "make release failed"
    bare = base / "repos" / FOLDER
    _run("git", "init", "-q", "--bare", "--initial-branch=release", bare)
    _git(work, "init", "-q", "--initial-branch=release")
    _git(work, "add", "-A")
    _git(work, "commit", "-q", "-m", "Student release")
    _git(work, "push", "-q", str(bare), "release")
    return bare, work


def _spawn_env(base: Path, user: str) -> Path:
    """The learners' Python: a virtual environment of a Python every user may run (Debian's, where
    this one is under a private folder such as pyenv's /root) whose packages are this repository's
    .venv (the course, JupyterLab, jupyterhub, nbgitpuller), as the kit's image has them."""
    minor = f"python{sys.version_info.major}.{sys.version_info.minor}"
    python = Path("/usr/bin", minor)
    if not python.exists():
        python = Path(os.path.realpath(sys.executable))
    env = base / "spawn-env"
    _run(python, "-m", "venv", "--without-pip", env)
    site = next(env.glob("lib/python3*/site-packages"))
    packages = next(VENV_BIN.parent.glob("lib/python3*/site-packages"))
    (site / "course-venv.pth").write_text(f"import site; site.addsitedir({str(packages)!r})\n")
    probe = subprocess.run(
        [
            "runuser",
            "-u",
            user,
            "--",
            str(env / "bin" / "python"),
            "-c",
            "import course, jupyterhub, nbgitpuller, jupyterlab",
        ],
        capture_output=True,
        text=True,
    )
    if probe.returncode != 0:
        pytest.fail(f"a learner cannot run the course's Python ({python}): {probe.stderr[-1500:]}")
    return env / "bin" / "python"


def _settings(base: Path) -> Path:
    """JupyterLab settings every learner's server reads: no news pop-up, every cell in the DOM."""
    settings = base / "lab-settings" / "@jupyterlab"
    for name, value in (
        ("apputils-extension/notification", {"fetchNews": "false", "checkForUpdates": False}),
        ("notebook-extension/tracker", {"windowingMode": "none"}),
    ):
        path = settings / f"{name}.jupyterlab-settings"
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(json.dumps(value))
    return settings.parent


@pytest.fixture
def hub(chromium: str, tmp_path: Path) -> Iterator[Hub]:
    _require()
    base = Path(tempfile.mkdtemp(prefix="hubclass-"))
    base.chmod(0o755)  # learners traverse it to their homes and read the repository
    homes = base / "home"
    homes.mkdir(mode=0o755)
    tag = secrets.token_hex(3)
    users = {f"gca{tag}": "a", f"gcb{tag}": "b"}
    procs: list[subprocess.Popen] = []
    created: list[str] = []
    opened = _let_learners_traverse(VENV_BIN.parent)
    try:
        for user in users:
            _run("useradd", "--create-home", "--base-dir", homes, "--shell", "/bin/bash", user)
            created.append(user)
            (homes / user).chmod(0o700)
        bare, work = _make_release(base)
        python = _spawn_env(base, next(iter(users)))
        share = VENV_BIN.parent / "share" / "jupyter"

        git_port = _free_port()
        git_log = tmp_path / "git-daemon.log"
        with git_log.open("wb") as out:
            daemon = subprocess.Popen(
                [
                    "git",
                    "daemon",
                    "--reuseaddr",
                    "--export-all",
                    "--informative-errors",
                    "--listen=127.0.0.1",
                    f"--port={git_port}",
                    f"--base-path={base / 'repos'}",
                    str(base / "repos"),
                ],
                stdout=out,
                stderr=subprocess.STDOUT,
                start_new_session=True,
            )
        procs.append(daemon)

        hubdir = base / "hub"
        hubdir.mkdir(mode=0o700)
        port = _free_port()
        password = secrets.token_urlsafe(12)
        config = {
            "bind_url": f"http://127.0.0.1:{port}",
            "hub_bind_url": f"http://127.0.0.1:{_free_port()}",
            "proxy_api": f"http://127.0.0.1:{_free_port()}",
            "proxy": str(PROXY),
            "db": f"sqlite:///{hubdir / 'jupyterhub.sqlite'}",
            "cookie_secret": str(hubdir / "cookie_secret"),
            "password": password,
            "users": sorted(users),
            "singleuser": [str(python), "-m", "jupyterhub.singleuser"],
            "env": {
                "PATH": f"{python.parent}:/usr/local/bin:/usr/bin:/bin",
                # what the .venv's prefix holds: nbgitpuller's server extension, JupyterLab's
                # assets, the widgets' extension, the kernel
                "JUPYTER_CONFIG_PATH": str(VENV_BIN.parent / "etc" / "jupyter"),
                "JUPYTER_PATH": str(share),
                "JUPYTERLAB_DIR": str(share / "lab"),
                "JUPYTERLAB_SETTINGS_DIR": str(_settings(base)),
                "PYTHONUNBUFFERED": "1",
            },
        }
        (hubdir / "jupyterhub_config.py").write_text(
            f"cfg = {config!r}\n"
            + """
c.JupyterHub.bind_url = cfg["bind_url"]
c.JupyterHub.hub_bind_url = cfg["hub_bind_url"]
c.ConfigurableHTTPProxy.api_url = cfg["proxy_api"]
c.ConfigurableHTTPProxy.command = [cfg["proxy"]]
c.ConfigurableHTTPProxy.should_start = True
c.JupyterHub.db_url = cfg["db"]
c.JupyterHub.cookie_secret_file = cfg["cookie_secret"]
c.JupyterHub.cleanup_servers = True
c.JupyterHub.authenticator_class = "dummy"
c.DummyAuthenticator.password = cfg["password"]
c.Authenticator.allowed_users = set(cfg["users"])
c.JupyterHub.spawner_class = "localprocess"
c.Spawner.cmd = cfg["singleuser"]
c.Spawner.default_url = "/lab"
c.Spawner.environment = cfg["env"]
c.Spawner.start_timeout = 180
c.Spawner.http_timeout = 180
"""
        )
        log = tmp_path / "jupyterhub.log"
        with log.open("wb") as out:
            proc = subprocess.Popen(
                [str(VENV_BIN / "jupyterhub"), "-f", str(hubdir / "jupyterhub_config.py")],
                cwd=hubdir,
                stdout=out,
                stderr=subprocess.STDOUT,
                start_new_session=True,
                env={**os.environ, "CONFIGPROXY_AUTH_TOKEN": secrets.token_hex(16)},
            )
        procs.append(proc)
        url = f"http://127.0.0.1:{port}"
        _wait_http(f"{url}/hub/login", proc, log, "JupyterHub")
        yield Hub(
            url=url,
            base=base,
            homes=homes,
            repo=bare,
            repo_url=f"git://127.0.0.1:{git_port}/{FOLDER}",
            work=work,
            users=users,
            python=python,
            password=password,
            log=log,
        )
    finally:
        for proc in reversed(procs):  # the hub stops the learners' servers and its proxy first
            _stop(proc)
        for user in created:
            uid = pwd.getpwnam(user).pw_uid
            for pid in _pids_of(uid):  # anything of the test's users that outlived the hub
                with contextlib.suppress(ProcessLookupError):
                    os.kill(pid, signal.SIGKILL)
            subprocess.run(["userdel", "--remove", user], capture_output=True)
        shutil.rmtree(base, ignore_errors=True)
        for folder, mode in opened.items():
            folder.chmod(mode)
        leftover = [u for u in created if _user_exists(u)]
        assert not leftover, f"users left behind: {leftover}"


def _let_learners_traverse(venv: Path) -> dict[Path, int]:
    """The learners' Python reads .venv's packages: where a folder above it (a checkout under
    root's 0700 home, say) lets no one else through, let them through for the test's length.
    Returns the folders changed and their modes, to put back."""
    opened = {}
    for folder in (venv, *venv.parents):
        mode = folder.stat().st_mode & 0o7777
        if not mode & 0o001:
            folder.chmod(mode | 0o001)
            opened[folder] = mode
    return opened


def _user_exists(user: str) -> bool:
    try:
        pwd.getpwnam(user)
    except KeyError:
        return False
    return True


def _login(browser, hub: Hub, user: str, shots: Path):
    """A browser context of the learner's own (their cookies), logged in; the page."""
    from playwright.sync_api import expect

    context = browser.new_context(viewport={"width": 1400, "height": 1000})
    page = context.new_page()
    page.goto(f"{hub.url}/hub/login")
    page.locator("#username_input").fill(user)
    page.locator("#password_input").fill(hub.password)
    page.locator("#login_submit").click()
    expect(page).to_have_url(re.compile(rf"/user/{user}/lab"), timeout=START_S * 1000)
    page.screenshot(path=str(shots / f"{hub.users[user]}-1-logged-in.png"))
    return page


def _open_by_link(page, hub: Hub, path: str):
    """Click the link's way in (open its address, as a learner's click on the LMS does); the
    notebook panel, once its kernel is idle."""
    from playwright.sync_api import expect

    page.goto(hub.link(path))
    name = path.rsplit("/", 1)[-1]
    tab = page.locator(".lm-TabBar-tab.jp-mod-current", has_text=name)
    expect(tab).to_be_visible(timeout=PULL_MS)
    notebook = page.locator(".jp-NotebookPanel:visible")
    idle = page.locator("#jp-main-statusbar").get_by_text(re.compile(r"\|\s*Idle\b"))
    expect(idle).to_be_visible(timeout=KERNEL_MS)
    return notebook


def _run_all(page, notebook) -> None:
    """Run > Run All Cells, until no cell is queued and the last one has run; fail with the
    error outputs if a cell stopped the run."""
    from playwright.sync_api import expect

    page.locator("#jp-MainMenu").get_by_text("Run", exact=True).click()
    page.get_by_role("menuitem", name="Run All Cells", exact=True).click()
    last = notebook.locator(".jp-CodeCell").last.locator(".jp-InputPrompt")
    expect(last).to_have_text(re.compile(r"\[(\*|\d+)\]"), timeout=RUN_MS)
    prompts = notebook.locator(".jp-Cell .jp-InputPrompt")
    expect(prompts.filter(has_text="[*]")).to_have_count(0, timeout=RUN_MS)
    errors = notebook.locator(".jp-RenderedText[data-mime-type='application/vnd.jupyter.stderr']")
    tracebacks = [t for t in errors.all_inner_texts() if "Traceback" in t or "Error" in t]
    assert re.search(r"\[\d+\]", last.inner_text()) and not tracebacks, "\n".join(tracebacks)


@pytest.mark.serial
@pytest.mark.browser
@pytest.mark.timeout(900)
def test_a_class_on_a_jupyterhub(chromium: str, hub: Hub, tmp_path: Path, capsys) -> None:
    from playwright.sync_api import expect, sync_playwright

    a, b = sorted(hub.users, key=hub.users.get)
    shots = tmp_path / "screenshots"
    shots.mkdir()
    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=chromium, headless=True, args=CHROMIUM_ARGS)
        page = None
        try:
            # 1. A logs in and clicks lesson 00's link: the release lands in A's home.
            start = time.monotonic()
            page = _login(browser, hub, a, shots)
            notebook = _open_by_link(page, hub, LESSON)
            hub.measured["login_to_lesson_00_s"] = round(time.monotonic() - start, 1)
            assert (hub.home(a) / FOLDER / LESSON).is_file()
            assert (hub.home(a) / FOLDER / ".git").is_dir()  # nbgitpuller's clone
            assert pwd.getpwuid((hub.home(a) / FOLDER / LESSON).stat().st_uid).pw_name == a

            # 2. Lesson 00, top to bottom: the install cell does nothing, the widgets render.
            idle_mib, _, _ = _usage(pwd.getpwnam(a).pw_uid)
            t0 = time.monotonic()
            _run_all(page, notebook)
            hub.measured["lesson_00_run_s"] = round(time.monotonic() - t0, 1)
            first_code = notebook.locator(".jp-CodeCell").first
            expect(first_code).to_contain_text("JUPYTERHUB_USER")  # the install cell...
            assert first_code.locator(".jp-OutputArea-output").count() == 0  # ...printed nothing
            quiz = notebook.locator(".jp-CodeCell").last
            expect(quiz.get_by_role("button", name="Check").first).to_be_visible(timeout=RUN_MS)
            mib, cpu_s, n = _usage(pwd.getpwnam(a).pw_uid)
            hub.measured["lesson_00"] = {
                "server_idle_MiB": round(idle_mib),
                "server_and_kernel_MiB": round(mib),
                "cpu_s": round(cpu_s, 1),
                "processes": n,
            }
            page.screenshot(path=str(shots / "a-2-lesson-00-ran.png"))
            page.keyboard.press("Control+s")  # no unsaved lesson when the next link is opened

            # 3. The exercise set's link (a second pull of the same release): answer Q1, run
            # the set top to bottom, save.
            notebook = _open_by_link(page, hub, EXERCISE)
            cell = notebook.locator(".jp-CodeCell", has_text="weights_bytes = ...")
            cell.locator(".cm-content").click()
            page.keyboard.press("Control+a")
            page.keyboard.insert_text(Q1_ANSWER)
            t0 = time.monotonic()
            _run_all(page, notebook)
            hub.measured["exercise_set_00_run_s"] = round(time.monotonic() - t0, 1)
            q1 = notebook.locator(".jp-CodeCell", has_text='grader.check("q1")')
            expect(q1.locator(".jp-OutputArea-output")).to_contain_text(
                re.compile(r"q1: right\."),
                timeout=RUN_MS,  # the checker's words on a right answer
            )
            q2 = notebook.locator(".jp-CodeCell", has_text='grader.check("q2")')
            expect(q2.locator(".jp-OutputArea-output")).not_to_be_empty()  # it answers
            page.keyboard.press("Control+s")
            saved = hub.home(a) / FOLDER / EXERCISE
            deadline = time.monotonic() + 30
            while "weights_bytes = params * 2" not in saved.read_text():
                assert time.monotonic() < deadline, "the answer was not saved"
                time.sleep(0.5)
            answered = saved.read_text()
            page.screenshot(path=str(shots / "a-3-exercise-answered.png"))

            # 4. The instructor changes the release; A's second click merges it, keeping A's
            # answer (nbgitpuller's documented behaviour: the learner's changes win).
            notice = hub.work / "notebooks" / "announcement.md"
            notice.write_text("# Week 2\n\nLesson 01 is next.\n")
            with (hub.work / "README.md").open("a") as f:
                f.write("\nUpdated for week 2.\n")
            _git(hub.work, "add", "-A")
            _git(hub.work, "commit", "-q", "-m", "Week 2")
            _git(hub.work, "push", "-q", str(hub.repo), "release")
            _open_by_link(page, hub, EXERCISE)
            mine = hub.home(a) / FOLDER
            assert (mine / "notebooks" / "announcement.md").read_text() == notice.read_text()
            assert (mine / "README.md").read_text().endswith("Updated for week 2.\n")
            assert (mine / EXERCISE).read_text() == answered, "the pull overwrote A's answer"
            page.screenshot(path=str(shots / "a-4-second-pull.png"))

            # 5. B logs in while A's server runs, and pulls; neither reads the other's home.
            page = _login(browser, hub, b, shots)
            _open_by_link(page, hub, LESSON)
            for user in (a, b):
                assert _pids_of(pwd.getpwnam(user).pw_uid), f"{user}'s server is not running"
            for reader, owner in ((b, a), (a, b)):
                probe = subprocess.run(
                    [
                        "runuser",
                        "-u",
                        reader,
                        "--",
                        str(hub.python),
                        "-c",
                        f"open({str(hub.home(owner) / FOLDER / EXERCISE)!r}).read()",
                    ],
                    capture_output=True,
                    text=True,
                )
                assert probe.returncode != 0 and "PermissionError" in probe.stderr, probe

            # 6. A link to a branch that does not exist: nbgitpuller's page says so, by name.
            page.goto(hub.link(LESSON, branch="no-such-branch"))
            expect(page.locator("body")).to_contain_text("no-such-branch", timeout=PULL_MS)
            page.screenshot(path=str(shots / "b-6-missing-branch.png"))
        except Exception:
            if page is not None:
                with contextlib.suppress(Exception):  # a hung page must not hide the failure
                    page.screenshot(path=str(shots / "failure.png"), full_page=True, timeout=10_000)
            print(f"screenshots: {shots}\nhub log: {hub.log}")
            raise
        finally:
            browser.close()

    # 7. Collect (the roster has a third learner who never logged in), then grade.
    roster = tmp_path / "roster.csv"
    roster.write_text(f"student_id,name\n{a},Ada\n{b},Bo\nnever{a},Cy\n")
    subs = tmp_path / "submissions"
    collect = subprocess.run(
        [
            sys.executable,
            "-m",
            "teaching",
            "collect",
            str(hub.homes),
            "--assignment",
            SET,
            "--folder",
            FOLDER,
            "--out",
            str(subs),
            "--roster",
            str(roster),
        ],
        capture_output=True,
        text=True,
        cwd=ROOT,
    )
    assert collect.returncode == 0, collect.stdout + collect.stderr
    assert f"[MISSING] never{a}: on the roster, but no home" in collect.stdout
    assert sorted(p.name for p in subs.iterdir()) == [f"{SET}-{a}.ipynb", f"{SET}-{b}.ipynb"]
    grades = tmp_path / "grades.csv"
    t0 = time.monotonic()
    graded = subprocess.run(
        [
            sys.executable,
            "-m",
            "teaching",
            "grade",
            str(subs),
            "--out",
            str(grades),
            "--assignment",
            SET,
            "--roster",
            str(roster),
            "--pattern",
            "default",
            "--jobs",
            "2",
            "--no-history",
        ],
        capture_output=True,
        text=True,
        cwd=ROOT,
    )
    hub.measured["grade_2_submissions_s"] = round(time.monotonic() - t0, 1)
    assert graded.returncode == 0, graded.stdout + graded.stderr
    rows = {r["submission"]: r for r in csv.DictReader(grades.open())}
    graded_a, graded_b = rows[f"{SET}-{a}.ipynb"], rows[f"{SET}-{b}.ipynb"]
    assert graded_a["status"] == graded_b["status"] == "ok", rows
    assert float(graded_a["q1 [2 pts]"]) == 2 and float(graded_b["q1 [2 pts]"]) == 0, rows
    assert float(graded_a["total"]) > float(graded_b["total"]) >= 0, rows
    problems = grades.with_name(f"{grades.stem}-roster.txt").read_text()
    assert f"no file from never{a} (Cy)" in problems, problems  # the learner who never logged in
    (tmp_path / "hub-measurements.json").write_text(json.dumps(hub.measured, indent=1))
    with capsys.disabled():
        print(f"\nhub class measurements: {json.dumps(hub.measured)}")
