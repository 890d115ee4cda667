"""The repo2docker / Binder configuration (binder/) builds from the repository's own files: the
learners' lock through requirements/install.py, the course itself, a Python the locks cover."""

from __future__ import annotations

import re
import shlex
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
BINDER = ROOT / "binder"


def _commands() -> list[list[str]]:
    lines = (BINDER / "postBuild").read_text().splitlines()
    return [shlex.split(x) for x in lines if x.strip() and not x.lstrip().startswith(("#", "set "))]


def test_the_python_is_one_the_locks_resolve_for():
    """test_installable.py resolves each lock for these Pythons (its PYTHONS)."""
    installable = (ROOT / "tests" / "project" / "test_installable.py").read_text()
    pythons = re.search(r"^PYTHONS = \((.*)\)$", installable, re.M).group(1)
    (version,) = re.fullmatch(r"python-(3\.\d+)\n", (BINDER / "runtime.txt").read_text()).groups()
    assert f'"{version}"' in pythons


def test_post_build_installs_the_learners_lock_and_the_course_from_this_repository():
    commands = _commands()
    installs = [c for c in commands if "requirements/install.py" in c]
    assert installs, commands
    lock = installs[0][installs[0].index("requirements/install.py") + 1]
    assert (ROOT / lock).is_file() and lock == "requirements/learners.txt"
    assert any(c[-2:] == ["-e", "."] and "--no-deps" in c for c in commands)
    assert any(c[-3:] == ["-m", "course", "check"] for c in commands)  # the image runs the course
    for c in commands:  # every file it names is in the repository
        for word in c:
            if "/" in word and not word.startswith(("http", "TORCH_INDEX=")):
                assert (ROOT / word).exists(), word


def test_post_build_is_executable_and_stops_on_the_first_error():
    post_build = BINDER / "postBuild"
    assert post_build.stat().st_mode & 0o111
    assert "set -euo pipefail" in post_build.read_text()
    assert not (BINDER / "requirements.txt").exists()  # repo2docker would install it first
