"""A learner who wants marks without the answers: every trick scores what the work honestly earns.

Each attack is a submission in the shared grading run (``tests/grading_cases.py``): mostly the blank
exercise plus the trick (honest score 0), or the right answers plus an attack on the grader, the
gradebook or another learner (honest score: full marks, and nothing outside the sandbox changes).
"""

from __future__ import annotations

import nbformat
import pytest
from grading_cases import CONTAINED, MARKER, POSSIBLE, graded, points, question, row
from teaching.grading import sandbox

pytestmark = [pytest.mark.slow, pytest.mark.sandbox]


def _outputs(result: dict, r: dict) -> list[str]:
    """Lines the submission printed, from the executed notebook in its log folder."""
    nb = nbformat.read(result["log_dir"] / r["submission"] / "executed.ipynb", as_version=4)
    return [
        line
        for cell in nb.cells
        for out in cell.get("outputs", [])
        for line in str(out.get("text", "")).splitlines()
    ]


@pytest.fixture(scope="module")
def result():
    return graded()


def test_monkeypatching_the_checker_in_the_kernel_gains_nothing(result):
    r = row(result, "attack-monkeypatch")
    assert points(r) == (0, POSSIBLE)


def test_objects_equal_to_everything_are_not_plain_data(result):
    r = row(result, "attack-eq")
    assert points(r) == (0, POSSIBLE)
    assert "weights_gb: " in r["reason"] and "not plain data" in r["reason"]


@pytest.mark.skipif("hidden-files" in sandbox.protections_off(), reason="no mount namespace here")
def test_the_key_and_the_solutions_are_not_there_to_read(result):
    r = row(result, "attack-steal-key")
    assert points(r) == (0, POSSIBLE)
    [found] = [line for line in _outputs(result, r) if line.startswith("FOUND")]
    assert "solutions/" not in found and ".key.json" not in found and "submissions" not in found


def test_grader_check_is_no_oracle_during_grading(result):
    r = row(result, "attack-oracle")
    assert question(r, "q5") == 0  # the brute force stops at the first guess, 'a'


def test_a_forged_results_file_gains_nothing(result):
    r = row(result, "attack-forge-results")
    total, possible = points(r)
    assert total == 0 and possible == POSSIBLE
    assert "495" not in r["total"]


@pytest.mark.skipif(not CONTAINED, reason="no PID namespace or hidden files here: not run")
def test_a_detached_daemon_dies_with_its_submission_and_changes_nothing_outside(result):
    r = row(result, "attack-daemon")
    assert points(r) == (POSSIBLE, POSSIBLE)
    assert result["out_unchanged"], "the CSV or the logs changed after grading"
    assert result["subs_unchanged"], "the submissions folder changed"
    for p in result["subs"].iterdir():
        assert not p.read_bytes().endswith(MARKER.encode())


@pytest.mark.skipif(not CONTAINED, reason="no PID namespace or hidden files here: not run")
def test_another_learners_notebook_cannot_be_edited(result):
    assert points(row(result, "attack-edit-other"))[0] == 0
    assert points(row(result, "victim")) == (POSSIBLE, POSSIBLE)
    assert result["subs_unchanged"]


def test_the_file_name_beats_the_notebook_metadata_and_the_mismatch_is_reported(result):
    r = row(result, "attack-metadata")
    assert (r["assignment"], points(r)) == ("00_units_and_memory", (POSSIBLE, POSSIBLE))
    assert "metadata says 01_hardware" in r["reason"]


def test_a_results_symlink_is_not_followed(result):
    r = row(result, "attack-symlink")
    assert points(r) == (0, POSSIBLE)
    assert "no usable results" in r["reason"]
    assert "root:" not in (result["log_dir"] / r["submission"] / "answers.json").read_text()


@pytest.mark.skipif(sandbox.protections_off() != (), reason="some protections are off here")
def test_no_network_and_an_unprivileged_user(result):
    r = row(result, "attack-escape")
    assert points(r) == (POSSIBLE, POSSIBLE)
    [line] = [line for line in _outputs(result, r) if line.startswith("NET")]
    assert "Network is unreachable" in line
    uid = int(line.split("UID ")[1].split()[0])  # nobody, or the user of its slot (--jobs 2)
    assert uid == sandbox.NOBODY or sandbox.SLOT_UID_BASE < uid < sandbox.SLOT_UID_BASE + 64
    [env] = [line for line in _outputs(result, r) if line.startswith("ENV")]
    assert "PYTEST" not in env and "VIRTUAL_ENV" not in env  # the grader's environment stays out


def test_a_loop_that_swallows_the_cell_timeout_is_killed_and_costs_only_itself(result):
    r = row(result, "attack-catches-timeout")
    assert points(r) == (POSSIBLE, POSSIBLE)  # the looping cell answered nothing
    assert "timed out" in r["reason"]


def test_a_cell_deaf_to_its_alarm_is_killed_from_outside_and_costs_only_itself(result):
    r = row(result, "ignores-alarm")
    assert points(r) == (POSSIBLE, POSSIBLE)
    assert "timed out" in r["reason"]


def test_the_submission_time_limit_keeps_the_answers_computed_before_it(result):
    r = row(result, "slow-overall")
    assert r["status"] == "timeout"
    assert [question(r, q) for q in ("q1", "q2", "q3", "q4", "q5")] == [2, 2, 2, 0, 0]
