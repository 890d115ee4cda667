"""``grader.check("q1")``: the learner's public checks. Right or wrong, and a hint, never the value.

The exercise notebook's first code cell makes ``grader = Grader("NN_slug")``, which loads
``exercises/checks/NN_slug.json`` (written by ``python -m teaching assign``). For each answer it
holds the form (int, float, dict with these keys, one of these choices), the relations that must
hold, and a salted slow hash of the expected value rounded to the question's significant figures
(see
:mod:`course.selfcheck.values`); a learner's value is right when the hash of its rounding
(or of a neighbouring rounding) is among them. Known wrong values are hashed too, with the
hint they deserve.

In a graded release (``python -m teaching release --graded``, checks marked ``"mode": "graded"``) no
right answer is hashed: each number is checked for its form and a coarse range only (see
:mod:`course.selfcheck.coarse`), the learner is told which answers are in range, and the
hints for known wrong answers still fire (those are hashed, coarsely).

Choices and booleans are not checked for right/wrong here (trying every option would find the
answer): only their form is, and the grader checks the value. While a submission is being graded
(``COURSE_GRADING`` set) checks do nothing: the grader checks outside the submission's process.
"""

from __future__ import annotations

import json
import math
import os
import sys
from pathlib import Path

from course.selfcheck import hosted
from course.selfcheck.coarse import shape_problems, wrong_matches
from course.selfcheck.plain import MAX_ELEMENTS, to_plain
from course.selfcheck.values import (
    canonical,
    digest,
    form_problem,
    hash_matches,
)


def _find_checks(assignment: str) -> Path:
    here = Path.cwd()
    package_root = Path(__file__).resolve().parents[2]
    for folder in (
        here / "checks",
        here / "exercises" / "checks",
        package_root / "exercises" / "checks",
    ):
        if (folder / f"{assignment}.json").is_file():
            return folder / f"{assignment}.json"
    if hosted.hosted_runtime():  # Colab, Kaggle: from the release the course was installed from
        return hosted.fetch_checks(assignment, here / "checks")
    raise FileNotFoundError(
        f"checks for {assignment} not found: open the notebook from the exercises/ folder"
    )


class Report:
    """What a check says; prints as plain text in a notebook."""

    def __init__(self, lines: list[str], passed: bool):
        self.lines, self.passed = lines, passed

    def __repr__(self) -> str:
        return "\n".join(self.lines)

    def __bool__(self) -> bool:
        return self.passed


def _namespace() -> dict:
    try:
        from IPython import get_ipython

        shell = get_ipython()
        if shell is not None:
            return shell.user_ns
    except ImportError:
        pass
    return sys._getframe(3).f_globals  # the caller of check() or check_all()


def _sig(answer: dict, value):
    sig = answer["sig"]
    if sig is not None:
        return sig
    return "exact" if isinstance(value, int) or not isinstance(value, float) else 4


def _wrong_hashed(value, answer: dict, hashes: list[str], salt: str) -> bool:
    """Whether ``value`` is a known wrong one. A known wrong value is hashed in the form the
    solution computed it (an int exactly, a float to 4 figures): a whole number is tried in both
    forms, so ``4 * x`` gets its hint whether the learner's ``x`` is an int or a float."""
    sigs = [_sig(answer, value)]
    number = isinstance(value, int | float) and not isinstance(value, bool)
    if answer["sig"] is None and number and math.isfinite(value) and float(value).is_integer():
        sigs = list(dict.fromkeys([*sigs, "exact", 4]))
    return any(hash_matches(value, hashes, salt, sig) for sig in sigs)


class Grader:
    """The learner's checks for one exercise set."""

    def __init__(self, assignment: str, path: str | Path | None = None):
        self.assignment = assignment
        if os.environ.get("COURSE_GRADING"):  # inert in the sandbox: its checks are not there
            self.path, self.data = None, {"questions": {}}
            return
        self.path = Path(path) if path else _find_checks(assignment)
        self.data = json.loads(self.path.read_text())
        self.assignment = assignment

    def _value(self, ns: dict, answer: dict):
        value = eval(answer["expr"], ns)  # noqa: S307 - the author's expression, learner's kernel
        if value is Ellipsis:
            raise ValueError("still `...`: replace it with your answer")
        return to_plain(value, [MAX_ELEMENTS])

    def _answer_problem(self, ns: dict, answer: dict, salt: str) -> tuple[str, object]:
        if answer.get("call"):
            call = answer["call"]
            outputs = []
            for args in call["probes"]:
                outputs.append(to_plain(eval(call["call"], dict(ns, args=args)), [MAX_ELEMENTS]))  # noqa: S307
            if "shapes" in call:  # graded release: form and range of each output
                problems = shape_problems(outputs, {"items": call["shapes"]}, "probe")
                return "; ".join(problems), None
            text = canonical(outputs, call["sig"])
            return ("" if digest(text, salt) in call["hash"] else "gives wrong results"), None
        value = self._value(ns, answer)
        if problem := form_problem(value, answer["kind"]):
            return problem, value
        if answer["choices"] and canonical(value) not in answer["choices"]:
            return f"should be one of {', '.join(answer['choices'])}", value
        if answer["kind"] == "dict" and sorted(value) != answer["keys"]:
            return f"needs exactly the keys {', '.join(answer['keys'])}", value
        if "shape" in answer:  # graded release: a coarse range, never the value
            return "; ".join(shape_problems(value, answer["shape"])), value
        if not answer["public"]:
            return "", value
        if answer["kind"] == "dict":
            wrong = [
                k
                for k in answer["keys"]
                if not hash_matches(
                    value[k], answer["hash"][k], f"{salt}[{k}]", _sig(answer, value[k])
                )
            ]
            return (f"not right yet for {', '.join(wrong)}" if wrong else ""), value
        sig = (
            answer["sig"]
            if answer["sig"] is not None
            else ("exact" if answer["kind"] != "float" else 4)
        )
        ok = hash_matches(value, answer["hash"], salt, sig)
        return ("" if ok else "not right yet"), value

    @classmethod
    def from_checks(cls, data: dict) -> Grader:
        """A grader over checks already read (the grader's copy of what was released)."""
        grader = cls.__new__(cls)
        grader.assignment, grader.path, grader.data = data.get("assignment", ""), None, data
        return grader

    def value_problem(self, question: str, answer: str, value) -> str:
        """What this set's check says of ``value`` as ``question``'s ``answer`` ('' when it
        passes, as a learner's check would): the grader checks its key against the released
        checks with it. A function answer is not checked here (its probes are the grader's)."""
        entry = next(a for a in self.data["questions"][question]["answers"] if a["name"] == answer)
        if entry.get("call"):
            return ""
        salt = f"{self.assignment}/{question}/{answer}"
        problem, _ = self._answer_problem({"value": value}, dict(entry, expr="value"), salt)
        return problem

    def check(self, question: str, namespace: dict | None = None) -> Report:
        """Check one question's answers; say which are not right yet, with a hint."""
        return self._check(question, namespace if namespace is not None else _namespace())

    def _check(self, question: str, ns: dict) -> Report:
        if os.environ.get("COURSE_GRADING"):
            return Report([f"{question}: checked by the grader"], True)
        spec = self.data["questions"].get(question)
        if spec is None:
            return Report([f"no question {question!r} in {self.assignment}"], False)
        lines, hints, unchecked, in_range, plain = [], [], [], [], {}
        for answer in spec["answers"]:
            salt = f"{self.assignment}/{question}/{answer['name']}"
            try:
                problem, value = self._answer_problem(ns, answer, salt)
            except NameError as e:
                problem, value = f"not defined yet ({e}): run the cell that sets it", None
            except Exception as e:  # whatever the learner's code raises
                problem, value = f"{type(e).__name__}: {e}", None
            if value is not None:
                plain[answer["name"]] = value
            graded = self.data.get("mode") == "graded"
            known = [
                w["hint"]
                for w in spec["wrong"]
                if w["answer"] == answer["name"]
                and value is not None
                and (problem or graded)  # graded: an answer in range may still be a known mistake
                and (
                    wrong_matches(value, w["bucket"], salt + "/wrong")
                    if "bucket" in w  # graded: the bucket of a known wrong value
                    else _wrong_hashed(value, answer, w["hash"], salt + "/wrong")
                )
            ]
            if known and not problem:
                problem = "in range, but it matches a known mistake"
            if problem:
                lines.append(f"  - {answer['name']}: {problem}")
                hints += known
                if answer.get("hint"):
                    hints.append(answer["hint"])
            elif "shape" in answer or (answer.get("call") or {}).get("shapes") is not None:
                in_range.append(answer["name"])
            elif not answer["public"] and not answer.get("call"):
                unchecked.append(answer["name"])
        for c in spec["checks"]:
            try:
                ok = bool(eval(c["expr"], {"math": math}, dict(plain)))  # noqa: S307
            except Exception:
                ok = False
            if not ok:
                lines.append(f"  - {c['hint'] or c['expr']}")
        if lines and not hints and spec["hint"]:
            hints.append(spec["hint"])
        if lines:
            out = [f"{question}: not yet."] + lines
            out += [f"  Hint: {h}" for h in dict.fromkeys(hints)]
            return Report(out, False)
        if in_range:
            text = (
                f"{question}: in range: {', '.join(in_range)} (form, units and order of "
                "magnitude; the grader checks the values)"
            )
            if unchecked:
                text += f"; the form is right for {', '.join(unchecked)}"
            return Report([text + "."], True)
        text = f"{question}: right."
        if unchecked:
            text = (
                f"{question}: the form is right; the grader checks the value of "
                f"{', '.join(unchecked)}."
            )
        return Report([text], True)

    def check_all(self, namespace: dict | None = None) -> Report:
        """Check every question, in order."""
        ns = namespace if namespace is not None else _namespace()
        reports = [self._check(q, ns) for q in self.data["questions"]]
        return Report([line for r in reports for line in r.lines], all(reports))
