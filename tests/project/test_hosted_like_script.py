"""benchmarks/hosted_like.sh finds a Python of the platform's version (Colab 3.13, Kaggle 3.12) on
PATH, among pyenv's versions or through uv, or says which to install; it used to need PYTHON= by
hand. Run on a copy of the script with a PATH and HOME of the test's own, and stand-in Pythons
that answer the version query and fail at anything else, so nothing is ever installed."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def _run(tmp_path: Path, *, path: list[Path], **env: str) -> subprocess.CompletedProcess:
    copy = tmp_path / "repo" / "benchmarks" / "hosted_like.sh"
    copy.parent.mkdir(parents=True, exist_ok=True)
    shutil.copy(ROOT / "benchmarks" / "hosted_like.sh", copy)
    base = {"PATH": os.pathsep.join([*map(str, path), "/usr/bin", "/bin"]), "HOME": str(tmp_path)}
    return subprocess.run(
        ["bash", str(copy)],
        env={**base, "VENV": str(tmp_path / "venv"), **env},
        capture_output=True,
        text=True,
        timeout=60,
    )


def _stand_in(folder: Path, name: str, version: str) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    python = folder / name
    python.write_text(f'#!/bin/sh\n[ "$1" = -c ] && echo {version} && exit 0\nexit 7\n')
    python.chmod(0o755)
    return python


def test_without_a_python_of_the_platforms_version_it_says_which_to_install(tmp_path):
    done = _run(tmp_path, path=[])
    assert done.returncode == 2, done.stdout + done.stderr
    assert "no Python 3.13 (colab's version) here" in done.stderr
    assert "uv python install 3.13" in done.stderr and "PYTHON=" in done.stderr
    done = _run(tmp_path, path=[], PLATFORM_SET="kaggle")
    assert done.returncode == 2 and "no Python 3.12 (kaggle's version)" in done.stderr
    assert not (tmp_path / "venv").exists()


def test_a_python_of_another_version_is_refused_by_name(tmp_path):
    done = _run(tmp_path, path=[], PYTHON=sys.executable)
    assert done.returncode == 2
    assert f"PYTHON={sys.executable} is not Python 3.13, colab's version" in done.stderr


def test_it_finds_one_on_path_or_among_pyenvs_versions(tmp_path):
    on_path = _stand_in(tmp_path / "bin", "python3.13", "3.13")
    done = _run(tmp_path, path=[on_path.parent])
    assert "== Python 3.13 for colab: python3.13" in done.stdout, done.stdout + done.stderr
    assert done.returncode != 0  # the stand-in cannot make a virtual environment
    pyenv = _stand_in(tmp_path / ".pyenv" / "versions" / "3.12.1" / "bin", "python3.12", "3.12")
    done = _run(tmp_path, path=[], PLATFORM_SET="kaggle")
    assert f"== Python 3.12 for kaggle: {pyenv}" in done.stdout, done.stdout + done.stderr
