"""`python -m course check`: passes on this machine, and fails loudly when a requirement is
missing."""

import subprocess
import sys

from course.selfcheck import environment as check


def test_course_check_passes_here_with_one_ok_line_per_requirement():
    result = subprocess.run(
        [sys.executable, "-m", "course", "check"], capture_output=True, text=True, timeout=120
    )
    assert result.returncode == 0, result.stdout + result.stderr
    lines = result.stdout.strip().splitlines()
    assert all(line.startswith("[OK] ") for line in lines[:-1]), result.stdout
    for name in ("python", "torch", "jupyterlab", "ipywidgets", "widget extension", "cpu"):
        assert any(line.startswith(f"[OK] {name}:") for line in lines), name
    assert lines[-1].endswith("0 FAIL: the course can run here")


def test_a_missing_package_is_a_fail_and_the_exit_status_says_so(tmp_path, monkeypatch, capsys):
    fake_in = tmp_path / "requirements.in"
    fake_in.write_text("numpy\nno-such-package-for-the-course  # made up\n")
    monkeypatch.setattr(check, "REQUIREMENTS_IN", fake_in)
    monkeypatch.setattr(check, "REQUIREMENTS_TXT", tmp_path / "requirements.txt")
    assert check.run_checks() == 1
    out = capsys.readouterr().out
    assert "[FAIL] no-such-package-for-the-course: not installed" in out


def test_a_version_other_than_the_pin_is_a_warn_showing_the_pin(tmp_path, monkeypatch, capsys):
    (tmp_path / "requirements.in").write_text("numpy\n")
    (tmp_path / "requirements.txt").write_text("numpy==0.0.1\n")
    monkeypatch.setattr(check, "REQUIREMENTS_IN", tmp_path / "requirements.in")
    monkeypatch.setattr(check, "REQUIREMENTS_TXT", tmp_path / "requirements.txt")
    [numpy_check] = check.check_packages()
    assert numpy_check.ok and numpy_check.warn and "0.0.1 pinned" in numpy_check.detail
    assert str(numpy_check).startswith("[WARN] numpy:")
    monkeypatch.setattr(check, "check_torch", list)
    monkeypatch.setattr(check, "check_jupyter", list)
    assert check.run_checks() == 0  # a WARN does not stop the course
    assert capsys.readouterr().out.strip().endswith("0 FAIL: the course can run here")


def test_torch_older_than_the_minimum_is_a_fail(tmp_path, monkeypatch):
    (tmp_path / "requirements.in").write_text("torch\n")
    (tmp_path / "requirements.txt").write_text("torch==2.13.0\n")
    monkeypatch.setattr(check, "REQUIREMENTS_IN", tmp_path / "requirements.in")
    monkeypatch.setattr(check, "REQUIREMENTS_TXT", tmp_path / "requirements.txt")
    monkeypatch.setattr(check, "MIN_TORCH", (99, 0))
    [torch_check] = check.check_packages()
    assert not torch_check.ok and "needs >= 99.0" in torch_check.detail


def test_a_missing_development_tool_is_a_warn(tmp_path, monkeypatch):
    (tmp_path / "requirements.in").write_text("ruff\n")
    monkeypatch.setattr(check, "REQUIREMENTS_IN", tmp_path / "requirements.in")
    monkeypatch.setattr(check, "REQUIREMENTS_TXT", tmp_path / "requirements.txt")
    monkeypatch.setattr(check.metadata, "version", _missing)
    [ruff_check] = check.check_packages()
    assert ruff_check.level == "WARN" and "develop" in ruff_check.detail


def _missing(name):
    raise check.metadata.PackageNotFoundError(name)


def test_an_old_python_is_a_fail(monkeypatch):
    monkeypatch.setattr(check, "MIN_PYTHON", (99, 0))
    assert not check.check_python().ok


def test_installed_from_a_wheel_the_check_reads_the_declared_ranges(monkeypatch, tmp_path):
    """No requirements/ beside the package (a wheel on Colab): each name the installed metadata
    declares for this platform is checked, none is reported as a missing requirements file."""
    monkeypatch.setattr(check, "REQUIREMENTS_IN", tmp_path / "learners.in")
    monkeypatch.setattr(check, "REQUIREMENTS_TXT", tmp_path / "learners.txt")
    names = [c.name for c in check.check_packages()]
    assert "requirements" not in names
    assert {"torch", "numpy", "ipywidgets", "matplotlib", "packaging"} <= set(names)
    assert "jupyterlab" not in names  # make lab's, not a dependency
