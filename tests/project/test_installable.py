"""The locks install where learners are: resolved against the public index (PyPI) for every platform
and Python the course supports, without downloading a wheel.

``uv pip install --dry-run --python-platform P --python-version V`` resolves a lock for another
platform from the index's metadata alone and fails with the resolver's own message (a pin that
contradicts torch's dependencies, a package with no wheel for the platform). Pip's local
configuration (the course machines' wheel folder and constraints) is not read by uv, so this is the
learner's view. Needs the network: skipped without it, except in CI (``CI=true``), where it fails.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
import urllib.request
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
LOCKS = ("learners", "instructors")
#: uv's names of the platforms learners use (macOS: torch's arm64 wheels need macOS 14 or newer).
PLATFORMS = {
    "Linux x86-64": ("x86_64-manylinux_2_28", {}),
    "Linux aarch64": ("aarch64-manylinux_2_28", {}),
    "macOS arm64": ("aarch64-apple-darwin", {"MACOSX_DEPLOYMENT_TARGET": "14.0"}),
    "Windows x86-64": ("x86_64-pc-windows-msvc", {}),
}
PYTHONS = ("3.11", "3.12", "3.13")


def _uv() -> str:
    found = shutil.which("uv", path=str(Path(sys.executable).parent)) or shutil.which("uv")
    if not found:
        pytest.fail(
            "uv is not installed: it is in requirements/instructors.in (make install-instructors)"
        )
    return found


@pytest.fixture(scope="module")
def index_reachable() -> None:
    try:
        urllib.request.urlopen("https://pypi.org/simple/pip/", timeout=10).close()
    except OSError as e:
        if os.environ.get("CI"):
            pytest.fail(f"PyPI is unreachable in CI, so the locks cannot be checked: {e}")
        pytest.skip(f"PyPI is unreachable here ({e}): the locks are checked where it is")


def resolve(lock: Path, platform: str, python: str, target: Path) -> tuple[bool, str, set[str]]:
    """Resolve ``lock`` for ``platform`` and ``python`` as uv would install it: (ok, the resolver's
    message, the names it would install)."""
    uv_platform, env = PLATFORMS[platform]
    command = [_uv(), "pip", "install", "--dry-run", "--python-platform", uv_platform]
    command += ["--python-version", python, "--target", str(target), "-r", str(lock)]
    done = subprocess.run(
        command, capture_output=True, text=True, env=os.environ | env, timeout=300, check=False
    )
    names = {m.group(1).lower() for m in re.finditer(r"^ \+ ([\w.-]+)==", done.stderr, re.M)}
    return done.returncode == 0, done.stderr.strip(), names


def _locked_names(lock: Path) -> set[str]:
    return {
        re.split(r"[=;\s]", line, maxsplit=1)[0].lower()
        for line in lock.read_text().splitlines()
        if line and line[0].isalnum()
    }


def _resolve_everywhere(lock: Path, tmp_path: Path) -> list[str]:
    cases = [(p, v) for p in PLATFORMS for v in PYTHONS]
    with ThreadPoolExecutor(max_workers=4) as pool:
        results = pool.map(
            lambda case: (case, *resolve(lock, *case, tmp_path / f"{case[0]}-{case[1]}")), cases
        )
    problems = []
    locked = _locked_names(lock)
    for (platform, python), ok, message, names in results:
        if not ok:
            problems.append(f"{platform}, Python {python}:\n{message}")
        elif extra := names - locked:
            problems.append(f"{platform}, Python {python}: needs packages the lock lacks: {extra}")
    return problems


@pytest.mark.parametrize("name", LOCKS)
def test_lock_resolves_for_every_platform_and_python(name, tmp_path, index_reachable):
    problems = _resolve_everywhere(ROOT / "requirements" / f"{name}.txt", tmp_path)
    assert not problems, f"requirements/{name}.txt does not install everywhere:\n\n" + "\n\n".join(
        problems
    )


def test_the_check_fails_on_the_lock_it_was_written_for(tmp_path, index_reachable):
    """The lock before this check (triton 3.5.1 beside torch 2.13.0, which needs 3.7.1 on Linux)."""
    lock = tmp_path / "old.txt"
    lock.write_text('torch==2.13.0\ntriton==3.5.1 ; sys_platform == "linux"\n')
    ok, message, _ = resolve(lock, "Linux x86-64", "3.12", tmp_path / "target")
    assert not ok and "triton" in message, message
    ok, message, _ = resolve(lock, "Windows x86-64", "3.12", tmp_path / "target-win")
    assert ok, message  # no triton on Windows: the same lock holds there
