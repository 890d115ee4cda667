"""`python -m course check`: passes on this machine, and fails loudly when a requirement is
missing."""

import os
import subprocess
import sys

import pytest

from course.selfcheck import environment as check
from course.selfcheck import hosted


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


def test_course_check_on_a_hosted_runtime_says_so_and_passes():
    env = {**os.environ, "COLAB_RELEASE_TAG": "release-colab_20261120-060000_RC00"}  # made up
    result = subprocess.run(
        [sys.executable, "-m", "course", "check"],
        capture_output=True,
        text=True,
        timeout=120,
        env=env,
    )
    assert result.returncode == 0, result.stdout + result.stderr
    assert result.stdout.startswith("[OK] runtime: Google Colab: the platform's own torch")
    [torch_line] = [line for line in result.stdout.splitlines() if line.startswith("[OK] torch:")]
    assert "the platform's own (supported: 2.10 to " in torch_line


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


# A CUDA build the machine's driver cannot run (faked: no GPU here), and hosted runtimes.


def test_a_driver_too_old_for_the_build_is_a_warn_naming_the_cuda12_build(monkeypatch):
    from course.measure import devices

    old_driver = devices.CudaStack(
        "13.0", 91000, "550.54.15", "12.4", ("sm_75",), torch_version="2.13.0"
    )
    monkeypatch.setattr(devices, "cuda_stack", lambda: old_driver)
    stack_lines = [c for c in check.check_torch() if c.name == "cuda stack"]
    [line] = stack_lines
    assert line.level == "WARN"  # torch still runs, on the CPU
    assert "older than 580" in line.detail and "download.pytorch.org/whl/cu126" in line.detail


@pytest.mark.parametrize(
    ("variable", "platform"),
    [
        ("COLAB_RELEASE_TAG", "Google Colab"),
        ("KAGGLE_KERNEL_RUN_TYPE", "Kaggle Notebooks"),
        ("JUPYTERHUB_USER", "JupyterHub"),
    ],
)
def test_each_hosted_runtime_is_detected_and_reported(monkeypatch, variable, platform):
    for _name, other, _source in hosted.HOSTED_RUNTIMES:
        monkeypatch.delenv(other, raising=False)
    assert check.hosted_runtime() is None
    assert check.check_runtime().detail.startswith("local install")
    monkeypatch.setenv(variable, "x")
    assert check.hosted_runtime() == platform
    assert check.check_runtime().detail.startswith(platform)


def _torch_installed(monkeypatch, tmp_path, version, hosted):
    (tmp_path / "requirements.in").write_text("torch\njupyterlab\n")
    (tmp_path / "requirements.txt").write_text("torch==2.13.0\njupyterlab==4.6.6\n")
    monkeypatch.setattr(check, "REQUIREMENTS_IN", tmp_path / "requirements.in")
    monkeypatch.setattr(check, "REQUIREMENTS_TXT", tmp_path / "requirements.txt")
    monkeypatch.setattr(check, "hosted_runtime", lambda: "Google Colab" if hosted else None)

    def installed(name):
        if name == "jupyterlab":
            raise check.metadata.PackageNotFoundError(name)
        return version

    monkeypatch.setattr(check.metadata, "version", installed)
    return {c.name: c for c in check.check_packages()}


@pytest.mark.parametrize("version", ["2.10.0", "2.11.0+cu128", "2.13.0+cu130"])
def test_on_a_hosted_runtime_a_torch_in_the_supported_range_is_ok(monkeypatch, tmp_path, version):
    found = _torch_installed(monkeypatch, tmp_path, version, hosted=True)
    assert found["torch"].level == "OK" and "the platform's own" in found["torch"].detail
    assert found["jupyterlab"].level == "OK"  # the platform serves the notebook


@pytest.mark.parametrize(("version", "side"), [("2.9.1+cu126", "older"), ("2.14.0", "newer")])
def test_on_a_hosted_runtime_a_torch_outside_the_range_is_a_warn(
    monkeypatch, tmp_path, version, side
):
    found = _torch_installed(monkeypatch, tmp_path, version, hosted=True)
    assert found["torch"].level == "WARN"
    assert f"{side} than the course supports (supported: 2.10 to 2.13)" in found["torch"].detail


@pytest.mark.parametrize(
    ("version", "level"), [("2.9.1", "WARN"), ("2.10.0", "OK"), ("2.14.0", "OK")]
)
def test_installed_from_a_wheel_without_the_lock_the_range_has_no_upper_end(version, level):
    # On Colab or Kaggle the course comes as a wheel: requirements/ (and so the pin) is not there.
    # Found on the Kaggle set of benchmarks/hosted_like.sh, which printed "supported: 2.11 to 2.10".
    found = check._hosted_torch(version, pinned=None)
    assert found.level == level
    assert "(supported: 2.10 or newer)" in found.detail


def test_locally_an_old_torch_and_a_missing_jupyterlab_stay_fails(monkeypatch, tmp_path):
    found = _torch_installed(monkeypatch, tmp_path, "2.9.1", hosted=False)
    assert found["torch"].level == "FAIL" and found["jupyterlab"].level == "FAIL"


def test_the_widget_extension_is_a_warn_not_a_fail_on_a_hosted_runtime(monkeypatch, tmp_path):
    monkeypatch.setattr(check.sys, "prefix", str(tmp_path))  # no labextension there
    monkeypatch.setitem(sys.modules, "jupyterlab", None)  # `import jupyterlab` fails
    monkeypatch.setattr(check, "hosted_runtime", lambda: None)
    local = {c.name: c.level for c in check.check_jupyter()}
    assert local["JupyterLab"] == "FAIL" and local["widget extension"] == "FAIL"
    monkeypatch.setattr(check, "hosted_runtime", lambda: "Kaggle Notebooks")
    hosted = {c.name: c.level for c in check.check_jupyter()}
    assert hosted["JupyterLab"] == "OK" and hosted["widget extension"] == "WARN"


def test_installed_from_a_wheel_the_check_reads_the_declared_ranges(monkeypatch, tmp_path):
    """No requirements/ beside the package (a wheel on Colab): each name the installed metadata
    declares for this platform is checked, none is reported as a missing requirements file."""
    monkeypatch.setattr(check, "REQUIREMENTS_IN", tmp_path / "learners.in")
    monkeypatch.setattr(check, "REQUIREMENTS_TXT", tmp_path / "learners.txt")
    names = [c.name for c in check.check_packages()]
    assert "requirements" not in names
    assert {"torch", "numpy", "ipywidgets", "matplotlib", "packaging"} <= set(names)
    assert "jupyterlab" not in names  # make lab's, not a dependency
