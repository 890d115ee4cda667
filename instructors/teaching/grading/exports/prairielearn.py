"""PrairieLearn external grading ``results.json``, one per submission.

The rules, from PrairieLearn's "External Grading" documentation, section "Grading results"
(https://prairielearn.readthedocs.io/en/latest/externalGrading/): ``score`` is a number in [0, 1];
``gradable: false`` marks a submission that could not be graded (no points given or lost, no attempt
used), with ``format_errors`` saying why: a file that is not a notebook or of no set, and a
``not-graded`` row (the grader's side failed: no key on this machine, no sandbox); ``tests``
lists each test's ``name``, ``description``, ``points``, ``max_points``, ``message`` and
``output``; the file must stay under 1 MB. One test per question; its message is the reason and
hint the learner would see.
"""

from __future__ import annotations

from pathlib import Path

from teaching.grading.exports.common import feedback, write_per_file
from teaching.grading.grades import Grade, number

NOT_GRADABLE = ("not-a-notebook", "unknown-assignment")
MAX_BYTES = 1_000_000  # PrairieLearn's limit on the file
MAX_MESSAGE = 4_000  # characters per message: a hundred questions stay far under MAX_BYTES


def results(grade: Grade) -> dict:
    """The ``results.json`` object for one graded file."""
    if grade.status in NOT_GRADABLE or not grade.earned:  # no attempt used, no points given
        return {"gradable": False, "format_errors": [grade.reason[:MAX_MESSAGE] or grade.status]}
    tests = [
        {
            "name": q,
            "description": f"question {q}",
            "points": score,
            "max_points": points,
            "message": why[:MAX_MESSAGE] or "right",
            "output": "",
        }
        for q, score, points, why in feedback(grade)
    ]
    out = {
        "gradable": True,
        "score": min(1.0, max(0.0, grade.total / grade.possible)),
        "message": f"{number(grade.total)}/{number(grade.possible)} points ({grade.status})",
        "output": grade.reason[:MAX_MESSAGE],
        "tests": tests,
    }
    return out


def write(out: Path, grades: list[Grade]) -> list[Path]:
    """``<out>-prairielearn/<submission>/results.json``, all or none."""
    target = out.with_name(f"{out.stem}-prairielearn")
    write_per_file(target, grades, results)
    return [target]
