"""The gradebook's folder run, with the grading replaced (fast: no sandbox). The class-wide run
through the CLI is tests/teaching/test_grading_class.py."""

from __future__ import annotations

import csv
import json

from teaching.grading import gradebook, grades, sandbox, submission


def test_a_grader_failure_on_one_file_is_a_row_not_the_end_of_the_run(monkeypatch, tmp_path):
    subs = tmp_path / "subs"
    subs.mkdir()
    for name in ("00_units_and_memory-a.ipynb", "00_units_and_memory-b.ipynb"):
        (subs / name).write_text(
            json.dumps({"cells": [], "metadata": {}, "nbformat": 4, "nbformat_minor": 5})
        )
    monkeypatch.setattr(
        gradebook,
        "prepare_set",
        lambda a, **k: submission.SetGrader(a, {"probes": {}, "answers": {}, "extras": {}}),
    )
    monkeypatch.setattr(sandbox, "start_factory", lambda *a, **k: None)

    def full_disk(path, *a, **k):
        if path.name.endswith("-a.ipynb"):
            raise OSError(28, "No space left on device")
        return grades.Grade(path.name, "00_units_and_memory", status="ok")

    monkeypatch.setattr(submission, "grade_one", full_disk)
    out = tmp_path / "out" / "grades.csv"
    status = gradebook.grade_folder(
        gradebook.GradingRun(subs, out, assignment="00_units_and_memory")
    )
    assert status == grades.NOT_GRADED_EXIT  # the grader failed: said, and no score
    rows = out.read_text().splitlines()
    assert len(rows) == 3
    assert "not-graded" in rows[1] and "No space left on device" in rows[1]
    assert rows[2].startswith("00_units_and_memory-b.ipynb,00_units_and_memory")


SET = "00_units_and_memory"
ROSTER = "student_id,name,email\nada,Ada,ada@x.org\nbo,Bo,bo@x.org\n"
KEYED = "canvas,moodle,nbgrader,prairielearn,gradescope"


def class_folder(tmp_path):
    subs = tmp_path / "subs"
    subs.mkdir()
    for who in ("ada", "bo"):
        (subs / f"{SET}-{who}.ipynb").write_text(
            json.dumps({"cells": [], "metadata": {}, "nbformat": 4, "nbformat_minor": 5})
        )
    (tmp_path / "roster.csv").write_text(ROSTER)
    return subs


def assert_no_score_exported(out, capsys, status, why):
    """The run said why and failed; the gradebook marks both rows; no export holds a score."""
    assert status == grades.NOT_GRADED_EXIT
    err = capsys.readouterr().err
    assert "NOT GRADED" in err and why in err
    book = list(csv.DictReader(out.open(newline="")))
    assert len(book) == 2
    for row in book:
        assert row["status"] == "not-graded" and why in row["reason"]
        scored = [v for k, v in row.items() if k.endswith(" pts]") or k in ("total", "percent")]
        assert len(scored) > 2 and set(scored) == {""}  # no 0 that nobody earned
    folder = out.parent
    for name in (f"grades-canvas-{SET}.csv", f"grades-moodle-{SET}.csv", "grades-nbgrader.csv"):
        assert (
            len((folder / name).read_text(encoding="utf-8-sig").splitlines())
            == {
                f"grades-canvas-{SET}.csv": 2,  # header, Points Possible: nobody's grade touched
                f"grades-moodle-{SET}.csv": 1,
                "grades-nbgrader.csv": 1,
            }[name]
        ), name
    for result in (folder / "grades-prairielearn").glob("*/results.json"):
        data = json.loads(result.read_text())
        assert data["gradable"] is False and why in data["format_errors"][0]
    assert len(list((folder / "grades-prairielearn").glob("*/results.json"))) == 2
    assert not list((folder / "grades-gradescope").glob("*/results.json"))


def test_a_key_that_cannot_run_here_exports_no_score_and_fails_the_run(
    monkeypatch, tmp_path, capsys
):
    subs = class_folder(tmp_path)
    why = "the solution failed on this machine: MemoryError"
    monkeypatch.setattr(gradebook, "prepare_set", lambda a, **k: submission.SetGrader(a, None, why))
    monkeypatch.setattr(sandbox, "start_factory", lambda *a, **k: None)
    out = tmp_path / "out" / "grades.csv"
    status = gradebook.grade_folder(
        gradebook.GradingRun(
            subs, out, roster=tmp_path / "roster.csv", exports=KEYED, assignment=SET
        )
    )
    assert_no_score_exported(out, capsys, status, why)


def test_a_sandbox_that_cannot_start_exports_no_score_and_fails_the_run(
    monkeypatch, tmp_path, capsys
):
    subs = class_folder(tmp_path)
    key = {"probes": {}, "answers": {}, "extras": {}}
    monkeypatch.setattr(gradebook, "prepare_set", lambda a, **k: submission.SetGrader(a, key))
    monkeypatch.setattr(sandbox, "start_factory", lambda *a, **k: None)
    why = "the sandbox did not start within 60 s"
    monkeypatch.setattr(
        submission.extract,
        "run_cells",
        lambda *a, **k: submission.extract.Extraction(grader_problem=why),
    )
    out = tmp_path / "out" / "grades.csv"
    status = gradebook.grade_folder(
        gradebook.GradingRun(
            subs, out, roster=tmp_path / "roster.csv", exports=KEYED, assignment=SET
        )
    )
    assert_no_score_exported(out, capsys, status, why)


def test_a_factory_that_never_starts_a_sandbox_is_the_graders_failure(monkeypatch, tmp_path):
    """Zygote.run: no process started for the request within the time allowed is a sandbox that
    could not start (no grade), not a submission that timed out (0)."""
    import threading
    import types

    monkeypatch.setattr(sandbox, "START_SECONDS", 0.05)
    z = object.__new__(sandbox.Zygote)
    z._waiting, z._lock, z.threads, z.drop = {}, threading.Lock(), 1, False
    z.proc = types.SimpleNamespace(stdin=types.SimpleNamespace(write=len, flush=lambda: None))
    z.cgroups = types.SimpleNamespace(slot=lambda uid: "")
    (tmp_path / "w").mkdir()
    outcome = z.run(tmp_path / "w", env={}, timeout_seconds=30)
    assert not outcome.timed_out and "did not start" in outcome.failed_to_start


def test_the_class_command_gives_the_sandbox_factory_its_jobs(monkeypatch, tmp_path):
    """Each slot's memory limit is divided by --jobs (sandbox.slot_memory_bytes): the factory
    must be told how many slots run at once."""
    subs = class_folder(tmp_path)
    seen = {}
    monkeypatch.setattr(sandbox, "start_factory", lambda *a, **k: seen.update(k))
    why = "the solution failed on this machine"
    monkeypatch.setattr(gradebook, "prepare_set", lambda a, **k: submission.SetGrader(a, None, why))
    gradebook.grade_folder(
        gradebook.GradingRun(subs, tmp_path / "out" / "g.csv", assignment=SET, jobs=2)
    )
    assert seen["jobs"] == 2
