"""The wrong-solution corpus: the mistakes each set's hints describe, graded and self-checked.

Each ``mistakes/NN_slug.yaml`` (beside this module) lists, per question, wrong answers made from
the right one by the mistake a hint names. An entry has ``question``, ``answer`` (with ``key``: one
entry of a dict answer, ``"*"`` every entry), ``mistake`` (its name), and one of

- ``wrong``: the wrong value as a Python expression of the right one, ``x`` (with ``math``), e.g.
  ``x * 1e9 / 2**30`` for GiB labelled GB; or ``solution``: the solution's own expression for that
  known wrong answer (its question's YAML ``wrong``), where no short transform of ``x`` says it;
- ``code``: a code cell that replaces the question's answer cells (a function answer: a kernel
  without its mask, a quantiser with one scale for the whole matrix);

``hint``, a phrase of the hint that names the mistake (the learner's check should print it), and
``gap``: ``{mode: why}`` where the public check of that release mode is known to neither reject the
answer nor name the mistake (a finding, kept so that a fix or a regression is noticed).

:func:`grade` scores an entry with the grader's pure scoring path
(:func:`teaching.grading.check.check_question`, what a sandboxed run calls on the executed answers)
and runs the public check of both release modes on it; :func:`submission` writes a notebook that
makes the mistakes, for the sandboxed grader. ``python -m teaching.corpus`` prints the counts that
instructors/grading.md shows (``--guide`` writes them there).
"""

from __future__ import annotations

import contextlib
import io
import json
import math
import os
import subprocess
import sys
import tempfile
from dataclasses import dataclass, field
from pathlib import Path

import nbformat
import yaml

from course.selfcheck.answers import Grader
from teaching.grading import authoring, check, runner, spec

DATA_DIR = Path(__file__).resolve().parent / "mistakes"
MODES = ("self-study", "graded")
OUTCOMES = ("hint", "reject", "missed")  # the mistake's hint printed / the check fails / it passes
FUNCTION_TIMEOUT_S = 120


@dataclass(frozen=True)
class Mistake:
    """One known wrong answer of a set (see the module docstring)."""

    set: str
    question: str
    answer: str
    mistake: str
    wrong: str = ""
    code: str = ""
    key: str | None = None
    hint: str = ""
    gap: dict = field(default_factory=dict)

    @property
    def label(self) -> str:
        at = f"[{self.key}]" if self.key else ""
        return f"{self.set} {self.question} {self.answer}{at}: {self.mistake}"


def sets() -> list[str]:
    """The sets with a corpus file, in order."""
    return sorted(p.stem for p in DATA_DIR.glob("*.yaml"))


def load(name: str) -> list[Mistake]:
    """The corpus of one set; raises ValueError naming an entry that breaks the format."""
    entries = yaml.safe_load((DATA_DIR / f"{name}.yaml").read_text(encoding="utf-8")) or []
    out = []
    for i, e in enumerate(entries):
        unknown = set(e) - {"question", "answer", "key", "mistake", "wrong", "code", "hint", "gap"}
        if unknown or not e.get("mistake") or bool(e.get("wrong")) == bool(e.get("code")):
            raise ValueError(
                f"mistakes/{name}.yaml entry {i + 1}: needs question, answer, mistake and one of "
                f"wrong or code (unknown keys: {sorted(unknown)})"
            )
        if set(e.get("gap") or {}) - set(MODES):
            raise ValueError(f"mistakes/{name}.yaml entry {i + 1}: gap modes are {MODES}")
        out.append(
            Mistake(
                set=name,
                question=str(e["question"]),
                answer=str(e["answer"]),
                mistake=str(e["mistake"]),
                wrong=str(e.get("wrong") or ""),
                code=str(e.get("code") or ""),
                key=None if e.get("key") is None else str(e["key"]),
                hint=str(e.get("hint") or ""),
                gap=dict(e.get("gap") or {}),
            )
        )
    return out


def _transform(m: Mistake, right, assignment: spec.Assignment, key: dict):
    if m.wrong == "solution":
        q = assignment.question(m.question)
        found = [
            key["extras"][f"{q.name}/wrong/{i}"]
            for i, w in enumerate(q.wrong)
            if w.answer.split("[")[0] == m.answer and (not m.hint or m.hint in w.hint)
        ]
        if not found:
            raise ValueError(f"{m.label}: no wrong answer of the solution with hint {m.hint!r}")
        return found[0]

    def one(x):
        return eval(m.wrong, {"math": math, "__builtins__": {}}, {"x": x})  # noqa: S307 - ours

    if m.key is None:
        return one(right)
    if m.key == "*":
        return {k: one(v) for k, v in right.items()}
    return {**right, m.key: one(right[m.key])}


def answers_with(m: Mistake, assignment: spec.Assignment, key: dict) -> dict:
    """The question's executed answers as the grader receives them, with this one mistake."""
    got = json.loads(json.dumps(key["answers"][m.question]))
    right = got[m.answer]["value"]
    got[m.answer] = {"value": _transform(m, right, assignment, key)}
    return got


def checks_data(assignment: spec.Assignment, key: dict, mode: str) -> dict:
    """The public checks a release of ``mode`` ships (self-study: the committed file)."""
    if mode == "graded":
        return authoring.public_checks(assignment, key, graded=True)
    return json.loads((authoring.EXERCISES_DIR / "checks" / f"{assignment.name}.json").read_text())


def _by_value(data: dict) -> dict:
    """The checks with each answer read from its plain value (no function answers)."""
    data = json.loads(json.dumps(data))
    for q in data["questions"].values():
        q["answers"] = [a for a in q["answers"] if not a.get("call")]
        for a in q["answers"]:
            a["expr"] = a["name"]
    return data


def outcome(m: Mistake, passed: bool, report: str) -> str:
    """What the learner's check did with the mistake: one of :data:`OUTCOMES`."""
    if m.hint and m.hint in report:
        return "hint"
    return "missed" if passed else "reject"


def _public(data: dict, m: Mistake, got: dict) -> tuple[bool, str]:
    ns = {name: r["value"] for name, r in got.items() if "value" in r}
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "checks.json"
        path.write_text(json.dumps(data))
        report = Grader(m.set, path).check(m.question, ns)
    return bool(report), repr(report)


@dataclass
class Result:
    """An entry graded: the grader's score for its question and each mode's public check."""

    mistake: Mistake
    score: float
    points: float
    reason: str
    outcomes: dict[str, str]
    reports: dict[str, str]


def _function_run(m: Mistake, assignment: spec.Assignment, key: dict, data: dict) -> dict:
    """Run a code entry in a child process (a kernel without its mask may corrupt its process's
    memory): its answers on the key's probes, and each mode's public check of the question."""
    q = assignment.question(m.question)
    request = {
        "set": m.set,
        "question": m.question,
        "code": m.code,
        "extract": check.request_questions(assignment, key["probes"])[q.name],
        "checks": data,
    }
    env = dict(os.environ, TRITON_INTERPRET="1")
    env.pop("COURSE_GRADING", None)
    try:
        proc = subprocess.run(
            [sys.executable, "-m", "teaching.corpus", "--run-code"],
            input=json.dumps(request),
            capture_output=True,
            text=True,
            timeout=FUNCTION_TIMEOUT_S,
            env=env,
        )
        lines = proc.stdout.strip().splitlines()
        if proc.returncode == 0 and lines:
            return json.loads(lines[-1])
        problem = f"the code crashed (exit {proc.returncode}): {proc.stderr.strip()[-200:]}"
    except subprocess.TimeoutExpired:
        problem = f"the code ran past {FUNCTION_TIMEOUT_S} s"
    return {
        "got": {},
        "reports": {mode: [False, f"{m.question}: {problem}"] for mode in data},
    }


def _run_code(request: dict) -> dict:
    """The child's side of :func:`_function_run`."""
    ns: dict = {}
    with contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(io.StringIO()):
        exec(compile(request["code"], "corpus", "exec"), ns)  # noqa: S102 - the corpus's cell
        got = runner.extract_answers(ns, request["extract"])
        reports = {}
        for mode, data in request["checks"].items():
            with tempfile.TemporaryDirectory() as tmp:
                path = Path(tmp) / "checks.json"
                path.write_text(json.dumps(data))
                report = Grader(request["set"], path).check(request["question"], ns)
            reports[mode] = [bool(report), repr(report)]
    return {"got": got, "reports": reports}


def grade(m: Mistake, assignment: spec.Assignment, key: dict, data: dict) -> Result:
    """Score one entry (the grader's pure path) and run both modes' public checks on it.

    ``data``: the public checks by mode (:func:`checks_data`)."""
    q = assignment.question(m.question)
    if m.code:
        run = _function_run(m, assignment, key, data)
        got, reports = run["got"], {mode: tuple(r) for mode, r in run["reports"].items()}
    else:
        got = answers_with(m, assignment, key)
        reports = {mode: _public(_by_value(data[mode]), m, got) for mode in data}
    result = check.check_question(q, got, key["answers"][q.name], key["extras"])
    return Result(
        mistake=m,
        score=result.score,
        points=result.points,
        reason=result.reason,
        outcomes={mode: outcome(m, *reports[mode]) for mode in reports},
        reports={mode: r[1] for mode, r in reports.items()},
    )


def grade_set(name: str, key: dict) -> list[Result]:
    """Every entry of one set's corpus."""
    assignment = spec.read(authoring.SOLUTIONS_DIR / f"{name}.ipynb")
    data = {mode: checks_data(assignment, key, mode) for mode in MODES}
    os.environ.pop("COURSE_GRADING", None)  # the learner's check is inert while grading
    return [grade(m, assignment, key, data) for m in load(name)]


# -- submissions for the sandboxed grader --


def _patch(m: Mistake, assignment: spec.Assignment) -> str:
    """A code cell that, run after the question's answer cells, makes the mistake."""
    a = m.answer
    if m.wrong == "solution":
        q = assignment.question(m.question)
        w = next(w for w in q.wrong if w.answer.split("[")[0] == a and m.hint in w.hint)
        return f"{a} = {w.value}"
    f = f"(lambda x: {m.wrong})"
    if m.key is None:
        return f"{a} = {f}({a})"
    if m.key == "*":
        return f"{a} = {{k: {f}(v) for k, v in {a}.items()}}"
    return f"{a} = {{**{a}, {m.key!r}: {f}({a}[{m.key!r}])}}"


def submission(name: str, mistakes: list[Mistake]) -> nbformat.NotebookNode:
    """The set's exercise notebook answered with the solution, then the mistakes made: a code entry
    replaces its question's answer cells, a value entry adds a cell after them."""
    assignment = spec.read(authoring.SOLUTIONS_DIR / f"{name}.ipynb")
    nb = nbformat.read(authoring.EXERCISES_DIR / f"{name}.ipynb", as_version=4)
    solved = iter((c["question"], c["source"]) for c in assignment.run_cells if c["answer"])
    cells, coded = [], set()
    for cell in nb.cells:
        meta = cell.metadata.get("course", {})
        if meta.get("answer"):
            question, source = next(solved)
            code = next((m.code for m in mistakes if m.code and m.question == question), "")
            if code and question in coded:
                continue  # the question's first answer cell holds the code
            cell.source = code or source
            if code:
                coded.add(question)
        elif cell.source.startswith(f'grader.check("{meta.get("question")}")'):
            for m in mistakes:
                if m.question == meta["question"] and not m.code:
                    cells.append(nbformat.v4.new_code_cell(_patch(m, assignment)))
        cells.append(cell)
    nb.cells = cells
    return nb


# -- counts, for the guide --


def counts(results: list[Result]) -> dict:
    """Sets, questions, entries, and how each mode's public check met them."""
    return {
        "sets": len({r.mistake.set for r in results}),
        "questions": len({(r.mistake.set, r.mistake.question) for r in results}),
        "mistakes": len(results),
        "below_full": sum(r.score < r.points for r in results),
        "from_solution": sum(r.mistake.wrong == "solution" for r in results),
        "code": sum(bool(r.mistake.code) for r in results),
        **{
            mode: {o: sum(r.outcomes[mode] == o for r in results) for o in OUTCOMES}
            for mode in MODES
        },
    }


def table(results: list[Result]) -> str:
    """The Markdown table the guide shows (instructors/grading.md, "The wrong-solution corpus")."""
    c = counts(results)
    lines = [
        f"{c['mistakes']} wrong answers ({c['code']} of them code cells, {c['from_solution']} "
        f"taken from the solution's own wrong expressions) in {c['questions']} questions of "
        f"{c['sets']} sets; the grader scores {c['below_full']} of them below full marks.",
        "",
        "| release mode | hint that names the mistake | rejected, no such hint | passed (a gap) |",
        "|---|---|---|---|",
    ]
    for mode in MODES:
        lines.append(f"| {mode} | {' | '.join(str(c[mode][o]) for o in OUTCOMES)} |")
    gaps = {}  # why -> the mistakes a mode's check passes without their hint
    for r in results:
        for mode in MODES:
            if r.outcomes[mode] == "missed":
                why = r.mistake.gap.get(mode, "not declared")
                gaps.setdefault(f"{mode}: {why}", []).append(r.mistake.label)
    for why, labels in gaps.items():
        lines += ["", f"Passed without a hint ({why}):", ""] + [f"- {x}" for x in labels]
    return "\n".join(lines)


def survey() -> list[Result]:
    """Every set's corpus graded, with the answer keys (cached under build/grading)."""
    names = sets()
    keys, errors = authoring.answer_keys([authoring.SOLUTIONS_DIR / f"{n}.ipynb" for n in names])
    if errors:
        raise RuntimeError(f"solutions that did not run: {errors}")
    return [r for n in names for r in grade_set(n, keys[n])]


GUIDE = authoring.REPO / "instructors" / "grading.md"
GUIDE_BEGIN = "<!-- corpus: begin (python -m teaching.corpus --guide) -->"
GUIDE_END = "<!-- corpus: end -->"


def guide_table(text: str) -> str:
    """The table between the guide's corpus markers."""
    return text.split(GUIDE_BEGIN, 1)[1].split(GUIDE_END, 1)[0].strip()


def main(argv: list[str]) -> int:
    """Print the corpus's table; ``--guide`` also writes it into instructors/grading.md."""
    if argv[:1] == ["--run-code"]:
        print(json.dumps(_run_code(json.loads(sys.stdin.read()))))
        return 0
    shown = table(survey())
    print(shown)
    if argv[:1] == ["--guide"]:
        head, rest = GUIDE.read_text(encoding="utf-8").split(GUIDE_BEGIN, 1)
        tail = rest.split(GUIDE_END, 1)[1]
        GUIDE.write_text(f"{head}{GUIDE_BEGIN}\n{shown}\n{GUIDE_END}{tail}", encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
