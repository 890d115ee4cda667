"""Gradescope export against its "Autograder Specifications" (no sandbox): ``setup.sh`` and an
executable ``run_autograder`` at the archive's root; tests with ``score``, ``max_score``,
``status`` and a ``visibility`` among hidden, after_due_date, after_published, visible.
"""

from __future__ import annotations

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
