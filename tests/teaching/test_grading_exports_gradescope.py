"""Gradescope export against its "Autograder Specifications" (no sandbox): ``setup.sh`` and an
executable ``run_autograder`` at the archive's root; tests with ``score``, ``max_score``,
``status`` and a ``visibility`` among hidden, after_due_date, after_published, visible.
"""

from __future__ import annotations

import json
import stat
import types
import zipfile

import pytest
from export_cases import SET
from teaching.grading.exports import gradescope

VISIBILITY = {"hidden", "after_due_date", "after_published", "visible"}


def fake_set(form_only: str):
    """An assignment with q1 checked against the key and ``form_only`` checked for form only."""
    answer = types.SimpleNamespace
    return types.SimpleNamespace(
        questions=[
            types.SimpleNamespace(name="q1", answers=[answer(expect="solution")]),
            types.SimpleNamespace(name=form_only, answers=[answer(expect="none")]),
        ]
    )


def test_gradescope_results_hide_key_checked_scores_until_the_due_date(klass):
    g = klass.grades[f"{SET}-12.ipynb"]
    out = gradescope.results(g, fake_set("q2"))
    assert out["visibility"] == "after_due_date" and out["stdout_visibility"] in VISIBILITY
    tests = {t["name"]: t for t in out["tests"]}
    assert tests["q1"]["visibility"] == "after_due_date"  # its score depends on the key
    assert tests["q2"]["visibility"] == "visible"  # form only: the public check says as much
    assert (tests["q1"]["score"], tests["q1"]["max_score"], tests["q1"]["status"]) == (
        0,
        2.0,
        "failed",
    )
    assert "hint: GiB" in tests["q1"]["output"]
    for t in out["tests"]:
        assert t["visibility"] in VISIBILITY and 0 <= t["score"] <= t["max_score"]
        assert isinstance(t["number"], str) and t["status"] in ("passed", "failed")
    assert "score" not in out  # the tests carry it (the top level is optional then)
    with pytest.raises(ValueError, match="visibility"):
        gradescope.results(g, fake_set("q2"), "tomorrow")


def test_gradescope_gets_no_result_for_a_row_the_grader_could_not_grade(klass, tmp_path):
    kim = klass.grades[f"{SET}-15.ipynb"]  # the solution failed on the grading machine
    assert gradescope.results(kim, fake_set("q2")) is None  # never 0 with tests marked "right"
    gradescope.write(tmp_path / "grades.csv", klass.list, {})
    folders = {p.name: p for p in (tmp_path / "grades-gradescope").iterdir()}
    assert len(folders) == len(klass.list)
    assert not list(folders[f"{SET}-15.ipynb"].iterdir())
    assert (folders[f"{SET}-11.ipynb"] / "results.json").is_file()


def test_gradescope_archive_has_its_scripts_at_the_root(tmp_path):
    from teaching.grading.authoring import REPO

    path = gradescope.archive(SET, tmp_path / "a.zip", repo=REPO)
    with zipfile.ZipFile(path) as z:
        names = z.namelist()
        assert {"setup.sh", "run_autograder"} <= set(names)  # at the root, not in a folder
        for script in ("setup.sh", "run_autograder"):
            mode = z.getinfo(script).external_attr >> 16
            assert mode & stat.S_IXUSR, script
            assert z.read(script).startswith(b"#!"), script
        assert f"solutions/{SET}.ipynb" in names and "course/__main__.py" in names
        assert "instructors/teaching/grading/runner.py" in names  # the grader itself
        assert "requirements/instructors.txt" in names and "requirements/install.py" in names
        assert not [n for n in names if n.startswith("solutions/") and SET not in n]
        assert not [n for n in names if "__pycache__" in n or n.startswith("exercises/")]
        readme = z.read("README.md").decode()
        assert "768 MB" in readme and "3 GB" in readme and "Ubuntu 24.04" in readme
        assert f"--assignment {SET}" in z.read("run_autograder").decode()
    with pytest.raises(ValueError, match="no solution"):
        gradescope.archive("99_nothing", tmp_path / "b.zip", repo=REPO)


def unpacked(tmp_path, **kw):
    """The archive as Gradescope lays it out: /autograder/source and /autograder/submission."""
    import os

    from teaching.grading.authoring import REPO

    root = tmp_path / "autograder"
    (root / "submission").mkdir(parents=True)
    with zipfile.ZipFile(gradescope.archive(SET, tmp_path / "ag.zip", repo=REPO, **kw)) as z:
        z.extractall(root / "source")
        for info in z.infolist():
            os.chmod(root / "source" / info.filename, (info.external_attr >> 16) & 0o777)
    (root / "submission" / "mine.ipynb").write_text(
        '{"cells": [], "metadata": {}, "nbformat": 4, "nbformat_minor": 5}'
    )
    return root


@pytest.mark.slow  # a Python that imports the grader in a subprocess: about a minute here
def test_the_archive_grades_nothing_without_its_protections(tmp_path):
    """Run as Gradescope runs it where namespaces are refused (``COURSE_SANDBOX=off``): no
    results.json (staff see a failed run), the reason names the protections missing."""
    import os
    import subprocess
    import sys

    root = unpacked(tmp_path)
    env = {**os.environ, "AUTOGRADER_ROOT": str(root), "AUTOGRADER_PYTHON": sys.executable}
    env["COURSE_SANDBOX"] = "off"
    done = subprocess.run(
        [str(root / "source" / "run_autograder")], env=env, capture_output=True, text=True
    )
    assert done.returncode == 2, done.stderr[-2000:]
    assert not (root / "results" / "results.json").exists()
    assert "refusing to grade" in done.stderr and "hidden-files" in done.stderr
    readme = (root / "source" / "README.md").read_text()
    assert "--allow-unprotected" in readme and "grades nothing there" in readme


def test_an_archive_built_to_allow_it_grades_and_says_protections_were_off(tmp_path, monkeypatch):
    from teaching.grading import autograder, grades, sandbox

    root = unpacked(tmp_path, allow_unprotected=True)
    assert "--allow-unprotected" in (root / "source" / "run_autograder").read_text()
    monkeypatch.setattr(sandbox, "protections_off", lambda: ("hidden-files", "pid-namespace"))
    row = grades.Grade("mine.ipynb", SET, {"q1": 2.0}, {"q1": 2.0})
    monkeypatch.setattr(autograder, "grade_notebook", lambda *a, **k: row)
    results = root / "results" / "results.json"
    argv = ["gradescope", str(root / "submission"), str(results), "--assignment", SET]
    assert autograder.main(argv) == 2 and not results.exists()  # refused without the option
    assert autograder.main([*argv, "--allow-unprotected"]) == 0
    data = json.loads(results.read_text())
    assert data["extra_data"]["protections_off"] == ["hidden-files", "pid-namespace"]
    assert "protections off: hidden-files, pid-namespace" in data["output"]
