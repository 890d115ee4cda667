"""Every section of every lesson is assessed: each ``##`` section of notebooks/NN_*.ipynb maps to at
least one graded exercise question (instructors/teaching/coverage.py), and every mapped question
exists in its solution notebook; so does each ``###`` subsection the table lists as teaching a
mechanism of its own (FlashAttention's online softmax, the whole training state, chunked prefill,
admission, TF32 and the block formats among them)."""

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


@pytest.mark.parametrize("lesson", LESSONS, ids=[p.stem for p in LESSONS])
def test_every_listed_subsection_exists_and_maps_to_a_graded_question(lesson, questions):
    subsections = coverage.headings(json.loads(lesson.read_text()), level=3)
    assert coverage.subsection_problems(lesson.stem, subsections, questions) == []


def test_the_mechanisms_graded_where_taught_are_listed():
    """Issue 45's mechanisms taught in a subsection: a renamed heading must be renamed here too,
    not dropped from the table."""
    listed = {(lesson, h) for lesson, rows in coverage.SUBSECTIONS.items() for h in rows}
    for lesson, start in [
        ("03_data_types", "TF32"),
        ("03_data_types", "Blackwell's block formats"),
        ("11_inside_the_gpu", "FlashAttention's forward pass"),
        ("12_training_at_scale", "The whole training state"),
        ("12_training_at_scale", "Saving for real"),
        ("13_serving_at_scale", "[Chunked prefill]"),
        ("13_serving_at_scale", "Where paging matters"),
    ]:
        assert any(s == lesson and h.startswith(start) for s, h in listed), (lesson, start)


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


def test_subsection_problems_names_a_gone_subsection_an_empty_row_and_a_missing_question():
    notebook = {"cells": [{"cell_type": "markdown", "source": "## 1. A\n\n### Kept\n### Other"}]}
    assert coverage.headings(notebook, level=3) == ["Kept", "Other"]
    table = {"99_x": {"Kept": (("99_set", "q1"), ("99_set", "q9")), "Gone": (), "Other": ()}}
    found = coverage.subsection_problems("99_x", ["Kept", "Other"], {"99_set": {"q1"}}, table)
    assert found == [
        "99_x: the table names subsection 'Gone', not one of the lesson's",
        "99_x: subsection 'Gone' has no graded question",
        "99_x: subsection 'Other' has no graded question",
        "99_x: subsection 'Kept' maps to 99_set q9, which does not exist",
    ]
    assert coverage.subsection_problems("98_y", ["Kept"], {}, table) == []  # nothing listed
