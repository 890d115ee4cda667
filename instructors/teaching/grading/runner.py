"""Run a notebook's code and extract its answers as plain JSON: the only code that runs in the
sandbox.

``python runner.py REQUEST.json`` (run as a file, not as ``-m``; of the course it imports only
:mod:`course.selfcheck.plain`, the conversion the learner's checker shares) executes the cells
listed in the request in one IPython shell, each under a time limit, then evaluates the answer
expressions in the resulting namespace and writes ``results.json``: the run's nonce, each cell's
status and (capped) output, and for each question its answers as plain data (numbers, strings,
booleans, None, lists and dicts of those) or the reason there is none.

It trusts nothing it runs: the submission shares this process and may replace any of it. What it
writes is data for the trusted checker, which compares it with values the sandbox never sees; a
submission that forges this file only hands in answers. Answers are extracted after each answer
cell as well as at the end, so a later crash or kill keeps the answers already computed. With
``"in_place": true`` (building an answer key) it also keeps, under ``in_place``, each question's
answers and known-wrong expressions as they were right after its own answer cell, so that the
key's author can see a value that a later cell changed.
"""

from __future__ import annotations

import contextlib
import io
import json
import os
import signal
import sys
import time

from course.selfcheck.plain import MAX_ELEMENTS, to_plain

MAX_CELL_OUTPUT = 20_000  # characters of a cell's output kept for the executed notebook


class CellTimeout(Exception):
    """Raised inside a cell that ran past its time limit."""


class _Capped(io.TextIOBase):
    def __init__(self, limit: int = MAX_CELL_OUTPUT):
        self.parts: list[str] = []
        self.size = 0
        self.dropped = 0
        self.limit = limit

    def writable(self) -> bool:
        return True

    def write(self, s) -> int:
        s = str(s)
        room = self.limit - self.size
        if room > 0:
            self.parts.append(s[:room])
            self.size += min(len(s), room)
        self.dropped += max(0, len(s) - max(room, 0))
        return len(s)

    def text(self) -> str:
        more = f"\n[... {self.dropped:,} characters dropped ...]" if self.dropped else ""
        return "".join(self.parts) + more


def extract_answers(namespace: dict, question: dict) -> dict:
    """Evaluate one question's answer expressions (and function calls) in the namespace."""
    out: dict[str, dict] = {}
    for name, expr in question.get("answers", {}).items():
        try:
            value = eval(expr, namespace)  # noqa: S307 - the author's expression, in the sandbox
            out[name] = {"value": to_plain(value, [MAX_ELEMENTS])}
        except NameError as e:
            out[name] = {"error": f"not defined ({e})"}
        except Exception as e:  # whatever the learner's object raises
            out[name] = {"error": f"{type(e).__name__}: {str(e)[:200]}"}
    for name, spec in question.get("calls", {}).items():
        outputs = []
        for args in spec["probes"]:
            try:
                value = eval(spec["call"], dict(namespace, args=args))  # noqa: S307
                outputs.append({"value": to_plain(value, [MAX_ELEMENTS])})
            except Exception as e:
                outputs.append({"error": f"{type(e).__name__}: {str(e)[:200]}"})
        out[name] = {"calls": outputs}
    return out


def _extras(namespace: dict, exprs: dict) -> dict:
    """Evaluate the author's extra expressions (known wrong values); an error is recorded."""
    out = {}
    for key, expr in exprs.items():
        try:
            out[key] = to_plain(eval(expr, namespace), [MAX_ELEMENTS])  # noqa: S307
        except Exception as e:
            out[key] = {"__error__": f"{type(e).__name__}: {str(e)[:200]}"}
    return out


def _write(path: str, data: dict) -> None:
    tmp = path + ".tmp"
    with open(tmp, "w") as f:
        json.dump(data, f)
    os.replace(tmp, path)


def _on_alarm(signum, frame):
    raise CellTimeout("the cell ran past its time limit")


def main(request_path: str) -> int:
    with open(request_path) as f:
        request = json.load(f)
    results_path = request["results"]
    for var in ("HOME", "TMPDIR", "IPYTHONDIR", "MPLCONFIGDIR"):  # scratch, on the private /tmp
        if os.environ.get(var):
            with contextlib.suppress(OSError):
                os.makedirs(os.environ[var], exist_ok=True)
    sys.path.extend(p for p in request.get("sys_path", []) if p not in sys.path)  # the package's
    questions = request["questions"]
    results = {"nonce": request["nonce"], "cells": [], "answers": {}, "extras": {}, "done": False}
    _write(results_path, results)

    from IPython.core.interactiveshell import InteractiveShell
    from traitlets.config import Config

    config = Config()
    config.HistoryManager.enabled = False
    shell = InteractiveShell.instance(config=config)
    signal.signal(signal.SIGALRM, _on_alarm)
    real = sys.stdout, sys.stderr  # put back after each cell, whatever a cell did to them
    cell_limit = float(request["cell_timeout"])
    skip = set(request.get("skip", ()))
    for i, cell in enumerate(request["cells"]):
        if i in skip:  # it overran its limit in an earlier attempt and was killed: not run again
            record = {"index": i, "question": cell.get("question"), "status": "ok", "seconds": 0.0}
            record.update(status="timeout", error="killed after overrunning its time limit")
            results["cells"].append(record)
            continue
        _write(request.get("progress", "progress.json"), {"cell": i, "started": time.time()})
        results["cells"].append(_run_cell(shell, i, cell, cell_limit, real))
        q = cell.get("question")
        if cell.get("answer") and q in questions:
            results["answers"][q] = extract_answers(shell.user_ns, questions[q])
            if request.get("in_place"):
                own = {k: e for k, e in request.get("extras", {}).items() if k.startswith(f"{q}/")}
                here = {"answers": results["answers"][q], "extras": _extras(shell.user_ns, own)}
                results.setdefault("in_place", {})[q] = here
        _write(results_path, results)
    _extract_at_end(shell, request, results, cell_limit)
    _write(results_path, results)
    return 0


def _run_cell(shell, i: int, cell: dict, cell_limit: float, real: tuple) -> dict:
    """Run one cell within ``cell_limit`` seconds, its output captured (``real``: the streams put
    back after it): the cell's record."""
    record = {"index": i, "question": cell.get("question"), "status": "ok", "seconds": 0.0}
    capture = _Capped()
    sys.stdout = sys.stderr = capture
    start = time.monotonic()
    signal.setitimer(signal.ITIMER_REAL, cell_limit)
    try:
        outcome = shell.run_cell(cell["source"], store_history=False, silent=False)
    except CellTimeout:  # raised between the shell's own handlers
        outcome = None
        record["status"] = "timeout"
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        sys.stdout, sys.stderr = real
    record["seconds"] = round(time.monotonic() - start, 3)
    error = getattr(outcome, "error_in_exec", None) or getattr(outcome, "error_before_exec", None)
    if isinstance(error, CellTimeout):
        record["status"] = "timeout"
    elif error is not None:
        record["status"] = "error"
        record["error"] = f"{type(error).__name__}: {str(error)[:300]}"
    record["output"] = capture.text()
    return record


def _extract_at_end(shell, request: dict, results: dict, cell_limit: float) -> None:
    """Every question's answers and the extras as the run ends (``done``), within one cell's
    time limit."""
    signal.setitimer(signal.ITIMER_REAL, cell_limit)
    try:
        for q, spec in request["questions"].items():
            results["answers"][q] = extract_answers(shell.user_ns, spec)
        results["extras"] = _extras(shell.user_ns, request.get("extras", {}))
        results["done"] = True
    except CellTimeout:
        results["extraction"] = "timed out while extracting the answers"
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)


if __name__ == "__main__":
    sys.exit(main(sys.argv[1]))
