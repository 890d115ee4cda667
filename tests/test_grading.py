"""Grading: solutions get full marks, blank work gets 0, and hostile submissions cannot stop the run.

All submissions are graded in ONE ``grade_folder`` call (session fixture), against an autograder zip
built on demand under ``build/``. The submissions are made here from the solution and exercise
notebooks, so they follow any change to the questions.
"""

from __future__ import annotations

import csv
import json
import random
import time
from pathlib import Path

import nbformat
import psutil
import pytest

from course import grading

ASSIGNMENT = "00_units_and_memory"
SOLUTION = grading.SOLUTIONS_DIR / f"{ASSIGNMENT}.ipynb"
EXERCISE = grading.EXERCISES_DIR / f"{ASSIGNMENT}.ipynb"
TIMEOUT_S = 25  # the looping submission costs this much; the others take ~5-10 s each

pytestmark = pytest.mark.slow


def solution_cells(solution: nbformat.NotebookNode) -> list[str]:
    """Sources of the code cells between ``# BEGIN SOLUTION`` and ``# END SOLUTION`` raw cells."""
    cells, inside = [], False
    for cell in solution.cells:
        text = cell.source.strip()
        if cell.cell_type == "raw" and text == "# BEGIN SOLUTION":
            inside = True
        elif cell.cell_type == "raw" and text == "# END SOLUTION":
            inside = False
        elif inside and cell.cell_type == "code":
            cells.append(cell.source)
    return cells


def filled_in() -> nbformat.NotebookNode:
    """The exercise notebook as a learner who gets everything right hands it in."""
    nb = nbformat.read(EXERCISE, as_version=4)
    answers = iter(solution_cells(nbformat.read(SOLUTION, as_version=4)))
    for cell in nb.cells:
        if "otter_answer_cell" in cell.metadata.get("tags", []):
            cell.source = next(answers)
    assert next(answers, None) is None, "more solution cells than answer cells"
    return nb


def answer_cell_index(nb: nbformat.NotebookNode, n: int) -> int:
    """Index of the n-th answer cell (0-based)."""
    answer_cells = [
        i for i, c in enumerate(nb.cells) if "otter_answer_cell" in c.metadata.get("tags", [])
    ]
    return answer_cells[n]


def with_cell(code: str, *, before_answer: int) -> nbformat.NotebookNode:
    """The right answers, with one extra code cell just before the given answer cell."""
    nb = filled_in()
    nb.cells.insert(answer_cell_index(nb, before_answer), nbformat.v4.new_code_cell(code))
    return nb


def write_nb(folder: Path, name: str, nb: nbformat.NotebookNode) -> None:
    nbformat.write(nb, folder / name)


@pytest.fixture(scope="session")
def graded(tmp_path_factory):
    """Grade every kind of submission in one run; return (rows by file name, CSV header, folder)."""
    build = tmp_path_factory.mktemp("grading")
    subs = build / "submissions"
    subs.mkdir()
    write_nb(subs, f"{ASSIGNMENT}-solved.ipynb", filled_in())
    write_nb(subs, f"{ASSIGNMENT}-blank.ipynb", nbformat.read(EXERCISE, as_version=4))

    # An answer cell that raises, and a notebook saved with a kernel this machine does not have.
    raises = filled_in()
    raises.cells[answer_cell_index(raises, 1)].source = "raise ValueError('no idea')"
    raises.metadata["kernelspec"] = {
        "name": "julia-1.10",
        "display_name": "Julia",
        "language": "julia",
    }
    write_nb(subs, f"{ASSIGNMENT}-raises.ipynb", raises)

    write_nb(subs, f"{ASSIGNMENT}-loops.ipynb", with_cell("while True:\n    pass", before_answer=2))
    prints = "import os\nfor _ in range(8):\n    print('x' * 2**20)\n"
    prints += "os.write(1, b'y' * 2**24)  # 16 MB straight to the grader's stdout"
    write_nb(subs, f"{ASSIGNMENT}-prints.ipynb", with_cell(prints, before_answer=0))

    # sys.exit inside a notebook only ends the cell; also: no otter metadata, found by file name.
    exits = with_cell("import sys\nsys.exit(3)", before_answer=0)
    del exits.metadata["otter"]
    write_nb(subs, f"{ASSIGNMENT}-sys-exit.ipynb", exits)

    write_nb(
        subs, f"{ASSIGNMENT}-os-exit.ipynb", with_cell("import os\nos._exit(1)", before_answer=3)
    )
    deletes = "import os, shutil\nshutil.rmtree(os.path.dirname(os.getcwd()), ignore_errors=True)\n"
    deletes += "shutil.rmtree(os.path.expanduser('~'), ignore_errors=True)"
    write_nb(subs, f"{ASSIGNMENT}-deletes.ipynb", with_cell(deletes, before_answer=4))

    (subs / f"{ASSIGNMENT}-garbage.ipynb").write_bytes(random.Random(0).randbytes(4096))
    (subs / f"{ASSIGNMENT}-not-a-notebook.ipynb").write_text(json.dumps({"hello": "world"}))
    (subs / f"{ASSIGNMENT}-notes.txt").write_text("I could not open Jupyter, sorry.\n")

    before = {p.name: p.read_bytes() for p in subs.iterdir()}
    out_csv = build / "grades.csv"
    start = time.monotonic()
    status = grading.grade_folder(subs, out_csv, timeout_s=TIMEOUT_S, jobs=2)
    seconds = time.monotonic() - start
    with out_csv.open(newline="") as f:
        reader = csv.DictReader(f)
        rows = {row["submission"]: row for row in reader}
        header = reader.fieldnames
    after = {p.name: p.read_bytes() for p in subs.iterdir()}
    return {
        "status": status,
        "rows": rows,
        "header": header,
        "seconds": seconds,
        "intact": before == after,
        "log_dir": build / "grades_logs",
    }


def row(graded, suffix: str) -> dict:
    return graded["rows"][f"{ASSIGNMENT}-{suffix}.ipynb"]


def points(r: dict) -> tuple[float, float]:
    return float(r["total"]), float(r["possible"])


def test_grade_folder_returns_zero_and_writes_one_row_per_file(graded):
    assert graded["status"] == 0
    assert len(graded["rows"]) == 11  # every file, the non-notebooks included
    print(f"grade_folder: {graded['seconds']:.0f} s for 11 submissions")


def test_csv_has_one_column_per_question_and_a_total(graded):
    questions = [
        q.name for q in grading.zip_questions(grading.AUTOGRADER_DIR / f"{ASSIGNMENT}.zip")
    ]
    assert len(questions) >= 4
    assert graded["header"] == [
        "submission", "assignment", *questions, "total", "possible", "status", "reason", "seconds"
    ]  # fmt: skip
    for r in graded["rows"].values():
        assert r["assignment"] == ASSIGNMENT
        assert float(r["total"]) == pytest.approx(sum(float(r[q]) for q in questions))
        assert float(r["possible"]) == 9


def test_solutions_score_full_marks(graded):
    r = row(graded, "solved")
    assert (r["status"], r["reason"]) == ("ok", "")
    total, possible = points(r)
    assert total == possible == 9


def test_unanswered_exercise_scores_zero(graded):
    r = row(graded, "blank")
    assert r["status"] == "ok"
    assert points(r) == (0, 9)
    assert r["reason"] == "tests failed: q1, q2, q3, q4, q5"


def test_raising_cell_and_foreign_kernel_lose_only_the_affected_questions(graded):
    r = row(graded, "raises")
    assert r["status"] == "ok"
    assert r["reason"] == "tests failed: q2, q3"  # q3 uses q2's bytes_per_param
    assert float(r["q1"]) == 2 and float(r["q2"]) == 0 and float(r["q3"]) == 0
    assert float(r["q4"]) == 2 and float(r["q5"]) == 1


def test_infinite_loop_is_killed_at_the_timeout(graded):
    r = row(graded, "loops")
    assert r["status"] == "timeout"
    assert "timed out" in r["reason"]
    assert points(r) == (0, 9)
    assert float(r["seconds"]) < TIMEOUT_S + 15


def test_no_grading_process_survives(graded):
    leftovers = []
    for proc in psutil.process_iter():
        try:
            if "COURSE_GRADING_TOKEN" in proc.environ():
                leftovers.append(proc.pid)
        except psutil.Error:
            continue
    assert leftovers == []


def test_megabytes_of_output_are_capped_and_still_graded(graded):
    r = row(graded, "prints")
    assert (r["status"], points(r)) == ("ok", (9, 9))
    log = graded["log_dir"] / f"{ASSIGNMENT}-prints.ipynb.log"
    size = log.stat().st_size
    assert size <= grading.OUTPUT_HEAD_BYTES + grading.OUTPUT_TAIL_BYTES + 200
    assert "bytes of output dropped" in log.read_text()


def test_sys_exit_ends_only_its_cell_and_file_name_identifies_the_assignment(graded):
    r = row(graded, "sys-exit")
    assert (r["status"], points(r)) == ("ok", (9, 9))


def test_os_exit_kills_the_kernel_and_scores_zero_with_a_reason(graded):
    r = row(graded, "os-exit")
    assert r["status"] == "error"
    assert points(r) == (0, 9)
    assert "kernel died" in r["reason"]


def test_deleting_files_only_hurts_the_submission_itself(graded):
    r = row(graded, "deletes")
    assert r["status"] in {"ok", "error"} and r["reason"]
    assert float(r["total"]) < 9
    assert graded["intact"], "the submissions folder must not change"
    assert (grading.AUTOGRADER_DIR / f"{ASSIGNMENT}.zip").is_file()


@pytest.mark.parametrize("suffix", ["garbage", "not-a-notebook"])
def test_files_that_are_not_notebooks_score_zero_with_a_reason(graded, suffix):
    r = row(graded, suffix)
    assert r["status"] == "not-a-notebook"
    assert r["reason"]
    assert points(r) == (0, 9)


def test_a_text_file_named_after_its_assignment_scores_zero(graded):
    r = graded["rows"][f"{ASSIGNMENT}-notes.txt"]
    assert (r["status"], r["assignment"]) == ("not-a-notebook", ASSIGNMENT)
    assert points(r) == (0, 9)


def test_a_file_that_names_no_assignment_gets_a_row_and_a_reason(tmp_path):
    subs = tmp_path / "subs"
    subs.mkdir()
    (subs / "notes.txt").write_text("no notebook here\n")
    out_csv = tmp_path / "grades.csv"
    assert grading.grade_folder(subs, out_csv) == 0
    [r] = list(csv.DictReader(out_csv.open(newline="")))
    assert len(grading.solution_notebooks()) > 1  # with a single set, that one would be assumed
    assert (r["status"], float(r["total"])) == ("unknown-assignment", 0)
    assert "cannot tell which assignment" in r["reason"]


def test_assignment_option_grades_every_file_as_that_assignment(tmp_path):
    subs = tmp_path / "subs"
    subs.mkdir()
    (subs / "notes.txt").write_text("no notebook here\n")
    out_csv = tmp_path / "grades.csv"
    assert grading.grade_folder(subs, out_csv, assignment=ASSIGNMENT) == 0
    [r] = list(csv.DictReader(out_csv.open(newline="")))
    assert (r["assignment"], r["status"], float(r["possible"])) == (ASSIGNMENT, "not-a-notebook", 9)
    assert grading.grade_folder(subs, out_csv, assignment="99_no_such_set") == 2


def test_missing_folder_is_an_error(tmp_path):
    assert grading.grade_folder(tmp_path / "nope", tmp_path / "grades.csv") != 0
    assert not (tmp_path / "grades.csv").exists()


def test_jobs_must_be_a_positive_integer(tmp_path):
    with pytest.raises(ValueError, match="jobs must be an integer >= 1"):
        grading.grade_folder(tmp_path, tmp_path / "grades.csv", jobs=0)
