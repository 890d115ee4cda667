"""The hosted install: detection, the first cell on both paths (detection faked), the plan that
keeps the platform's torch, triton, numpy and ipywidgets, and checks fetched from the release."""

from __future__ import annotations

import importlib.util
import io
import json
import subprocess
from importlib import metadata
from types import SimpleNamespace

import pytest

from course.selfcheck import answers, hosted

REPO = "https://github.com/someone/course"
HOSTED_VARIABLES = [variable for _name, variable, _source in hosted.HOSTED_RUNTIMES]


@pytest.mark.parametrize(("name", "variable", "source"), hosted.HOSTED_RUNTIMES)
def test_each_platform_is_detected_by_its_variable(name, variable, source):
    assert hosted.hosted_runtime({variable: "1"}) == name
    assert source  # where the variable is documented or read


def test_no_variable_is_a_local_install_and_kaggle_wins_over_colabs_base_image():
    assert hosted.hosted_runtime({}) is None
    assert hosted.hosted_runtime({"HOME": "/root", "COLAB_RELEASE_TAG": ""}) is None
    both = {"COLAB_RELEASE_TAG": "release-colab", "KAGGLE_KERNEL_RUN_TYPE": "Interactive"}
    assert hosted.hosted_runtime(both) == "Kaggle Notebooks"


def _run_cell(monkeypatch, environ: dict[str, str], course_installed: bool) -> list[list[str]]:
    """Execute the install cell as a kernel would, with the environment, the import system and
    subprocess faked; the commands it ran."""
    for variable in [*HOSTED_VARIABLES, "COURSE_SOURCE"]:
        monkeypatch.delenv(variable, raising=False)
    for variable, value in environ.items():
        monkeypatch.setenv(variable, value)
    calls = []
    monkeypatch.setattr(subprocess, "run", lambda cmd, check: calls.append(cmd))
    real = importlib.util.find_spec
    fake = object() if course_installed else None
    monkeypatch.setattr(
        importlib.util, "find_spec", lambda n, *a: fake if n == "course" else real(n, *a)
    )
    exec(compile(hosted.install_cell(REPO, "1.2.3"), "<first cell>", "exec"), {})
    return calls


def test_the_first_cell_does_nothing_on_a_local_install(monkeypatch):
    assert _run_cell(monkeypatch, {}, course_installed=True) == []
    assert _run_cell(monkeypatch, {}, course_installed=False) == []  # no variable: not hosted


@pytest.mark.parametrize("variable", HOSTED_VARIABLES)
def test_the_first_cell_installs_this_release_on_a_hosted_runtime(monkeypatch, variable):
    calls = _run_cell(monkeypatch, {variable: "1"}, course_installed=False)
    archive = f"{REPO}/archive/refs/tags/v1.2.3.zip"
    assert calls[0][1:] == ["-m", "pip", "install", "-q", "--no-deps", archive]
    assert calls[1][1:] == ["-m", "course.selfcheck.hosted"]
    assert len(calls) == 2


def test_the_first_cell_leaves_a_course_already_there_and_takes_a_local_wheel(monkeypatch):
    assert _run_cell(monkeypatch, {"JUPYTERHUB_USER": "ada"}, course_installed=True) == []
    calls = _run_cell(
        monkeypatch,
        {"COLAB_RELEASE_TAG": "r", "COURSE_SOURCE": "dist/gpu_course-1.2.3-py3-none-any.whl"},
        course_installed=False,
    )
    assert calls[0][-1] == "dist/gpu_course-1.2.3-py3-none-any.whl"


REQUIRES = [
    "torch>=2.10",
    "triton>=3.6; sys_platform == 'linux'",
    "numpy>=2.0",
    "ipywidgets>=7.7",
    "pandas>=2.2",
    "pytest; extra == 'dev'",
]


def test_the_plan_keeps_the_platforms_torch_triton_numpy_and_ipywidgets():
    platform = {"torch": "2.10.0+cu128", "numpy": "2.0.2", "ipywidgets": "7.7.1"}
    requirements, constraints = hosted.install_plan(REQUIRES, platform.get)
    # torch 2.10 is below the range: kept all the same (course check says so), never replaced
    assert constraints == ["torch==2.10.0+cu128", "numpy==2.0.2", "ipywidgets==7.7.1"]
    assert requirements == ["triton>=3.6; sys_platform == 'linux'", "pandas>=2.2"]


def test_without_the_platforms_packages_the_plan_installs_the_ranges():
    requirements, constraints = hosted.install_plan(REQUIRES, lambda name: None)
    assert constraints == []
    assert requirements == REQUIRES[:-1]  # an extra's requirement is not the course's


def test_install_dependencies_hands_pip_the_plan_and_the_constraints(monkeypatch, capsys):
    seen = {}

    def fake_run(cmd, check):
        seen["cmd"] = cmd
        with open(cmd[cmd.index("-c") + 1]) as f:
            seen["constraints"] = f.read().split()
        return SimpleNamespace(returncode=0)

    monkeypatch.setattr(hosted, "_installed", {"torch": "2.11.0", "numpy": "2.1.3"}.get)
    assert hosted.install_dependencies(fake_run, requires=REQUIRES) == 0
    assert seen["constraints"] == ["torch==2.11.0", "numpy==2.1.3"]
    expected = ["triton>=3.6; sys_platform == 'linux'", "ipywidgets>=7.7", "pandas>=2.2"]
    assert seen["cmd"][-3:] == expected
    assert "Keeping the platform's torch 2.11.0, numpy 2.1.3" in capsys.readouterr().out


def test_the_installed_course_names_its_repository():
    assert hosted.repository_url().startswith("https://github.com/")


def test_an_exercise_sets_checks_come_from_the_release_the_course_was_installed_from(
    monkeypatch, tmp_path
):
    checks = {"assignment": "04_model_memory", "questions": {}}
    asked = []

    def fake_urlopen(url, timeout):
        asked.append(url)
        return io.BytesIO(json.dumps(checks).encode())

    path = hosted.fetch_checks("04_model_memory", tmp_path / "checks", urlopen=fake_urlopen)
    owner_repo = hosted.repository_url().removeprefix("https://github.com/")
    version = metadata.version(hosted.DISTRIBUTION)
    assert asked == [
        f"https://raw.githubusercontent.com/{owner_repo}/v{version}/exercises/checks/"
        "04_model_memory.json"
    ]
    assert json.loads(path.read_text()) == checks


def test_the_checker_fetches_missing_checks_only_on_a_hosted_runtime(monkeypatch, tmp_path):
    monkeypatch.chdir(tmp_path)
    fetched = []
    monkeypatch.setattr(hosted, "fetch_checks", lambda name, folder: fetched.append(name) or 1)
    for variable in HOSTED_VARIABLES:
        monkeypatch.delenv(variable, raising=False)
    with pytest.raises(FileNotFoundError, match="open the notebook from the exercises/ folder"):
        answers._find_checks("no_such_set")
    monkeypatch.setenv("KAGGLE_KERNEL_RUN_TYPE", "Interactive")
    assert answers._find_checks("no_such_set") == 1
    assert fetched == ["no_such_set"]


def test_nothing_to_install_runs_no_pip(monkeypatch):
    monkeypatch.setattr(hosted, "_installed", lambda name: "1.0")
    ran = []
    assert hosted.install_dependencies(ran.append, requires=["torch>=2.11", "numpy>=2"]) == 0
    assert ran == []
