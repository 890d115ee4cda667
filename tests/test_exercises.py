"""Exercise sets: exercises/ is generated from solutions/ and is not stale; every question has public
and hidden tests; the public tests (all a learner sees) do not give the answers away."""

from __future__ import annotations

import ast
import contextlib
import io
import json
import math
import re
from dataclasses import dataclass, field
from pathlib import Path

import nbformat
import pytest

from course import grading

SOLUTIONS = grading.solution_notebooks()
IDS = [p.stem for p in SOLUTIONS]


@dataclass
class QuestionSource:
    name: str
    solution_code: list[str] = field(default_factory=list)
    public_tests: list[str] = field(default_factory=list)
    hidden_tests: list[str] = field(default_factory=list)


def parse_questions(path: Path) -> list[QuestionSource]:
    """Read otter's raw-cell format: questions, their solution cells and test cells."""
    nb = nbformat.read(path, as_version=4)
    questions: list[QuestionSource] = []
    block = None  # "solution" | "tests" | None
    for cell in nb.cells:
        text = cell.source.strip()
        if cell.cell_type == "raw":
            if text.startswith("# BEGIN QUESTION"):
                name = re.search(r"^name:\s*(\S+)", text, flags=re.MULTILINE)
                assert name, f"{path.name}: a question without a name"
                questions.append(QuestionSource(name.group(1)))
            elif text in ("# BEGIN SOLUTION", "# BEGIN TESTS"):
                block = text.split()[-1].lower()
            elif text in ("# END SOLUTION", "# END TESTS"):
                block = None
            continue
        if cell.cell_type != "code" or block is None:
            continue
        q = questions[-1]
        if block == "solution":
            q.solution_code.append(cell.source)
        elif re.match(r"#.*\bhidden\b", text.splitlines()[0], flags=re.IGNORECASE):
            q.hidden_tests.append(cell.source)
        else:
            q.public_tests.append(cell.source)
    return questions


def comparable(nb: nbformat.NotebookNode) -> dict:
    return json.loads(nbformat.writes(nb))


def test_there_is_at_least_one_exercise_set():
    assert SOLUTIONS, "solutions/ has no notebooks"


@pytest.mark.parametrize("solution", SOLUTIONS, ids=IDS)
def test_exercises_are_not_stale(solution, tmp_path):
    """Regenerate the student notebook from its solution; it must equal the committed one."""
    done = grading.assign(
        solution, exercises_dir=tmp_path / "ex", autograder_dir=tmp_path / "ag", run_tests=False
    )
    committed = grading.EXERCISES_DIR / f"{solution.stem}.ipynb"
    assert committed.is_file(), f"run `make assign`: {committed} is missing"
    fresh = nbformat.read(done.student_notebook, as_version=4)
    assert comparable(fresh) == comparable(nbformat.read(committed, as_version=4)), (
        f"{committed} is stale: run `make assign` and commit exercises/"
    )
    assert grading.zip_questions(done.autograder_zip), "the autograder zip grades no questions"


def test_every_exercise_notebook_has_a_solution():
    orphans = {p.stem for p in grading.EXERCISES_DIR.glob("*.ipynb")} - set(IDS)
    assert not orphans, f"exercises without a solution notebook: {sorted(orphans)}"


@pytest.mark.parametrize("solution", SOLUTIONS, ids=IDS)
def test_at_least_four_questions_each_with_public_and_hidden_tests(solution):
    questions = parse_questions(solution)
    assert len(questions) >= 4, f"{solution.name}: {len(questions)} questions"
    for q in questions:
        assert q.solution_code, f"{q.name}: no solution cell"
        assert q.public_tests, f"{q.name}: no public test"
        assert q.hidden_tests, f"{q.name}: no hidden test"


@pytest.mark.parametrize("solution", SOLUTIONS, ids=IDS)
def test_student_notebook_contains_no_hidden_test_and_no_solution(solution):
    student = grading.EXERCISES_DIR / f"{solution.stem}.ipynb"
    text = student.read_text()
    nb = nbformat.read(student, as_version=4)
    tests = nb.metadata["otter"]["tests"]
    for q in parse_questions(solution):
        cases = [c for suite in tests[q.name]["suites"] for c in suite["cases"]]
        assert len(cases) == len(q.public_tests), f"{q.name}: only public tests ship to learners"
        assert not any(c["hidden"] for c in cases)
        secret = [
            re.sub(r"\s*#\s*SOLUTION\s*$", "", line).strip()
            for line in "\n".join(q.solution_code).splitlines()
            if line.rstrip().endswith("# SOLUTION")
        ]
        secret += [
            line.strip()
            for line in "\n".join(q.hidden_tests).splitlines()
            if line.strip().startswith("assert")
        ]
        for line in filter(None, secret):
            assert json.dumps(line)[1:-1] not in text, f"{q.name}: shipped to learners: {line}"
    code = "\n".join(c.source for c in nb.cells if c.cell_type == "code")
    assert "BEGIN SOLUTION" not in code and "# HIDDEN" not in code


def _numbers_and_strings(value, depth: int = 0):
    if isinstance(value, bool) or depth > 3:
        return
    if isinstance(value, (int | float, str)):
        yield value
    elif isinstance(value, dict):
        for v in value.values():
            yield from _numbers_and_strings(v, depth + 1)
    elif isinstance(value, list | tuple | set):
        for v in value:
            yield from _numbers_and_strings(v, depth + 1)


def _assigned_names(code: str) -> set[str]:
    names = set()
    for node in ast.walk(ast.parse(code)):
        if isinstance(node, ast.Assign | ast.AugAssign | ast.AnnAssign):
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            names |= {t.id for t in targets if isinstance(t, ast.Name)}
    return names


@pytest.mark.parametrize("solution", SOLUTIONS, ids=IDS)
def test_public_tests_do_not_contain_the_answers(solution):
    """Run the solutions; no public test may quote a solution value or check one with isclose.

    Small integers (below 10) are allowed in public tests: they are bounds, not answers. So are
    strings listed among 3+ options (``device in {"cuda", "mps", "cpu"}``) and single letters.
    """
    nb = nbformat.read(solution, as_version=4)
    namespace: dict[str, object] = {}
    with contextlib.redirect_stdout(io.StringIO()):
        for cell in nb.cells:
            if cell.cell_type == "code" and not cell.source.lstrip().startswith("# HIDDEN"):
                exec(compile(cell.source, solution.name, "exec"), namespace)
    for q in parse_questions(solution):
        values = [
            v
            for name in set().union(*(_assigned_names(c) for c in q.solution_code))
            for v in _numbers_and_strings(namespace.get(name))
        ]
        public = "\n".join(q.public_tests)
        assert not re.search(r"isclose|approx|allclose", public), f"{q.name}: a value check"
        tree = ast.parse(public)
        literals = [n.value for n in ast.walk(tree) if isinstance(n, ast.Constant)]
        choices = {  # members of a literal collection of 3+ strings: a list of allowed options
            e.value
            for n in ast.walk(tree)
            if isinstance(n, ast.Set | ast.List | ast.Tuple)
            and sum(isinstance(e, ast.Constant) and isinstance(e.value, str) for e in n.elts) >= 3
            for e in n.elts
            if isinstance(e, ast.Constant)
        }
        for v in values:
            if isinstance(v, str):
                if len(v) > 1 and v not in choices:
                    assert v not in literals, f"{q.name}: public test quotes the answer {v!r}"
                continue
            if float(v).is_integer() and abs(v) < 10:
                continue
            for c in literals:
                if isinstance(c, int | float) and not isinstance(c, bool):
                    assert not math.isclose(c, v, rel_tol=1e-3), (
                        f"{q.name}: public test contains {c!r}, the answer {v!r}"
                    )
