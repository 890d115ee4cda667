"""Grading works wherever the checkout and the environment live: here, a copy of the package and an
environment under ``/tmp`` in folders with spaces, outside the repository (the sandbox gives each
submission a ``/tmp`` of its own: what the grader needs from ``/tmp`` must still be there)."""

from __future__ import annotations

import csv
import json
import shutil
import subprocess
import sys
import sysconfig
import tempfile
from pathlib import Path

import nbformat
import pytest
from grading_cases import POSSIBLE, SET, blank, filled_in, with_cell
from teaching.grading import authoring, sandbox

pytestmark = [
    pytest.mark.slow,
    pytest.mark.sandbox,
    pytest.mark.skipif(
        "hidden-files" in sandbox.protections_off(),
        reason="no private /tmp without mount namespaces",
    ),
]

GRADE = (
    "import sys, course\n"
    "from teaching.grading import gradebook\n"
    "print('COURSE', course.__file__)\n"
    "sys.exit(gradebook.grade_folder(gradebook.GradingRun(sys.argv[1], sys.argv[2],"
    " timeout_seconds=120, cell_timeout_seconds=30, jobs=2)))\n"
)


def _environment(root: Path) -> Path:
    """A virtual environment under ``root`` whose own site-packages holds a module found nowhere
    else; the rest comes from this environment's site-packages (a path line, not an install)."""
    env = root / "conda like env"
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(env)], check=True)
    [site] = list(env.glob("lib/python*/site-packages"))
    (site / "only_under_tmp.py").write_text("ANSWER = 'found'\n")
    (site / "here.pth").write_text(sysconfig.get_paths()["purelib"] + "\n")
    return env / "bin" / "python"


@pytest.fixture(scope="module")
def graded_from_tmp():
    root = Path(tempfile.mkdtemp(prefix="a clone with spaces ", dir="/tmp"))
    try:
        checkout = root / "check out"
        ignore = shutil.ignore_patterns("__pycache__")
        shutil.copytree(authoring.REPO / "course", checkout / "course", ignore=ignore)
        teaching = checkout / "instructors" / "teaching"
        shutil.copytree(authoring.REPO / "instructors" / "teaching", teaching, ignore=ignore)
        shutil.copytree(authoring.SOLUTIONS_DIR, checkout / "solutions", ignore=ignore)
        python = _environment(root)
        subs, out = root / "sub missions", root / "grade book"
        subs.mkdir()
        out.mkdir()
        tmp_only = "import only_under_tmp\nprint('MODULE', only_under_tmp.ANSWER)"
        nbformat.write(with_cell(tmp_only, before_answer=0), subs / f"{SET}-solved.ipynb")
        nbformat.write(blank(), subs / f"{SET}-blank.ipynb")
        proc = subprocess.run(
            [str(python), "-c", GRADE, str(subs), str(out / "grades.csv")],
            capture_output=True,
            text=True,
            timeout=600,
            cwd=root,
            env={
                "PATH": "/usr/bin:/bin",
                "PYTHONPATH": f"{checkout}:{teaching.parent}",
                "HOME": str(root),
            },
        )
        rows = {}
        if (out / "grades.csv").exists():
            with (out / "grades.csv").open(newline="") as f:
                rows = {r["submission"]: r for r in csv.DictReader(f)}
        executed = out / "grades_logs" / f"{SET}-solved.ipynb" / "executed.ipynb"
        yield {
            "proc": proc,
            "rows": rows,
            "checkout": checkout,
            "executed": executed.read_text() if executed.exists() else "",
        }
    finally:
        shutil.rmtree(root, ignore_errors=True)


def test_grading_from_a_copy_and_an_environment_under_tmp_with_spaces(graded_from_tmp):
    proc, rows = graded_from_tmp["proc"], graded_from_tmp["rows"]
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert f"COURSE {graded_from_tmp['checkout']}/course/__init__.py" in proc.stdout
    solved, blank_row = rows[f"{SET}-solved.ipynb"], rows[f"{SET}-blank.ipynb"]
    assert (solved["status"], solved["reason"], float(solved["total"])) == ("ok", "", POSSIBLE)
    assert (blank_row["status"], float(blank_row["total"])) == ("ok", 0)
    executed = json.loads(graded_from_tmp["executed"])
    outputs = ["".join(o.get("text", "")) for c in executed["cells"] for o in c.get("outputs", [])]
    assert "MODULE found\n" in outputs  # a module only the environment under /tmp has
    assert not [
        o
        for c in executed["cells"]
        for o in c.get("outputs", [])
        if o.get("output_type") == "error"
    ]


def test_a_folder_the_sandbox_would_show_is_refused(tmp_path, monkeypatch, capsys):
    from teaching.grading import gradebook

    assert sandbox.exposed({"environment": Path(sys.prefix) / "lib"})  # the environment is shown
    assert not sandbox.exposed({"submissions folder": tmp_path})
    shown = tmp_path / "shown"
    (shown / "subs").mkdir(parents=True)
    nbformat.write(filled_in(), shown / "subs" / f"{SET}-solved.ipynb")
    monkeypatch.setattr(sandbox, "_keep_paths", lambda: [str(shown)])
    assert (
        gradebook.grade_folder(gradebook.GradingRun(shown / "subs", tmp_path / "out" / "g.csv"))
        == 2
    )
    assert "refusing to grade: the submissions folder" in capsys.readouterr().err
    assert not (tmp_path / "out").exists()


def test_an_output_inside_the_submissions_folder_is_refused(tmp_path, capsys):
    from teaching.grading import gradebook

    nbformat.write(filled_in(), tmp_path / f"{SET}-solved.ipynb")
    assert gradebook.grade_folder(gradebook.GradingRun(tmp_path, tmp_path / "grades.csv")) == 2
    assert "refusing to grade: --out and the log folder inside" in capsys.readouterr().err
    assert not (tmp_path / "grades.csv").exists()
