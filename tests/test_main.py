"""course/__main__.py: ``python -m course check | measure``; instructors' verbs point elsewhere."""

from __future__ import annotations

import subprocess
import sys

import pytest

from course import __main__ as cli


@pytest.mark.parametrize("verb", cli.INSTRUCTORS_COMMANDS)
def test_an_instructors_command_names_the_teaching_package(verb, capsys):
    assert cli.main([verb, "x"]) == 2
    assert f"python -m teaching {verb} x" in capsys.readouterr().err


def test_check_and_measure_dispatch_with_their_arguments(monkeypatch):
    import course.measure.quick
    import course.selfcheck.environment

    calls = []
    monkeypatch.setattr(course.selfcheck.environment, "run_checks", lambda: calls.append("c") or 1)
    monkeypatch.setattr(
        course.measure.quick,
        "run_measure",
        lambda budget, save, compare: calls.append((budget, save, compare)) or 0,
    )
    assert cli.main(["check"]) == 1  # its exit status is the checks' own
    assert cli.main(["measure", "--budget", "5", "--compare", "h100"]) == 0
    assert calls == ["c", (5.0, None, "h100")]


def test_no_command_is_a_usage_error():
    with pytest.raises(SystemExit) as exit_:
        cli.main([])
    assert exit_.value.code == 2


def test_python_dash_m_course_runs_the_module():
    out = subprocess.run(
        [sys.executable, "-m", "course", "--help"], capture_output=True, text=True, timeout=60
    )
    assert out.returncode == 0 and "check" in out.stdout and "measure" in out.stdout
