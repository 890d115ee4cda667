"""A class roster, and which submitted file is whose: ``course grade ... --roster roster.csv
--pattern canvas``.

The roster is a CSV (UTF-8, with or without a byte-order mark; comma, semicolon or tab) with one row
per student and a header that names at least the student id column (``student_id``, ``ID``,
``Identifier`` ...). Canvas's gradebook export and Moodle's offline grading worksheet work as they
are downloaded: the columns each LMS export needs (name, email, SIS ids, section) are read when
present. A file name is matched with ``--pattern``, a regular expression with a named group
``student`` (the roster's id) and optionally ``set`` (the exercise set) and ``late``, as nbgrader's
``FileNameCollectorPlugin`` does with its ``named_regexp``
(https://nbgrader.readthedocs.io/en/stable/plugins/zipcollect-plugin.html), or with a preset:

- ``canvas``: "Download Submissions" names each file
  ``<sortablename>[_late]_<user id>_<file id>_<the learner's file name>``, the name and the LATE
  marker lower-cased and stripped of punctuation (``ContentZipper#get_filename`` in
  instructure/canvas-lms); the id is the ``ID`` column of Canvas's gradebook export;
- ``moodle``: "Download all submissions" names each file
  ``<full name>_<participant id>_assignsubmission_file_<file name>`` (``assign::
  download_submissions`` in moodle/moodle ``mod/assign/locallib.php``; untick "Download submissions
  in folders"); the id is the number in the ``Identifier`` column (``Participant 12345``) of the
  assignment's grading worksheet, which serves as the roster;
- ``default``: ``NN_slug-<student id>.ipynb``, the name instructors/grading.md asks learners for.

Nothing is dropped or merged silently: :class:`Join` lists files that match no pattern or no roster
row, roster rows with no file for a set, and students with two files for one set (each file
named; no export carries a grade for them until one file is kept and graded again: an empty cell
would clear the LMS's grade, so they have no row).
"""

from __future__ import annotations

import csv
import io
import re
import unicodedata
from dataclasses import dataclass, field
from pathlib import Path

PRESETS = {
    "canvas": r"(?P<name>.*?)(?:_(?P<late>late))?_(?P<student>\d+)_(?P<file_id>\d+)_(?P<file>.+)",
    "moodle": r"(?P<name>.+)_(?P<student>\d+)_assignsubmission_file_(?P<file>.+)",
    "default": r"(?P<set>\d\d_[A-Za-z0-9_]+?)-(?P<student>[^/]+?)\.ipynb",
}

# The part of a download name the LMS writes between the learner's name and the learner's own file
# name: the only place the id may come from. Found anywhere in the name (a learner chooses the file
# name, and where the LMS lets them, their name too): a name in which it occurs twice is
# ambiguous unless the roster's name of exactly one candidate stands before it.
LMS_PARTS = {
    "canvas": re.compile(r"(?:_(?P<late>late))?_(?P<student>\d+)_(?P<file_id>\d+)_", re.IGNORECASE),
    "moodle": re.compile(r"_(?P<student>\d+)_assignsubmission_file_", re.IGNORECASE),
}
UNIQUE = {  # roster fields an LMS matches students by: two rows with one value are refused
    "email": "email",
    "username": "username",
    "idnumber": "ID number",
    "sis_user_id": "SIS User ID",
    "sis_login_id": "SIS Login ID",
}

# Header spellings (case, spaces and underscores ignored) -> the field they fill.
COLUMNS = {
    "student_id": ("studentid", "id", "identifier", "userid"),
    "name": ("name", "fullname", "studentname"),
    "first_name": ("firstname", "givenname"),
    "last_name": ("lastname", "surname", "familyname"),
    "email": ("email", "emailaddress", "e-mail"),
    "sis_user_id": ("sisuserid",),
    "sis_login_id": ("sisloginid",),
    "section": ("section",),
    "username": ("username",),
    "idnumber": ("idnumber",),
}
MAX_ROSTER_BYTES = 16 * 2**20


@dataclass(frozen=True)
class Student:
    """One roster row; empty strings where the roster has no such column."""

    student_id: str
    name: str = ""
    first_name: str = ""
    last_name: str = ""
    email: str = ""
    sis_user_id: str = ""
    sis_login_id: str = ""
    section: str = ""
    username: str = ""
    idnumber: str = ""

    @property
    def display(self) -> str:
        return self.name or " ".join(t for t in (self.first_name, self.last_name) if t)


@dataclass
class Roster:
    students: dict[str, Student]  # by normalised id
    notes: list[str] = field(default_factory=list)  # rows skipped, and why
    # Canvas's own gradebook export (a 'Student' and an 'ID' column): its ids are Canvas user ids
    canvas: bool = False
    columns: list[str] = field(default_factory=list)  # the header as read

    def find(self, student_id: str) -> Student | None:
        return self.students.get(key(student_id))


def key(student_id: str) -> str:
    """An id as compared: Unicode NFC, case-folded, surrounding spaces removed."""
    return unicodedata.normalize("NFC", student_id).strip().casefold()


def _norm(header: str) -> str:
    return re.sub(r"[\s_]+", "", header.lstrip("\ufeff")).casefold()


def _columns(header: list[str]) -> dict[str, int]:
    """Field -> column index. Canvas's 'Student' is the name beside an 'ID' column, the id
    alone."""
    norm = [_norm(h) for h in header]
    columns = {}
    for f, names in COLUMNS.items():
        found = next((i for i, h in enumerate(norm) if h in names), None)
        if found is not None:
            columns[f] = found
    if "student" in norm:
        columns.setdefault(
            "student_id" if "student_id" not in columns else "name", norm.index("student")
        )
    return columns


def read_roster(path: str | Path) -> Roster:
    """The roster in ``path``; ValueError naming ``--roster`` for a file that cannot be one
    (not UTF-8, no id column, one id on two rows, two students sharing an identity)."""
    path = Path(path)
    rows = _rows(path)
    header = rows[0]
    columns = _columns(header)
    if "student_id" not in columns:
        shown = ", ".join(repr(h) for h in header[:12])
        raise ValueError(
            f"--roster: no student id column in {path.name} (columns: {shown}); name one "
            "'student_id', 'ID' or 'Identifier'"
        )
    students, where, notes = _students(rows, columns)
    if not students:
        raise ValueError(f"--roster: {path.name} has a header but no students")
    _check_identities(students, where)
    norm = [_norm(h) for h in header]
    return Roster(students, notes, canvas="student" in norm and "id" in norm, columns=header)


def _rows(path: Path) -> list[list[str]]:
    """The roster file's rows (its delimiter guessed from the header); ValueError for a file that
    is no CSV text."""
    try:
        raw = path.read_bytes()
    except OSError as e:
        raise ValueError(f"--roster: cannot read {path} ({e.strerror or e})") from None
    if len(raw) > MAX_ROSTER_BYTES:
        raise ValueError(f"--roster: larger than {MAX_ROSTER_BYTES // 2**20} MB: not a roster")
    try:
        text = raw.decode("utf-8-sig")
    except UnicodeDecodeError:
        raise ValueError(
            f"--roster: {path.name} is not UTF-8 text; save it as 'CSV UTF-8' and try again"
        ) from None
    if "\0" in text:
        raise ValueError(f"--roster: {path.name} holds NUL bytes: not a CSV file")
    first = text.split("\n", 1)[0]
    delimiter = max(",;\t", key=first.count) if first.strip() else ","
    try:
        rows = list(csv.reader(io.StringIO(text, newline=""), delimiter=delimiter))
    except csv.Error as e:  # a cell over the csv module's limit (128 KiB): not a roster
        raise ValueError(f"--roster: {path.name} is not a CSV roster ({e})") from None
    if not rows:
        raise ValueError(f"--roster: {path.name} is empty")
    return rows


def _students(
    rows: list[list[str]], columns: dict[str, int]
) -> tuple[dict[str, Student], dict[str, int], list[str]]:
    """``(students by key, row number by key, notes)`` from the rows under the header; blank
    rows and Canvas's Points Possible row skipped; ValueError for one id on two rows."""
    students: dict[str, Student] = {}
    where: dict[str, int] = {}
    notes, clashes = [], []
    for n, row in enumerate(rows[1:], start=2):
        if not any(c.strip() for c in row):
            continue
        if row and "Points Possible" in row[0]:
            continue  # Canvas's second row
        values = {f: (row[i].strip() if i < len(row) else "") for f, i in columns.items()}
        sid = values["student_id"]
        if sid.lower().startswith("participant "):
            sid = sid[len("participant ") :].strip()  # Moodle's worksheet: 'Participant 12345'
        if not sid:
            notes.append(f"roster row {n}: no student id; skipped")
            continue
        k = key(sid)
        if k in students:
            clashes.append(f"{sid!r} on rows {where[k]} and {n}")
            continue
        values["student_id"] = sid
        students[k], where[k] = Student(**values), n
    if clashes:
        raise ValueError(
            "--roster: one student id on two rows (" + "; ".join(clashes[:5]) + "): one row "
            "per student"
        )
    return students, where, notes


def _check_identities(students: dict[str, Student], where: dict[str, int]) -> None:
    """ValueError when two students share an identity an LMS matches by (:data:`UNIQUE`)."""
    shared = []
    for f, label in UNIQUE.items():
        seen: dict[str, str] = {}
        for k, st in students.items():
            value = getattr(st, f).strip().casefold()
            if not value:
                continue
            if value in seen:
                shared.append(
                    f"{label} {getattr(st, f)!r} on rows {where[seen[value]]} and {where[k]} "
                    f"({students[seen[value]].student_id}, {st.student_id})"
                )
            else:
                seen[value] = k
    if shared:
        raise ValueError(
            "--roster: two students share an identity an LMS matches by ("
            + "; ".join(shared[:5])
            + "): an import would give both grades to one account, or stop; fix the roster"
        )


def compile_pattern(pattern: str) -> re.Pattern:
    """``--pattern``: a preset's name or a regular expression with a ``student`` group."""
    text = PRESETS.get(pattern, pattern)
    try:
        compiled = re.compile(text, re.IGNORECASE)
    except re.error as e:
        raise ValueError(f"--pattern: not a regular expression ({e})") from None
    if "student" not in compiled.groupindex:
        raise ValueError(
            "--pattern: needs a named group (?P<student>...) for the student id, or one of "
            + ", ".join(PRESETS)
        )
    return compiled


@dataclass
class Join:
    """Which graded file is whose, and everything that did not pair up."""

    roster: Roster
    sets: list[str]
    files: dict[tuple[str, str], list[str]] = field(default_factory=dict)  # (id key, set)
    unmatched: list[tuple[str, str]] = field(default_factory=list)  # (file, why)
    late: set[str] = field(default_factory=set)
    owner: dict[str, str] = field(default_factory=dict)  # file -> id key

    @property
    def duplicates(self) -> dict[tuple[str, str], list[str]]:
        return {k: v for k, v in self.files.items() if len(v) > 1}

    @property
    def missing(self) -> list[tuple[str, str]]:
        return [(k, s) for k in self.roster.students for s in self.sets if (k, s) not in self.files]

    def only_file(self, student: Student, set_name: str) -> str | None:
        """The student's one file for the set; None when there is none or more than one."""
        found = self.files.get((key(student.student_id), set_name), [])
        return found[0] if len(found) == 1 else None

    def problems(self) -> list[str]:
        """One line per file or student that did not pair up, and per file marked late (empty when
        every one paired and none was late)."""
        lines = [f"file matches no student: {f} ({why})" for f, why in self.unmatched]
        for (k, s), names in sorted(self.duplicates.items()):
            who = self.roster.students[k]
            lines.append(
                f"{len(names)} files for {who.student_id} ({who.display}) in {s}: "
                + ", ".join(names)
                + "; no grade exported for this set (no row: the LMS keeps its grade): keep the "
                "file that is theirs, move the others out, and grade again"
            )
        for k, s in self.missing:
            who = self.roster.students[k]
            lines.append(f"no file from {who.student_id} ({who.display}) for {s}")
        lines += [
            f"marked late by the LMS (--late-penalty applies, if set): {f}"
            for f in sorted(self.late)
        ]
        return [*self.roster.notes, *lines]


def join_files(
    graded: list[tuple[str, str]], roster: Roster, pattern: re.Pattern, sets: list[str]
) -> Join:
    """Pair each graded file (name, set) with a roster row through ``pattern``."""
    result = Join(roster, sets)
    preset = next((k for k in LMS_PARTS if pattern.pattern == PRESETS[k]), None)
    for name, set_name in graded:
        late = False
        if preset is not None:
            sid, late, why = lms_owner(name, preset, roster)
            if sid is None:
                result.unmatched.append((name, why))
                continue
        else:
            m = pattern.fullmatch(name)
            if m is None:
                result.unmatched.append((name, "its name does not match --pattern"))
                continue
            sid = m.group("student") or ""
            late = "late" in pattern.groupindex and bool(m.group("late"))
            if roster.find(sid) is None:
                result.unmatched.append((name, f"student id {sid!r} is not on the roster"))
                continue
        if not set_name:
            result.unmatched.append((name, "no exercise set recognised"))
            continue
        k = key(sid)
        result.files.setdefault((k, set_name), []).append(name)
        result.owner[name] = k
        if late:
            result.late.add(name)
    return result


def _squeezed(text: str, preset: str) -> str:
    """A name as the LMS writes it into a download name, for comparison: Canvas removes every
    non-word character and lower-cases; Moodle writes the full name (compared case-folded)."""
    text = unicodedata.normalize("NFC", text).casefold()
    return re.sub(r"[^\w]", "", text) if preset == "canvas" else " ".join(text.split())


def lms_owner(name: str, preset: str, roster: Roster) -> tuple[str | None, bool, str]:
    """(student id, marked late, why not) for a file an LMS named: the id only from the part the
    LMS writes (:data:`LMS_PARTS`). Where that part occurs more than once (a learner's file name
    or edited name holding one), the candidate whose roster name stands before it is the owner;
    none or several such: not paired, and the reason names every candidate."""
    part = LMS_PARTS[preset]
    found: dict[str, tuple[str, bool]] = {}
    for i in range(len(name)):
        m = part.match(name, i)
        if m is None or not name[m.end() :]:
            continue
        if preset == "moodle" and i == 0:
            continue  # Moodle writes a full name first
        sid = m.group("student")
        found.setdefault(sid, (name[:i], bool(m.groupdict().get("late"))))
    if not found:
        return None, False, "its name does not match --pattern"
    on_roster = {sid: v for sid, v in found.items() if roster.find(sid) is not None}
    if not on_roster:
        return None, False, f"student id {next(iter(found))!r} is not on the roster"
    if len(on_roster) == 1:  # one candidate on the roster: no other student can be meant
        sid, (_, late) = next(iter(on_roster.items()))
        return sid, late, ""
    named = {
        sid: v
        for sid, v in on_roster.items()
        if (st := roster.find(sid)).display
        and _squeezed(v[0], preset) == _squeezed(st.display, preset)
    }
    if len(named) == 1:
        sid, (_, late) = next(iter(named.items()))
        return sid, late, ""
    who = ", ".join(
        f"{sid} ({roster.find(sid).display or 'no name'}: if the LMS wrote {v[0]!r} before it)"
        if sid in on_roster
        else f"{sid} (not on the roster)"
        for sid, v in found.items()
    )
    return (
        None,
        False,
        f"ambiguous: the LMS's id part occurs {len(found)} times in its name, so it could be "
        f"{who}; not guessed: find whose file it is in the LMS, then rename it to the name the "
        "LMS gives that student's file (or grade it with --pattern default)",
    )


def set_from_name(name: str, pattern: re.Pattern, known: list[str]) -> str | None:
    """The set a file name's ``set`` group names (a set's full name, or its number): None when
    the pattern has no such group or it names no known set."""
    if "set" not in pattern.groupindex:
        return None
    m = pattern.fullmatch(name)
    text = (m.group("set") or "").strip().lower() if m else ""
    if not text:
        return None
    exact = [k for k in known if k.lower() == text]
    numbered = [k for k in known if k.split("_", 1)[0] == text]
    found = exact or numbered
    return found[0] if len(found) == 1 else None
