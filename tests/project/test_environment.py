"""Two locks, generated, agreeing with each other and with what declares them.

``make lock`` writes ``requirements/learners.txt`` and ``requirements/instructors.txt`` from the
``.in`` files (uv, universal); ``tests/project/test_installable.py`` checks that they install on
every
platform. Here: every package is pinned, every top-level requirement is in its lock, the learners'
lock pins each package it shares with the instructors' at the same version, torch is pinned in one
place, and environment.yml and pyproject.toml point at the same lock.
"""

import re
import tomllib
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
REQUIREMENTS = ROOT / "requirements"


def _name(text: str) -> str:
    return re.sub(r"[-_.]+", "-", re.split(r"[=<>!~;#\s\[]", text.strip(), maxsplit=1)[0]).lower()


def _pins(lock: str) -> dict[tuple[str, str], str]:
    """(name, marker) -> version of every requirement line of a lock."""
    pins = {}
    for line in (REQUIREMENTS / lock).read_text().splitlines():
        if line and line[0].isalnum():
            requirement = line.split("#")[0].strip()
            assert "==" in requirement, f"{lock}: not pinned: {line}"
            marker = requirement.split(";", 1)[1].strip() if ";" in requirement else ""
            pins[(_name(requirement), marker)] = requirement.split(";")[0].split("==")[1].strip()
    return pins


@pytest.mark.parametrize("lock", ["learners", "instructors"])
def test_every_top_level_requirement_is_in_its_lock(lock):
    locked = {name for name, _ in _pins(f"{lock}.txt")}
    for line in (REQUIREMENTS / f"{lock}.in").read_text().splitlines():
        if line.strip() and not line.startswith(("#", "-")):
            assert _name(line) in locked, f"{_name(line)} is in {lock}.in but not in {lock}.txt"


def test_the_instructors_set_includes_the_learners():
    assert "-r learners.in" in (REQUIREMENTS / "instructors.in").read_text().splitlines()


def test_shared_packages_have_one_version():
    learners, instructors = _pins("learners.txt"), _pins("instructors.txt")
    differ = {k: (v, instructors[k]) for k, v in learners.items() if instructors.get(k, v) != v}
    assert not differ, f"the two locks disagree (run `make lock`): {differ}"
    missing = {k for k in learners if k not in instructors}
    assert not missing, f"in the learners' lock only: {missing}"


def test_the_lock_follows_torchs_own_dependencies():
    """torch 2.13.0 from PyPI requires triton 3.7.1 on Linux: the lock cannot pin another."""
    pins = {name: v for (name, _), v in _pins("learners.txt").items()}
    assert pins["torch"] == "2.13.0"
    assert pins["triton"] == "3.7.1"


def test_torch_is_pinned_in_one_place():
    for path in ("pyproject.toml", "instructors/pyproject.toml", "Makefile", "environment.yml"):
        assert "torch==" not in (ROOT / path).read_text(), path
    assert (REQUIREMENTS / "learners.in").read_text().count("torch==") == 1
    assert "torch==" not in (REQUIREMENTS / "instructors.in").read_text()


def test_environment_yml_installs_the_learners_lock_and_the_package():
    pip = (ROOT / "environment.yml").read_text().split("- pip:", 1)[1].split()
    assert pip == ["-", "-r", "requirements/learners.txt", "-", "-e", "."]


def test_the_locks_start_at_the_python_pyproject_requires():
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    assert project["requires-python"] == ">=3.11"
    assert "--python-version 3.11" in (ROOT / "Makefile").read_text()
