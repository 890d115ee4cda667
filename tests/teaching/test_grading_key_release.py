"""Instructor mistakes are said before anyone is graded (issue 35): a solution edited after the
release, an answer renamed since, and a notebook made from the earlier version. The values are set
00's Q1 (Llama 2 7B's 6,738,415,616 parameters in fp16), checked against its real released checks;
the sandbox is not started (the key and each grade are given)."""

from __future__ import annotations

import dataclasses
import json
import subprocess

import nbformat
import pytest
from teaching.grading import authoring, gradebook, keycheck, sandbox, spec

SET = "00_units_and_memory"
ASSIGNMENT = spec.read(authoring.SOLUTIONS_DIR / f"{SET}.ipynb")
RELEASED = json.loads((authoring.EXERCISES_DIR / "checks" / f"{SET}.json").read_text())
WEIGHTS_BYTES = 6_738_415_616 * 2  # fp16: what the released Q1 check accepts


def key(weights_bytes: int) -> dict:
    q1 = {
        "weights_bytes": {"value": weights_bytes},
        "weights_gb": {"value": weights_bytes / 10**9},
        "weights_gib": {"value": weights_bytes / 2**30},
    }
    return {"answers": {"q1": q1}, "extras": {}, "probes": {}}


def test_a_key_that_agrees_with_the_release_raises_nothing():
    assert keycheck.key_vs_release(ASSIGNMENT, key(WEIGHTS_BYTES), RELEASED) == {}


def test_a_solution_edited_after_the_release_is_named_per_question():
    problems = keycheck.key_vs_release(ASSIGNMENT, key(2 * WEIGHTS_BYTES), RELEASED)
    assert list(problems) == ["q1"]
    assert "fails the released check for weights_bytes" in problems["q1"]


def test_an_answer_renamed_since_the_release_is_named_and_an_old_notebook_is_spotted():
    q1 = ASSIGNMENT.questions[0]
    renamed = dataclasses.replace(q1.answers[0], name="bytes_fp16", expr="bytes_fp16")
    newer = dataclasses.replace(
        ASSIGNMENT,
        questions=[dataclasses.replace(q1, answers=(renamed, *q1.answers[1:]))]
        + ASSIGNMENT.questions[1:],
    )
    problems = keycheck.key_vs_release(newer, key(WEIGHTS_BYTES), RELEASED)
    assert list(problems) == ["q1"] and "renamed since the release" in problems["q1"]
    released_notebook = nbformat.read(authoring.EXERCISES_DIR / f"{SET}.ipynb", as_version=4)
    assert keycheck.missing_names(newer, released_notebook) == {"q1": ["bytes_fp16"]}
    assert keycheck.missing_names(ASSIGNMENT, released_notebook) == {}  # a blank names them all


def test_a_solution_with_uncommitted_changes_is_spotted(tmp_path):
    def git(*args):
        subprocess.run(["git", "-C", str(tmp_path), *args], check=True, capture_output=True)

    solution = tmp_path / "solutions" / f"{SET}.ipynb"
    solution.parent.mkdir()
    solution.write_text("{}")
    git("init", "-q")
    git("add", ".")
    git("-c", "user.name=t", "-c", "user.email=t@t", "commit", "-qm", "release")
    assert not keycheck.uncommitted(solution, tmp_path)
    solution.write_text('{"edited": 1}')
    assert keycheck.uncommitted(solution, tmp_path)


@pytest.fixture
def graded_with(monkeypatch, tmp_path):
    """grade_folder with the key given (prepare_set) and every file losing Q1 (grade_one); the
    order of warnings and gradings is recorded."""
    events: list[str] = []
    loud = gradebook._loud
    monkeypatch.setattr(gradebook, "_loud", lambda t: (events.append("warning"), loud(t)))
    monkeypatch.setattr(sandbox, "start_factory", lambda *a, **k: None)

    def run(weights_bytes: int, source: str) -> list[list[str]]:
        monkeypatch.setattr(
            gradebook, "prepare_set", lambda a, **k: gradebook.SetGrader(a, key(weights_bytes))
        )

        def lose_q1(path, nb, setg, **_):
            events.append("graded")
            g = gradebook.Grade(path.name, SET, points=setg.points)
            g.scores = {q: (0.0 if q == "q1" else p) for q, p in setg.points.items()}
            g.reason = "q1: not right"
            return g

        monkeypatch.setattr(gradebook, "grade_one", lose_q1)
        subs = tmp_path / "subs"
        subs.mkdir(exist_ok=True)
        nb = nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell(source)])
        nbformat.write(nb, subs / f"{SET}-ada.ipynb")
        out = tmp_path / "out" / "grades.csv"
        assert gradebook.grade_folder(subs, out, assignment=SET, history=False) == 0
        import csv

        return list(csv.reader(out.open()))

    return run, events


def test_a_key_that_differs_from_the_release_is_said_before_grading_and_in_the_row(
    graded_with, capsys
):
    run, events = graded_with
    rows = run(2 * WEIGHTS_BYTES, "weights_bytes = weights_gb = weights_gib = 1")
    assert events[0] == "warning" and "graded" in events  # before anyone is graded
    err = capsys.readouterr().err
    assert "!!! WARNING: [00_units_and_memory] q1: the key fails the released check" in err
    reason = rows[1][rows[0].index("reason")]
    assert gradebook.KEY_MARK in reason and gradebook.VERSION_MARK not in reason


def test_a_notebook_that_never_names_an_answer_says_so_in_its_row(graded_with, capsys):
    run, events = graded_with
    rows = run(WEIGHTS_BYTES, "bytes_fp16 = 1")  # the answer under another name
    assert "warning" not in events[: events.index("graded")]  # the key agrees with the release
    reason = rows[1][rows[0].index("reason")]
    assert gradebook.VERSION_MARK in reason and "never names weights_bytes" in reason
    assert gradebook.KEY_MARK not in reason
    assert "OLDER VERSION OF THE SET?" in capsys.readouterr().err  # counted at the end
