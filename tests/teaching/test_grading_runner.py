"""The program that runs in the sandbox, run here as a file outside it (as ``sandbox`` starts it,
without the sandbox): each cell's status and capped output, answers extracted as plain data or the
reason there is none, and a cell past its time limit stopped while the run goes on."""

from __future__ import annotations

import json
import subprocess
import sys

from teaching.grading import runner

CELLS = [
    {"source": "x = 6 * 7\nclass Odd:\n    def __float__(self): raise RuntimeError('no')\n"},
    {"source": "odd = Odd()", "question": "q1", "answer": True},
    {"source": "1 / 0"},
    {"source": "print('y' * 30_000)"},
    {"source": "while True:\n    pass"},
    {"source": "late = x + 1"},
]
QUESTIONS = {
    "q1": {
        "answers": {"x": "x", "odd": "odd", "missing": "nothing_here"},
        "calls": {"f": {"call": "x * args[0]", "probes": [[2], ["a"], [None]]}},
    },
    "q2": {"answers": {"late": "late"}, "calls": {}},
}


def test_a_run_records_each_cell_and_extracts_plain_answers(tmp_path):
    results = tmp_path / "results.json"
    request = {
        "results": str(results),
        "progress": str(tmp_path / "progress.json"),
        "nonce": "n1",
        "cells": CELLS,
        "questions": QUESTIONS,
        "extras": {"q1/wrong/0": "x * 1000", "q1/wrong/1": "1 / 0"},
        "cell_timeout": 1,
    }
    (tmp_path / "request.json").write_text(json.dumps(request))
    done = subprocess.run(
        [sys.executable, runner.__file__, str(tmp_path / "request.json")],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode == 0, done.stderr
    out = json.loads(results.read_text())
    assert out["nonce"] == "n1" and out["done"] is True
    status = [c["status"] for c in out["cells"]]
    assert status == ["ok", "ok", "error", "ok", "timeout", "ok"]
    assert out["cells"][2]["error"].startswith("ZeroDivisionError")
    printed = out["cells"][3]["output"]
    assert len(printed) < 30_000 and "characters dropped" in printed
    q1 = out["answers"]["q1"]
    assert q1["x"] == {"value": 42}
    assert q1["odd"]["error"].startswith("TypeError") and "not plain data" in q1["odd"]["error"]
    assert q1["missing"]["error"].startswith("not defined")
    assert q1["f"]["calls"][0] == {"value": 84}
    assert q1["f"]["calls"][1] == {"value": "a" * 42}
    assert q1["f"]["calls"][2]["error"].startswith("TypeError")
    assert out["answers"]["q2"] == {"late": {"value": 43}}  # the run went on after the timeout
    assert out["extras"]["q1/wrong/0"] == 42000
    assert out["extras"]["q1/wrong/1"]["__error__"].startswith("ZeroDivisionError")
