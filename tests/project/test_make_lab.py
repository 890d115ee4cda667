"""`make lab` on an installed checkout: starts at once (no reinstall), serves the course on
loopback, and opens the learner's copies in work/ (made once, never overwritten), not the tracked
lessons."""

import contextlib
import json
import os
import re
import shutil
import signal
import socket
import subprocess
import time
import urllib.error
import urllib.request
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _get_json_when_listening(url: str, seconds: float = 20) -> dict:
    """GET a JSON URL, retrying while the port refuses (the server logs its URL just before it
    accepts connections)."""
    deadline = time.monotonic() + seconds
    while True:
        try:
            return json.load(urllib.request.urlopen(url, timeout=10))
        except urllib.error.URLError as err:
            if not isinstance(err.reason, ConnectionRefusedError) or time.monotonic() > deadline:
                raise
            time.sleep(0.2)


@pytest.mark.skipif(shutil.which("make") is None, reason="make is not installed")
@pytest.mark.timeout(120)
def test_make_lab_serves_lesson_00_on_loopback_with_a_token():
    if not (ROOT / ".venv" / ".learners-installed").exists():
        pytest.skip("needs the .venv that `make install` creates (make test creates it first)")
    port = _free_port()
    copy = ROOT / "work" / "notebooks" / "00_setup.ipynb"
    mine = (
        copy.exists() and copy.read_bytes() != (ROOT / "notebooks" / "00_setup.ipynb").read_bytes()
    )
    before = copy.read_bytes() if copy.exists() else None
    proc = subprocess.Popen(
        ["make", "--no-print-directory", "lab", f"PORT={port}"],
        cwd=ROOT,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
        start_new_session=True,
        env={**os.environ, "BROWSER": "true"},
    )
    output, url = [], None
    try:
        deadline = time.monotonic() + 90
        while url is None and time.monotonic() < deadline and proc.poll() is None:
            line = proc.stdout.readline()
            output.append(line)
            if match := re.search(rf"http://127\.0\.0\.1:{port}/lab\S*\?token=(\w+)", line):
                url, token = match.group(0), match.group(1)
        assert url, "JupyterLab did not print its URL:\n" + "".join(output[-30:])
        said = "".join(output)
        assert "pip install" not in said and "install.py" not in said, "`make lab` reinstalled"
        assert "/lab/tree/work/notebooks/00_setup.ipynb" in url
        copy = ROOT / "work" / "notebooks" / "00_setup.ipynb"
        assert copy.read_bytes() == (ROOT / "notebooks" / "00_setup.ipynb").read_bytes() or mine
        assert (ROOT / "work" / "exercises" / "checks").is_dir()
        api = f"http://127.0.0.1:{port}/api/contents/work/notebooks?token={token}"
        listing = _get_json_when_listening(api)
        assert "00_setup.ipynb" in {item["name"] for item in listing["content"]}
        if before is not None:
            assert copy.read_bytes() == before, "make lab must never overwrite a learner's copy"
        with pytest.raises(urllib.error.HTTPError):  # no token, no access
            urllib.request.urlopen(f"http://127.0.0.1:{port}/api/contents/notebooks", timeout=10)
    finally:
        with contextlib.suppress(ProcessLookupError):  # make already exited: its output says why
            os.killpg(proc.pid, signal.SIGTERM)
        try:
            proc.wait(timeout=15)
        except subprocess.TimeoutExpired:
            os.killpg(proc.pid, signal.SIGKILL)


@pytest.mark.skipif(shutil.which("make") is None, reason="make is not installed")
@pytest.mark.parametrize(
    ("target", "instructors"), [("lab", False), ("check", False), ("test", True), ("grade", True)]
)
def test_learners_targets_install_the_learners_set_only(target, instructors):
    """`make -n -B TARGET` prints every command the target would run, installed or not."""
    plan = subprocess.run(
        ["make", "-n", "-B", "--no-print-directory", target],
        cwd=ROOT,
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    assert "requirements/install.py requirements/learners.txt" in plan
    assert ("requirements/instructors.txt" in plan) is instructors, plan
    assert ("-e instructors" in plan) is instructors, plan
