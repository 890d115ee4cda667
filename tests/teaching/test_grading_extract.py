"""Extraction: untrusted results checked against the run, and a run with the protections off."""

from __future__ import annotations

import json

import pytest
from teaching.grading import extract, sandbox

pytestmark = pytest.mark.sandbox  # runs cells in the grading sandbox (tests/conftest.py)


def test_results_that_do_not_match_the_run_are_rejected():
    questions = {"q1": {"answers": {"x": "x"}, "calls": {}}}
    good = {"nonce": "n1", "done": True, "cells": [], "answers": {"q1": {"x": {"value": 3}}}}
    ext, problem = extract._validate(good, "n1", questions)
    assert problem == "" and ext.answers == {"q1": {"x": {"value": 3}}}
    _, problem = extract._validate(good, "another run", questions)
    assert "wrong nonce" in problem
    forged = dict(
        good, answers={"q1": {"x": {"value": 3, "score": 495}}, "q9": {"y": {"value": 1}}}
    )
    ext, _ = extract._validate(forged, "n1", questions)
    assert ext.answers == {"q1": {"x": {"error": "rejected: malformed answer record"}}}


def test_grading_runs_with_protections_off_and_says_so(monkeypatch, tmp_path, capsys):
    monkeypatch.setattr(
        sandbox,
        "mode",
        lambda: {
            "prefix": [],
            "mounts": False,
            "drop": False,
            "off": ["pid-namespace", "hidden-files"],
        },
    )
    assert "WARNING: sandbox protections OFF" in sandbox.describe()
    assert "pid-namespace" in sandbox.describe()
    cells = [{"source": "x = 6 * 7", "question": "q1", "answer": True}, {"source": "print('hi')"}]
    ext = extract.run_cells(
        cells,
        {"q1": {"answers": {"x": "x"}, "calls": {}}},
        execution=extract.Execution(timeout_seconds=60),
    )
    assert ext.problem == "" and ext.done
    assert ext.answers == {"q1": {"x": {"value": 42}}}
    assert ext.protections_off == ("pid-namespace", "hidden-files")
    assert json.dumps(ext.cells)  # plain data all the way
