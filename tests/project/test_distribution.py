"""The learners' package as it installs beside a hosted platform's packages: ``[project]
dependencies`` are ranges that hold what the lessons import and contain the lock; torch's lower
bound is ``MIN_TORCH``; the wheel (``make dist``) carries ``course`` and its data, not
``teaching``; and pip keeps installed versions that satisfy the ranges (it replaces nothing here,
where every one is installed)."""

from __future__ import annotations

import json
import subprocess
import sys
import tomllib
import zipfile
from pathlib import Path

import pytest
from packaging.requirements import Requirement
from packaging.utils import canonicalize_name

from course.selfcheck.environment import MIN_TORCH

ROOT = Path(__file__).resolve().parents[2]
PROJECT = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
DEPENDENCIES = {
    canonicalize_name(Requirement(r).name): Requirement(r) for r in PROJECT["dependencies"]
}


def _learners_in() -> set[str]:
    names = set()
    for line in (ROOT / "requirements" / "learners.in").read_text().splitlines():
        line = line.split("#", 1)[0].strip()
        if line:
            names.add(canonicalize_name(Requirement(line).name))
    return names


def test_dependencies_are_what_the_lessons_import_less_jupyterlab():
    assert set(DEPENDENCIES) == _learners_in() - {"jupyterlab"}


def test_dependencies_are_ranges_not_pins_with_lower_bounds():
    for name, requirement in DEPENDENCIES.items():
        operators = {s.operator for s in requirement.specifier}
        assert operators == {">="}, f"{name}: {requirement.specifier} (a lower bound, no pin)"


def test_torchs_lower_bound_is_min_torch():
    (bound,) = DEPENDENCIES["torch"].specifier
    assert tuple(int(p) for p in bound.version.split(".")) == MIN_TORCH


def test_every_version_the_lock_pins_lies_inside_the_ranges():
    pinned = 0
    for line in (ROOT / "requirements" / "learners.txt").read_text().splitlines():
        spec = line.split("#", 1)[0].split(";", 1)[0].strip()
        if "==" not in spec:
            continue
        name, version = spec.split("==")
        requirement = DEPENDENCIES.get(canonicalize_name(name))
        if requirement is not None:
            pinned += 1
            assert requirement.specifier.contains(version, prereleases=True), (name, version)
    assert pinned >= len(DEPENDENCIES) - 1  # triton is pinned too, for Linux


def test_the_repository_url_is_one_github_address():
    assert PROJECT["urls"]["Repository"].startswith("https://github.com/")


@pytest.fixture(scope="module")
def wheel(tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("dist")
    cmd = [sys.executable, "-m", "pip", "wheel", "-q", "--no-deps", "--wheel-dir", str(out)]
    subprocess.run([*cmd, str(ROOT)], check=True, timeout=300)
    (path,) = out.glob("gpu_course-*.whl")
    return path


@pytest.mark.slow
def test_the_wheel_holds_the_learners_package_its_data_and_ranges(wheel):
    names = zipfile.ZipFile(wheel).namelist()
    reference = ROOT / "course" / "facts" / "data" / "reference"
    for data in reference.rglob("*.*"):
        assert data.relative_to(ROOT).as_posix() in names, data
    assert "course/selfcheck/hosted.py" in names
    for data in (ROOT / "course" / "distributed" / "schemas").glob("*.json"):
        assert data.relative_to(ROOT).as_posix() in names, data  # manifests.check reads them
    assert not [n for n in names if n.startswith(("teaching/", "tests/", "instructors/"))]
    meta = zipfile.ZipFile(wheel).read(next(n for n in names if n.endswith("METADATA"))).decode()
    assert f"Requires-Dist: torch>={'.'.join(map(str, MIN_TORCH))}\n" in meta
    assert f"Project-URL: Repository, {PROJECT['urls']['Repository']}" in meta


@pytest.mark.slow
def test_pip_keeps_every_installed_version_that_satisfies_a_range(wheel):
    """Installing the wheel with its dependencies here, where torch (a local +cpu build), numpy,
    ipywidgets... are installed inside the ranges, installs the course alone: pip's default
    strategy (only-if-needed) never replaces a satisfying installed version."""
    done = subprocess.run(
        [sys.executable, "-m", "pip", "install", "--dry-run", "--quiet", "--report", "-"]
        + ["--no-index", str(wheel)],
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert done.returncode == 0, done.stderr
    installs = [i["metadata"]["name"] for i in json.loads(done.stdout)["install"]]
    assert installs == ["gpu-course"]
