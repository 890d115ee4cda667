"""The formatter decides layout: ``# fmt: skip`` and ``# fmt: off`` only on literal data tables.

``ruff format --check`` (``make lint``) holds the rest of the code to 100 columns; a skip outside
the allow-listed data modules (hardware rows, MIG and CUDA-limit tables, model presets, cloud
prices, quiz option lists) fails here, so the count cannot creep back up.
"""

from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
DATA_TABLES = (
    "course/facts/hardware/",
    "course/facts/data/",
    "course/facts/cuda_limits.py",
    "course/facts/models.py",  # the published architectures, a row each
    "course/presentation/quizzes/",
)
SKIP = re.compile(r"#\s*fmt:\s*(skip|off)\b")


def _skips() -> dict[str, int]:
    found: dict[str, int] = {}
    for path in sorted([*ROOT.glob("course/**/*.py"), *ROOT.glob("tests/**/*.py")]):
        text = path.read_text(encoding="utf-8")
        if path == Path(__file__).resolve():
            continue
        count = len(SKIP.findall(text))
        if count:
            found[path.relative_to(ROOT).as_posix()] = count
    return found


def test_formatter_skips_only_on_data_tables():
    outside = {p: n for p, n in _skips().items() if not p.startswith(DATA_TABLES)}
    assert not outside, f"formatter skips outside the data tables (let ruff format them): {outside}"


def test_the_allow_list_is_not_a_loophole():
    inside = sum(n for p, n in _skips().items() if p.startswith(DATA_TABLES))
    assert inside <= 40, f"{inside} skips in the data tables: a table per skip, not a line per skip"


def test_the_skip_pattern_finds_a_skip():
    assert SKIP.findall("x = 1  # fmt: skip\n# fmt: off\n") == ["skip", "off"]
