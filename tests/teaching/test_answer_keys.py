"""The instructors' answer keys are generated from solutions/ and agree with the grader's key."""

import json

import nbformat
import pytest
from teaching import answer_keys, site
from teaching.grading import spec
from teaching.grading.authoring import answer_key, solution_notebooks

pytestmark = pytest.mark.sandbox  # runs solutions in the grading sandbox (tests/conftest.py)

SOLUTIONS = solution_notebooks()


@pytest.mark.parametrize("solution", SOLUTIONS, ids=lambda p: p.stem)
def test_every_question_solution_and_explanation_of_a_set_is_on_its_page(solution):
    page = answer_keys.answer_key_page(solution)  # structure only: no solution is run
    assignment = spec.read(solution)
    for q in assignment.questions:
        assert f"**Graded: {q.name}, {q.points:g} points**" in page
        for a in q.answers:
            assert f"| `{a.name}` |" in page, (q.name, a.name)
    for cell in nbformat.read(solution, as_version=4).cells:
        text = cell.source.strip()
        if cell.cell_type == "code" and text:
            assert cell.source.rstrip() in page  # solution code, verbatim
        elif cell.cell_type == "markdown" and text and not text.startswith("# "):
            assert text.splitlines()[-1].lstrip("#") in page  # prompts and solution notes
    assert page.startswith("# Answer key: ")


def test_the_values_on_a_page_are_the_graders_key():
    solution = next(p for p in SOLUTIONS if p.stem.startswith("00_"))
    key = answer_key(solution)["answers"]  # what `make assign` / `make grade` compare with
    page = answer_keys.answer_key_page(solution, key)
    for q in spec.read(solution).questions:
        for a in q.answers:
            if not a.is_function:
                value = key[q.name][a.name]["value"]
                shown = repr(value) if isinstance(value, str) else json.dumps(value)
                assert f"| `{a.name}` | `{shown[: answer_keys.MAX_VALUE_CHARS]}" in page


def test_write_answer_keys_writes_one_page_per_set_and_an_index(tmp_path):
    pages = answer_keys.write_answer_keys(tmp_path, values=False)
    assert [p.stem for p in pages] == [s.stem for s in SOLUTIONS]
    index = (tmp_path / "index.md").read_text()
    assert all(p.stem in index for p in pages) and "never publish" in index


def test_the_site_lists_the_keys_only_when_asked():
    assert "answer-keys/index" in site._index("# Home\n", answer_keys=True)
    assert "answer-keys" not in site._index("# Home\n", answer_keys=False)
