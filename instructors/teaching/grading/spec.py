"""The authoring format: read a ``solutions/NN_slug.ipynb`` into questions and student cells.

A solution notebook is an ordinary notebook with raw cells that mark its structure (see
CONTRIBUTING.md, "Exercise sets and grading"):

- ``# ASSIGNMENT CONFIG`` (first cell) with ``name: NN_slug``;
- ``# BEGIN QUESTION`` with a YAML body (``name``, ``points``, ``answers``, ``hint``, ``wrong``,
  ``checks``, ``partial``) and ``# END QUESTION``;
- ``# BEGIN SOLUTION`` / ``# END SOLUTION`` around the cells that answer it (code, and Markdown that
  explains or states the answer). In code, a line ending in ``# SOLUTION`` becomes ``name = ...``,
  ``# BEGIN SOLUTION NO PROMPT`` ... ``# END SOLUTION`` disappears, and the lines of a
  triple-quoted string opened with ``# BEGIN PROMPT`` and closed with ``# END PROMPT`` become the
  learner's prompt.

Everything outside solution blocks reaches the learner as written. Standard library + yaml only.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path

import nbformat
import yaml

from course.selfcheck.values import EXACT

KINDS = ("int", "float", "bool", "str", "list", "dict")
EXPECTS = ("solution", "machine", "none")


class FormatError(ValueError):
    """A solution notebook that does not follow the authoring format."""


@dataclass(frozen=True)
class Answer:
    """One value a question asks for."""

    name: str
    expr: str  # evaluated in the learner's namespace to extract the value
    sig: int | str | None = None  # significant figures, or "exact" (default: ints exact, floats 4)
    kind: str | None = None  # int | float | bool | str | list | dict (default: the solution's)
    expect: str = "solution"  # solution | machine (the solution re-run where grading runs) | none
    rel: float = 0.01  # relative tolerance for expect: machine
    public: bool | None = None  # does the learner's check say right/wrong? (default: see below)
    choices: tuple[str, ...] = ()
    call: str = ""  # for a function: expression using ``args`` (one probe's argument list)
    probes: str = ""  # Python expression using ``rng`` (random.Random) -> list of argument lists
    hint: str = ""

    @property
    def is_function(self) -> bool:
        return bool(self.call)

    def shows_right_or_wrong(self, kind: str) -> bool:
        """Public value checks are off for choices and booleans (a learner could try them all)."""
        if self.public is not None:
            return self.public and self.expect == "solution"
        return self.expect == "solution" and not self.choices and kind not in ("bool",)

    def sig_for(self, expected) -> int | str:
        """Figures to compare ``expected`` (one value of this answer) at."""
        if self.sig is not None:
            return self.sig
        return EXACT if isinstance(expected, int) or not isinstance(expected, float) else 4


@dataclass(frozen=True)
class Wrong:
    """A known wrong answer and the hint it deserves."""

    answer: str  # an answer name, or ``name[key]`` for one entry of a dict answer
    value: str  # expression evaluated in the solution's namespace
    hint: str


@dataclass(frozen=True)
class Check:
    """A relation between answers that must hold (evaluated on the plain values, with ``math``)."""

    expr: str
    hint: str
    public: bool = True


@dataclass(frozen=True)
class Question:
    name: str
    points: float
    answers: tuple[Answer, ...]
    hint: str = ""
    wrong: tuple[Wrong, ...] = ()
    checks: tuple[Check, ...] = ()
    partial: bool = False


@dataclass
class StudentCell:
    """A cell of the learner's notebook, before the check cells are added."""

    cell: nbformat.NotebookNode
    question: str | None = None
    answer: bool = False


@dataclass
class Assignment:
    name: str
    path: Path
    questions: list[Question] = field(default_factory=list)
    cells: list[StudentCell] = field(default_factory=list)
    run_cells: list[dict] = field(default_factory=list)  # the solution's code, for the runner

    def question(self, name: str) -> Question:
        for q in self.questions:
            if q.name == name:
                return q
        raise KeyError(name)


_NAME = re.compile(r"^[A-Za-z_]\w*$")


def _answer(name: str, body, where: str) -> Answer:
    if not _NAME.match(name):
        raise FormatError(f"{where}: answer name {name!r} is not an identifier")
    body = dict(body or {})
    unknown = set(body) - {
        "expr",
        "sig",
        "type",
        "expect",
        "rel",
        "public",
        "choices",
        "call",
        "probes",
        "hint",
    }
    if unknown:
        raise FormatError(f"{where}: answer {name}: unknown keys {sorted(unknown)}")
    kind = body.get("type")
    if kind is not None and kind not in KINDS:
        raise FormatError(f"{where}: answer {name}: type must be one of {KINDS}")
    expect = body.get("expect", "solution")
    if expect not in EXPECTS:
        raise FormatError(f"{where}: answer {name}: expect must be one of {EXPECTS}")
    sig = body.get("sig")
    if sig is not None and sig != EXACT and not (isinstance(sig, int) and 1 <= sig <= 15):
        raise FormatError(f"{where}: answer {name}: sig must be 1-15 or 'exact', got {sig!r}")
    if bool(body.get("call")) != bool(body.get("probes")):
        raise FormatError(f"{where}: answer {name}: a function answer needs both call and probes")
    return Answer(
        name=name,
        expr=str(body.get("expr", name)),
        sig=sig,
        kind=kind,
        expect=expect,
        rel=float(body.get("rel", 0.01)),
        public=body.get("public"),
        choices=tuple(str(c) for c in body.get("choices", ())),
        call=str(body.get("call", "")),
        probes=str(body.get("probes", "")),
        hint=str(body.get("hint", "")),
    )


def _question(text: str, where: str) -> Question:
    try:
        body = yaml.safe_load(text.split("\n", 1)[1] if "\n" in text else "") or {}
    except yaml.YAMLError as e:
        raise FormatError(f"{where}: the question's YAML does not parse: {e}") from e
    if not isinstance(body, dict) or "name" not in body:
        raise FormatError(f"{where}: a question needs a name")
    name = str(body["name"])
    where = f"{where} ({name})"
    unknown = set(body) - {"name", "points", "answers", "hint", "wrong", "checks", "partial"}
    if unknown:
        raise FormatError(f"{where}: unknown keys {sorted(unknown)}")
    points = body.get("points", 1)
    points = float(sum(points) if isinstance(points, list) else points)
    if points <= 0:
        raise FormatError(f"{where}: points must be positive")
    answers = body.get("answers") or {}
    if not isinstance(answers, dict) or not answers:
        raise FormatError(f"{where}: a question needs answers (a mapping of names)")
    wrong = tuple(
        Wrong(answer=str(w["answer"]), value=str(w["value"]), hint=str(w["hint"]))
        for w in body.get("wrong") or ()
    )
    checks = tuple(
        Check(expr=str(c["expr"]), hint=str(c.get("hint", "")), public=c.get("public", True))
        for c in body.get("checks") or ()
    )
    qs = Question(
        name=name,
        points=points,
        answers=tuple(_answer(k, v, where) for k, v in answers.items()),
        hint=str(body.get("hint", "")),
        wrong=wrong,
        checks=checks,
        partial=bool(body.get("partial", False)),
    )
    names = {a.name for a in qs.answers}
    for w in qs.wrong:
        if w.answer.split("[")[0] not in names:
            raise FormatError(f"{where}: wrong answer for unknown answer {w.answer!r}")
    return qs


def _bracket_depth(line: str) -> int:
    """Brackets a line opens minus those it closes (strings and the comment left out)."""
    code = re.sub(r"('[^']*'|\"[^\"]*\")", "", line.split("#", 1)[0])
    return sum(code.count(c) for c in "([{") - sum(code.count(c) for c in ")]}")


def _blank(line: str) -> str:
    """``name = ...`` for a ``# SOLUTION`` line; ``a, b = ..., ...`` for a tuple target, so the
    learner's blank notebook runs."""
    indent = line[: len(line) - len(line.lstrip())]
    m = re.match(r"\s*([\w.\[\]'\", ]+?)\s*(?::[^=]+)?=(?!=)", line)
    if not m:
        return f"{indent}..."
    target = m.group(1).strip().rstrip(",")
    names = [n for n in target.split(",") if n.strip()] if "[" not in target else [target]
    return f"{indent}{target} = {', '.join(['...'] * len(names))}"


def _strip_solution(source: str) -> str:
    """The learner's version of a solution code cell. A ``# SOLUTION`` statement that spans lines
    (marked on its first line, or on its last where the formatter leaves a trailing comment)
    becomes one blank; its other lines disappear."""
    out: list[str] = []
    skipping = prompt = False
    depth = 0  # brackets left open by the last ``# SOLUTION`` line
    for line in source.splitlines():
        stripped = line.strip()
        if depth > 0:  # a continuation of a blanked statement
            depth = max(0, depth + _bracket_depth(line))
            continue
        if skipping:
            if stripped == "# END SOLUTION":
                skipping = False
            continue
        if prompt:
            if stripped.startswith('"""') and stripped.endswith("# END PROMPT"):
                prompt = False
            else:
                out.append(line)
            continue
        if stripped.startswith("# BEGIN SOLUTION"):
            skipping = True
            if stripped == "# BEGIN SOLUTION":
                out.append(line[: len(line) - len(line.lstrip())] + "...")
            continue
        if stripped.startswith('"""') and stripped.endswith("# BEGIN PROMPT"):
            prompt = True
            continue
        if stripped.endswith("# SOLUTION"):
            opened = _bracket_depth(line)
            while (
                opened < 0 and out
            ):  # the last line of a statement the formatter split: blank it all
                line = out.pop()
                opened += _bracket_depth(line)
            out.append(_blank(line))
            depth = max(0, opened)
            continue
        out.append(line)
    if skipping or prompt:
        raise FormatError("a BEGIN SOLUTION / BEGIN PROMPT inside a cell is never closed")
    # a removed block leaves the blank lines around it: at most two in a row, as the formatter keeps
    return re.sub(r"\n{4,}", "\n\n\n", "\n".join(out)).strip("\n")


def read(path: str | Path) -> Assignment:
    """Parse a solution notebook; raises FormatError naming the cell that breaks the format."""
    path = Path(path)
    nb = nbformat.read(path, as_version=4)
    assignment = Assignment(name=path.stem, path=path)
    question: Question | None = None
    in_solution = False
    answered: set[str] = set()
    for i, cell in enumerate(nb.cells):
        where = f"{path.name} cell {i}"
        text = cell.source.strip()
        if cell.cell_type == "raw":
            first = text.splitlines()[0].strip() if text else ""
            if first == "# ASSIGNMENT CONFIG":
                config = yaml.safe_load(text.split("\n", 1)[1]) if "\n" in text else {}
                if (config or {}).get("name", path.stem) != path.stem:
                    raise FormatError(f"{where}: name must match the file name {path.stem}")
            elif first == "# BEGIN QUESTION":
                if question is not None:
                    raise FormatError(f"{where}: BEGIN QUESTION inside {question.name}")
                question = _question(text, where)
                if any(q.name == question.name for q in assignment.questions):
                    raise FormatError(f"{where}: two questions named {question.name}")
                assignment.questions.append(question)
            elif first == "# END QUESTION":
                if question is None or in_solution:
                    raise FormatError(f"{where}: END QUESTION without an open question")
                if question.name not in answered:
                    raise FormatError(f"{where}: {question.name} has no solution block")
                question = None
            elif first == "# BEGIN SOLUTION":
                if question is None:
                    raise FormatError(f"{where}: a solution block outside a question")
                in_solution = True
                answered.add(question.name)
            elif first == "# END SOLUTION":
                in_solution = False
            elif first in ("# BEGIN TESTS", "# END TESTS"):
                raise FormatError(
                    f"{where}: otter test blocks are not used any more: declare the answers, "
                    "checks and hints in the question's YAML (CONTRIBUTING.md)"
                )
            else:
                raise FormatError(f"{where}: a raw cell that is not a marker: {first[:60]!r}")
            continue
        qname = question.name if question else None
        if cell.cell_type == "code":
            assignment.run_cells.append(
                {"source": cell.source, "question": qname, "answer": in_solution}
            )
        if in_solution:
            if cell.cell_type == "code":
                student = nbformat.v4.new_code_cell(_strip_solution(cell.source))
                assignment.cells.append(StudentCell(student, qname, answer=True))
            continue  # Markdown in a solution block explains the answer: learners never see it
        copy = nbformat.from_dict(dict(cell))
        assignment.cells.append(StudentCell(copy, qname))
    if question is not None or in_solution:
        raise FormatError(f"{path.name}: the notebook ends inside a question or solution block")
    if not assignment.questions:
        raise FormatError(f"{path.name}: no questions")
    return assignment


def imported_modules(cells: list[dict]) -> list[str]:
    """Modules the code cells import (``import a.b`` and ``from a.b import c``), in order."""
    import ast

    found: list[str] = []
    for cell in cells:
        try:
            tree = ast.parse(cell["source"])
        except SyntaxError:  # IPython magics and the like
            continue
        for node in ast.walk(tree):
            if isinstance(node, ast.Import):
                found += [alias.name for alias in node.names]
            elif isinstance(node, ast.ImportFrom) and node.module and not node.level:
                found.append(node.module)
                found += [f"{node.module}.{alias.name}" for alias in node.names]
    return list(dict.fromkeys(found))
