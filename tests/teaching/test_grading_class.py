"""``course grade --roster --pattern --export``, wired: a bad option is refused before anyone is
graded, the pattern's set names the set, every export and the roster report are written, and a
regrade keeps the last run beside a diff. The sandbox is not the point here: the grading itself is
replaced by records (tests/teaching/test_grading_lms.py runs the real one)."""

from __future__ import annotations

import csv

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

    def graded(planned, assignments, known, **_):
        calls.append([files.display_name(p) for p, *_ in planned])
        out = []
        for p, _nb, _problem, name, _note in planned:
            full = "zero" not in p.name
            out.append(
                grades.Grade(
                    files.display_name(p),
                    name or "",
                    {q: (pts if full else 0.0) for q, pts in QUESTIONS.items()} if name else {},
                    dict(QUESTIONS) if name else {},
                    "ok" if name else "unknown-assignment",
                    "" if full else "q1: wrong value",
                    feedback={} if full else {"q1": "wrong value"},
                )
            )
        return out

    monkeypatch.setattr(gradebook, "_grade_all", graded)
    monkeypatch.setattr(sandbox, "start_factory", lambda *a, **k: None)
    return calls


def folder(tmp_path, names):
    subs = tmp_path / "subs"
    subs.mkdir()
    for n in names:
        nbformat.write(nbformat.v4.new_notebook(), subs / n)
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
    book = list(csv.reader((out.parent / "grades-canvas.csv").open()))
    assert book[0][-1] == SET  # the pattern's '00' named the set
    assert {r[1]: r[-1] for r in book[2:]} == {"ada": "13", "bo_zero": "0", "ned": ""}
    assert (out.parent / f"grades-moodle-{SET}.csv").is_file()
    assert (out.parent / "grades-nbgrader.csv").is_file()
    for tool in ("prairielearn", "gradescope"):
        results = sorted(p.parent.name for p in (out.parent / f"grades-{tool}").glob("*/*.json"))
        assert results == ["%1B[2J.ipynb", "hw00_ada.ipynb", "hw00_bo_zero.ipynb", "hw00_zed.ipynb"]
    # the unnamed file makes a second gradebook (grades-unknown.csv): each keeps its own history
    assert len(list((out.parent / f"grades-{SET}_history").glob("*.csv"))) == 1


def test_a_regrade_keeps_the_earlier_run_and_writes_what_changed(tmp_path, fake_grading):
    subs = folder(tmp_path, [f"{SET}-ada.ipynb", f"{SET}-bo_zero.ipynb"])
    out = tmp_path / "grades.csv"
    assert gradebook.grade_folder(subs, out) == 0
    (subs / f"{SET}-bo_zero.ipynb").rename(subs / f"{SET}-bo.ipynb")  # fixed and resubmitted
    assert gradebook.grade_folder(subs, out) == 0
    runs = sorted((tmp_path / "grades_history").glob("*.csv"))
    diffs = [p for p in runs if p.name.endswith("-diff.csv")]
    assert len(runs) == 3 and len(diffs) == 1
    rows = list(csv.reader(diffs[0].open()))
    assert [f"{SET}-bo.ipynb", "", "(submission)", "", "13"] in rows
    assert [f"{SET}-bo_zero.ipynb", "", "(submission)", "0", ""] in rows


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
    assert gradebook.grade_folder(subs, out, exports="gradescope", visibility="tomorrow") == 2
    assert "--visibility must be one of" in capsys.readouterr().err
    assert fake_grading == [] and not out.exists()


def test_a_history_that_cannot_be_kept_costs_the_history_not_the_gradebook(
    tmp_path, fake_grading, capsys
):
    subs = folder(tmp_path, [f"{SET}-ada.ipynb"])
    (tmp_path / "grades_history").write_text("a file where the history folder would go")
    assert gradebook.grade_folder(subs, tmp_path / "grades.csv") == 0
    assert "history of" in capsys.readouterr().err
    assert (tmp_path / "grades.csv").read_text().count("\n") == 2  # header and Ada's row
