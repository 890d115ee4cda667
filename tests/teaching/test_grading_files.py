"""What the grader writes goes where it was asked and nowhere else, whatever the names and text."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from teaching.grading import files


def test_write_new_replaces_a_planted_link_instead_of_writing_through_it(tmp_path):
    victim = tmp_path / "victim.txt"
    victim.write_text("keep me")
    (tmp_path / "grades.csv").symlink_to(victim)
    files.write_new(tmp_path / "grades.csv", "a,b\n")
    assert victim.read_text() == "keep me"
    assert not (tmp_path / "grades.csv").is_symlink()
    assert (tmp_path / "grades.csv").read_text() == "a,b\n"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["grades.csv", "victim.txt"]


def test_make_dir_refuses_a_path_through_a_link(tmp_path):
    (tmp_path / "real").mkdir()
    (tmp_path / "link").symlink_to(tmp_path / "real")
    with pytest.raises(OSError, match="symbolic link"):
        files.make_dir(tmp_path / "link" / "logs")
    assert not (tmp_path / "real" / "logs").exists()


def test_log_names_are_one_per_file_name_printable_and_never_hidden_or_nested():
    names = ["a.ipynb", "a%2Eipynb", ".hidden.ipynb", "a/b.ipynb", "tab\there.ipynb", "Zoë.ipynb"]
    logs = [files.log_name(Path(n)) for n in names]
    assert len(set(logs)) == len(logs)
    assert all(log.isprintable() and "/" not in log and not log.startswith(".") for log in logs)
    assert files.log_name(Path("Zoë.ipynb")) == "Zoë.ipynb"  # printable text stays readable
    undecodable = Path(os.fsdecode(b"\xff.ipynb"))
    assert files.log_name(undecodable) == "%FF.ipynb"


@pytest.mark.parametrize("cell", ["=1+1", "+1", "-1", "@SUM(A1)", "\tx", "\rx"])
def test_a_spreadsheet_never_runs_a_cell_as_a_formula(cell):
    assert files.spreadsheet_safe(cell) == "'" + cell


def test_text_is_made_safe_for_a_console_and_any_file():
    assert files.printable("a\x1b[2Jb\x07") == "a\\x1b[2Jb\\x07"
    assert files.safe_text("\udcff") == "\\udcff"
    assert files.display_name(Path(os.fsdecode(b"x\xff.ipynb"))) == "x\\xff.ipynb"
    assert files.capped("abcdef", 3) == "abc... (3 more)"
