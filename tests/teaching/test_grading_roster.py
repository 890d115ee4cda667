"""The roster and the file-name join: every file and every student is either paired or reported,
whatever the roster's encoding and the names' bytes; file names are those Canvas's and Moodle's
"download all submissions" write (``ContentZipper#get_filename`` in instructure/canvas-lms;
``assign::download_submissions`` in moodle/moodle ``mod/assign/locallib.php``)."""

from __future__ import annotations

import os

import pytest
from teaching.grading import files, roster
from teaching.grading.files import display_name

SET = "04_model_memory"
OTHER = "05_flops_time_cost"


def write(tmp_path, text: str, encoding="utf-8"):
    path = tmp_path / "roster.csv"
    path.write_bytes(text.encode(encoding))
    return path


def canvas_name(sortable: str, user_id: int, file_id: int, filename: str, late=False) -> str:
    """What Canvas's zipper does: ``[name, 'LATE'?, user_id].join('_')``, every non-word character
    removed, lower-cased, then ``_<file id>_<display name>``."""
    import re

    stem = "_".join([sortable, *(["LATE"] if late else []), str(user_id)])
    return re.sub(r"[^\w]", "", stem).lower() + f"_{file_id}_{filename}"


CANVAS_ROSTER = (
    "Student,ID,SIS User ID,SIS Login ID,Section,Exercise 4 (311)\n"
    "    Points Possible,,,,,13\n"
    '"Núñez, José",1001,S-1,jnunez,Sec A,\n'
    '"Doe, Jane",1002,S-2,jdoe,Sec A,\n'
    '"O\'Brien, Mary Ann",1003,S-3,mobrien,Sec B,\n'
    '"Nobody, Ned",1004,S-4,nned,Sec B,\n'
)


def test_canvas_gradebook_export_is_a_roster_as_downloaded(tmp_path):
    r = roster.read_roster(write(tmp_path, "\ufeff" + CANVAS_ROSTER))
    assert sorted(r.students) == ["1001", "1002", "1003", "1004"]
    assert r.notes == []  # Canvas's 'Points Possible' row is Canvas's, not a row without an id
    jose = r.find("1001")
    assert (jose.name, jose.sis_user_id, jose.sis_login_id, jose.section) == (
        "Núñez, José",
        "S-1",
        "jnunez",
        "Sec A",
    )


def test_canvas_download_names_join_with_accents_spaces_late_and_two_submissions(tmp_path):
    r = roster.read_roster(write(tmp_path, CANVAS_ROSTER))
    files = [
        canvas_name("Núñez, José", 1001, 5551, f"{SET}.ipynb"),  # accents kept: \w is Unicode
        canvas_name("Doe, Jane", 1002, 5552, f"{SET} (1).ipynb", late=True),
        canvas_name("O'Brien, Mary Ann", 1003, 5553, f"{SET}.ipynb"),
        canvas_name("O'Brien, Mary Ann", 1003, 5554, f"{SET}-1.ipynb"),  # two files, one student
        canvas_name("Stranger, Sam", 2999, 5555, f"{SET}.ipynb"),  # not in this class
        "notes.ipynb",  # not from Canvas at all
    ]
    assert files[1].startswith("doejane_late_1002_5552_")
    j = roster.join_files([(f, SET) for f in files], r, roster.compile_pattern("canvas"), [SET])
    assert j.only_file(r.find("1001"), SET) == files[0]
    assert j.only_file(r.find("1002"), SET) == files[1] and files[1] in j.late
    assert j.only_file(r.find("1003"), SET) is None  # never merged, never one picked
    assert j.duplicates == {("1003", SET): [files[2], files[3]]}
    assert [f for f, _ in j.unmatched] == [files[4], "notes.ipynb"]
    assert j.missing == [("1004", SET)]
    report = "\n".join(j.problems())
    assert f"marked late by the LMS (--late-penalty applies, if set): {files[1]}" in j.problems()
    for needle in (files[4], "notes.ipynb", files[2], files[3], "no file from 1004"):
        assert needle in report


def test_moodle_worksheet_is_a_roster_and_its_download_names_join(tmp_path):
    worksheet = (
        "Identifier,Full name,Email address,Status,Grade,Maximum Grade\n"
        "Participant 48213,Zoë Ångström,zoe@uni.example,Submitted,,13\n"
        "Participant 48214,Li Wei,li@uni.example,No submission,,13\n"
    )
    r = roster.read_roster(write(tmp_path, worksheet))
    assert r.find("48213").email == "zoe@uni.example"
    files = [f"Zoë Ångström_48213_assignsubmission_file_{SET}.ipynb"]
    j = roster.join_files([(f, SET) for f in files], r, roster.compile_pattern("moodle"), [SET])
    assert j.only_file(r.find("48213"), SET) == files[0]
    assert j.missing == [("48214", SET)] and not j.unmatched


@pytest.mark.parametrize(
    "text",
    [
        "student_id;name;email\ns1;Ada;a@x.org\ns2;Bo;b@x.org\n",  # semicolons (Excel, EU)
        "\ufeffstudent_id,name,email\r\ns1,Ada,a@x.org\r\ns2,Bo,b@x.org\r\n",  # BOM, CRLF
        "Student ID\tName\tE-mail\ns1\tAda\ta@x.org\n\n\ns2\tBo\tb@x.org\n",  # tabs, blank lines
    ],
)
def test_a_roster_in_any_usual_dialect_reads_the_same(tmp_path, text):
    r = roster.read_roster(write(tmp_path, text))
    assert [(s.student_id, s.name, s.email) for s in r.students.values()] == [
        ("s1", "Ada", "a@x.org"),
        ("s2", "Bo", "b@x.org"),
    ]


@pytest.mark.parametrize(
    ("text", "encoding", "says"),
    [
        ("student_id,name\ns1,Ada\nS1 ,Ada again\n", "utf-8", "one student id on two rows"),
        ("name,email\nAda,a@x.org\n", "utf-8", "no student id column"),
        ("student_id,name\ns1,Zoë\n", "cp1252", "not UTF-8"),
        ("", "utf-8", "empty"),
        ("student_id\n", "utf-8", "no students"),
        ("student_id,name\ns1,\0\n", "utf-8", "NUL"),
        ("student_id,name\ns1," + "x" * 200_000 + "\n", "utf-8", "not a CSV roster"),
    ],
)
def test_a_roster_that_cannot_be_one_is_refused_naming_the_option(tmp_path, text, encoding, says):
    with pytest.raises(ValueError, match="--roster") as e:
        roster.read_roster(write(tmp_path, text, encoding))
    assert says in str(e.value)


def test_formula_like_cells_stay_text_and_rows_without_id_are_reported(tmp_path):
    r = roster.read_roster(
        write(tmp_path, 'student_id,name\ns1,"=HYPERLINK(""http://x"")"\n,Ghost\n')
    )
    assert r.find("s1").name == '=HYPERLINK("http://x")'  # kept as text; exports make it safe
    assert r.notes == ["roster row 3: no student id; skipped"]


def test_a_pattern_needs_a_student_group_and_must_compile():
    with pytest.raises(ValueError, match=r"--pattern: needs a named group \(\?P<student>"):
        roster.compile_pattern(r"(?P<set>\d\d)_.*")
    with pytest.raises(ValueError, match="--pattern: not a regular expression"):
        roster.compile_pattern(r"(?P<student>[a-z")


def test_a_custom_pattern_names_the_set_by_number_or_name():
    pattern = roster.compile_pattern(r"hw(?P<set>\d\d)_(?P<student>\w+)\.ipynb")
    known = [SET, OTHER]
    assert roster.set_from_name("hw04_ada.ipynb", pattern, known) == SET
    assert roster.set_from_name("hw99_ada.ipynb", pattern, known) is None
    default = roster.compile_pattern("default")
    assert roster.set_from_name(f"{OTHER}-ada.ipynb", default, known) == OTHER


def test_file_names_with_odd_bytes_are_reported_not_a_crash(tmp_path):
    r = roster.read_roster(write(tmp_path, "student_id,name\nada,Ada\n"))
    odd = tmp_path / os.fsdecode(b"04_model_memory-\xff\xfe.ipynb")
    names = [display_name(odd), "04_model_memory-ada\x1b[2J.ipynb", f"{SET}-ada.ipynb"]
    j = roster.join_files([(n, SET) for n in names], r, roster.compile_pattern("default"), [SET])
    assert j.only_file(r.find("ada"), SET) == f"{SET}-ada.ipynb"
    assert [f for f, _ in j.unmatched] == names[:2]


def test_a_file_whose_set_is_unknown_is_reported(tmp_path):
    r = roster.read_roster(write(tmp_path, "student_id\nada\n"))
    j = roster.join_files(
        [("anything-ada.ipynb", "")], r, roster.compile_pattern(r".*-(?P<student>\w+)\..*"), [SET]
    )
    assert j.unmatched == [("anything-ada.ipynb", "no exercise set recognised")]


def test_names_with_terminal_escapes_are_printed_inert():
    assert files.printable("a\x1b[2Jb\x07 José") == "a\\x1b[2Jb\\x07 José"


def test_a_moodle_file_name_cannot_move_a_grade_to_another_student(tmp_path):
    """Mallory names her file so that its tail holds Vic's id part: the id comes from the part
    Moodle writes right after her full name, never from the tail she chose."""
    worksheet = (
        "Identifier,Full name,Email address\n"
        "Participant 111,Vic Tim,vic@x.org\n"
        "Participant 222,Mallory Evil,mal@x.org\n"
    )
    r = roster.read_roster(write(tmp_path, worksheet))
    vic = f"Vic Tim_111_assignsubmission_file_{SET}.ipynb"
    mal = f"Mallory Evil_222_assignsubmission_file_x_111_assignsubmission_file_{SET}.ipynb"
    j = roster.join_files([(vic, SET), (mal, SET)], r, roster.compile_pattern("moodle"), [SET])
    assert j.only_file(r.find("111"), SET) == vic  # Vic keeps his one file (and his grade)
    assert j.only_file(r.find("222"), SET) == mal  # Mallory's file is hers
    assert not j.unmatched and not j.duplicates


def test_a_canvas_name_a_learner_edited_to_hold_an_id_is_reported_not_guessed(tmp_path):
    r = roster.read_roster(write(tmp_path, 'Student,ID\n"Tim, Vic",111\n"Evil, Mallory",222\n'))
    vic = canvas_name("Tim, Vic", 111, 5001, f"{SET}.ipynb")
    tail = canvas_name("Evil, Mallory", 222, 5002, f"x_late_111_5003_{SET}.ipynb")
    edited = canvas_name("x_111_1", 222, 5004, f"{SET}.ipynb")  # her name, edited in Canvas
    files = [vic, tail, edited]
    j = roster.join_files([(f, SET) for f in files], r, roster.compile_pattern("canvas"), [SET])
    assert j.only_file(r.find("111"), SET) == vic and vic not in j.late
    assert j.files[("222", SET)] == [tail]  # the tail's id part is not Canvas's
    [(name, why)] = j.unmatched
    assert name == edited and why.startswith("ambiguous")
    assert "111 (Tim, Vic" in why and "222 (Evil, Mallory" in why  # who each could be


@pytest.mark.parametrize(
    ("column", "label"),
    [("email", "email"), ("username", "username"), ("ID number", "ID number")],
)
def test_two_students_with_one_lms_identity_are_refused(tmp_path, column, label):
    text = f"student_id,{column}\ns1,Ada@X.org\ns2,\ns3,ada@x.org\n"
    with pytest.raises(ValueError, match=f"share an identity.*{label} 'ada@x.org' on rows 2 and 4"):
        roster.read_roster(write(tmp_path, text))
