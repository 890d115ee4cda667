"""Every section of every lesson is assessed: each ``##`` section of notebooks/NN_*.ipynb maps to at
least one graded exercise question (instructors/teaching/coverage.py), and every mapped question
exists in its solution notebook."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from teaching import coverage
from teaching.grading import authoring, spec

ROOT = Path(__file__).resolve().parents[2]
LESSONS = sorted((ROOT / "notebooks").glob("[0-9][0-9]_*.ipynb"))


@pytest.fixture(scope="module")
def questions() -> dict[str, set[str]]:
    """Each exercise set's question names, read from its solution notebook (no code runs)."""
    return {
        p.stem: {q.name for q in spec.read(p).questions} for p in authoring.solution_notebooks()
    }


@pytest.mark.parametrize("lesson", LESSONS, ids=[p.stem for p in LESSONS])
def test_every_section_maps_to_a_graded_question_that_exists(lesson, questions):
    sections = coverage.headings(json.loads(lesson.read_text()))
    assert [h for h in sections if h not in coverage.SKELETON], f"{lesson.name} has no sections"
    assert coverage.problems(lesson.stem, sections, questions) == []


def test_every_lesson_is_in_the_table_and_every_set_is_used(questions):
    assert set(coverage.COVERAGE) == {p.stem for p in LESSONS}
    used = {s for table in coverage.COVERAGE.values() for pairs in table.values() for s, _ in pairs}
    assert used == set(questions), f"sets no section points to: {sorted(set(questions) - used)}"


def test_problems_names_an_unmapped_section_a_missing_question_and_a_stale_row():
    notebook = {
        "cells": [
            {
                "cell_type": "markdown",
                "source": ["## 1. Old idea\n", "```\n## not a heading\n```\n"],
            },
            {"cell_type": "code", "source": "## a comment"},
            {"cell_type": "markdown", "source": "## 2. New idea\n\n## Summary"},
        ]
    }
    sections = coverage.headings(notebook)
    assert sections == ["1. Old idea", "2. New idea", "Summary"]
    table = {
        "99_x": {
            "1. Old idea": (("99_set", "q1"), ("99_set", "q9")),
            "3. Gone": (("99_set", "q1"),),
        }
    }
    found = coverage.problems("99_x", sections, {"99_set": {"q1"}}, table)
    assert found == [
        "99_x: '2. New idea' has no graded question",
        "99_x: '1. Old idea' maps to 99_set q9, which does not exist",
        "99_x: the table names '3. Gone', not a section of the lesson",
    ]
    assert coverage.problems("98_y", sections, {}, table) == ["98_y: not in the coverage table"]
    fixed = {"99_x": {"1. Old idea": (("99_set", "q1"),), "2. New idea": (("99_set", "q1"),)}}
    assert coverage.problems("99_x", sections, {"99_set": {"q1"}}, fixed) == []
