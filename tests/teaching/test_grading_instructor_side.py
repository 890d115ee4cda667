"""What the instructor is told and given (issue 35's holes). Instructor mistakes are said before
anyone is graded: a solution edited after the release, an answer renamed since, a notebook made
from the earlier version (set 00's Q1, Llama 2 7B's 6,738,415,616 parameters in fp16, against its
real released checks). Outputs: ``--out`` that cannot be written is refused before grading, a rerun
leaves nothing stale, every file name has its own log folder, no terminal escape reaches the console
or the CSV raw, a reason cell is capped. The sandbox is not started (the key and each grade are
given)."""

from __future__ import annotations

import csv
import dataclasses
import json
import os
import subprocess
from pathlib import Path

import nbformat
import pytest
from teaching.grading import (
    authoring,
    files,
    gradebook,
    grades,
    keycheck,
    sandbox,
    spec,
    submission,
)

SET = "00_units_and_memory"
ASSIGNMENT = spec.read(authoring.SOLUTIONS_DIR / f"{SET}.ipynb")
RELEASED = json.loads((authoring.EXERCISES_DIR / "checks" / f"{SET}.json").read_text())
WEIGHTS_BYTES = 6_738_415_616 * 2  # fp16: what the released Q1 check accepts


def key(weights_bytes: int) -> dict:
    q1 = {
        "weights_bytes": {"value": weights_bytes},
        "weights_gb": {"value": weights_bytes / 10**9},
        "weights_gib": {"value": weights_bytes / 2**30},
    }
    return {"answers": {"q1": q1}, "extras": {}, "probes": {}}


def test_a_key_that_agrees_with_the_release_raises_nothing():
    assert keycheck.key_vs_release(ASSIGNMENT, key(WEIGHTS_BYTES), RELEASED) == {}


def test_a_solution_edited_after_the_release_is_named_per_question():
    problems = keycheck.key_vs_release(ASSIGNMENT, key(2 * WEIGHTS_BYTES), RELEASED)
    assert list(problems) == ["q1"]
    assert "fails the released check for weights_bytes" in problems["q1"]


def test_an_answer_renamed_since_the_release_is_named_and_an_old_notebook_is_spotted():
    q1 = ASSIGNMENT.questions[0]
    renamed = dataclasses.replace(q1.answers[0], name="bytes_fp16", expr="bytes_fp16")
    newer = dataclasses.replace(
        ASSIGNMENT,
        questions=[dataclasses.replace(q1, answers=(renamed, *q1.answers[1:]))]
        + ASSIGNMENT.questions[1:],
    )
    problems = keycheck.key_vs_release(newer, key(WEIGHTS_BYTES), RELEASED)
    assert list(problems) == ["q1"] and "renamed since the release" in problems["q1"]
    released_notebook = nbformat.read(authoring.EXERCISES_DIR / f"{SET}.ipynb", as_version=4)
    assert keycheck.missing_names(newer, released_notebook) == {"q1": ["bytes_fp16"]}
    assert keycheck.missing_names(ASSIGNMENT, released_notebook) == {}  # a blank names them all


def test_a_solution_with_uncommitted_changes_is_spotted(tmp_path):
    def git(*args):
        subprocess.run(["git", "-C", str(tmp_path), *args], check=True, capture_output=True)

    solution = tmp_path / "solutions" / f"{SET}.ipynb"
    solution.parent.mkdir()
    solution.write_text("{}")
    git("init", "-q")
    git("add", ".")
    git("-c", "user.name=t", "-c", "user.email=t@t", "commit", "-qm", "release")
    assert not keycheck.uncommitted(solution, tmp_path)
    solution.write_text('{"edited": 1}')
    assert keycheck.uncommitted(solution, tmp_path)


@pytest.fixture
def graded_with(monkeypatch, tmp_path):
    """grade_folder with the key given (prepare_set) and every file losing Q1 (grade_one); the
    order of warnings and gradings is recorded."""
    events: list[str] = []
    loud = submission.loud
    monkeypatch.setattr(submission, "loud", lambda t: (events.append("warning"), loud(t)))
    monkeypatch.setattr(sandbox, "start_factory", lambda *a, **k: None)
    monkeypatch.setattr(authoring, "BUILD_DIR", tmp_path / "build")  # no release recorded

    def run(weights_bytes: int, source: str) -> list[list[str]]:
        monkeypatch.setattr(
            gradebook, "prepare_set", lambda a, **k: submission.SetGrader(a, key(weights_bytes))
        )

        def lose_q1(path, nb, setg, **_):
            events.append("graded")
            g = grades.Grade(path.name, SET, points=setg.points)
            g.scores = {q: (0.0 if q == "q1" else p) for q, p in setg.points.items()}
            g.reason = "q1: not right"
            return g

        monkeypatch.setattr(submission, "grade_one", lose_q1)
        subs = tmp_path / "subs"
        subs.mkdir(exist_ok=True)
        nb = nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell(source)])
        nbformat.write(nb, subs / f"{SET}-ada.ipynb")
        out = tmp_path / "out" / "grades.csv"
        assert (
            gradebook.grade_folder(gradebook.GradingRun(subs, out, assignment=SET, history=False))
            == 0
        )
        return list(csv.reader(out.open()))

    return run, events


def test_a_key_that_differs_from_the_release_is_said_before_grading_and_in_the_row(
    graded_with, capsys
):
    run, events = graded_with
    rows = run(2 * WEIGHTS_BYTES, "weights_bytes = weights_gb = weights_gib = 1")
    assert events[0] == "warning" and "graded" in events  # before anyone is graded
    err = capsys.readouterr().err
    assert "!!! WARNING: [00_units_and_memory] q1: the key fails the released check" in err
    reason = rows[1][rows[0].index("reason")]
    assert submission.KEY_MARK in reason and submission.VERSION_MARK not in reason


def test_a_solution_changed_assigned_and_committed_after_the_release_is_said(
    graded_with, capsys, monkeypatch, tmp_path
):
    run, events = graded_with
    keycheck.record_release(
        {SET: key(WEIGHTS_BYTES)}, [ASSIGNMENT], tmp_path / "build", commit="0" * 40, mode="graded"
    )
    # the edited solution was assigned and committed: the checks at the last commit agree with it
    monkeypatch.setattr(keycheck, "key_vs_release", lambda *a: {})
    rows = run(2 * WEIGHTS_BYTES, "weights_bytes = weights_gb = weights_gib = 1")
    assert events[0] == "warning" and "graded" in events  # before anyone is graded
    err = capsys.readouterr().err
    assert "q1: the key differs from the one the graded release of" in err
    assert "(commit 000000000000) was built from" in err
    reason = rows[1][rows[0].index("reason")]
    assert submission.KEY_MARK in reason and "changed after the release" in reason


def test_a_key_as_released_is_not_flagged_by_the_release_record(graded_with, capsys, tmp_path):
    run, events = graded_with
    keycheck.record_release(
        {SET: key(WEIGHTS_BYTES)}, [ASSIGNMENT], tmp_path / "build", commit="0" * 40, mode="graded"
    )
    rows = run(WEIGHTS_BYTES, "weights_bytes = weights_gb = weights_gib = 1")
    assert "warning" not in events[: events.index("graded")]
    assert submission.KEY_MARK not in rows[1][rows[0].index("reason")]
    assert "no release of" not in capsys.readouterr().err


def test_the_release_record_leaves_measured_answers_out():
    measured = spec.read(authoring.SOLUTIONS_DIR / "05_flops_time_cost.ipynb")
    machine = [(q, a) for q in measured.questions for a in q.answers if a.expect == "machine"]
    assert machine  # set 05 has measured answers
    q, a = machine[0]
    one = {"answers": {q.name: {a.name: {"value": 1.0}}}}
    other = {"answers": {q.name: {a.name: {"value": 2.0}}}}
    assert keycheck.question_digests(measured, one) == keycheck.question_digests(measured, other)


def test_a_notebook_that_never_names_an_answer_says_so_in_its_row(graded_with, capsys):
    run, events = graded_with
    rows = run(WEIGHTS_BYTES, "bytes_fp16 = 1")  # the answer under another name
    assert "warning" not in events[: events.index("graded")]  # the key agrees with the release
    reason = rows[1][rows[0].index("reason")]
    assert submission.VERSION_MARK in reason and "never names weights_bytes" in reason
    assert submission.KEY_MARK not in reason
    assert "OLDER VERSION OF THE SET?" in capsys.readouterr().err  # counted at the end


@pytest.fixture
def given(monkeypatch, tmp_path):
    """grade_folder over ``named`` files with the key given and every notebook graded as a row with
    ``reason`` and a log folder; returns (exit status, the CSV's rows, the console, calls)."""
    calls: list[str] = []
    monkeypatch.setattr(sandbox, "start_factory", lambda *a, **k: None)
    monkeypatch.setattr(
        gradebook, "prepare_set", lambda a, **k: submission.SetGrader(a, key(WEIGHTS_BYTES))
    )

    def run(named: dict, capsys, reason: str = "", out=None, **kw):
        def graded(path, nb, setg, *, log_dir, **_):
            calls.append(path.name)
            log = log_dir / files.log_name(path)
            files.make_dir(log)
            files.write_new(log / "output.txt", "")
            return grades.Grade(
                files.display_name(path), setg.assignment.name, reason=reason, log=log.name
            )

        monkeypatch.setattr(submission, "grade_one", graded)
        subs = tmp_path / "subs"
        if subs.exists():
            for old in subs.iterdir():
                old.unlink()
        subs.mkdir(exist_ok=True)
        for name, nb in named.items():
            path = subs / (os.fsdecode(name) if isinstance(name, bytes) else name)
            nbformat.write(nb or nbformat.v4.new_notebook(), path)
        out = out or tmp_path / "out" / "grades.csv"
        status = gradebook.grade_folder(gradebook.GradingRun(subs, out, **kw))
        rows = list(csv.reader(out.open(newline=""))) if out.is_file() else []
        return status, rows, capsys.readouterr().err, calls

    return run


@pytest.mark.parametrize("where", ["a folder", "a linked folder", "a linked log folder"])
def test_an_out_that_cannot_be_written_is_refused_before_anyone_is_graded(
    given, tmp_path, capsys, where
):
    (tmp_path / "real").mkdir()
    (tmp_path / "linked").symlink_to(tmp_path / "real")
    out = {
        "a folder": tmp_path / "real",
        "a linked folder": tmp_path / "linked" / "grades.csv",
        "a linked log folder": tmp_path / "grades.csv",
    }[where]
    logs = tmp_path / "linked" / "logs" if where == "a linked log folder" else None
    status, _, err, calls = given({f"{SET}-ada.ipynb": None}, capsys, out=out, log_dir=logs)
    assert status == 2 and calls == []
    assert "refusing to grade" in err and ("is a folder" in err or "symbolic link" in err)


def test_a_rerun_keeps_the_class_and_a_replace_leaves_nothing_stale(given, tmp_path, capsys):
    other = "01_hardware"
    status, *_ = given({f"{SET}-ada.ipynb": None, f"{other}-bo.ipynb": None}, capsys)
    out = tmp_path / "out"
    assert status == 0 and (out / f"grades-{other}.csv").is_file()
    assert (out / "grades_logs" / f"{other}-bo.ipynb" / "output.txt").is_file()
    status, rows, *_ = given({f"{SET}-ada.ipynb": None}, capsys)  # ada regraded: bo's row stays
    assert status == 0 and (out / f"grades-{other}.csv").is_file()
    assert (out / "grades_logs" / f"{other}-bo.ipynb" / "output.txt").is_file()
    status, rows, *_ = given({f"{SET}-ada.ipynb": None}, capsys, replace=True)  # bo withdrawn
    assert status == 0 and [r[0] for r in rows[1:]] == [f"{SET}-ada.ipynb"]
    assert sorted(p.name for p in out.glob("*.csv")) == ["grades.csv"]
    run = sorted((out / "grades_history").iterdir())[-1]
    assert (run / "stale" / f"grades-{other}.csv").is_file()  # kept there, as are the logs
    assert (run / "replaced-logs" / f"{other}-bo.ipynb" / "output.txt").is_file()
    assert sorted(p.name for p in (out / "grades_logs").iterdir()) == [
        f"{SET}-ada.ipynb",
        "adjustments.json",  # overrides and late penalties outlive a --replace
        "gradebook.json",
        "summary.json",
    ]


def test_no_two_file_names_share_a_log_folder():
    names = [
        "a\x1b.ipynb",
        "a_.ipynb",
        "a%1B.ipynb",
        ".a.ipynb",
        "%2Ea.ipynb",
        "_a.ipynb",
        os.fsdecode(b"a\xff.ipynb"),
        "a\\xff.ipynb",
        "a\\b.ipynb",
        "a_b.ipynb",
    ]
    logs = [files.log_name(Path(n)) for n in names]
    assert len(set(logs)) == len(names), logs
    for log in logs:
        assert log.isprintable() and "/" not in log and "\\" not in log and log[0] != "."


def test_terminal_escapes_reach_neither_the_console_nor_the_csv_raw(given, tmp_path, capsys):
    hostile = "\x1b]0;pwned\x07\x1b[2J"
    status, rows, err, _ = given({f"{SET}-{hostile}.ipynb": None}, capsys, reason=hostile)
    assert status == 0 and "\x1b" not in err and "\x07" not in err
    book = (tmp_path / "out" / "grades.csv").read_text()
    assert "\x1b" not in book and "\x07" not in book
    assert "\\x1b]0;pwned\\x07" in rows[1][0] and "\\x1b[2J" in rows[1][rows[0].index("reason")]


def test_a_notebooks_metadata_makes_no_huge_reason_cell(given, tmp_path, capsys):
    nb = nbformat.v4.new_notebook()
    nb.metadata["course"] = {"assignment": "x" * 10_000_000}  # 10 MB
    nb.metadata["otter"] = {"assignment_name": "y" * 10_000_000}
    status, rows, _, _ = given({f"{SET}-ada.ipynb": nb}, capsys, reason="z" * 10_000_000)
    reason = rows[1][rows[0].index("reason")]
    assert status == 0 and "the notebook's metadata says" in reason
    assert len(reason) <= grades.MAX_REASON_CHARS + 40
    assert (tmp_path / "out" / "grades.csv").stat().st_size < 3 * grades.MAX_REASON_CHARS
