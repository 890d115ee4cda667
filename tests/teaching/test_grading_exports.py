"""What every export shares (no sandbox): ``--export`` names, and files written whole or not at
all. Each format's own rules are tested in ``test_grading_exports_<format>.py``.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from export_cases import SET, grade
from teaching.grading import exports
from teaching.grading.exports import common, prairielearn


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
    common.write_per_file(target, [grade("a.ipynb", SET, {"q1": 2, "q2": 1})], lambda g: {})

    def interrupted(folder: Path) -> None:
        (folder / "half").write_text("x")
        raise KeyboardInterrupt

    with pytest.raises(KeyboardInterrupt):
        common.write_folder(target, interrupted)
    assert sorted(p.name for p in target.iterdir()) == ["a.ipynb"]
    assert sorted(p.name for p in tmp_path.iterdir()) == ["grades-gradescope"]  # no temporary


def test_two_submissions_named_alike_keep_a_result_each(tmp_path):
    twins = [grade("a/b.ipynb", SET, {"q1": 1, "q2": 1}), grade("a\\b.ipynb", SET, {"q1": 2})]
    common.write_per_file(tmp_path / "out", twins, prairielearn.results)
    assert len(list((tmp_path / "out").glob("*/results.json"))) == 2


def test_export_cells_carry_no_control_character_but_their_own_line_breaks():
    text = common.csv_text([["Zoë\x1b[2J", "q1 0/2: wrong\x07\nq2 2/2"]])
    assert "\x1b" not in text and "\x07" not in text
    assert "Zoë\\x1b[2J" in text and "q1 0/2: wrong\\x07\nq2 2/2" in text  # escaped, lines kept


def test_an_identity_the_lms_matches_is_written_as_it_is_a_name_is_guarded(tmp_path):
    """A SIS id ``-0042`` or an email ``+ada@x.org`` with a ``'`` before it matches no one in the
    LMS; a name (which a learner may edit) keeps the spreadsheet guard."""
    from teaching.grading import roster
    from teaching.grading.exports import canvas, moodle, nbgrader

    path = tmp_path / "r.csv"
    path.write_text("student_id,name,email,SIS User ID\n7,=cmd(),+ada@x.org,-0042\n")
    g = grade(f"{SET}-7.ipynb", SET, {"q1": 2, "q2": 1})
    j = roster.join_files(
        [(g.submission, SET)], roster.read_roster(path), roster.compile_pattern("default"), [SET]
    )
    out = tmp_path / "grades.csv"
    for module in (canvas, moodle, nbgrader):
        module.write(out, j, {g.submission: g}, {SET: 3.0})
    book = (tmp_path / f"grades-canvas-{SET}.csv").read_text(encoding="utf-8-sig")
    assert "'=cmd(),,-0042," in book  # the name guarded, the SIS id as the LMS has it
    assert "\n+ada@x.org,3," in (tmp_path / f"grades-moodle-{SET}.csv").read_text("utf-8-sig")
    assert ",7,'=cmd(),,+ada@x.org," in (tmp_path / "grades-nbgrader.csv").read_text()
