"""The learner's checker is light: every exercise notebook imports it in its first cell."""

from __future__ import annotations

import json
import subprocess
import sys

HEAVY = [
    "nbformat",
    "yaml",
    "torch",
    "numpy",
    "course.publishing.grading.authoring",
    "course.publishing.grading.spec",
    "course.publishing.grading.sandbox",
    "course.publishing.grading.extract",
    "course.publishing.grading.gradebook",
]


def test_importing_the_learners_checker_loads_nothing_heavy():
    code = (
        "import sys, json\n"
        "from course.publishing.grading.learner import Grader\n"
        f"print(json.dumps([m for m in {HEAVY!r} if m in sys.modules]))\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert json.loads(out.stdout) == []


def test_the_sandbox_and_the_extraction_do_not_import_each_other():
    code = (
        "import sys\n"
        "import course.publishing.grading.sandbox\n"
        "print('course.publishing.grading.extract' in sys.modules)\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "False"
