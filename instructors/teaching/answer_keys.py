"""Instructors' answer keys, generated from ``solutions/`` (never copied by hand).

``python -m teaching answer-keys OUTDIR`` (``make answer-keys``) writes one Markdown page per
exercise set, ``OUTDIR/NN_slug.md``, the lessons' quiz key ``OUTDIR/quiz-key.md``
(:mod:`teaching.quiz_key`) and an ``index.md`` listing them. A page is the solution notebook in
reading order (the questions, the solution code, the explanations that learners never see) with,
under each question, a table of what is graded: every answer, the value the solution computes (from
:func:`teaching.grading.authoring.answer_key`, the same key ``make assign`` and ``make grade`` use,
so the page cannot disagree with the grader), how it is compared, and the known wrong answers and
checks with their hints. The keys are for instructors only: the website leaves them out unless asked
(``python -m teaching site OUTDIR --answer-keys``), and the student release never contains them.
"""

from __future__ import annotations

import json
import re
import sys
from pathlib import Path

import nbformat

from teaching.grading import spec
from teaching.grading.authoring import SOLUTIONS_DIR, answer_key, solution_notebooks

NOTICE = (
    "```{warning}\nInstructors only. Generated from `solutions/{name}.ipynb` by "
    "`python -m teaching answer-keys`: edit the solution, not this page. Do not publish it where "
    "a graded class can read it.\n```"
)
MAX_VALUE_CHARS = 300


def _demote(markdown: str) -> str:
    """Headings one level down (the page's own title is the only level-1 heading)."""
    out, fenced = [], False
    for line in markdown.splitlines():
        if line.lstrip().startswith("```"):
            fenced = not fenced
        out.append("#" + line if not fenced and re.match(r"#{1,5} ", line) else line)
    return "\n".join(out)


def _title(nb: nbformat.NotebookNode, name: str) -> str:
    for cell in nb.cells:
        if cell.cell_type == "markdown":
            for line in cell.source.splitlines():
                if line.startswith("# "):
                    return line[2:].strip()
    return name


def _shown(value: object) -> str:
    text = json.dumps(value, ensure_ascii=False) if not isinstance(value, str) else repr(value)
    text = text if len(text) <= MAX_VALUE_CHARS else text[:MAX_VALUE_CHARS] + " ..."
    return "`" + text.replace("`", "'").replace("|", "\\|") + "`"


def _compared(answer: spec.Answer, value: object) -> str:
    if answer.is_function:
        return f"a function: `{answer.call}` on probes drawn at grading time"
    if answer.expect == "none":
        return "measured: judged by the checks only"
    if answer.choices:
        return "one of " + ", ".join(f"`{c}`" for c in answer.choices)
    how = "re-run on the grading machine" if answer.expect == "machine" else "the solution's value"
    sig = answer.sig_for(value)
    figures = "exactly" if sig == spec.EXACT else f"to {sig} significant figures"
    return f"{how}, {figures}" + (f" (±{answer.rel:.0%})" if answer.expect == "machine" else "")


def _cell(text: str) -> str:
    return " ".join(text.split()).replace("|", "\\|")


def question_table(question: spec.Question, values: dict | None) -> str:
    """Markdown: what question ``question`` grades, with the key's values when ``values`` given."""
    rows = [
        f"**Graded: {question.name}, {question.points:g} points**"
        + (" (partial credit per answer)" if question.partial else ""),
        "",
        "| answer | key | compared | hint |",
        "|---|---|---|---|",
    ]
    for a in question.answers:
        entry = (values or {}).get(a.name, {})
        value = entry.get("value") if isinstance(entry, dict) else None
        key = "(run with values)" if values is None else _shown(value)
        if a.is_function:
            key = "(a function)"
        rows.append(f"| `{a.name}` | {key} | {_cell(_compared(a, value))} | {_cell(a.hint)} |")
    if question.hint:
        rows += ["", f"Question hint: {question.hint}"]
    if question.wrong:
        rows += ["", "Known wrong answers (the learner sees the hint):", ""]
        rows += [f"- `{w.answer}` = `{w.value}`: {w.hint}" for w in question.wrong]
    if question.checks:
        rows += ["", "Checks on the answers:", ""]
        rows += [f"- `{c.expr}`: {c.hint}" for c in question.checks]
    return "\n".join(rows)


def answer_key_page(solution: str | Path, values: dict | None = None) -> str:
    """The answer-key page of one solution notebook, as MyST Markdown.

    ``values``: the key's answers by question (``answer_key(solution)["answers"]``), or None to
    leave values out (the structure alone, without running the solution).
    """
    path = Path(solution)
    assignment = spec.read(path)  # validates the format first
    nb = nbformat.read(path, as_version=4)
    parts = [f"# Answer key: {_title(nb, path.stem)}", "", NOTICE.replace("{name}", path.stem)]
    total = sum(q.points for q in assignment.questions)
    parts += ["", f"{len(assignment.questions)} questions, {total:g} points."]
    in_solution, asked = False, iter(assignment.questions)
    for cell in nb.cells:
        text = cell.source.strip()
        if cell.cell_type == "raw":
            first = text.splitlines()[0].strip() if text else ""
            if first == "# BEGIN QUESTION":
                current = next(asked)  # spec.read keeps the notebook's order
            elif first == "# END QUESTION":
                given = None if values is None else values.get(current.name, {})
                parts += ["", question_table(current, given)]
            elif first == "# BEGIN SOLUTION":
                in_solution = True
            elif first == "# END SOLUTION":
                in_solution = False
            continue
        if not text:
            continue
        if cell.cell_type == "code":
            label = "**Solution:**\n\n" if in_solution else ""
            parts += ["", f"{label}```python\n{cell.source.rstrip()}\n```"]
        elif in_solution:
            parts += ["", "```{admonition} Solution notes\n" + _demote(text) + "\n```"]
        elif not text.startswith("# "):
            parts += ["", _demote(text)]
    return "\n".join(parts) + "\n"


def write_answer_keys(
    outdir: str | Path, *, values: bool = True, solutions_dir: str | Path = SOLUTIONS_DIR
) -> list[Path]:
    """Write one page per solution notebook and an index into ``outdir``; return the pages.

    With ``values`` each solution's key is computed (run, or read from ``build/grading`` when
    still current), as ``make assign`` does.
    """
    out = Path(outdir)
    out.mkdir(parents=True, exist_ok=True)
    pages = []
    for solution in solution_notebooks(solutions_dir):
        key = answer_key(solution)["answers"] if values else None
        page = out / f"{solution.stem}.md"
        page.write_text(answer_key_page(solution, key), encoding="utf-8")
        pages.append(page)
    from teaching.quiz_key import write_quiz_key  # the lessons' quizzes, with answers

    write_quiz_key(out)
    index = [
        "# Answer keys",
        "",
        "One page per exercise set, generated from `solutions/` by `python -m teaching "
        "answer-keys`. "
        "Instructors only: never publish these where a graded class can read them.",
        "",
        "```{toctree}",
        ":maxdepth: 1",
        "",
        *[p.stem for p in pages],
        "quiz-key",
        "```",
        "",
    ]
    (out / "index.md").write_text("\n".join(index), encoding="utf-8")
    return pages


def run_answer_keys(outdir: str, values: bool = True) -> int:
    """``python -m teaching answer-keys OUTDIR``: write the pages, print where; 0 or 1."""
    try:
        pages = write_answer_keys(outdir, values=values)
    except (spec.FormatError, RuntimeError) as exc:
        print(exc, file=sys.stderr)
        return 1
    print(f"{len(pages)} answer keys written to {Path(outdir).resolve()}")
    return 0
