"""What a learner reads names the readings by title: never a file they lack ("seed 004",
FACTS.md)."""

import ast
import json
import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
FORBIDDEN = re.compile(r"\bseeds? \d{3}\b|\b\d{3}_[0-9a-f]{16}\.txt\b|FACTS\.md|shared/seeds", re.I)
NOTEBOOKS = sorted(p for d in ("notebooks", "exercises") for p in (ROOT / d).glob("*.ipynb"))
QUIZZES = sorted((ROOT / "course" / "presentation" / "quizzes").glob("lesson_*.py"))
MARKDOWN_FILES = [ROOT / "README.md", ROOT / "notebooks" / "glossary.md"]
#: A dollar amount: "$" then a digit, not escaped, not LaTeX such as "$2^{-M}$". Two of them in one
#: Markdown cell are typeset as math by JupyterLab, the site and the slides ("$5 and
#: $6" -> italics).
CURRENCY = re.compile(r"(?<![\\$])\$(?=\d[\d,]*(?:\.\d+)?(?![\d^_{\\]))")


def unescaped_currency(markdown: str) -> list[str]:
    """Dollar amounts written as ``$12`` rather than ``\\$12`` outside code spans and fences."""
    prose = re.sub(r"```.*?```|`[^`\n]*`", "", markdown, flags=re.S)
    return [prose[max(0, m.start() - 30) : m.start() + 12] for m in CURRENCY.finditer(prose)]


def markdown_outputs_of(path: Path) -> str:
    cells = json.loads(path.read_text())["cells"]
    return "\n".join(
        "".join(o.get("data", {}).get("text/markdown", ""))
        for c in cells
        for o in c.get("outputs", [])
    )


def markdown_of(path: Path) -> str:
    cells = json.loads(path.read_text())["cells"]
    return "\n".join("".join(c["source"]) for c in cells if c["cell_type"] == "markdown")


def strings_of(path: Path) -> str:
    tree = ast.parse(path.read_text())
    return "\n".join(
        n.value for n in ast.walk(tree) if isinstance(n, ast.Constant) and isinstance(n.value, str)
    )


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: f"{p.parent.name}/{p.name}")
def test_notebook_text_names_no_file_the_learner_lacks(path):
    found = FORBIDDEN.findall(markdown_of(path))
    assert not found, (
        f"{path.name} names {found}: name the reading by its title (README lists them)"
    )


#: Markdown the package ships (the reference run's README): what a learner or a user of the
#: package reads.
PACKAGE_MARKDOWN = sorted((ROOT / "course").rglob("*.md"))


@pytest.mark.parametrize("path", PACKAGE_MARKDOWN, ids=lambda p: p.parent.name)
def test_package_markdown_names_readings_by_title(path):
    found = FORBIDDEN.findall(path.read_text())
    assert not found, f"{path} names {found}: name the reading by its title"


def test_code_and_tests_cite_sources_not_the_corrections_file():
    """FACTS.md is a summary outside the repository: a docstring or test cites the primary source
    it summarised (the datasheet, the paper, the measurement), which a reader can open."""
    found = [
        str(p.relative_to(ROOT))
        for d in ("course", "tests")
        for p in (ROOT / d).rglob("*.py")
        if "FACTS" + ".md" in p.read_text() and p != Path(__file__).resolve()
    ]
    assert not found, f"cite the primary source instead of FACTS.md in: {found}"


@pytest.mark.parametrize("path", QUIZZES, ids=lambda p: p.stem)
def test_quiz_text_names_no_file_the_learner_lacks(path):
    found = FORBIDDEN.findall(strings_of(path))
    assert not found, f"{path.name} names {found}: name the reading by its title"


def test_no_public_name_of_the_package_says_seed():
    """Learners read the package: the readings' rules are named by the reading ("as written"),
    never by a file id. Random seeds (``seed=``, ``manual_seed``) are another word."""
    import importlib
    import pkgutil

    import course

    offenders = []
    for info in pkgutil.walk_packages(course.__path__, "course."):
        if "seed" in info.name.rsplit(".", 1)[-1].lower():
            offenders.append(info.name)
            continue
        if info.name.startswith(("course.measure", "course.distributed", "teaching")):
            continue  # torch-heavy or entry points: checked by name only
        module = importlib.import_module(info.name)
        offenders += [
            f"{info.name}.{n}" for n in getattr(module, "__all__", ()) if "seed" in n.lower()
        ]
    assert not offenders, offenders


def test_no_answer_an_exercise_asks_for_says_seed():
    """The names a learner types in an exercise set are read as the course's words too: a reading's
    figure is ``as_written_...``, never ``seed_...``."""
    from teaching.grading import authoring, spec

    offenders = [
        f"{path.stem} {q.name}: {a.name}"
        for path in sorted(authoring.SOLUTIONS_DIR.glob("[0-9][0-9]_*.ipynb"))
        for q in spec.read(path).questions
        for a in q.answers
        if "seed" in a.name.lower()
    ]
    assert not offenders, offenders


def test_the_currency_pattern_finds_amounts_and_spares_escapes_code_and_latex():
    text = "costs $5,000 and \\$6, `$7` and $2^{-M}$ and $e = 0$, then ~$0.10/kWh"
    hits = unescaped_currency(text)
    assert len(hits) == 2 and "$5,000" in hits[0] and "$0.10/kWh" in hits[1]


@pytest.mark.parametrize(
    "path", NOTEBOOKS + MARKDOWN_FILES, ids=lambda p: f"{p.parent.name}/{p.name}"
)
def test_learner_markdown_escapes_every_dollar_amount(path):
    text = (
        path.read_text() if path.suffix == ".md" else markdown_of(path) + markdown_outputs_of(path)
    )
    found = unescaped_currency(text)
    assert not found, f"{path.name}: write \\$ for a dollar amount (else it becomes math): {found}"


@pytest.mark.parametrize("path", QUIZZES, ids=lambda p: p.stem)
def test_quiz_html_keeps_mathjax_off_dollar_amounts(path):
    from importlib import import_module

    from course.presentation.quiz import NO_MATH, Quiz

    questions = import_module(f"course.presentation.quizzes.{path.stem}").QUESTIONS
    page = Quiz(*questions)._repr_html_()
    for span in re.split(rf'<span class="{NO_MATH}">.*?</span>', page):
        assert "$" not in span, f"{path.stem}: a dollar amount outside a no-math span: {span[:200]}"
