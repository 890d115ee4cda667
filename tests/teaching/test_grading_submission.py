"""One submission: read without trusting it, its set told, its row built (the sandboxed run itself
is replaced here; tests/teaching/test_grading_sandbox.py and test_grading_class.py run it)."""

from __future__ import annotations

import json

import nbformat
import pytest
from teaching.grading import authoring, extract, grades, spec, submission

SET = "00_units_and_memory"


def _notebook(path, metadata=None):
    nb = nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell("x = 1")])
    nb.metadata.update(metadata or {})
    path.write_text(nbformat.writes(nb))
    return path


def test_a_link_a_json_bomb_and_a_non_notebook_are_refused_with_a_reason(tmp_path):
    real = _notebook(tmp_path / "real.ipynb")
    (tmp_path / "link.ipynb").symlink_to(real)
    (tmp_path / "bomb.ipynb").write_text("[" * (submission.MAX_CONTAINERS + 1))
    (tmp_path / "plain.ipynb").write_text(json.dumps({"hello": 1}))
    for name, why in [("link", "cannot read"), ("bomb", "JSON objects"), ("plain", "not a")]:
        nb, problem = submission.read_submission(tmp_path / f"{name}.ipynb")
        assert nb is None and why in problem, (name, problem)
    nb, problem = submission.read_submission(real)
    assert problem == "" and nb.cells[0].source == "x = 1"


def test_the_set_comes_from_the_file_name_and_metadata_that_disagrees_is_reported(tmp_path):
    known = [SET, "01_hardware"]
    path = _notebook(tmp_path / f"{SET}-ana.ipynb", {"course": {"assignment": "01_hardware"}})
    nb, _ = submission.read_submission(path)
    name, note = submission.identify(path, nb, known, None)
    assert name == SET and "01_hardware" in note
    bare = _notebook(tmp_path / "mine.ipynb", {"course": {"assignment": "01_hardware"}})
    nb, _ = submission.read_submission(bare)
    assert submission.identify(bare, nb, known, None)[0] == "01_hardware"


def _set_grader(key_problems=None) -> submission.SetGrader:
    setup = spec.read(authoring.SOLUTIONS_DIR / f"{SET}.ipynb")
    setg = submission.SetGrader(setup, {"probes": {}, "answers": {}, "extras": {}})
    setg.key_problems = key_problems or {}
    return setg


def test_a_file_of_no_known_set_gets_a_row_that_says_how_to_name_it(tmp_path):
    path = _notebook(tmp_path / "mine.ipynb")
    row = submission.grade_file(
        path,
        None,
        "",
        None,
        "",
        known=[SET],
        execution=extract.Execution(timeout_seconds=1, cell_timeout_seconds=1),
        log_dir=tmp_path / "logs",
    )
    assert row.status == "unknown-assignment" and "name the file after its set" in row.reason


@pytest.mark.parametrize("key_differs", [True, False])
def test_a_row_that_loses_points_where_the_key_differs_from_the_release_is_marked(
    monkeypatch, tmp_path, key_differs
):
    setg = _set_grader({"q1": "the key moved"} if key_differs else {})
    first = next(iter(setg.points))

    def lose_first(path, nb, setg, **_):
        row = grades.Grade(path.name, SET, points=setg.points)
        row.scores = {q: (0.0 if q == first else p) for q, p in setg.points.items()}
        return row

    monkeypatch.setattr(submission, "grade_one", lose_first)
    monkeypatch.setattr(submission.keycheck, "missing_names", lambda *a: {})
    path = _notebook(tmp_path / f"{SET}.ipynb")
    nb, _ = submission.read_submission(path)
    setg.key_problems = {first: "the key moved"} if key_differs else {}
    row = submission.grade_file(
        path,
        nb,
        "",
        setg,
        "",
        known=[SET],
        execution=extract.Execution(timeout_seconds=1, cell_timeout_seconds=1),
        log_dir=tmp_path / "logs",
    )
    assert (submission.KEY_MARK in row.reason) is key_differs
