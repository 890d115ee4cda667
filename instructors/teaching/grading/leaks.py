"""Finding hidden values in text a learner sees: the numbers as digits, with commas, rounded, scaled
to k/M/G/T or GiB/TiB, as powers of two, and (near their question) small numbers as words.

Used by ``python -m teaching release`` (which refuses to finish on a hit) and by the tests of
``exercises/``."""

from __future__ import annotations

import math
import re

from teaching.grading import spec

_WORDS = [
    "zero",
    "one",
    "two",
    "three",
    "four",
    "five",
    "six",
    "seven",
    "eight",
    "nine",
    "ten",
    "eleven",
    "twelve",
    "thirteen",
    "fourteen",
    "fifteen",
    "sixteen",
    "seventeen",
    "eighteen",
    "nineteen",
]


def _forms(value: float) -> set[str]:
    """How a learner could see a number written: digits, commas, rounded, scaled, powers of two."""
    forms: set[str] = set()
    v = float(value)
    if v == 0 or not math.isfinite(v):
        return forms
    a = abs(v)
    if v.is_integer():
        forms |= {str(int(a)), f"{int(a):,}"}
    for scale in (1, 1e3, 1e6, 1e9, 1e12, 2**30, 2**40):
        x = a / scale
        if scale != 1 and (x < 1 or x.is_integer() and x < 100):
            continue
        for sig in (3, 4):
            text = f"{x:.{sig}g}"
            if "e" not in text:
                forms.add(text)
                if "." not in text and x >= 1000:
                    forms.add(f"{int(text):,}")
    exponent = math.log2(a)
    if exponent.is_integer() and abs(exponent) >= 4:
        e = int(exponent)
        forms |= {
            f"2**{e}",
            f"2^{e}",
            f"2<sup>{e}</sup>",
            f"2<sup>{str(e).replace('-', '−')}</sup>",
        }
    return forms


def _significant(form: str) -> bool:
    digits = re.sub(r"\D", "", form.split("e")[0]).strip("0")
    return len(digits) >= 3 or "**" in form or "^" in form or "<sup>" in form


def hidden_values(key: dict, assignment: spec.Assignment) -> dict[str, list]:
    """Values the learner must not see, by question: solution answers (not machine-dependent)."""
    out: dict[str, list] = {}
    for q in assignment.questions:
        vals = []
        for a in q.answers:
            record = key["answers"][q.name].get(a.name, {})
            if a.expect != "solution" or a.choices:
                continue
            stack = [record.get("value")] + [c.get("value") for c in record.get("calls", [])]
            while stack:
                v = stack.pop()
                if isinstance(v, dict):
                    stack += v.values()
                elif isinstance(v, list) and len(v) <= 8:
                    stack += v
                elif isinstance(v, int | float) and not isinstance(v, bool):
                    vals.append(v)
        out[q.name] = vals
    return out


UNITS = {2**10, 2**20, 2**30, 2**40, 10**3, 10**6, 10**9, 10**12}  # GiB, GB...: not answers


def find_leaks(text: str, values: list, *, local: bool) -> list[str]:
    found = []
    for v in values:
        if v in UNITS:
            continue
        for form in _forms(v):
            if not local and not _significant(form):
                continue
            if form in text and re.search(rf"(?<![\w.]){re.escape(form)}(?![\w]|\.\d)", text):
                found.append(f"{v!r} as {form!r}")
        if local and float(v).is_integer() and 2 <= abs(v) < len(_WORDS):
            word = _WORDS[int(abs(v))]
            if re.search(rf"\b{word}\b", text, flags=re.IGNORECASE):
                found.append(f"{v!r} as {word!r}")
    return found


def sections(nb) -> dict[str, str]:
    """What follows each question's answer cell, up to the next question (where explanations
    sit)."""
    out: dict[str, str] = {}
    current = None
    for cell in nb.cells:
        meta = cell.metadata.get("course", {})
        if meta.get("answer"):
            current = meta["question"]
        elif meta.get("question") and meta.get("question") != current:
            current = None  # the next question's prompt
        if current:
            out[current] = out.get(current, "") + "\n" + cell.source
    return out
