"""The instructors' guide agrees with the lessons: times, prerequisites, sections and schedules add
up.

Every lesson notebook states its estimated time and prerequisites in its first cell, and every
exercise set its time; the guide's tables restate them and build three schedules from them. These
tests read both and fail when a table disagrees with a notebook, a session holds more than its
length, a lesson comes before one it needs, or a lesson or set is missing from a schedule.
"""

from __future__ import annotations

import re
import tomllib
from pathlib import Path

import nbformat
import pytest

ROOT = Path(__file__).resolve().parents[2]
GUIDE = ROOT / "instructors" / "guide.md"
LONG_END = True  # a lesson stated as "60-90 minutes" is scheduled at its long end


def minutes(text: str) -> tuple[int, int]:
    """(shortest, longest) of "45 minutes", "60-90 minutes", "45 min"."""
    m = re.search(r"(\d+)(?:\s*-\s*(\d+))?\s*min", text)
    if not m:
        raise ValueError(f"no time in {text!r}")
    return int(m.group(1)), int(m.group(2) or m.group(1))


def first_cells(path: Path) -> str:
    nb = nbformat.read(path, as_version=4)
    return "\n".join(c.source for c in nb.cells[:3] if c.cell_type == "markdown")


def stated_time(path: Path) -> tuple[int, int]:
    m = re.search(
        r"\*\*Estimated time:?\*\*:?\s*([^.\n]*)|\*\*Estimated time: ([^*]*)\*\*", first_cells(path)
    )
    assert m, f"{path.name} states no estimated time"
    return minutes(m.group(1) or m.group(2))


def numbers(text: str) -> set[str]:
    """Two-digit lesson numbers in ``text``; "00 to 04" counts every lesson between."""
    text = re.sub(r"\[([^\]]*)\]\([^)]*\)", r"\1", text)  # links -> their text
    found = set(re.findall(r"(?<![\w.:])(\d\d)(?![\w:])", text))
    for a, b in re.findall(r"(\d\d) to (\d\d)", text):
        found |= {f"{n:02d}" for n in range(int(a), int(b) + 1)}
    return found


def prerequisites(path: Path) -> set[str]:
    text = first_cells(path)
    m = re.search(
        r"\*\*Prerequisites[.:]?\*\*:?(.*?)(?:Terms|New words|\*\*Objectives|\n\n)", text, re.S
    )
    assert m, f"{path.name} states no prerequisites"
    return numbers(m.group(1)) - {path.stem[:2]}


LESSONS = {p.stem[:2]: p for p in sorted((ROOT / "notebooks").glob("[0-9][0-9]_*.ipynb"))}
SETS = {p.stem[:2]: p for p in sorted((ROOT / "solutions").glob("[0-9][0-9]_*.ipynb"))}


def guide() -> str:
    return GUIDE.read_text(encoding="utf-8")


def table(title: str) -> list[list[str]]:
    """The rows (cells stripped) of the first Markdown table after the line holding ``title``."""
    text = guide()
    start = text.index(title)
    rows = []
    for line in text[start:].splitlines():
        if line.startswith("|"):
            rows.append([c.strip() for c in line.strip().strip("|").split("|")])
        elif rows:
            break
    assert len(rows) > 2, f"no table after {title!r}"
    return rows[2:]  # past the header and the |---| line


def length(lesson: str) -> int:
    short, long = stated_time(LESSONS[lesson])
    return long if LONG_END else short


def test_the_lesson_table_restates_each_notebooks_time_and_prerequisites():
    rows = {r[0]: r for r in table("| # | lesson | time |")}
    assert sorted(rows) == sorted(LESSONS), "a lesson is missing from the guide's table"
    for number, path in LESSONS.items():
        assert minutes(rows[number][2]) == stated_time(path), f"lesson {number}'s time"
        needs = rows[number][-1]
        expected = prerequisites(path)
        if needs == "all":
            assert expected == {n for n in LESSONS if n < number}, f"lesson {number} needs"
        else:
            assert numbers(needs) == expected, f"lesson {number} needs {sorted(expected)}"


def test_the_exercise_set_table_restates_each_sets_time():
    rows = {r[0][:2]: r for r in table("| set | after lesson | time |")}
    assert sorted(rows) == sorted(SETS), "an exercise set is missing from the guide's table"
    for number, path in SETS.items():
        assert minutes(rows[number][2]) == stated_time(path), f"set {number}'s time"


def test_section_timings_cover_every_section_and_add_up_to_the_lessons_time():
    lines = dict(re.findall(r"^- \*\*(\d\d)\*\* \(\d+ min\): (.*)$", guide(), re.M))
    assert sorted(lines) == sorted(LESSONS), "a lesson has no section timings"
    for number, path in LESSONS.items():
        nb = nbformat.read(path, as_version=4)
        sections = {
            m
            for c in nb.cells
            if c.cell_type == "markdown"
            for m in re.findall(r"^## (\d+)\. ", c.source, re.M)
        }
        given = dict(re.findall(r"§(\d+) (\d+)", lines[number]))
        assert set(given) == sections, f"lesson {number}: sections {sorted(sections, key=int)}"
        wrap_up = int(re.search(r"wrap-up (\d+)", lines[number]).group(1))
        total = sum(map(int, given.values())) + wrap_up
        assert total == length(number), f"lesson {number}'s sections add up to {total} min"


def span(slot: str) -> int:
    (h1, m1), (h2, m2) = [map(int, t.split(":")) for t in slot.split("-")]
    return (h2 * 60 + m2) - (h1 * 60 + m1)


def check_session(what: str, cell: str, stated: str, capacity: int, pool: dict) -> list[str]:
    """The items of one session exist, their times add up to ``stated``, within ``capacity``."""
    items = sorted(numbers(cell))
    assert items, f"{what}: nothing scheduled in {cell!r}"
    for n in items:
        assert n in pool, f"{what}: {n} is not a lesson or set"
    total = sum(length(n) if pool is LESSONS else stated_time(pool[n])[1] for n in items)
    assert int(stated) == total, f"{what}: the guide says {stated} min, the items add up to {total}"
    assert total <= capacity, f"{what}: {total} min in a {capacity}-minute session"
    return [n for n in re.findall(r"\d\d", cell)]  # in the order taught


def check_order(what: str, order: list[str]) -> None:
    for i, lesson in enumerate(order):
        late = (prerequisites(LESSONS[lesson]) & set(order)) - set(order[:i])
        assert not late, f"{what}: lesson {lesson} comes before {sorted(late)}, which it needs"


def capacity(header: str) -> int:
    return int(re.search(r"\((\d+) min\)", header).group(1))


def test_the_one_day_workshop_fits_its_slots_and_names_what_it_leaves_out():
    order = []
    for slot, cell, stated, _ in table("| slot | lessons | minutes |"):
        if cell in ("break", "lunch"):
            continue
        order += check_session(f"workshop {slot}", cell, stated, span(slot), LESSONS)
    check_order("the workshop", order)
    left_out = numbers(re.search(r"\*\*Left out:\*\* ([^(]*)", guide()).group(1))
    assert set(order) | left_out == set(LESSONS) and not set(order) & left_out
    assert {"05", "09"} <= set(order), "the workshop promises cost: it needs lessons 05 and 09"


def test_the_one_week_course_fits_its_mornings_and_afternoons():
    header = next(line for line in guide().splitlines() if line.startswith("| day | morning"))
    cells = [c.strip() for c in header.strip("|").split("|")]
    morning, afternoon = capacity(cells[1]), capacity(cells[3])
    order, sets = [], []
    for day, lessons, lesson_min, exercises, set_min in table("| day | morning"):
        order += check_session(f"day {day} morning", lessons, lesson_min, morning, LESSONS)
        sets += check_session(f"day {day} afternoon", exercises, set_min, afternoon, SETS)
        assert set(sets) <= set(order), f"day {day}: a set comes before its lesson"
    check_order("the week", order)
    assert sorted(order) == sorted(LESSONS) and sorted(sets) == sorted(SETS)


def test_the_six_week_module_fits_its_sessions_and_homework():
    header = next(line for line in guide().splitlines() if line.startswith("| week | session 1"))
    cells = [c.strip() for c in header.strip("|").split("|")]
    order, sets = [], []
    for week, s1, m1, s2, m2, homework, mh in table("| week | session 1"):
        order += check_session(f"week {week} session 1", s1, m1, capacity(cells[1]), LESSONS)
        order += check_session(f"week {week} session 2", s2, m2, capacity(cells[3]), LESSONS)
        sets += check_session(f"week {week} homework", homework, mh, capacity(cells[5]), SETS)
        assert set(sets) <= set(order), f"week {week}: a set comes before its lesson"
    check_order("the module", order)
    assert sorted(order) == sorted(LESSONS) and sorted(sets) == sorted(SETS)


def test_the_guide_names_the_courses_edition():
    version = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["version"]
    assert f"version {version}" in guide()
    assert f"## Version {version}" in (ROOT / "instructors" / "editions.md").read_text()


@pytest.mark.parametrize(
    "text, expected",
    [
        ("lessons 01 and 02 (FLOP/s)", {"01", "02"}),
        ("Lesson 00 (GB and GiB) and lesson 03 (fp32, bf16, int8)", {"00", "03"}),
        ("lessons [00](00_setup.ipynb) to [03](03_x.ipynb) and 09", {"00", "01", "02", "03", "09"}),
        ("lesson 09's checkpoint interval, at 12:30", {"09"}),
    ],
)
def test_numbers_reads_lesson_lists(text, expected):
    assert numbers(text) == expected


def test_a_session_that_overruns_or_a_missing_lesson_fails():
    with pytest.raises(AssertionError, match="in a 90-minute session"):
        check_session("week 9", "06, 07", "120", 90, LESSONS)
    with pytest.raises(AssertionError, match="add up to"):
        check_session("week 9", "06", "50", 90, LESSONS)
    with pytest.raises(AssertionError, match="comes before"):
        check_order("a bad week", ["05", "04"])
    assert span("09:25-10:05") == 40
