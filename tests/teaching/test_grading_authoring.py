"""Building an answer key (teaching.grading.authoring): a solution whose later cell changes an
earlier question's answer is refused, since the key (taken at the end) and the learner's check
(right after the question) would disagree. Set 06 (q2's and q4's ``nvlink_ms``), set 04 (q1's
wrong values after q8's ``cfg``) and set 07 (q5's and q7's ``full_bytes``) each shipped such a
key."""

from __future__ import annotations

import nbformat
import pytest
from teaching.grading import authoring, check, spec


def _set_00_with(tmp_path, extra: str):
    nb = nbformat.read(authoring.SOLUTIONS_DIR / "00_units_and_memory.ipynb", as_version=4)
    nb.cells.append(nbformat.v4.new_code_cell(extra))
    path = tmp_path / "00_units_and_memory.ipynb"
    nbformat.write(nb, path)
    assignment = spec.read(path)
    return assignment, check.make_probes(assignment, check.PUBLIC_SEED)


def test_an_answer_a_later_cell_rebinds_is_refused_naming_it(tmp_path):
    assignment, probes = _set_00_with(tmp_path, "weights_gb = weights_gb * 1e9 / 2**30  # later")
    with pytest.raises(RuntimeError, match=r"changes an answer after its question.*q1 weights_gb"):
        authoring.run_solution(assignment, probes, sandboxed=False)


def test_a_later_cell_that_leaves_the_answers_alone_builds_the_key(tmp_path):
    assignment, probes = _set_00_with(tmp_path, "scratch = 1 + 1  # a later cell, no answer name")
    key = authoring.run_solution(assignment, probes, sandboxed=False)
    assert "weights_gb" in key["answers"]["q1"]


def test_two_processes_asking_for_a_stale_key_at_once_run_its_solution_once(tmp_path, monkeypatch):
    """Two test workers (or two terminals) used to run every stale solution each; the second now
    waits on the build folder's lock and reads the first one's cache."""
    import threading
    import time

    runs = []

    def run_solution(assignment, probes, **_):
        runs.append(assignment.name)
        time.sleep(0.5)  # long enough for the other caller to arrive meanwhile
        return {"answers": {}}

    monkeypatch.setattr(authoring, "run_solution", run_solution)
    monkeypatch.setattr(authoring.sandbox, "start_factory", lambda *a, **k: None)
    solution = authoring.SOLUTIONS_DIR / "00_units_and_memory.ipynb"
    results = []
    callers = [
        threading.Thread(
            target=lambda: results.append(authoring.answer_keys([solution], build_dir=tmp_path))
        )
        for _ in range(2)
    ]
    for caller in callers:
        caller.start()
    for caller in callers:
        caller.join()
    assert runs == ["00_units_and_memory"], runs
    assert all(
        keys["00_units_and_memory"]["answers"] == {} and not errors for keys, errors in results
    )
