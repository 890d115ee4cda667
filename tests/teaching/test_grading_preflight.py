"""What a ``grade`` run is asked to do, checked before anyone is graded: refusals that write
nothing, and the settings value every phase reads."""

from __future__ import annotations

import pytest
from teaching.grading import preflight

SET = "00_units_and_memory"


def test_a_run_names_its_folders_once(tmp_path):
    run = preflight.GradingRun(str(tmp_path / "subs"), str(tmp_path / "out" / "grades.csv"))
    assert run.out_csv == tmp_path / "out" / "grades.csv"
    assert run.log_dir == tmp_path / "out" / "grades_logs"
    assert run.record_path == run.log_dir / "gradebook.json"
    assert run.history_dir == tmp_path / "out" / "grades_history"
    with pytest.raises(ValueError, match="jobs"):
        preflight.GradingRun(tmp_path, tmp_path / "g.csv", jobs=0)


@pytest.mark.parametrize(
    ("out", "said"),
    [
        ("subs/grades.csv", "--out and the log folder inside the submissions folder"),
        ("out.csv", "is a folder: name the CSV file to write"),
    ],
)
def test_an_output_a_student_could_reach_or_that_cannot_be_written_is_refused(tmp_path, out, said):
    (tmp_path / "subs").mkdir()
    (tmp_path / "out.csv").mkdir()
    with pytest.raises(preflight.Refused) as refused:
        preflight.checked(preflight.GradingRun(tmp_path / "subs", tmp_path / out))
    assert refused.value.status == 2 and said in refused.value.message
    assert list((tmp_path / "subs").iterdir()) == []  # nothing written


def test_graded_rows_with_no_record_to_merge_into_are_not_dropped(tmp_path):
    out = tmp_path / "grades.csv"
    out.write_text(f"submission,assignment,total\n{SET}-ada.ipynb,{SET},13\n")
    run = preflight.GradingRun(tmp_path / "subs", out)
    setup = preflight.Setup([], None, None, {SET: tmp_path / f"{SET}.ipynb"}, [SET], None)
    with pytest.raises(preflight.Refused, match="--replace"):
        preflight.earlier_record(run, setup)
    replacing = preflight.GradingRun(tmp_path / "subs", out, replace=True)
    assert preflight.earlier_record(replacing, setup) == (None, None)
