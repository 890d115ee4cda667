"""The environment is pinned in one place and environment.yml agrees with it."""

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def _pins(lines):
    pins = {}
    for line in lines:
        line = line.strip().removeprefix("- ").strip()
        if "==" in line and not line.startswith("#"):
            name, version = line.split("#")[0].split(";")[0].strip().split("==")
            pins[re.sub(r"[-_.]+", "-", name).lower()] = version
    return pins


def test_every_requirement_is_pinned_and_torch_is_the_cpu_release():
    lines = [x for x in (ROOT / "requirements.txt").read_text().splitlines() if x and x[0] != "#"]
    assert all("==" in line for line in lines), [x for x in lines if "==" not in x]
    assert _pins(lines)["torch"] == "2.13.0"


def test_every_top_level_requirement_is_in_the_lock():
    pins = _pins((ROOT / "requirements.txt").read_text().splitlines())
    for line in (ROOT / "requirements.in").read_text().splitlines():
        name = re.split(r"[=<>!~#\s]", line.strip(), maxsplit=1)[0]
        if name:
            assert re.sub(r"[-_.]+", "-", name).lower() in pins, name


def test_environment_yml_pins_exactly_what_requirements_txt_pins():
    lock = _pins((ROOT / "requirements.txt").read_text().splitlines())
    conda = _pins((ROOT / "environment.yml").read_text().splitlines())
    assert conda == lock


def test_torch_is_pinned_nowhere_else():
    for name in ("pyproject.toml", "Makefile", "requirements.in"):
        text = (ROOT / name).read_text()
        assert text.count("torch==") <= (1 if name == "requirements.in" else 0), name
