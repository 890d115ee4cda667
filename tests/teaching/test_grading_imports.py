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
    "teaching.grading.authoring",
    "teaching.grading.spec",
    "teaching.grading.sandbox",
    "teaching.grading.extract",
    "teaching.grading.gradebook",
]


def test_importing_the_learners_checker_loads_nothing_heavy():
    code = (
        "import sys, json\n"
        "from course.selfcheck.answers import Grader\n"
        f"print(json.dumps([m for m in {HEAVY!r} if m in sys.modules]))\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert json.loads(out.stdout) == []


def test_the_sandbox_and_the_extraction_do_not_import_each_other():
    code = (
        "import sys\n"
        "import teaching.grading.sandbox\n"
        "print('teaching.grading.extract' in sys.modules)\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "False"
