"""nbgrader export against its CSV exporter, on small grade records (no sandbox): the rules are
written out here from nbgrader's own source, not read back from the writer.

``CsvExportPlugin`` (jupyter/nbgrader ``nbgrader/plugins/export.py``): its eleven columns, one row
per student and assignment, a missing submission as empty timestamp and 0,
``score = max(0, raw_score - late_submission_penalty)``.
"""

from __future__ import annotations

import csv

from export_cases import SET, assert_spreadsheet_safe, parse
from teaching.grading.exports import common, nbgrader

NBGRADER_HEADER = (  # the line CsvExportPlugin.export writes first: ",".join(keys)
    "assignment,duedate,timestamp,student_id,last_name,first_name,email,raw_score,"
    "late_submission_penalty,score,max_score"
)


NBGRADER_KEYS = next(csv.reader([NBGRADER_HEADER]))


def test_nbgrader_rows_follow_its_csv_exporter(klass):
    rows = nbgrader.rows(klass.join, klass.grades, klass.possible)
    assert common.csv_text(rows).splitlines()[0] == NBGRADER_HEADER
    body = [dict(zip(NBGRADER_KEYS, r, strict=True)) for r in rows[1:]]
    # every student and set, but Bo's (two files) and Kim's (not graded) of the first set: a row
    # needs numbers (nbgrader never writes an empty one) and a 0 would be a grade nobody earned
    assert {(r["student_id"], r["assignment"]) for r in body} == {
        (i, s) for i in ("11", "12", "13", "14", "15") for s in klass.possible
    } - {("13", SET), ("15", SET)}
    assert len(body) == 8
    for r in body:
        if r["raw_score"]:
            score = max(0.0, float(r["raw_score"]) - float(r["late_submission_penalty"]))
            assert float(r["score"]) == score
            assert float(r["max_score"]) == klass.possible[r["assignment"]]
    ned = [r for r in body if r["student_id"] == "14"]  # no submission: as nbgrader writes it
    assert {(r["timestamp"], r["raw_score"], r["score"]) for r in ned} == {("", "0.0", "0.0")}
    eve = next(r for r in body if r["student_id"] == "12" and r["assignment"] == SET)
    assert (eve["timestamp"], eve["raw_score"], eve["max_score"]) == (
        "2026-11-28 10:00:00.250000",  # handed in: nbgrader's str(datetime), never empty
        "1.0",
        "3.0",
    )
    for r in body:
        assert r["raw_score"] != "" and r["score"] != ""  # nbgrader never writes an empty number
    ada = next(r for r in body if r["student_id"] == "11" and r["assignment"] == SET)
    assert (ada["first_name"], ada["last_name"], ada["email"]) == ("Ada", "Lovelace", "ada@x.org")
    assert_spreadsheet_safe(parse(common.csv_text(rows)))
