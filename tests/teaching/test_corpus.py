"""The wrong-solution corpus (``teaching.corpus``, ``instructors/teaching/mistakes/``): every known
mistake the hints describe scores below full marks, and the learner's check of each release mode
rejects it or prints the hint that names it, except the gaps the corpus declares.

Every entry is graded through the grader's pure scoring path (``check.check_question`` on the
executed answers, as a sandboxed run ends); one submission per set of two sets, each making several
of the mistakes, goes through the whole sandboxed grader.
"""

from __future__ import annotations

import csv
import json

import nbformat
import pytest
from teaching import corpus
from teaching.grading import authoring, check, gradebook, spec

from course.selfcheck import values
from course.selfcheck.answers import Grader

pytestmark = pytest.mark.sandbox  # runs solutions in the grading sandbox (tests/conftest.py)

SANDBOXED = {  # set: (question, answer) of the entries its one submission makes
    "00_units_and_memory": [("q1", "weights_gb"), ("q2", "bytes_per_param"), ("q7", "total_gib")],
    "03_data_types": [("q1", "fp16_eps"), ("q5", "quantise_int8"), ("q6", "int4_bytes")],
}


@pytest.fixture(scope="module")
def keys():
    names = corpus.sets()
    keys, errors = authoring.answer_keys([authoring.SOLUTIONS_DIR / f"{n}.ipynb" for n in names])
    assert not errors, errors
    return keys


@pytest.fixture(scope="module")
def results(keys):
    return [r for name in corpus.sets() for r in corpus.grade_set(name, keys[name])]


def test_every_set_with_known_wrong_answers_has_a_corpus_naming_each_of_its_hints():
    for solution in authoring.solution_notebooks():
        assignment = spec.read(solution)
        wrong = [(q.name, w) for q in assignment.questions for w in q.wrong]
        if not wrong:
            continue
        assert assignment.name in corpus.sets(), f"{assignment.name}: no corpus"
        entries = corpus.load(assignment.name)
        for question, w in wrong:
            assert any(
                m.question == question and m.answer == w.answer.split("[")[0] and m.hint in w.hint
                for m in entries
                if m.hint
            ), f"{assignment.name} {question} {w.answer}: no corpus entry for {w.hint!r}"


def test_no_known_wrong_answer_of_a_solution_equals_its_right_answer(keys):
    """A hint for a wrong value the grader takes as right can never be shown: dead."""
    dead = []
    for name, key in keys.items():
        for q in spec.read(authoring.SOLUTIONS_DIR / f"{name}.ipynb").questions:
            for i, w in enumerate(q.wrong):
                a = next(a for a in q.answers if a.name == w.answer.split("[")[0])
                right = key["answers"][q.name].get(a.name, {}).get("value")
                if check._same(key["extras"].get(f"{q.name}/wrong/{i}"), right, a):
                    dead.append(f"{name} {q.name} {w.answer}: {w.hint}")
    assert not dead, dead


def test_every_mistake_scores_below_full_marks(results):
    assert results
    full = [f"{r.mistake.label}: {r.score}" for r in results if r.score >= r.points]
    assert not full, full


def test_the_public_check_rejects_or_names_every_mistake_except_the_declared_gaps(results):
    """A mistake the check passes silently must be declared (``gap``), with its reason; a declared
    gap that is caught now must lose its declaration."""
    wrong = [
        f"{r.mistake.label} ({mode}): {r.outcomes[mode]}\n{r.reports[mode]}"
        for r in results
        for mode in corpus.MODES
        if (r.outcomes[mode] == "missed") != (mode in r.mistake.gap)
    ]
    assert not wrong, "\n".join(wrong)


def test_self_study_prints_each_hint_its_corpus_entry_names(results):
    """The self-study check hashes the solution's own wrong value: an entry whose transform of the
    right answer does not land on it (or a solution whose wrong value is computed from a name
    rebound later) gets no hint."""
    silent = [
        f"{r.mistake.label}\n{r.reports['self-study']}"
        for r in results
        if r.mistake.hint and r.outcomes["self-study"] != "hint"
    ]
    assert not silent, "\n".join(silent)


def test_a_known_wrong_whole_number_gets_its_hint_as_an_int_or_a_float(tmp_path, monkeypatch):
    """The solution's wrong value is hashed in the form it computed (``4 * message_bytes``, an int,
    exactly); a learner whose value is the same whole number as a float hears the hint too."""
    monkeypatch.delenv("COURSE_GRADING", raising=False)
    salt = "set/q1/sent"
    answer = {"name": "sent", "expr": "sent", "kind": "float", "public": True, "sig": None}
    answer |= {"hint": "", "choices": [], "hash": [values.digest("4.698e+08", salt)]}
    wrong = {"answer": "sent", "hint": "not the message itself"}
    wrong["hash"] = [values.digest(values.canonical(268435456), salt + "/wrong")]
    question = {"points": 1, "hint": "", "answers": [answer], "wrong": [wrong], "checks": []}
    path = tmp_path / "set.json"
    path.write_text(json.dumps({"assignment": "set", "questions": {"q1": question}}))
    grader = Grader("set", path)
    for value in (268435456, 268435456.0, 469762048 * 8 / 14):
        assert "not the message itself" in repr(grader.check("q1", {"sent": value})), value
    assert "not the message itself" not in repr(grader.check("q1", {"sent": 268435457.0}))
    assert bool(grader.check("q1", {"sent": 469762048.0}))


def test_the_guide_shows_the_counts_the_corpus_computes(results):
    text = corpus.GUIDE.read_text(encoding="utf-8")
    assert corpus.GUIDE_BEGIN in text and corpus.GUIDE_END in text, "the guide lacks the markers"
    assert corpus.guide_table(text) == corpus.table(results), "python -m teaching.corpus --guide"


def test_a_lenient_check_lets_a_mistake_through(results, keys, monkeypatch):
    """Mutation: compare numbers to one significant figure instead of the question's precision. The
    corpus notices: mistakes within a few percent of the right answer score full marks."""
    lenient = values.matches

    def one_figure(got, expected, sig=values.EXACT):
        return lenient(got, expected, 1 if values.is_number(expected) else sig)

    monkeypatch.setattr(check, "matches", one_figure)
    through = []
    for r in results:
        m = r.mistake
        if m.code:
            continue
        assignment = spec.read(authoring.SOLUTIONS_DIR / f"{m.set}.ipynb")
        key = keys[m.set]
        got = corpus.answers_with(m, assignment, key)
        q = assignment.question(m.question)
        result = check.check_question(q, got, key["answers"][q.name], key["extras"])
        if result.score >= result.points:
            through.append(m.label)
    assert through, "a one-figure comparison should let some mistake of the corpus through"


@pytest.fixture(scope="module")
def sandboxed(tmp_path_factory):
    """One submission per set in SANDBOXED, graded by the sandboxed grader in one run."""
    root = tmp_path_factory.mktemp("corpus")
    subs = root / "submissions"
    subs.mkdir()
    made = {}
    for name, picks in SANDBOXED.items():
        entries = corpus.load(name)
        mistakes = [next(m for m in entries if (m.question, m.answer) == p) for p in picks]
        nbformat.write(corpus.submission(name, mistakes), subs / f"{name}-corpus.ipynb")
        made[name] = mistakes
    out = root / "out" / "grades.csv"
    out.parent.mkdir()
    status = gradebook.grade_folder(
        gradebook.GradingRun(
            subs, out, timeout_seconds=240, cell_timeout_seconds=120, jobs=2, history=False
        )
    )
    rows = {}
    for path in out.parent.glob("*.csv"):
        with path.open(newline="") as f:
            rows |= {row["assignment"]: row for row in csv.DictReader(f)}
    return status, rows, made


def test_the_sandboxed_grader_scores_the_mistakes_as_the_pure_path_does(sandboxed, results):
    status, rows, made = sandboxed
    assert status == 0
    pure = {(r.mistake.set, r.mistake.question, r.mistake.answer): r for r in results}
    for name, mistakes in made.items():
        row = rows[name]
        assert row["status"] == "ok", row
        assert float(row["total"]) < float(row["possible"]), row
        for m in mistakes:
            [column] = [k for k in row if k.startswith(f"{m.question} [")]
            assert float(row[column]) == pure[(name, m.question, m.answer)].score, (m.label, row)
            assert m.hint in row["reason"], (m.label, row["reason"])
