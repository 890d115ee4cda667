"""Grading's small parts: canonical values and hashes, plain-data extraction, untrusted results,
the trusted checker, and grading with the protections off (fast: no torch, no full run)."""

from __future__ import annotations

import json

import pytest
from teaching.grading import check, extract, sandbox, spec

from course.selfcheck import values
from course.selfcheck.plain import to_plain

pytestmark = pytest.mark.sandbox  # runs solutions in the grading sandbox (tests/conftest.py)


def test_a_value_on_a_rounding_boundary_is_not_failed():
    expected = 1.2345  # 4 figures: "1.234e+00" or "1.235e+00" depending on float rounding
    for got in (1.23449, 1.23451, 1.2345, 1.2346):
        assert values.matches(got, expected, 4), got
    assert not values.matches(1.240, expected, 4)
    assert values.matches(13476831232, 13476831232.0)  # exact: int and whole float agree
    assert not values.matches(13476831233, 13476831232)


def test_public_hash_checks_agree_with_the_trusted_comparison_and_hide_the_value():
    salt = "set/q1/x"
    digest = values.digest(values.canonical(28.888888, 4), salt)
    assert "28.89" not in digest and "2.889" not in digest
    assert values.hash_matches(28.8889, [digest], salt, 4)
    assert values.hash_matches(28.8901, [digest], salt, 4) == values.matches(28.8901, 28.888888, 4)
    assert not values.hash_matches(14.44, [digest], salt, 4)


def test_only_plain_data_leaves_the_sandbox():
    class Sneaky:
        def __eq__(self, other):
            return True

    class Anything(float):
        def __eq__(self, other):
            return True

    assert to_plain({"a": [1, 2.5, "x", None, True]}, [100]) == {"a": [1, 2.5, "x", None, True]}
    plain = to_plain(Anything(2.0), [100])
    assert type(plain) is float and plain == 2.0
    with pytest.raises(TypeError, match="not plain data"):
        to_plain(Sneaky(), [100])
    with pytest.raises(TypeError, match="not answered"):
        to_plain({"fp32": ...}, [100])
    with pytest.raises(TypeError, match="too large"):
        to_plain(list(range(1000)), [10])


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


def _question(**answers) -> spec.Question:
    return spec.Question(
        name="q1",
        points=2,
        answers=tuple(spec._answer(k, v, "test") for k, v in answers.items()),
        hint="general hint",
        wrong=(spec.Wrong("x", "x * 1000", "that is in ms"),),
        checks=(spec.Check("y > 0", "y is positive"),),
    )


def test_the_trusted_checker_scores_hints_and_caps():
    q = _question(x={}, y={"expect": "none"})
    key = {"x": {"value": 0.0289}, "y": {"value": 1.0}}
    extras = {"q1/wrong/0": 28.9}
    right = check.check_question(q, {"x": {"value": 0.02890001}, "y": {"value": 5.0}}, key, extras)
    assert (right.score, right.failures) == (2, [])
    wrong = check.check_question(q, {"x": {"value": 28.9}, "y": {"value": -1.0}}, key, extras)
    assert wrong.score == 0
    assert wrong.failures == ["x: wrong value", "check failed: y is positive"]
    assert wrong.hints == ["that is in ms"]
    blank = check.check_question(q, {"x": {"error": "still `...`: not answered"}}, key, extras)
    assert (blank.score, blank.reason) == (0, "not answered")


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
    ext = extract.run_cells(cells, {"q1": {"answers": {"x": "x"}, "calls": {}}}, timeout_seconds=60)
    assert ext.problem == "" and ext.done
    assert ext.answers == {"q1": {"x": {"value": 42}}}
    assert ext.protections_off == ("pid-namespace", "hidden-files")
    assert json.dumps(ext.cells)  # plain data all the way


def test_exact_ints_are_compared_as_ints_and_huge_ones_refused():
    big = 2**60 + 1  # a float cannot tell it from 2**60
    assert values.matches(big, big) and not values.matches(big, 2**60)
    assert values.matches(10**10, 1e10)  # a whole float is its integer
    assert values.int_problem([1, {"x": 10**400}]).startswith("a whole number beyond ±2**63")
    assert values.int_problem([1, 2**63 - 1]) == ""
    with pytest.raises(TypeError, match="beyond ±2\\*\\*63"):
        to_plain([10**400], [100])  # refused in the sandbox already
    assert not values.matches(10**400, 1e308, 4)  # no OverflowError: no match
    q = _question(x={"expr": "x"})
    result = check.check_question(q, {"x": {"value": -(10**400)}}, {"x": {"value": 3}}, {})
    assert result.score == 0 and "beyond ±2**63" in result.reason


def test_a_grader_failure_on_one_file_is_a_row_not_the_end_of_the_run(monkeypatch, tmp_path):
    from teaching.grading import gradebook

    subs = tmp_path / "subs"
    subs.mkdir()
    for name in ("00_units_and_memory-a.ipynb", "00_units_and_memory-b.ipynb"):
        (subs / name).write_text(
            json.dumps({"cells": [], "metadata": {}, "nbformat": 4, "nbformat_minor": 5})
        )
    monkeypatch.setattr(
        gradebook,
        "prepare_set",
        lambda a, **k: gradebook.SetGrader(a, {"probes": {}, "answers": {}, "extras": {}}),
    )
    monkeypatch.setattr(sandbox, "start_factory", lambda *a, **k: None)

    def full_disk(path, *a, **k):
        if path.name.endswith("-a.ipynb"):
            raise OSError(28, "No space left on device")
        return gradebook.Grade(path.name, "00_units_and_memory", status="ok")

    monkeypatch.setattr(gradebook, "grade_one", full_disk)
    out = tmp_path / "out" / "grades.csv"
    assert gradebook.grade_folder(subs, out, assignment="00_units_and_memory") == 0
    rows = out.read_text().splitlines()
    assert len(rows) == 3
    assert "error" in rows[1] and "No space left on device" in rows[1]
    assert rows[2].startswith("00_units_and_memory-b.ipynb,00_units_and_memory")


def test_a_blank_answer_runs_for_tuple_targets_and_statements_over_several_lines():
    """The learner's blank must run: ``a, b = ...`` cannot unpack, and a marked continuation line
    left behind is an IndentationError (exercise sets 12 and 13 had both)."""
    from teaching.grading.spec import _strip_solution

    learner = _strip_solution(
        "plan = failure_plan(3, checkpoint_seconds=10,  # SOLUTION\n"
        "                    restart_seconds=60)  # SOLUTION\n"
        "replicas, gpus = plan.replicas, plan.gpus  # SOLUTION\n"
        "replicas, gpus"
    )
    assert learner == "plan = ...\nreplicas, gpus = ..., ...\nreplicas, gpus"
    namespace: dict = {}
    exec(learner, namespace)  # noqa: S102 - the blank the learner receives runs
    assert namespace["replicas"] is Ellipsis
