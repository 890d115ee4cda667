"""Exercise set 11 (inside the GPU): the learner's checks accept the solution and give the hints
written for known wrong answers; the sandboxed grader gives the solution full marks and a blank
notebook 0, the Triton kernel question included (checked on the grader's own probe vectors)."""

from __future__ import annotations

import csv

import nbformat
import pytest
from solution_run import feedback_with, solution_namespace
from teaching.grading import authoring, gradebook, spec

from course.selfcheck.answers import Grader

pytestmark = pytest.mark.sandbox  # runs solutions in the grading sandbox (tests/conftest.py)

SET = "11_inside_the_gpu"
SOLUTION = authoring.SOLUTIONS_DIR / f"{SET}.ipynb"
EXERCISE = authoring.EXERCISES_DIR / f"{SET}.ipynb"


@pytest.fixture(scope="module")
def namespace() -> dict:
    return solution_namespace(SET)


def test_set_11_has_at_least_seven_questions_and_a_function_answer():
    questions = spec.read(SOLUTION).questions
    assert len(questions) >= 7
    assert any("call" in str(q.answers) and "probes" in str(q.answers) for q in questions)


def test_the_solution_passes_every_learner_check(namespace, monkeypatch):
    monkeypatch.delenv("COURSE_GRADING", raising=False)
    report = Grader(SET).check_all(namespace)
    assert bool(report), repr(report)


@pytest.mark.parametrize(
    ("question", "name", "value", "hint"),
    [
        ("q1", "aos_sectors", 32, "two or three share"),
        ("q2", "blocks", 7, "registers allow fewer"),
        ("q4", "unfused_bytes", 4 * 100_000_000 * 4, "2 bytes per element"),
        ("q6", "issued", 40, "both paths"),
    ],
)
def test_known_wrong_answers_get_their_hint(namespace, monkeypatch, question, name, value, hint):
    monkeypatch.delenv("COURSE_GRADING", raising=False)
    text = feedback_with(SET, namespace, question, name, value)
    assert f"{name}: not right yet" in text and hint in text


@pytest.mark.slow
def test_sandboxed_grading_gives_the_solution_full_marks_and_a_blank_zero(tmp_path):
    subs, out = tmp_path / "subs", tmp_path / "out"
    subs.mkdir()
    out.mkdir()
    blank = nbformat.read(EXERCISE, as_version=4)
    nbformat.write(blank, subs / f"{SET}-blank.ipynb")
    filled = nbformat.read(EXERCISE, as_version=4)
    answers = iter(c["source"] for c in spec.read(SOLUTION).run_cells if c["answer"])
    for cell in filled.cells:
        if cell.metadata.get("course", {}).get("answer"):
            cell.source = next(answers)
    assert next(answers, None) is None
    nbformat.write(filled, subs / f"{SET}-solution.ipynb")
    assert gradebook.grade_folder(subs, out / "grades.csv", timeout_seconds=120, jobs=1) == 0
    csv_path = next(out.glob("grades*.csv"))  # one set in the folder: grades.csv
    with csv_path.open(newline="") as f:
        rows = {r["submission"]: r for r in csv.DictReader(f)}
    possible = sum(q.points for q in spec.read(SOLUTION).questions)
    solved, empty = rows[f"{SET}-solution.ipynb"], rows[f"{SET}-blank.ipynb"]
    assert (float(solved["total"]), float(solved["possible"])) == (possible, possible), solved
    assert float(empty["total"]) == 0, empty
