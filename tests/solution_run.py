"""Run an exercise set's solution the way the grader's key is built: its code cells, quietly, in one
namespace, so a test can call the learner's checker on the solution's own answers."""

from __future__ import annotations

import contextlib
import io
from collections.abc import Callable

from teaching.grading import authoring, spec


def solution_namespace(set_name: str, keep: Callable[[dict], bool] = lambda cell: True) -> dict:
    """The namespace after running ``solutions/<set_name>.ipynb``'s code cells that ``keep``
    accepts."""
    ns: dict = {}
    solution = authoring.SOLUTIONS_DIR / f"{set_name}.ipynb"
    with contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(io.StringIO()):
        for cell in spec.read(solution).run_cells:
            if keep(cell):
                exec(compile(cell["source"], solution.name, "exec"), ns)  # noqa: S102 - our own solution
    return ns


def feedback_with(set_name: str, namespace: dict, question: str, name: str, value) -> str:
    """The learner's checker's feedback on ``question`` when the solution's ``name`` is
    ``value``."""
    from course.selfcheck.answers import Grader

    return repr(Grader(set_name).check(question, {**namespace, name: value}))
