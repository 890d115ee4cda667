"""Small grade records for the export tests (no sandbox): a class of four on a roster, graded in
two sets, with the cases each export must handle (a formula for a name, two files from one
student, no file, a file from nobody on the roster)."""

from __future__ import annotations

import csv
import io
import types

from teaching.grading import roster
from teaching.grading.grades import Grade

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


def graded_class(tmp_path) -> types.SimpleNamespace:
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
    j = roster.join_files(
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
