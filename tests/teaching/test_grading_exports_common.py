"""What every export shares: CSV cells no spreadsheet runs, and folders written whole."""

from __future__ import annotations

import json

import pytest
from teaching.grading.exports import common
from teaching.grading.grades import Grade


def test_text_cells_are_made_safe_and_numbers_stay_numbers():
    text = common.csv_text([["=HYPERLINK(1)", 2.5, 3], ["Zoë", "-x", "\udcff"]])
    assert text.splitlines() == ["'=HYPERLINK(1),2.5,3", "Zoë,'-x,\\udcff"]


def test_two_names_that_print_alike_keep_a_results_folder_each(tmp_path):
    rows = [Grade("a\x01.ipynb", points={"q1": 1}), Grade("a%01.ipynb", points={"q1": 1})]
    target = tmp_path / "grades-prairielearn"
    common.write_per_file(target, rows, lambda g: {"name": g.submission})
    written = sorted(json.loads(p.read_text())["name"] for p in target.glob("*/results.json"))
    assert written == sorted(g.submission for g in rows)


def test_a_folder_that_fails_half_way_leaves_the_previous_one(tmp_path):
    target = tmp_path / "grades-gradescope"
    common.write_folder(target, lambda folder: (folder / "old.txt").write_text("old"))

    def fail(folder):
        (folder / "new.txt").write_text("half")
        raise OSError("disk full")

    with pytest.raises(OSError, match="disk full"):
        common.write_folder(target, fail)
    assert [p.name for p in target.iterdir()] == ["old.txt"]
