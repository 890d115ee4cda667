"""Grading: solutions get full marks, blank work gets 0, mistakes cost only their own questions, and
broken or hostile submissions cannot stop the run. One ``grade_folder`` run (``--jobs 2``) serves
this
file and ``tests/teaching/test_grading_attacks.py`` (see ``tests/grading_cases.py``)."""

from __future__ import annotations

import csv

import nbformat
import pytest
from grading_cases import (
    CELL_TIMEOUT_S,
    CONTAINED,
    OTHER_SET,
    POSSIBLE,
    SET,
    TIMEOUT_S,
    graded,
    points,
    question,
    row,
)
from teaching.grading import authoring, gradebook, sandbox, spec

pytestmark = [pytest.mark.slow, pytest.mark.sandbox]


@pytest.fixture(scope="module")
def result():
    return graded()


def test_grade_folder_returns_zero_and_writes_one_csv_per_set(result):
    assert result["status"] == 0
    assert result["csvs"] == [f"grades-{SET}.csv", f"grades-{OTHER_SET}.csv"]
    other = result["rows"][f"{OTHER_SET}-blank.ipynb"]
    assert (other["assignment"], float(other["total"]), float(other["possible"])) == (
        OTHER_SET,
        0,
        sum(q.points for q in spec.read(authoring.SOLUTIONS_DIR / f"{OTHER_SET}.ipynb").questions),
    )
    files = [p.name for p in result["subs"].iterdir()]
    assert sorted(result["rows"]) == sorted(f for f in files if not f.endswith(".csv"))
    print(f"grade_folder: {result['seconds']:.0f} s for {len(result['rows'])} submissions")


def test_an_output_csv_in_the_submissions_folder_is_never_graded(result):
    assert "grades-old.csv" not in result["rows"]


def test_header_carries_each_questions_points_and_rows_a_percentage(result):
    questions = spec.read(authoring.SOLUTIONS_DIR / f"{SET}.ipynb").questions
    header = result["headers"][f"grades-{SET}.csv"]
    assert header == [
        "submission",
        "assignment",
        *(f"{q.name} [{q.points:g} pts]" for q in questions),
        "total",
        "possible",
        "percent",
        "status",
        "reason",
        "protections_off",
        "seconds",
    ]
    for r in result["rows"].values():
        if r["assignment"] == OTHER_SET:
            continue
        assert r["assignment"] == SET
        total, possible = points(r)
        assert possible == POSSIBLE
        assert total == pytest.approx(sum(question(r, q.name) for q in questions))
        assert float(r["percent"]) == pytest.approx(100 * total / possible, abs=0.05)
        for q in questions:
            assert 0 <= question(r, q.name) <= q.points


def test_solutions_score_full_marks(result):
    r = row(result, "solved")
    assert (r["status"], r["reason"]) == ("ok", "")
    assert points(r) == (POSSIBLE, POSSIBLE)
    assert r["percent"] == "100.0"


def test_unanswered_exercise_scores_zero_and_says_so(result):
    r = row(result, "blank")
    assert (r["status"], points(r)) == ("ok", (0, POSSIBLE))
    assert r["reason"].startswith("q1: not answered; q2: not answered")


def test_a_known_wrong_answer_costs_its_question_and_names_the_hint(result):
    r = row(result, "gib-for-gb")
    assert points(r) == (POSSIBLE - 2, POSSIBLE)
    assert question(r, "q1") == 0
    assert "q1: weights_gb: wrong value" in r["reason"]
    assert "that is the size in GiB" in r["reason"]


def test_raising_cell_and_foreign_kernel_lose_only_the_affected_questions(result):
    r = row(result, "raises")
    assert r["status"] == "ok"
    assert [question(r, q) for q in ("q1", "q2", "q3", "q4", "q5")] == [2, 0, 0, 2, 1]
    assert "q2: bytes_per_param: not defined" in r["reason"]  # q3 uses q2's bytes_per_param


def test_a_looping_answer_cell_costs_its_own_questions_only(result):
    r = row(result, "loops-in-answer")
    assert r["status"] == "ok"
    assert f"timed out after {CELL_TIMEOUT_S:g} s" in r["reason"]
    assert [question(r, q) for q in ("q1", "q2", "q3", "q4", "q5")] == [2, 0, 0, 2, 1]
    assert float(r["seconds"]) < TIMEOUT_S


def test_a_sleeping_extra_cell_costs_nothing(result):
    r = row(result, "loops-before")
    assert points(r) == (POSSIBLE, POSSIBLE)
    assert "timed out" in r["reason"]


def test_megabytes_of_output_are_capped_and_still_graded(result):
    r = row(result, "prints")
    assert (r["status"], points(r)) == ("ok", (POSSIBLE, POSSIBLE))
    log = result["log_dir"] / f"{SET}-prints.ipynb" / "output.txt"
    assert log.stat().st_size <= sandbox.OUTPUT_HEAD_BYTES + sandbox.OUTPUT_TAIL_BYTES + 200
    assert "bytes of output dropped" in log.read_text()


def test_sys_exit_ends_only_its_cell_and_file_name_identifies_the_set(result):
    r = row(result, "sys-exit")
    assert (r["status"], points(r)) == ("ok", (POSSIBLE, POSSIBLE))


def test_os_exit_keeps_the_answers_computed_before_it(result):
    r = row(result, "os-exit")
    assert r["status"] == "crashed"
    assert "ended early" in r["reason"]
    assert [question(r, q) for q in ("q1", "q2", "q3", "q4", "q5")] == [2, 2, 2, 0, 0]


@pytest.mark.skipif(not CONTAINED, reason="no PID namespace or hidden files here: not run")
def test_deleting_files_only_hurts_the_submission_itself(result):
    r = row(result, "deletes")
    assert points(r)[0] <= POSSIBLE
    assert result["subs_unchanged"], "the submissions folder must not change"
    assert result["repo_unchanged"], "solutions/ and exercises/ must not change"


def test_a_memory_hog_fails_its_cell_not_the_run(result):
    r = row(result, "memory-hog")
    assert points(r) == (POSSIBLE, POSSIBLE)


@pytest.mark.parametrize("suffix", ["garbage", "not-a-notebook", "huge"])
def test_files_that_are_not_notebooks_score_zero_with_a_reason(result, suffix):
    r = row(result, suffix)
    assert (r["status"], points(r)) == ("not-a-notebook", (0, POSSIBLE))
    assert r["reason"]
    if suffix == "huge":
        assert "more than 500,000 JSON objects and lists: not parsed" in r["reason"]


def test_a_text_file_named_after_its_set_scores_zero(result):
    r = result["rows"][f"{SET}-notes.txt"]
    assert (r["status"], r["assignment"], points(r)) == ("not-a-notebook", SET, (0, POSSIBLE))


def test_each_submission_keeps_a_log_folder_for_regrade_disputes(result):
    folder = result["log_dir"] / f"{SET}-gib-for-gb.ipynb"
    assert {"executed.ipynb", "answers.json", "checks.json", "output.txt"} <= {
        p.name for p in folder.iterdir()
    }
    executed = nbformat.read(folder / "executed.ipynb", as_version=4)
    assert any(c.get("outputs") for c in executed.cells if c.cell_type == "code")
    assert "weights_gb" in (folder / "answers.json").read_text()


def test_protections_that_are_off_are_named_in_every_row(result):
    off = " ".join(sandbox.protections_off())
    executed = [r for r in result["rows"].values() if r["status"] not in ("not-a-notebook",)]
    assert all(r["protections_off"] == off for r in executed)


def test_a_file_that_names_no_set_gets_a_row_and_a_reason(tmp_path):
    subs = tmp_path / "subs"
    subs.mkdir()
    (subs / "notes.txt").write_text("no notebook here\n")
    out_csv = tmp_path / "grades.csv"
    assert gradebook.grade_folder(gradebook.GradingRun(subs, out_csv)) == 0
    [r] = list(csv.DictReader(out_csv.open(newline="")))
    assert (r["status"], float(r["total"])) == ("unknown-assignment", 0)
    assert "cannot tell which set" in r["reason"]


def test_missing_folder_and_unknown_set_are_errors(tmp_path):
    assert (
        gradebook.grade_folder(gradebook.GradingRun(tmp_path / "nope", tmp_path / "grades.csv"))
        != 0
    )
    assert (
        gradebook.grade_folder(
            gradebook.GradingRun(tmp_path, tmp_path / "g.csv", assignment="99_no_such_set")
        )
        == 2
    )
    assert not (tmp_path / "grades.csv").exists()


def test_jobs_must_be_a_positive_integer(tmp_path):
    with pytest.raises(ValueError, match="jobs must be an integer >= 1"):
        gradebook.grade_folder(gradebook.GradingRun(tmp_path, tmp_path / "grades.csv", jobs=0))
