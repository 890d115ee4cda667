"""A learner's prediction beside what happened (lesson 14: what Slurm did with their jobs).

:func:`check` compares a prediction with the run's outcome and returns a :class:`Verdict` that
prints itself: right, not what happened, or no prediction yet. Standard library only.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Verdict:
    """A prediction beside what happened; prints itself."""

    what: str
    predicted: object
    actual: object
    right: bool | None

    def __str__(self) -> str:
        if self.right is None:
            return (
                f"{self.what}: no prediction yet (fill in the variable and run the cells "
                f"again). Slurm: {self.actual!r}"
            )
        verdict = "right" if self.right else "not what Slurm did"
        return f"{self.what}: you predicted {self.predicted!r}; Slurm: {self.actual!r}: {verdict}"

    def _repr_pretty_(self, printer, cycle: bool) -> None:
        printer.text(str(self))


def check(what: str, predicted, actual, tolerance_seconds: float = 1.5) -> Verdict:
    """Set a prediction beside what Slurm did. Text is compared without case or surrounding
    spaces (a prediction that is part of Slurm's words counts: ``"Resources"`` for
    ``"PENDING (Resources)"``); numbers within ``tolerance_seconds``; lists and dicts item by
    item. An empty prediction (None, "", [], {}, ...) is no prediction."""
    if predicted in (None, "", [], {}, ...):
        return Verdict(what, predicted, actual, None)
    return Verdict(what, predicted, actual, _same(predicted, actual, tolerance_seconds))


def _same(predicted, actual, tolerance: float) -> bool:
    if isinstance(predicted, dict) and isinstance(actual, dict):
        return set(predicted) == set(actual) and all(
            _same(predicted[k], actual[k], tolerance) for k in predicted
        )
    if isinstance(predicted, list | tuple) and isinstance(actual, list | tuple):
        return len(predicted) == len(actual) and all(
            _same(p, a, tolerance) for p, a in zip(predicted, actual, strict=True)
        )
    if isinstance(predicted, int | float) and isinstance(actual, int | float):
        return abs(predicted - actual) <= tolerance
    if predicted is None or actual is None:
        return predicted is actual
    p, a = str(predicted).strip().lower(), str(actual).strip().lower()
    return bool(p) and (p == a or p in a)
