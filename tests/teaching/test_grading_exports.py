"""Each export against its tool's documented rules, on small grade records (no sandbox): the rules
are written out here from each tool's own source or documentation, not read back from the
writer.

- Canvas: ``GradebookImporter`` (instructure/canvas-lms ``app/models/gradebook_importer.rb``): the
  header's first cells hold ``Student`` and ``ID``, the identity columns end with ``Section``; a
  row whose first cell includes ``Points Possible`` sets each column's points; every other column is
  an assignment, and one that matches no existing title creates a new assignment; columns named like
  ``Current Score`` / ``Final Grade`` ... are not assignments.
- Moodle: MoodleDocs "Grade import": one identity column mapped to email, ID number or username;
  grade and feedback columns mapped to a grade item.
- nbgrader: ``CsvExportPlugin`` (jupyter/nbgrader ``nbgrader/plugins/export.py``): its eleven
  columns, one row per student and assignment, a missing submission as empty timestamp and 0,
  ``score = max(0, raw_score - late_submission_penalty)``.
- PrairieLearn "External Grading": ``score`` in [0, 1], ``gradable``, tests with ``points`` and
  ``max_points``, a file under 1 MB.
- Gradescope "Autograder Specifications": ``setup.sh`` and an executable ``run_autograder`` at the
  archive's root; tests with ``score``, ``max_score``, ``status`` and a ``visibility`` among
  hidden, after_due_date, after_published, visible.
"""

from __future__ import annotations

import csv
import io
import json
import re
import stat
import types
import zipfile
from pathlib import Path

import pytest
from teaching.grading import exports, history, roster
from teaching.grading.exports import canvas, gradescope, moodle, nbgrader, prairielearn
from teaching.grading.gradebook import Grade

SET, OTHER = "04_model_memory", "05_flops_time_cost"
POINTS = {SET: {"q1": 2.0, "q2": 1.0}, OTHER: {"q1": 3.0}}
FORMULA = '=HYPERLINK("http://evil.example","x")'
ROSTER = (
    "Student,ID,SIS User ID,SIS Login ID,Section,Email\n"
    f'"Ada Lovelace",11,S11,ada,A,ada@x.org\n'
    f'"{FORMULA.replace(chr(34), 2 * chr(34))}",12,S12,eve,A,eve@x.org\n'
    '"Bo Both",13,S13,bo,B,bo@x.org\n'
    '"Ned Nofile",14,S14,ned,B,ned@x.org\n'
)
NON_ASSIGNMENT = re.compile(
    "Current Score|Current Points|Current Grade|Final Score|Final Points|Final Grade|"
    "Override Score|Override Grade|Override Status"
)
NBGRADER_HEADER = (  # the line CsvExportPlugin.export writes first: ",".join(keys)
    "assignment,duedate,timestamp,student_id,last_name,first_name,email,raw_score,"
    "late_submission_penalty,score,max_score"
)
NBGRADER_KEYS = next(csv.reader([NBGRADER_HEADER]))
VISIBILITY = {"hidden", "after_due_date", "after_published", "visible"}


def grade(name: str, set_name: str, scores: dict, feedback=None, status="ok") -> Grade:
    return Grade(
        submission=name,
        assignment=set_name,
        scores=dict(scores),
        points=dict(POINTS[set_name]),
        status=status,
        reason="; ".join(f"{q}: {w}" for q, w in (feedback or {}).items()),
        feedback=dict(feedback or {}),
    )


@pytest.fixture
def klass(tmp_path):
    """Ada graded in both sets; Eve (a formula for a name) in one, wrongly; Bo with two files;
    Ned with none; one file from nobody on the roster."""
    path = tmp_path / "roster.csv"
    path.write_text(ROSTER, encoding="utf-8")
    grades = [
        grade(f"{SET}-11.ipynb", SET, {"q1": 2, "q2": 1}),
        grade(f"{OTHER}-11.ipynb", OTHER, {"q1": 3}),
        grade(f"{SET}-12.ipynb", SET, {"q1": 0, "q2": 1}, {"q1": "=1+1 wrong value (hint: GiB)"}),
        grade(f"{SET}-13.ipynb", SET, {"q1": 2, "q2": 1}),
        grade(f"{SET}-013.ipynb", SET, {"q1": 0, "q2": 0}),
        grade(f"{SET}-99.ipynb", SET, {"q1": 2, "q2": 1}),
    ]
    pattern = roster.compile_pattern(r"(?P<set>\d\d)_[a-z_]+-0?(?P<student>\d+)\.ipynb")
    j = roster.join(
        [(g.submission, g.assignment) for g in grades],
        roster.read_roster(path),
        pattern,
        [SET, OTHER],
    )
    by_file = {g.submission: g for g in grades}
    possible = {s: sum(p.values()) for s, p in POINTS.items()}
    return types.SimpleNamespace(join=j, grades=by_file, list=grades, possible=possible)


def parse(text: str) -> list[list[str]]:
    return list(csv.reader(io.StringIO(text, newline="")))


def assert_spreadsheet_safe(rows: list[list[str]]) -> None:
    for row in rows:
        for cell in row:
            assert cell[:1] not in ("=", "+", "-", "@", "\t", "\r"), cell


def canvas_import(rows: list[list[str]]) -> dict:
    """What Canvas's importer makes of the rows (its rules, for a course with no assignments)."""
    header = rows[0]
    assert "Student" in header[0] and "ID" in header[1] and len(header) > 3
    identity = 5 if header[2:4] == ["SIS User ID", "SIS Login ID"] else 3
    assert "Section" in header[identity - 1]
    assignments = [h for h in header[identity:] if not NON_ASSIGNMENT.search(h)]
    points, students = {}, {}
    for row in rows[1:]:
        if "Points Possible" in row[0]:
            points = dict(zip(assignments, row[identity:], strict=True))
            continue
        students[row[1]] = dict(zip(assignments, row[identity:], strict=True))
    return {"new_assignments": assignments, "points": points, "students": students}


def test_a_canvas_import_creates_one_assignment_per_set_with_its_points(klass):
    rows = parse(exports.csv_text(canvas.gradebook_rows(klass.join, klass.grades, klass.possible)))
    seen = canvas_import(rows)
    assert seen["new_assignments"] == [SET, OTHER]  # one per set, never one per question
    assert seen["points"] == {SET: "3", OTHER: "3"}
    assert seen["students"]["11"] == {SET: "3", OTHER: "3"}
    assert seen["students"]["12"] == {SET: "1", OTHER: ""}  # Eve, named =HYPERLINK(...)
    assert seen["students"]["13"] == {SET: "", OTHER: ""}  # two files: left for the instructor
    assert seen["students"]["14"] == {SET: "", OTHER: ""}  # no file: Canvas keeps its grade
    assert set(seen["students"]) == {"11", "12", "13", "14"}  # the stranger's file is no row
    for s, cells in seen["students"].items():
        for set_name, cell in cells.items():
            assert cell == "" or 0 <= float(cell) <= klass.possible[set_name], (s, cell)
    assert_spreadsheet_safe(rows)


def test_canvas_per_question_detail_is_in_its_own_feedback_file(klass):
    rows = canvas.feedback_rows(klass.join, klass.grades, klass.possible)
    assert rows[0] == canvas.FEEDBACK_HEADER
    eve = [r for r in rows[1:] if r[1] == "12"]
    assert [(r[4], r[5], r[6]) for r in eve] == [("q1", "0", "2"), ("q2", "1", "1")]
    assert "hint: GiB" in eve[0][7]
    assert_spreadsheet_safe(parse(exports.csv_text(rows)))


def test_moodle_has_an_identity_a_grade_and_a_feedback_column(klass):
    rows = moodle.rows(klass.join, klass.grades, SET, klass.possible[SET])
    assert rows[0][0] == "Email address" and len(rows[0]) == 3
    assert rows[0][1].startswith(SET) and "feedback" in rows[0][2]
    by_email = {r[0]: r for r in rows[1:]}
    assert set(by_email) == {"ada@x.org", "eve@x.org", "bo@x.org", "ned@x.org"}
    assert by_email["ada@x.org"][1] == "3" and by_email["eve@x.org"][1] == "1"
    assert by_email["bo@x.org"][1:] == ["", ""] and by_email["ned@x.org"][1:] == ["", ""]
    assert "q1 0/2" in by_email["eve@x.org"][2]
    assert_spreadsheet_safe(parse(exports.csv_text(rows)))


def test_moodle_falls_back_to_id_number_and_refuses_a_roster_without_identity(tmp_path):
    path = tmp_path / "r.csv"
    path.write_text("student_id,ID number\n1,A-1\n2,A-2\n")
    j = roster.join([], roster.read_roster(path), roster.compile_pattern("default"), [SET])
    assert moodle.identity(j) == ("idnumber", "ID number")
    path.write_text("student_id,email\n1,a@x.org\n2,\n")
    j = roster.join([], roster.read_roster(path), roster.compile_pattern("default"), [SET])
    with pytest.raises(ValueError, match="--export moodle"):
        moodle.identity(j)


def test_nbgrader_rows_follow_its_csv_exporter(klass):
    rows = nbgrader.rows(klass.join, klass.grades, klass.possible)
    assert exports.csv_text(rows).splitlines()[0] == NBGRADER_HEADER
    body = [dict(zip(NBGRADER_KEYS, r, strict=True)) for r in rows[1:]]
    assert len(body) == 4 * 2  # every student, every set
    for r in body:
        if r["raw_score"]:
            score = max(0.0, float(r["raw_score"]) - float(r["late_submission_penalty"]))
            assert float(r["score"]) == score
            assert float(r["max_score"]) == klass.possible[r["assignment"]]
    ned = [r for r in body if r["student_id"] == "14"]
    assert {(r["timestamp"], r["raw_score"], r["score"]) for r in ned} == {("", "0", "0")}
    bo = next(r for r in body if r["student_id"] == "13" and r["assignment"] == SET)
    assert (bo["raw_score"], bo["score"]) == ("", "")  # two files: never merged
    ada = next(r for r in body if r["student_id"] == "11" and r["assignment"] == SET)
    assert (ada["first_name"], ada["last_name"], ada["email"]) == ("Ada", "Lovelace", "ada@x.org")
    assert_spreadsheet_safe(parse(exports.csv_text(rows)))


def test_prairielearn_results_follow_its_external_grading_format(klass):
    for g in klass.list:
        out = prairielearn.results(g)
        assert out["gradable"] is True and 0.0 <= out["score"] <= 1.0
        tests = out["tests"]
        assert {tuple(sorted(t)) for t in tests} == {
            ("description", "max_points", "message", "name", "output", "points")
        }
        assert sum(t["points"] for t in tests) / sum(t["max_points"] for t in tests) == out["score"]
    broken = grade("x.ipynb", SET, {"q1": 0, "q2": 0}, status="not-a-notebook")
    broken.reason = "not JSON"
    assert prairielearn.results(broken) == {"gradable": False, "format_errors": ["not JSON"]}
    huge = grade("h.ipynb", SET, {"q1": 0, "q2": 0}, {"q1": "x" * 5_000_000, "q2": "y" * 10})
    huge.reason = "z" * 5_000_000
    assert len(json.dumps(prairielearn.results(huge))) < prairielearn.MAX_BYTES


def fake_set(form_only: str):
    """An assignment with q1 checked against the key and ``form_only`` checked for form only."""
    answer = types.SimpleNamespace
    return types.SimpleNamespace(
        questions=[
            types.SimpleNamespace(name="q1", answers=[answer(expect="solution")]),
            types.SimpleNamespace(name=form_only, answers=[answer(expect="none")]),
        ]
    )


def test_gradescope_results_hide_key_checked_scores_until_the_due_date(klass):
    g = klass.grades[f"{SET}-12.ipynb"]
    out = gradescope.results(g, fake_set("q2"))
    assert out["visibility"] == "after_due_date" and out["stdout_visibility"] in VISIBILITY
    tests = {t["name"]: t for t in out["tests"]}
    assert tests["q1"]["visibility"] == "after_due_date"  # its score depends on the key
    assert tests["q2"]["visibility"] == "visible"  # form only: the public check says as much
    assert (tests["q1"]["score"], tests["q1"]["max_score"], tests["q1"]["status"]) == (
        0,
        2.0,
        "failed",
    )
    assert "hint: GiB" in tests["q1"]["output"]
    for t in out["tests"]:
        assert t["visibility"] in VISIBILITY and 0 <= t["score"] <= t["max_score"]
        assert isinstance(t["number"], str) and t["status"] in ("passed", "failed")
    assert "score" not in out  # the tests carry it (the top level is optional then)
    with pytest.raises(ValueError, match="visibility"):
        gradescope.results(g, fake_set("q2"), "tomorrow")


def test_gradescope_archive_has_its_scripts_at_the_root(tmp_path):
    from teaching.grading.authoring import REPO

    path = gradescope.archive(SET, tmp_path / "a.zip", repo=REPO)
    with zipfile.ZipFile(path) as z:
        names = z.namelist()
        assert {"setup.sh", "run_autograder"} <= set(names)  # at the root, not in a folder
        for script in ("setup.sh", "run_autograder"):
            mode = z.getinfo(script).external_attr >> 16
            assert mode & stat.S_IXUSR, script
            assert z.read(script).startswith(b"#!"), script
        assert f"solutions/{SET}.ipynb" in names and "course/__main__.py" in names
        assert "instructors/teaching/grading/runner.py" in names  # the grader itself
        assert "requirements/instructors.txt" in names and "requirements/install.py" in names
        assert not [n for n in names if n.startswith("solutions/") and SET not in n]
        assert not [n for n in names if "__pycache__" in n or n.startswith("exercises/")]
        readme = z.read("README.md").decode()
        assert "768 MB" in readme and "3 GB" in readme and "Ubuntu 24.04" in readme
        assert f"--assignment {SET}" in z.read("run_autograder").decode()
    with pytest.raises(ValueError, match="no solution"):
        gradescope.archive("99_nothing", tmp_path / "b.zip", repo=REPO)


def test_export_names_are_checked_and_keyed_exports_need_a_roster():
    assert exports.parse_formats("canvas, nbgrader,canvas", has_roster=True) == [
        "canvas",
        "nbgrader",
    ]
    assert exports.parse_formats("gradescope", has_roster=False) == ["gradescope"]
    with pytest.raises(ValueError, match="--export must be among"):
        exports.parse_formats("blackboard", has_roster=True)
    with pytest.raises(ValueError, match="needs --roster"):
        exports.parse_formats("moodle", has_roster=False)


def test_an_interrupted_folder_export_leaves_the_previous_one_whole(tmp_path):
    target = tmp_path / "grades-gradescope"
    exports.write_per_file(target, [grade("a.ipynb", SET, {"q1": 2, "q2": 1})], lambda g: {})

    def interrupted(folder: Path) -> None:
        (folder / "half").write_text("x")
        raise KeyboardInterrupt

    with pytest.raises(KeyboardInterrupt):
        exports.write_folder(target, interrupted)
    assert sorted(p.name for p in target.iterdir()) == ["a.ipynb"]
    assert sorted(p.name for p in tmp_path.iterdir()) == ["grades-gradescope"]  # no temporary


def test_two_submissions_named_alike_keep_a_result_each(tmp_path):
    twins = [grade("a/b.ipynb", SET, {"q1": 1, "q2": 1}), grade("a\\b.ipynb", SET, {"q1": 2})]
    exports.write_per_file(tmp_path / "out", twins, prairielearn.results)
    assert len(list((tmp_path / "out").glob("*/results.json"))) == 2


def test_a_regrade_diff_lists_each_changed_score_per_question(tmp_path):
    before = (
        "submission,assignment,q1 [2 pts],q2 [1 pts],total,possible,percent,status,reason\n"
        "a.ipynb,s,2,0,2,3,66.7,ok,\n"
        "'=b.ipynb,s,0,0,0,3,0,timeout,\n"
        "gone.ipynb,s,1,1,2,3,66.7,ok,\n"
    )
    after = before.replace("a.ipynb,s,2,0,2", "a.ipynb,s,2,1,3").replace(
        "'=b.ipynb,s,0,0,0,3,0,timeout", "'=b.ipynb,s,2,0,2,3,66.7,ok"
    )
    after = after.replace("gone.ipynb,s,1,1,2,3,66.7,ok,\n", "new.ipynb,s,0,0,0,3,0,ok,\n")
    rows = history.diff(before, after, {"a.ipynb": "11", "=b.ipynb": "12"})
    assert rows[0] == history.DIFF_HEADER
    assert rows[1:] == [
        ["'=b.ipynb", "12", "q1", "0", "2"],
        ["'=b.ipynb", "12", "total", "0", "2"],
        ["'=b.ipynb", "12", "status", "timeout", "ok"],
        ["a.ipynb", "11", "q2", "0", "1"],
        ["a.ipynb", "11", "total", "2", "3"],
        ["gone.ipynb", "", "(submission)", "2", ""],
        ["new.ipynb", "", "(submission)", "", "0"],
    ]


def test_history_keeps_every_run_and_writes_a_diff_only_for_a_regrade(tmp_path):
    target = tmp_path / "grades.csv"
    target.write_text("submission,assignment,q1 [2 pts],total,status\na.ipynb,s,0,0,ok\n")
    assert "first run" in history.record(target, None)
    before = target.read_text()
    target.write_text(before.replace(",0,0,ok", ",2,2,ok"))
    line = history.record(target, before)
    assert "2 change(s) in 1 submission(s)" in line
    kept = sorted(p.name for p in (tmp_path / "grades_history").iterdir())
    assert len(kept) == 3 and len([k for k in kept if k.endswith("-diff.csv")]) == 1


@pytest.mark.parametrize("tool", ["gradescope", "prairielearn"])
def test_an_autograder_run_without_a_notebook_still_writes_a_result(tmp_path, tool):
    from teaching.grading.exports import autograder

    (tmp_path / "submission").mkdir()
    (tmp_path / "submission" / "answers.pdf").write_bytes(b"%PDF-1.4")
    results = tmp_path / "results" / "results.json"
    status = autograder.main(
        [tool, str(tmp_path / "submission"), str(results), "--assignment", SET]
    )
    data = json.loads(results.read_text())
    assert status == 0
    if tool == "gradescope":  # a score, since no test carries one; the reason as output
        assert data["score"] == 0.0 and data["tests"] == [] and "no .ipynb" in data["output"]
    else:  # PrairieLearn: not gradable, no attempt used
        assert data["gradable"] is False and "no .ipynb" in data["format_errors"][0]
