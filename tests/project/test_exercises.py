"""Exercise sets: exercises/ is generated from solutions/ and is not stale; no hidden value
reaches a learner (as a number or as text, anywhere in exercises/, Markdown included); the
learner's checks accept the solution's values and give the hint written for a known wrong answer."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import nbformat
import pytest
import torch
from leaks import find_leaks, hidden_values
from leaks import sections as _sections
from solution_run import solution_namespace
from teaching.grading import authoring, spec

from course.facts import dtypes
from course.measure import microscaling
from course.selfcheck.answers import Grader

pytestmark = pytest.mark.sandbox  # runs solutions in the grading sandbox (tests/conftest.py)

SOLUTIONS = authoring.solution_notebooks()
IDS = [p.stem for p in SOLUTIONS]


@pytest.fixture(scope="session")
def keys():
    """Each set's answer key (solution run once, cached under build/ by source digest)."""
    keys, errors = authoring.answer_keys(SOLUTIONS)
    assert not errors, errors
    return keys


def test_there_is_at_least_one_exercise_set():
    assert SOLUTIONS, "solutions/ has no notebooks"


def test_every_exercise_notebook_has_a_solution():
    orphans = {p.stem for p in authoring.EXERCISES_DIR.glob("*.ipynb")} - set(IDS)
    orphans |= {p.stem for p in (authoring.EXERCISES_DIR / "checks").glob("*.json")} - set(IDS)
    assert not orphans, f"exercises without a solution notebook: {sorted(orphans)}"


@pytest.mark.parametrize("solution", SOLUTIONS, ids=IDS)
def test_exercises_are_not_stale(solution, tmp_path, keys):
    """Regenerate the student notebook and its checks; they must equal the committed ones."""
    done = authoring.assign(solution, exercises_dir=tmp_path)
    committed = authoring.EXERCISES_DIR / f"{solution.stem}.ipynb"
    assert committed.is_file(), f"run `make assign`: {committed} is missing"
    assert done.student_notebook.read_text() == committed.read_text(), (
        f"{committed} is stale: run `make assign` and commit exercises/"
    )
    checks = authoring.EXERCISES_DIR / "checks" / f"{solution.stem}.json"
    assert done.checks.read_text() == checks.read_text(), f"{checks} is stale: run `make assign`"


@pytest.mark.parametrize("solution", SOLUTIONS, ids=IDS)
def test_at_least_four_questions_each_with_answers_and_a_hint(solution):
    assignment = spec.read(solution)
    assert len(assignment.questions) >= 4
    for q in assignment.questions:
        assert q.answers and q.hint, f"{q.name}: answers and a hint"


# ---------------------------------------------------------------------------------------------
# No hidden value reaches a learner
# ---------------------------------------------------------------------------------------------


@pytest.mark.parametrize("solution", SOLUTIONS, ids=IDS)
def test_no_hidden_value_appears_in_exercises(solution, keys):
    """Anywhere in exercises/ (every set's notebook and checks): 3+ significant figures; in the
    question's own section: any form, small numbers as digits or words ("Thirteen", "six")."""
    assignment = spec.read(solution)
    hidden = hidden_values(keys[solution.stem], assignment)
    everything = "\n".join(
        p.read_text() for p in sorted(authoring.EXERCISES_DIR.rglob("*")) if p.is_file()
    )
    everything = everything.replace("\\n", "\n")
    own = nbformat.read(authoring.EXERCISES_DIR / f"{solution.stem}.ipynb", as_version=4)
    sections = _sections(own)
    problems = []
    for q, values in hidden.items():
        problems += [f"{q} anywhere: {x}" for x in find_leaks(everything, values, local=False)]
        problems += [
            f"{q} in its section: {x}" for x in find_leaks(sections.get(q, ""), values, local=True)
        ]
    assert not problems, problems


# ---------------------------------------------------------------------------------------------
# The learner's checks
# ---------------------------------------------------------------------------------------------


def test_learner_checks_pass_the_solution_and_hint_at_a_known_wrong_answer(monkeypatch):
    monkeypatch.delenv("COURSE_GRADING", raising=False)
    solution = authoring.SOLUTIONS_DIR / "00_units_and_memory.ipynb"
    ns = solution_namespace(solution.stem)
    grader = Grader("00_units_and_memory")
    report = grader.check_all(ns)
    assert bool(report), repr(report)
    assert "right" in repr(report)
    ns["weights_gb"] = ns["weights_bytes"] / 2**30  # the GiB figure, labelled GB
    ns["weights_gib"] *= 1 + 3e-4  # within the question's precision: still right
    ns["bytes_per_param"] = {**ns["bytes_per_param"], "int4": 1}
    text = repr(grader.check("q1", ns)) + repr(grader.check("q2", ns))
    assert "weights_gb: not right yet" in text and "weights_gib" not in text
    assert "that is the size in GiB" in text
    assert "not right yet for int4" in text and "half a byte" in text
    checks = (authoring.EXERCISES_DIR / "checks" / "00_units_and_memory.json").read_text()
    assert str(ns["weights_bytes"]) not in checks


def test_learner_checks_hide_choices_and_a_function_is_checked_on_probes(monkeypatch):
    monkeypatch.delenv("COURSE_GRADING", raising=False)
    ns = solution_namespace("03_data_types")
    grader = Grader("03_data_types")
    assert "the grader checks the value of q8_answer" in repr(grader.check("q8", ns))
    assert bool(grader.check("q5", ns)), repr(grader.check("q5", ns))
    ns["quantise_int8"] = lambda w: (ns["torch"].zeros_like(w, dtype=ns["torch"].int8), w[:, :1])
    assert "quantise_int8: gives wrong results" in repr(grader.check("q5", ns))
    data = json.loads((authoring.EXERCISES_DIR / "checks" / "03_data_types.json").read_text())
    q8 = data["questions"]["q8"]["answers"][0]
    assert "hash" not in q8 and not q8["public"]


def test_set_03s_tf32_and_block_format_answers_are_the_registrys_and_the_emulations():
    """Q9 against what lesson 03 runs: the dtype registry's TF32 and microscaling's MXFP4
    quantiser and bits per value (setup and Q9's cells only: no measurement)."""
    ns = solution_namespace(
        "03_data_types", lambda cell: "benchmark" in cell["source"] or "E2M1" in cell["source"]
    )
    tf32 = dtypes.float_format("tf32")
    assert (ns["tf32_bytes"], ns["tf32_eps"]) == (tf32.bytes_stored, tf32.eps)
    q = microscaling.quantize(torch.tensor(ns["block"]), "e2m1", 32, "e8m0")
    assert q[1].item() == ns["mx_of_7_3"]
    grid = set(microscaling.E2M1_GRID)
    assert all(abs(v) / ns["mx_scale"] in grid for v in q.tolist())  # the block's one scale
    assert q.abs().max().item() / ns["mx_scale"] > microscaling.E2M1_GRID[-2]  # the top binade
    assert ns["nvfp4_bits"] == microscaling.BITS_PER_VALUE["nvfp4"]


def test_learner_checks_do_nothing_while_grading(monkeypatch):
    monkeypatch.setenv("COURSE_GRADING", "1")
    assert "checked by the grader" in repr(Grader("00_units_and_memory").check("q1", {}))


def test_a_solution_in_the_old_otter_format_is_refused(tmp_path):
    nb = nbformat.v4.new_notebook(
        cells=[
            nbformat.v4.new_raw_cell("# ASSIGNMENT CONFIG\nname: 99_x"),
            nbformat.v4.new_raw_cell("# BEGIN QUESTION\nname: q1\nanswers:\n  x: {}"),
            nbformat.v4.new_raw_cell("# BEGIN TESTS"),
        ]
    )
    nbformat.write(nb, tmp_path / "99_x.ipynb")
    with pytest.raises(spec.FormatError, match="otter test blocks are not used"):
        spec.read(tmp_path / "99_x.ipynb")


def test_the_release_holds_no_solution_key_or_hidden_value(tmp_path, keys):
    from teaching.grading.release import write_release

    out = tmp_path / "release"
    assert write_release(out) == 0
    names = {p.name for p in out.rglob("*")}
    assert not {"solutions", "build", "tests", ".git"} & names
    assert not [n for n in names if n.endswith((".key.json", ".zip"))]
    assert {"README.md", "learners.txt", "install.py", "Makefile"} <= names
    assert (out / "course" / "selfcheck" / "answers.py").is_file()  # the learner's checker ships
    assert not list(out.rglob("teaching")), "the instructors' package never ships"
    reads = subprocess.run(  # the release's own `course check` finds what it reads
        [
            sys.executable,
            "-c",
            "from course.selfcheck import environment as e\n"
            "print(e.REQUIREMENTS_IN, e.REQUIREMENTS_IN.is_file(), e.REQUIREMENTS_TXT.is_file())",
        ],
        cwd=out,
        env={**os.environ, "PYTHONPATH": str(out)},
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert reads.stdout.split() == [str(out / "requirements" / "learners.in"), "True", "True"]
    # What students read: exercises (with their checks) and the README. Lessons teach with their own
    # worked numbers and the course package calculates: neither is an answer sheet.
    text = "\n".join(
        p.read_text(errors="replace")
        for p in sorted([*(out / "exercises").rglob("*"), out / "README.md"])
        if p.is_file()
    ).replace("\\n", "\n")
    problems = []
    for solution in SOLUTIONS:
        hidden = hidden_values(keys[solution.stem], spec.read(solution))
        for q, values in hidden.items():
            problems += [f"{solution.stem} {q}: {x}" for x in find_leaks(text, values, local=False)]
    assert not problems, problems
    assert write_release(out) == 2  # never over an existing release


@pytest.mark.parametrize("solution", SOLUTIONS, ids=IDS)
def test_every_sets_public_checks_accept_its_solution_and_the_checker_scores_full_and_zero(
    solution, keys, tmp_path, monkeypatch
):
    """The solution's own values (from the key) pass every public check; the trusted checker gives
    them full marks and gives a submission with no answers 0."""
    monkeypatch.delenv("COURSE_GRADING", raising=False)
    from teaching.grading import check

    assignment = spec.read(solution)
    key = keys[solution.stem]
    data = json.loads((authoring.EXERCISES_DIR / "checks" / f"{solution.stem}.json").read_text())
    namespace = {}
    for q in data["questions"].values():
        q["answers"] = [a for a in q["answers"] if a["kind"] != "function"]
        for a in q["answers"]:
            a["expr"] = a["name"]  # check the extracted value itself
    for answers in key["answers"].values():
        namespace |= {name: r["value"] for name, r in answers.items() if "value" in r}
    checks_file = tmp_path / "checks.json"
    checks_file.write_text(json.dumps(data))
    grader = Grader(solution.stem, path=checks_file)
    for q in data["questions"]:
        report = grader.check(q, dict(namespace))
        assert bool(report), repr(report)
    results = check.check_all(assignment, key["answers"], key["answers"], key["extras"])
    assert all(r.score == r.points for r in results), [r.reason for r in results]
    empty = check.check_all(assignment, {}, key["answers"], key["extras"])
    assert sum(r.score for r in empty) == 0
