"""``course grade --roster --pattern --export``, wired: a bad option is refused before anyone is
graded, the pattern's set names the set, every export and the roster report are written, and a
regrade keeps the last run beside a diff. The sandbox is not the point here: the grading itself is
replaced by records (tests/teaching/test_grading_lms.py runs the real one)."""

from __future__ import annotations

import contextlib
import csv
import shlex
import subprocess

import nbformat
import pytest
from teaching.__main__ import main
from teaching.grading import authoring, files, gradebook, grades, sandbox, spec

SET = "00_units_and_memory"
QUESTIONS = {
    q.name: q.points for q in spec.read(authoring.SOLUTIONS_DIR / f"{SET}.ipynb").questions
}


@pytest.fixture
def fake_grading(monkeypatch):
    """Grading replaced by a record per planned file: full marks, or none for a name with 'zero'."""
    calls = []

    def graded(planned, assignments, known, log_dir, **_):
        calls.append([files.display_name(p) for p, *_ in planned])
        out = []
        for p, nb, _problem, name, _note in planned:
            full = "zero" not in p.name and (nb is None or nb.metadata.get("fake") != "zero")
            log = log_dir / files.log_name(p)  # a log per file, as grade_one keeps one
            log.mkdir(parents=True, exist_ok=True)
            (log / "answers.json").write_text(f"run {len(calls)}, {'full' if full else 'zero'}")
            out.append(
                grades.Grade(
                    files.display_name(p),
                    name or "",
                    {q: (pts if full else 0.0) for q, pts in QUESTIONS.items()} if name else {},
                    dict(QUESTIONS) if name else {},
                    "ok" if name else "unknown-assignment",
                    "" if full else "q1: wrong value",
                    feedback={} if full else {"q1": "wrong value"},
                    log=log.name,
                )
            )
        return out

    monkeypatch.setattr(gradebook, "_grade_all", graded)
    monkeypatch.setattr(sandbox, "start_factory", lambda *a, **k: None)
    return calls


def folder(tmp_path, names, *, name="subs", zero=()):
    """Notebooks named ``names`` in ``tmp_path/name``; those in ``zero`` score 0."""
    subs = tmp_path / name
    subs.mkdir()
    for n in names:
        nb = nbformat.v4.new_notebook()
        if n in zero:
            nb.metadata["fake"] = "zero"
        nbformat.write(nb, subs / n)
    return subs


def test_a_class_run_writes_every_export_and_reports_who_did_not_pair_up(
    tmp_path, fake_grading, capsys
):
    subs = folder(
        tmp_path, ["hw00_ada.ipynb", "hw00_bo_zero.ipynb", "hw00_zed.ipynb", "\x1b[2J.ipynb"]
    )
    roster = tmp_path / "roster.csv"
    roster.write_text(
        "\ufeffstudent_id;name;email\nada;Ada;a@x.org\nbo_zero;Bo;b@x.org\nned;Ned;n@x.org\n"
    )
    out = tmp_path / "out" / "grades.csv"
    argv = ["grade", str(subs), "--out", str(out), "--roster", str(roster)]
    argv += ["--pattern", r"hw(?P<set>\d\d)_(?P<student>\w+)\.ipynb", "--export"]
    assert main([*argv, "canvas,moodle,nbgrader,prairielearn,gradescope"]) == 0
    err = capsys.readouterr().err
    assert "hw00_zed.ipynb" in err and "no file from ned" in err  # said on the console
    assert "\\x1b[2J.ipynb" in err and "\x1b" not in err  # a terminal escape, printed inert
    report = (out.parent / "grades-roster.txt").read_text()
    assert "'zed' is not on the roster" in report and "no file from ned (Ned)" in report
    book = list(csv.reader((out.parent / f"grades-canvas-{SET}.csv").open()))
    assert book[0][-1] == SET  # the pattern's '00' named the set
    # not Canvas's roster: its ids go to SIS User ID, never to Canvas's user id column (ID)
    assert {(r[1], r[2]): r[-1] for r in book[2:]} == {("", "ada"): "13", ("", "bo_zero"): "0"}
    assert (out.parent / f"grades-moodle-{SET}.csv").is_file()
    assert (out.parent / "grades-nbgrader.csv").is_file()
    for tool in ("prairielearn", "gradescope"):
        results = sorted(p.parent.name for p in (out.parent / f"grades-{tool}").glob("*/*.json"))
        assert results == ["%1B[2J.ipynb", "hw00_ada.ipynb", "hw00_bo_zero.ipynb", "hw00_zed.ipynb"]
    # the unnamed file makes a second gradebook (grades-unknown.csv); the run keeps both
    (run,) = (out.parent / "grades_history").iterdir()
    assert {p.name for p in run.glob("*.csv")} == {f"grades-{SET}.csv", "grades-unknown.csv"}


def runs(tmp_path) -> list:
    return sorted(p for p in (tmp_path / "grades_history").iterdir() if not p.name.startswith("."))


def diff_rows(run) -> list[list[str]]:
    return list(csv.reader((run / "diff.csv").open(encoding="utf-8-sig", newline="")))


def test_a_regrade_keeps_the_earlier_run_and_writes_what_changed(tmp_path, fake_grading):
    subs = folder(tmp_path, [f"{SET}-ada.ipynb", f"{SET}-bo_zero.ipynb"])
    out = tmp_path / "grades.csv"
    assert gradebook.grade_folder(gradebook.GradingRun(subs, out)) == 0
    (subs / f"{SET}-bo_zero.ipynb").rename(subs / f"{SET}-bo.ipynb")  # fixed and resubmitted
    assert (
        gradebook.grade_folder(gradebook.GradingRun(subs, out, replace=True)) == 0
    )  # the old file's row goes
    first, second = runs(tmp_path)
    assert (first / "grades.csv").is_file() and not (first / "diff.csv").exists()
    rows = diff_rows(second)
    assert [SET, "", f"{SET}-bo.ipynb", "(submission)", "", "13"] in rows
    assert [SET, "", f"{SET}-bo_zero.ipynb", "(submission)", "0", ""] in rows
    assert len(list(csv.reader(out.open()))) == 3  # header, ada, bo: bo_zero replaced


ROSTER3 = "student_id,name,email\nada,Ada,ada@x.org\nbo,Bo,bo@x.org\ncy,Cy,cy@x.org\n"
EXPORTS = "canvas,moodle,nbgrader,prairielearn,gradescope"


def test_a_partial_regrade_updates_its_rows_and_keeps_the_class(tmp_path, fake_grading):
    """grading.md section 5 as written: Bo's corrected notebook, alone in a new folder, graded
    with the same --out, --roster and --export. Bo's row changes; Ada's and Cy's rows, logs and
    exports stay; the earlier log of Bo's file and every run's exports are in the history."""
    (tmp_path / "roster.csv").write_text(ROSTER3)
    names = [f"{SET}-{who}.ipynb" for who in ("ada", "bo", "cy")]
    subs = folder(tmp_path, names, zero={f"{SET}-bo.ipynb"})
    out = tmp_path / "grades.csv"
    argv = ["--out", str(out), "--roster", str(tmp_path / "roster.csv"), "--export", EXPORTS]
    assert main(["grade", str(subs), *argv]) == 0
    fix = folder(tmp_path, [f"{SET}-bo.ipynb"], name="fix")  # the corrected notebook
    assert main(["grade", str(fix), *argv]) == 0
    assert fake_grading[-1] == [f"{SET}-bo.ipynb"]  # only Bo was graded again
    book = {r["submission"]: r["total"] for r in csv.DictReader(out.open())}
    assert book == {f"{SET}-ada.ipynb": "13", f"{SET}-bo.ipynb": "13", f"{SET}-cy.ipynb": "13"}
    canvas = list(csv.reader((tmp_path / f"grades-canvas-{SET}.csv").open(encoding="utf-8-sig")))
    assert {r[2]: r[-1] for r in canvas[2:]} == {"ada": "13", "bo": "13", "cy": "13"}
    moodle = (tmp_path / f"grades-moodle-{SET}.csv").read_text(encoding="utf-8-sig")
    assert all(f"{w}@x.org,13," in moodle for w in ("ada", "bo", "cy"))
    nbg = list(csv.DictReader((tmp_path / "grades-nbgrader.csv").open(encoding="utf-8-sig")))
    assert {r["student_id"]: r["score"] for r in nbg} == {"ada": "13.0", "bo": "13.0", "cy": "13.0"}
    for tool in ("prairielearn", "gradescope"):
        assert len(list((tmp_path / f"grades-{tool}").glob("*/results.json"))) == 3
    logs = tmp_path / "grades_logs"
    assert (logs / f"{SET}-ada.ipynb" / "answers.json").read_text() == "run 1, full"
    assert (logs / f"{SET}-cy.ipynb" / "answers.json").read_text() == "run 1, full"
    assert (logs / f"{SET}-bo.ipynb" / "answers.json").read_text() == "run 2, full"
    first, second = runs(tmp_path)
    kept = second / "replaced-logs" / f"{SET}-bo.ipynb" / "answers.json"
    assert kept.read_text() == "run 1, zero"  # the evidence behind the replaced grade
    for run in (first, second):  # every run's exports, as they were written
        assert (run / "exports" / f"grades-canvas-{SET}.csv").is_file()
        assert (run / "exports" / "grades-gradescope").is_dir()
    before = list(csv.reader((first / "exports" / f"grades-canvas-{SET}.csv").open()))
    assert {r[2]: r[-1] for r in before[2:]} == {"ada": "13", "bo": "0", "cy": "13"}
    assert [SET, "bo", f"{SET}-bo.ipynb", "total", "0", "13"] in diff_rows(second)
    changed = diff_rows(second)[1:]
    assert len(changed) == len(QUESTIONS) + 1 and {r[1] for r in changed} == {"bo"}  # Bo's only


def test_a_run_that_would_drop_an_older_gradebooks_rows_is_refused(tmp_path, fake_grading, capsys):
    """A gradebook with rows but no class record (written by an older version, or by hand):
    merging is impossible, replacing would drop its rows: refused before anyone is graded."""
    out = tmp_path / "grades.csv"
    out.write_text(f"submission,assignment,total\n{SET}-ada.ipynb,{SET},13\n")
    subs = folder(tmp_path, [f"{SET}-bo.ipynb"])
    assert gradebook.grade_folder(gradebook.GradingRun(subs, out)) == 2
    assert "--replace" in capsys.readouterr().err and fake_grading == []
    assert gradebook.grade_folder(gradebook.GradingRun(subs, out, replace=True)) == 0
    assert [r["submission"] for r in csv.DictReader(out.open())] == [f"{SET}-bo.ipynb"]
    (run,) = runs(tmp_path)  # the gradebook it started afresh from is kept, byte for byte
    assert f"{SET}-ada.ipynb,{SET},13" in (run / "replaced" / "grades.csv").read_text()


def test_the_history_never_misses_a_lowered_grade(tmp_path, fake_grading):
    """Three ways the CSV-based history missed one: the folder goes from one set to mixed sets
    (another gradebook file), the CSV was re-saved by a spreadsheet, and a resubmission under a
    new file name (with a roster: the same student's grade, lowered)."""
    (tmp_path / "roster.csv").write_text(ROSTER3)
    pattern = r"(?P<set>\d\d)_[a-z_]+-(?P<student>[a-z]+)(?:-v\d)?\.ipynb"
    out = tmp_path / "grades.csv"
    kw = dict(roster=tmp_path / "roster.csv", pattern=pattern)
    one = folder(tmp_path, [f"{SET}-ada.ipynb", f"{SET}-bo.ipynb"], name="one")
    assert gradebook.grade_folder(gradebook.GradingRun(one, out, **kw)) == 0
    out.write_text(out.read_text().replace(",", ";").replace("\n", "\r\n"))  # a spreadsheet
    other = "03_data_types"
    two = folder(
        tmp_path,
        [f"{SET}-ada-v2.ipynb", f"{other}-bo.ipynb"],
        name="two",
        zero={f"{SET}-ada-v2.ipynb"},
    )
    assert gradebook.grade_folder(gradebook.GradingRun(two, out, **kw)) == 0
    rows = diff_rows(runs(tmp_path)[-1])
    assert [SET, "ada", f"{SET}-ada-v2.ipynb", "total", "13", "0"] in rows  # lowered: found
    assert [other, "bo", f"{other}-bo.ipynb", "(submission)", "", "13"] in rows
    assert not [r for r in rows if r[1] == "bo" and r[0] == SET]  # Bo's set 00 row unchanged


@pytest.mark.parametrize(
    ("extra", "says"),
    [
        (["--roster", "missing.csv"], "--roster: cannot read"),
        (["--export", "canvas"], "needs --roster"),
        (["--export", "sakai"], "--export must be among"),
        (["--roster", "ROSTER", "--pattern", "(?P<sid>.*)"], "--pattern: needs a named group"),
        (["--roster", "ROSTER", "--export", "moodle"], "needs an email, ID number or username"),
    ],
)
def test_a_bad_roster_pattern_or_export_is_refused_before_anyone_is_graded(
    tmp_path, fake_grading, capsys, extra, says
):
    subs = folder(tmp_path, [f"{SET}-ada.ipynb"])
    roster = tmp_path / "r.csv"
    roster.write_text("student_id\nada\n")
    extra = [str(roster) if e == "ROSTER" else e for e in extra]
    assert main(["grade", str(subs), "--out", str(tmp_path / "g.csv"), *extra]) == 2
    assert says in capsys.readouterr().err
    assert fake_grading == []  # nobody graded
    assert not (tmp_path / "g.csv").exists()


def kinds_in_solutions() -> dict[str, list[str]]:
    """Each question's kind, from the solutions as the grader reads them."""
    kinds: dict[str, list[str]] = {"measured": [], "function": [], "form": []}
    for path in authoring.solution_notebooks(authoring.SOLUTIONS_DIR):
        a = spec.read(path)
        number = a.name.split("_", 1)[0]
        for q in a.questions:
            if any(x.expect == "machine" for x in q.answers):
                kinds["measured"].append(f"{number} {q.name}")
            elif any(x.is_function for x in q.answers):
                kinds["function"].append(f"{number} {q.name}")
            elif all(x.expect == "none" for x in q.answers):
                kinds["form"].append(f"{number} {q.name}")
    return kinds


def test_the_guide_lists_the_measured_probed_and_form_only_questions_the_solutions_have():
    import re

    guide = (authoring.REPO / "instructors" / "guide.md").read_text()
    section = guide.split("## A graded class in 2026", 1)[1].split("\n## ", 1)[0]
    listed = {
        label: [q.strip() for q in questions.split(",")]
        for label, questions in re.findall(r"\*\*([^*]+)\*\* \(questions: ([^)]*)\)", section)
    }
    kinds = kinds_in_solutions()
    assert listed == {
        "Measured on the learner's machine": kinds["measured"],
        "Functions checked on secret probes": kinds["function"],
        "Form only": kinds["form"],
    }


def test_an_unknown_gradescope_visibility_is_refused_before_anyone_is_graded(
    tmp_path, fake_grading, capsys
):
    subs = folder(tmp_path, [f"{SET}-ada.ipynb"])
    out = tmp_path / "g.csv"
    assert (
        gradebook.grade_folder(
            gradebook.GradingRun(subs, out, exports="gradescope", visibility="tomorrow")
        )
        == 2
    )
    assert "--visibility must be one of" in capsys.readouterr().err
    assert fake_grading == [] and not out.exists()


def test_a_history_that_cannot_be_kept_costs_the_history_not_the_gradebook(
    tmp_path, fake_grading, capsys
):
    subs = folder(tmp_path, [f"{SET}-ada.ipynb"])
    (tmp_path / "grades_history").write_text("a file where the history folder would go")
    assert gradebook.grade_folder(gradebook.GradingRun(subs, tmp_path / "grades.csv")) == 0
    assert "history not kept" in capsys.readouterr().err
    assert (tmp_path / "grades.csv").read_text().count("\n") == 2  # header and Ada's row


CANVAS_ROSTER = (
    "Student,ID,SIS User ID,SIS Login ID,Section\n"
    "    Points Possible,,,,\n"
    '"Lovelace, Ada",1001,S-1,ada,A\n'
    '"Bo, Bo",1002,S-2,bo,A\n'
    '"Cy, Cy",1003,S-3,cy,A\n'
)


def test_overrides_and_the_late_penalty_survive_a_partial_regrade(tmp_path, fake_grading, capsys):
    """grading.md section 5's overrides and late penalty as written: Canvas's download names
    (Bo's marked LATE), a 10 % late penalty, Ada's Q1 set to 0 by hand; then Bo's corrected file
    alone, graded without either option: both still apply; an empty points cell removes Ada's."""
    (tmp_path / "roster.csv").write_text(CANVAS_ROSTER)
    names = {
        "ada": f"lovelaceada_1001_5001_{SET}.ipynb",
        "bo": f"bobo_late_1002_5002_{SET}.ipynb",
        "cy": f"cycy_1003_5003_{SET}.ipynb",
    }
    subs = folder(tmp_path, names.values(), zero={names["bo"]})
    out = tmp_path / "grades.csv"
    argv = ["--out", str(out), "--roster", str(tmp_path / "roster.csv"), "--pattern", "canvas"]
    argv += ["--export", "canvas"]
    overrides = tmp_path / "overrides.csv"
    overrides.write_text(f"student,set,question,points,reason\n1001,{SET},q1,0,copied\n")
    first = ["--late-penalty", "0.1", "--overrides", str(overrides)]
    assert main(["grade", str(subs), *argv, *first]) == 0
    q1 = QUESTIONS["q1"]

    def book():
        rows = {r["submission"]: r for r in csv.DictReader(out.open())}
        return {who: float(rows[n]["total"]) for who, n in names.items()}, rows

    totals, rows = book()
    assert totals == {"ada": 13 - q1, "bo": 0, "cy": 13}
    assert "q1 set to 0 by the instructor, the grader gave" in rows[names["ada"]]["reason"]
    fix = folder(tmp_path, [names["bo"]], name="fix")  # Bo's corrected file, still LATE
    assert main(["grade", str(fix), *argv]) == 0  # neither option given again
    assert fake_grading[-1] == [names["bo"]]
    totals, rows = book()
    assert totals == {"ada": 13 - q1, "bo": pytest.approx(13 * 0.9), "cy": 13}
    assert "LATE: each question's score x 0.9" in rows[names["bo"]]["reason"]
    canvas = list(csv.reader((tmp_path / f"grades-canvas-{SET}.csv").open(encoding="utf-8-sig")))
    exported = {r[1]: float(r[-1]) for r in canvas[2:]}
    assert exported == {"1001": 13 - q1, "1002": pytest.approx(11.7), "1003": 13}
    overrides.write_text(f"student,set,question,points\n1001,{SET},q1,\n")  # removed
    assert main(["grade", str(fix), *argv, "--overrides", str(overrides)]) == 0
    assert book()[0]["ada"] == 13


def test_a_bad_override_is_refused_before_anyone_is_graded(tmp_path, fake_grading, capsys):
    (tmp_path / "roster.csv").write_text(ROSTER3)
    subs = folder(tmp_path, [f"{SET}-ada.ipynb"])
    argv = ["--out", str(tmp_path / "grades.csv"), "--roster", str(tmp_path / "roster.csv")]
    bad = {
        "zed,{SET},q1,1": "student 'zed' is not on the roster",
        "ada,{SET},q99,1": "has no question 'q99'",
        "ada,{SET},q1,99": "points must be between 0 and",
    }
    for line, why in bad.items():
        (tmp_path / "o.csv").write_text("student,set,question,points\n" + line.format(SET=SET))
        assert main(["grade", str(subs), *argv, "--overrides", str(tmp_path / "o.csv")]) == 2
        assert why in capsys.readouterr().err
    assert main(["grade", str(subs), *argv, "--late-penalty", "1.5"]) == 2
    assert fake_grading == []  # nobody was graded


def test_make_grade_passes_every_variable_the_guide_names_to_grade(tmp_path, capsys):
    """`make grade` (Makefile) forwards OVERRIDES, LATE_PENALTY, REPLACE and the LMS variables as
    flags `teaching grade` accepts: its own parser reads the line make would run."""
    variables = {
        "SUBMISSIONS": str(tmp_path / "missing"),
        "ASSIGNMENT": SET,
        "ROSTER": "roster.csv",
        "PATTERN": "canvas",
        "EXPORT": "canvas",
        "OVERRIDES": "overrides.csv",
        "LATE_PENALTY": "0.1",
        "REPLACE": "1",
    }
    dry = subprocess.run(
        ["make", "-n", "-s", "grade", *(f"{k}={v}" for k, v in variables.items())],
        capture_output=True,
        text=True,
        cwd=authoring.REPO,
    )
    (line,) = [x for x in dry.stdout.replace("\\\n", " ").splitlines() if "teaching grade" in x]
    args = shlex.split(line)
    args = args[args.index("grade") + 1 :]
    for flag, value in (("--overrides", "overrides.csv"), ("--late-penalty", "0.1")):
        assert args[args.index(flag) + 1] == value, args
    assert "--replace" in args and args[args.index("--export") + 1] == "canvas", args
    with contextlib.suppress(SystemExit):  # no such submissions folder: refused after parsing
        main(["grade", *args])
    assert "unrecognized arguments" not in capsys.readouterr().err
