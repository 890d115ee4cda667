"""Check: the trusted side. Compare a submission's plain answers with the answer key.

Runs in the grader's own process on JSON data only: nothing the submission defined exists here, so
no ``__eq__`` trick, monkeypatch or reading of tests reaches it. The key is the solution notebook's
own answers, extracted the same way on the same machine in the same grading run (so answers that
depend on the machine, and function answers on this run's probe inputs, have a key too).
"""

from __future__ import annotations

import math
import random
from dataclasses import dataclass, field

from course.selfcheck.values import (
    EXACT,
    canonical,
    form_problem,
    int_problem,
    is_number,
    kind_of,
    matches,
)
from teaching.grading.spec import Answer, Assignment, Question

PUBLIC_SEED = "public"  # the probe inputs shipped with the learner's checks


def make_probes(assignment: Assignment, seed: str) -> dict[str, dict[str, list]]:
    """Probe inputs of every function answer, drawn from ``seed`` (per run, never shown)."""
    probes: dict[str, dict[str, list]] = {}
    for q in assignment.questions:
        for a in q.answers:
            if a.is_function:
                rng = random.Random(f"{seed}/{assignment.name}/{q.name}/{a.name}")
                value = eval(a.probes, {"rng": rng, "math": math})  # noqa: S307 - author's code
                probes.setdefault(q.name, {})[a.name] = [list(args) for args in value]
    return probes


def request_questions(assignment: Assignment, probes: dict) -> dict:
    """What the runner is asked to extract, per question."""
    out = {}
    for q in assignment.questions:
        spec: dict = {"answers": {}, "calls": {}}
        for a in q.answers:
            if a.is_function:
                spec["calls"][a.name] = {"call": a.call, "probes": probes[q.name][a.name]}
            else:
                spec["answers"][a.name] = a.expr
        out[q.name] = spec
    return out


def wrong_extras(assignment: Assignment) -> dict[str, str]:
    """Expressions of the known wrong answers, evaluated in the solution's namespace."""
    return {
        f"{q.name}/wrong/{i}": w.value for q in assignment.questions for i, w in enumerate(q.wrong)
    }


@dataclass
class QuestionResult:
    name: str
    points: float
    score: float = 0.0
    failures: list[str] = field(default_factory=list)  # one short line per failing check
    hints: list[str] = field(default_factory=list)

    @property
    def reason(self) -> str:
        text = "; ".join(self.failures)
        if self.hints:
            text += " (hint: " + " / ".join(dict.fromkeys(self.hints)) + ")"
        return text


def _same(got, expected, answer: Answer) -> bool:
    try:
        return _compare(got, expected, answer)
    except (
        OverflowError,
        ValueError,
        TypeError,
        RecursionError,
    ):  # nothing a learner sends ends a run
        return False


def _compare(got, expected, answer: Answer) -> bool:
    if answer.expect == "machine" and is_number(got) and is_number(expected):
        return math.isclose(got, expected, rel_tol=answer.rel)
    if isinstance(expected, dict) and isinstance(got, dict):
        return set(got) == set(expected) and all(
            _compare(got[k], expected[k], answer) for k in expected
        )
    if isinstance(expected, list) and isinstance(got, list):
        return len(got) == len(expected) and all(
            _compare(g, e, answer) for g, e in zip(got, expected, strict=True)
        )
    if isinstance(expected, bool) or isinstance(got, bool):
        return got is expected
    return matches(got, expected, answer.sig_for(expected) if is_number(expected) else EXACT)


def _expected_kind(answer: Answer, expected) -> str:
    return answer.kind or kind_of(expected)


def check_answer(answer: Answer, got: dict | None, expected: dict | None) -> str:
    """'' when the answer is right, else a short reason."""
    if got is None:
        return f"{answer.name}: no answer (its cell did not run)"
    if "error" in got:
        return f"{answer.name}: {got['error']}"
    if problem := int_problem(got.get("value", got.get("calls"))):
        return f"{answer.name}: {problem}"
    if answer.is_function:
        outputs, want = got.get("calls") or [], (expected or {}).get("calls") or []
        for i, (g, e) in enumerate(zip(outputs, want, strict=False)):
            if "error" in g:
                return f"{answer.name}: probe {i + 1} raised {g['error']}"
            if "value" not in e or not _same(g["value"], e["value"], answer):
                return f"{answer.name}: wrong output on probe {i + 1}"
        return "" if len(outputs) == len(want) else f"{answer.name}: probes missing"
    value = got.get("value")
    exp_value = (expected or {}).get("value")
    kind = _expected_kind(answer, exp_value)
    if problem := form_problem(value, kind):
        return f"{answer.name}: {problem}"
    if answer.choices and canonical(value) not in {c.lower() for c in answer.choices}:
        return f"{answer.name}: not one of {', '.join(answer.choices)}"
    if kind == "dict" and isinstance(exp_value, dict) and set(value) != set(exp_value):
        return f"{answer.name}: needs exactly the keys {', '.join(sorted(exp_value))}"
    if answer.expect == "none":
        return ""
    if expected is None or "value" not in expected:
        return f"{answer.name}: no key (the solution did not produce it)"
    if _same(value, exp_value, answer):
        return ""
    if answer.expect == "machine":  # measured: the grader measured it too, in a sandbox of its own
        return f"{answer.name}: not within {answer.rel:.0%} of the grader's own measurement here"
    return f"{answer.name}: wrong value"


def _plain_answers(got: dict) -> dict:
    return {k: v["value"] for k, v in got.items() if isinstance(v, dict) and "value" in v}


def check_question(q: Question, got: dict | None, key: dict, extras: dict) -> QuestionResult:
    """Score one question: its answers against the key, its relations, and hints for known
    errors."""
    result = QuestionResult(q.name, q.points)
    got = got or {}
    items = 0
    passed = 0
    for a in q.answers:
        items += 1
        reason = check_answer(a, got.get(a.name), key.get(a.name))
        if not reason:
            passed += 1
            continue
        result.failures.append(reason)
        value = (got.get(a.name) or {}).get("value")
        for i, w in enumerate(q.wrong):
            wrong_value = extras.get(f"{q.name}/wrong/{i}")
            if w.answer == a.name and value is not None and _same(value, wrong_value, a):
                result.hints.append(w.hint)
        if a.hint:
            result.hints.append(a.hint)
    own = [
        a.name for a in q.answers if a.expr == a.name and not a.is_function
    ]  # the learner's names
    unanswered = {
        f.split(":")[0] for f in result.failures if "not answered" in f or "no answer" in f
    }
    if own and set(own) <= unanswered:
        result.failures, result.hints = ["not answered"], []
        return result
    values = {"math": math, **_plain_answers(got)}
    for c in q.checks:
        items += 1
        try:
            ok = bool(eval(c.expr, {"__builtins__": _SAFE_BUILTINS}, dict(values)))  # noqa: S307
        except Exception:
            ok = False
        if ok:
            passed += 1
        else:
            result.failures.append(f"check failed: {c.hint or c.expr}")
    if result.failures and q.hint and not result.hints:
        result.hints.append(q.hint)
    if passed == items:
        result.score = q.points
    elif q.partial:
        result.score = round(q.points * passed / items, 2)
    return result


_SAFE_BUILTINS = {
    name: __builtins__[name] if isinstance(__builtins__, dict) else getattr(__builtins__, name)
    for name in (
        "abs",
        "min",
        "max",
        "len",
        "sum",
        "all",
        "any",
        "round",
        "isinstance",
        "int",
        "float",
        "bool",
        "str",
        "set",
        "sorted",
        "list",
        "dict",
        "tuple",
        "range",
    )
}


def check_all(
    assignment: Assignment, answers: dict, key: dict, extras: dict
) -> list[QuestionResult]:
    """Every question of a submission; ``key`` is the solution run's answers, by question."""
    return [
        check_question(q, answers.get(q.name), key.get(q.name, {}), extras)
        for q in assignment.questions
    ]
