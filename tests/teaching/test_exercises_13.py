"""Exercise set 13's learner checks: the calculated questions accept the solution and give the hint
written for each known wrong answer; the measured knee (Q8) is judged by relation, so a knee that
contradicts the learner's own curve fails whatever the machine. (Full grading of every set, the
solution to full marks and a blank to 0, is in tests/project/test_exercises.py.)"""

from __future__ import annotations

import asyncio
from types import SimpleNamespace

import pytest
from solution_run import solution_namespace

from course.measure import llm_server
from course.selfcheck.answers import Grader

SET = "13_serving_at_scale"


@pytest.fixture(scope="module")
def namespace() -> dict:
    # Q8 is measured: judged below with curves of known shape
    return solution_namespace(SET, lambda cell: "serving_run" not in cell["source"])


@pytest.fixture
def grader(monkeypatch):
    monkeypatch.delenv("COURSE_GRADING", raising=False)
    return Grader(SET)


@pytest.mark.parametrize("question", [f"q{i}" for i in (1, 2, 3, 4, 5, 6, 7, 11, 12, 13)])
def test_the_solution_passes_each_calculated_question(namespace, grader, question):
    report = grader.check(question, dict(namespace))
    assert bool(report), repr(report)


@pytest.mark.parametrize(
    ("question", "name", "change", "hint"),
    [
        ("q1", "p50_seconds", lambda ns: sum(ns["sample"]) / len(ns["sample"]), "that is the mean"),
        ("q2", "in_system", lambda ns: 12 / 2.5, "multiplies the rate"),
        ("q3", "utilisation", lambda ns: 7.0, "divide by the number of slots"),
        ("q4", "gpus", lambda ns: ns["replicas"], "GPUs = replicas x tp"),
        ("q5", "usd_at_40", lambda ns: 0.4 * ns["usd_full"], "idle hours are paid too"),
        ("q7", "auto_gpu_hours", lambda ns: ns["auto_gpu_hours"] / 2, "GPU-hours count GPUs"),
        ("q11", "n_p99", lambda ns: 100, "100 values put one past the p99"),
        ("q12", "iterations", lambda ns: 6, "takes one token of the budget first"),
        ("q13", "reserve_admitted", lambda ns: 6, "for the prompt and every token"),
    ],
)
def test_known_wrong_answers_get_their_hint(namespace, grader, question, name, change, hint):
    ns = dict(namespace)
    ns[name] = change(ns)
    text = repr(grader.check(question, ns))
    assert f"{name}: not right yet" in text and hint in text


CURVE = {"arrived": [2.0, 5.0, 8.0, 12.0], "p99_ttft": [0.05, 0.08, 0.4, 1.5]}


@pytest.mark.parametrize(
    ("values", "ok"),
    [
        ({**CURVE, "knee_per_s": 8.0}, True),  # the first load past 3 x 0.05 s
        ({**CURVE, "knee_per_s": 12.0}, False),  # a later load: 8/s already passed
        ({**CURVE, "knee_per_s": 5.0}, False),  # 0.08 s is not 3 x 0.05 s
        ({**CURVE, "knee_per_s": 0.0}, False),  # claims no knee where there is one
        ({**CURVE, "knee_per_s": 7.0}, False),  # not a measured load
        ({"arrived": [2.0, 5.0, 8.0], "p99_ttft": [0.05, 0.06, 0.1], "knee_per_s": 0.0}, True),
        ({"arrived": [2.0, 5.0, 8.0], "p99_ttft": [5.0, 8.0, 40.0], "knee_per_s": 8.0}, True),
        ({"arrived": [2.0, 5.0, 8.0], "p99_ttft": [50.0, 80.0, 400.0], "knee_per_s": 8.0}, False),
        ({"arrived": [8.0, 5.0, 2.0], "p99_ttft": [0.4, 0.08, 0.05], "knee_per_s": 8.0}, False),
        ({"arrived": [2.0, 5.0], "p99_ttft": [0.05, 0.4], "knee_per_s": 5.0}, False),
    ],
)
def test_the_measured_knee_is_judged_by_relation(grader, values, ok):
    points = zip(values["arrived"], values["p99_ttft"], strict=True)  # the run the lists came from
    run = SimpleNamespace(
        sweep=[SimpleNamespace(realised_per_s=o, ttft_p99_seconds=t) for o, t in points]
    )
    assert bool(grader.check("q8", {**values, "run": run})) is ok


def test_measured_lists_that_are_not_the_runs_own_fail(grader):
    run = SimpleNamespace(
        sweep=[
            SimpleNamespace(realised_per_s=o, ttft_p99_seconds=t)
            for o, t in zip(CURVE["arrived"], CURVE["p99_ttft"], strict=True)
        ]
    )
    typed = {
        **CURVE,
        "p99_ttft": [0.05, 0.06, 0.5, 2.0],
        "knee_per_s": 8.0,
    }  # not what run measured
    assert not bool(grader.check("q8", {**typed, "run": run}))


def test_the_token_budget_and_admission_answers_are_what_the_courses_engine_does(namespace):
    """Q12 and Q13 against lesson 13's scheduler (``llm_server.Engine`` on the small decoder), with
    the questions' own numbers: the chunk each iteration prefills beside the decoding sequences,
    the iterations the long prompt takes, and the requests each admission policy starts from a
    burst."""
    ns = namespace
    loop = asyncio.new_event_loop()
    try:
        engine = llm_server.Engine(max_batch=ns["decoding"] + 1, chunk_tokens=ns["budget"])
        for _ in range(ns["decoding"]):
            engine.submit([1] * 8, 200, loop)
        while not engine.stats.steps or engine.stats.steps[-1].batch < ns["decoding"]:
            engine.step()  # until their prompts are in and they decode
        engine.submit([1] * ns["prompt"], 4, loop)
        chunks = []
        while not chunks or chunks[-1]:
            engine.step()
            chunks.append(engine.stats.steps[-1].prefill_tokens)
        assert chunks[0] == ns["chunk_per_iteration"]
        assert len(chunks) - 1 == ns["iterations"]
        admitted = {}
        for admission in llm_server.ADMISSIONS:
            engine = llm_server.Engine(
                max_batch=64,
                num_blocks=ns["pool_blocks"],
                block_tokens=ns["block_tokens"],
                admission=admission,
            )
            for _ in range(30):
                engine.submit([1] * ns["prompt_tokens"], ns["cap"], loop)
            engine.step()
            admitted[admission] = len(engine.running)
    finally:
        loop.close()
    assert admitted == {
        "reserve": ns["reserve_admitted"],
        "optimistic": ns["optimistic_admitted"],
    }
