"""``teaching collect``: each hub user's copy of a set, from their home, into the layout
``grade --roster --pattern default`` reads; every learner without one is named. (The whole class,
hub, browser and ``grade`` included, is tests/project/test_hub_class.py.)"""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from teaching import collect
from teaching.__main__ import main
from teaching.grading.roster import compile_pattern

SET = "00_units_and_memory"


def _home(root: Path, user: str, *, submitted: bool = True, folder: str = "course") -> Path:
    exercises = root / user / folder / "exercises"
    exercises.mkdir(parents=True)
    if submitted:
        (exercises / f"{SET}.ipynb").write_text(f'{{"by": "{user}"}}')
    return root / user


def _roster(path: Path, *ids: str) -> Path:
    path.write_text("student_id,name\n" + "".join(f"{i},Learner {i}\n" for i in ids))
    return path


def test_each_learner_is_copied_under_the_name_grade_reads(tmp_path):
    homes = tmp_path / "home"
    _home(homes, "ada")
    _home(homes, "bo")
    _home(homes, "cy", submitted=False)
    (homes / "admin").mkdir()  # a home without the release: not a learner's
    done = collect.collect(homes, SET, tmp_path / "subs", folder="course")
    assert sorted(done.copied) == ["ada", "bo"]
    assert done.no_submission == {"cy": f"no {homes}/cy/course/exercises/{SET}.ipynb"}
    pattern = compile_pattern("default")  # what `grade --pattern default` matches
    for user, path in done.copied.items():
        assert path.read_text() == f'{{"by": "{user}"}}'
        match = pattern.fullmatch(path.name) or pattern.search(path.name)
        assert match and match.group("student") == user, path.name


def test_with_a_roster_it_names_who_has_no_home_and_who_is_not_on_it(tmp_path, capsys):
    homes = tmp_path / "home"
    _home(homes, "ada")
    _home(homes, "eve")
    roster = _roster(tmp_path / "roster.csv", "ADA", "dan")
    rc = main(
        [
            "collect",
            str(homes),
            "--assignment",
            SET,
            "--folder",
            "course",
            "--out",
            str(tmp_path / "subs"),
            "--roster",
            str(roster),
        ]
    )
    said = capsys.readouterr().out
    assert rc == 0
    assert [p.name for p in (tmp_path / "subs").iterdir()] == [f"{SET}-ada.ipynb"]
    assert "[MISSING] dan: on the roster, but no home on the hub" in said
    assert re.search(
        r"\[NOT ON ROSTER\] eve: .*no such student id on the roster: not collected", said
    )
    assert "1 submission(s)" in said and "1 learner(s) without one" in said


def test_a_folder_with_no_homes_is_refused_with_the_reason(tmp_path, capsys):
    (tmp_path / "home" / "someone").mkdir(parents=True)
    rc = main(
        [
            "collect",
            str(tmp_path / "home"),
            "--assignment",
            SET,
            "--folder",
            "course",
            "--out",
            str(tmp_path / "subs"),
        ]
    )
    said = capsys.readouterr().out
    assert rc == 2
    assert f"no learner's home in {tmp_path / 'home'}" in said and "course/" in said
    assert "--folder" in said and not (tmp_path / "subs").exists()
    with pytest.raises(ValueError, match="is not a folder"):
        collect.collect(tmp_path / "nowhere", SET, tmp_path / "subs", folder="course")


def test_nobody_submitted_is_a_failure_and_a_path_is_not_a_set(tmp_path, capsys):
    _home(tmp_path / "home", "ada", submitted=False)
    args = ["collect", str(tmp_path / "home"), "--folder", "course", "--out", str(tmp_path / "s")]
    assert main([*args, "--assignment", SET]) == 1
    assert "[MISSING] ada" in capsys.readouterr().out
    assert main([*args, "--assignment", f"exercises/{SET}.ipynb"]) == 2
    assert "a set's name" in capsys.readouterr().out
