"""Instructor mistakes, said before anyone is graded: the key against what learners received.

A key is made from ``solutions/`` as it is on disk; learners checked their answers against the
released checks (``exercises/checks/NN_slug.json``, built by ``python -m teaching assign`` and
released from the last commit). Three mistakes fail honest learners without a word otherwise:

- a solution with uncommitted changes (:func:`uncommitted`): the release was built without them;
- a key value the released check rejects (:func:`key_vs_release`): an edit to a solution after the
  release (committed or not), so a learner whose check said "right" is graded against another value;
- a question or answer renamed since the release (:func:`key_vs_release`, and
  :func:`missing_names` per submission): a notebook made from the earlier version never defines the
  new name and loses the question.

- a solution edited, assigned and committed after the release (:func:`key_vs_recorded`): the
  checks at the last commit then agree with the key, so only the release's own record tells: each
  release writes, beside the build-time keys, a digest per question of the key it was built from
  (:func:`record_release`, ``build/grading/released.json``, never shipped: a digest of one answer
  could be searched), and ``grade`` compares the key it grades with against it.

These are loud warnings, not refusals (a deliberate fix of a wrong released check must stay
gradable): each is printed on the console, marked ``!!! WARNING``, before anyone is graded; every
row that lost points on an affected question says so in its reason (``KEY DIFFERS FROM THE
RELEASE:`` or ``OLDER VERSION OF THE SET?``, so in the CSV and every export's feedback), and the
end of the run counts those rows.
"""

from __future__ import annotations

import datetime
import hashlib
import json
import re
import subprocess
from pathlib import Path

from course.selfcheck.answers import Grader
from course.selfcheck.values import canonical
from teaching.grading import spec

_NAME = re.compile(r"[A-Za-z_]\w*")
RELEASE_RECORD = "released.json"  # in the build folder, beside the keys


def question_digests(assignment: spec.Assignment, key: dict) -> dict[str, str]:
    """Per question, a digest of what the key holds right: each answer the solution fixes
    (``expect: solution``) at the figures it is compared to, and each function answer's call
    (its outputs depend on the run's probes, which a grading run draws afresh). Measured
    answers (``expect: machine``) are left out: they differ from run to run."""
    digests = {}
    for q in assignment.questions:
        parts = []
        for a in q.answers:
            if a.is_function:
                parts.append([a.name, "call", a.call, str(a.sig)])
                continue
            if a.expect != "solution":
                continue
            got = (key["answers"].get(q.name) or {}).get(a.name) or {}
            if "value" not in got:
                parts.append([a.name, "no value", str(got.get("error", ""))[:200]])
                continue
            try:
                parts.append([a.name, canonical(got["value"], a.sig_for(got["value"]))])
            except TypeError:
                parts.append([a.name, json.dumps(got["value"], sort_keys=True, default=str)])
        text = json.dumps(parts, sort_keys=True)
        digests[q.name] = hashlib.sha256(text.encode()).hexdigest()[:20]
    return digests


def record_release(
    keys: dict, assignments: list[spec.Assignment], build_dir: Path, *, commit: str, mode: str
) -> Path:
    """Write each released set's :func:`question_digests` into ``build_dir/released.json``
    (sets released earlier and not now keep their entries). Returns the file."""
    path = Path(build_dir) / RELEASE_RECORD
    try:
        record = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        record = {}
    stamp = datetime.datetime.now(datetime.UTC).strftime("%Y-%m-%d %H:%M UTC")
    for a in assignments:
        record[a.name] = {
            "commit": commit,
            "released": stamp,
            "mode": mode,
            "questions": question_digests(a, keys[a.name]),
        }
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(path.name + ".tmp")
    tmp.write_text(json.dumps(record, indent=1, sort_keys=True) + "\n", encoding="utf-8")
    tmp.replace(path)
    return path


def key_vs_recorded(
    assignment: spec.Assignment, key: dict, build_dir: Path
) -> tuple[dict[str, str], str]:
    """Per question, how the key differs from the one the last release was built from (by
    :func:`question_digests`), and which release that was; ``({}, why)`` without a record."""
    path = Path(build_dir) / RELEASE_RECORD
    try:
        entry = json.loads(path.read_text(encoding="utf-8")).get(assignment.name)
    except (OSError, ValueError, AttributeError):
        entry = None
    if not isinstance(entry, dict) or not isinstance(entry.get("questions"), dict):
        return {}, f"no release of {assignment.name} recorded in {path}"
    commit = str(entry.get("commit", "?"))[:12]
    where = f"the {entry.get('mode', '')} release of {entry.get('released', '?')} (commit {commit})"
    recorded = entry["questions"]
    problems = {}
    for q, now in question_digests(assignment, key).items():
        if q not in recorded:
            problems[q] = f"not in {where} (added since)"
        elif recorded[q] != now:
            problems[q] = (
                f"the key differs from the one {where} was built from: the solution changed "
                "after the release (edited, assigned and committed), so learners whose check "
                "passed are graded against another value"
            )
    return problems, where


def released_checks(name: str, exercises_dir: Path, repo: Path) -> tuple[dict | None, str]:
    """The checks learners received for set ``name`` and where they came from: the last commit's
    ``exercises/checks`` (what a release is built from) in a git checkout, else the file on
    disk; (None, why) when there is none."""
    path = Path(exercises_dir) / "checks" / f"{name}.json"
    try:
        rel = path.resolve().relative_to(Path(repo).resolve())
        shown = subprocess.run(
            ["git", "-C", str(repo), "show", f"HEAD:{rel.as_posix()}"],
            capture_output=True,
            text=True,
            timeout=30,
        )
        if shown.returncode == 0:
            return json.loads(shown.stdout), f"{rel.as_posix()} at the last commit"
    except (ValueError, OSError, subprocess.SubprocessError, json.JSONDecodeError):
        pass
    try:
        return json.loads(path.read_text(encoding="utf-8")), str(path)
    except (OSError, ValueError):
        return None, f"no released checks for {name} ({path})"


def uncommitted(solution: Path, repo: Path) -> bool:
    """Has this solution notebook changes the last commit (and so the release) does not have?"""
    try:
        out = subprocess.run(
            ["git", "-C", str(repo), "status", "--porcelain", "--", str(solution)],
            capture_output=True,
            text=True,
            timeout=30,
        )
    except (OSError, subprocess.SubprocessError):
        return False
    return out.returncode == 0 and bool(out.stdout.strip())


def key_vs_release(assignment: spec.Assignment, key: dict, released: dict) -> dict[str, str]:
    """Per question, how the key disagrees with the released checks ({} when it agrees): a
    question or answer the release names differently, or a key value its released check rejects
    (checked with the learner's own check: ``Grader.value_problem``)."""
    grader = Grader.from_checks({**released, "assignment": assignment.name})
    shipped = released.get("questions", {})
    problems: dict[str, str] = {}
    for q in assignment.questions:
        if q.name not in shipped:
            problems[q.name] = "not in the released checks (added or renamed since the release)"
            continue
        shipped_names = [a["name"] for a in shipped[q.name].get("answers", [])]
        renamed = sorted(set(shipped_names) - {a.name for a in q.answers})
        added = [a.name for a in q.answers if a.name not in shipped_names]
        if renamed or added:
            problems[q.name] = (
                f"the release asks for {', '.join(shipped_names)}; the solution for "
                f"{', '.join(a.name for a in q.answers)} (renamed since the release?)"
            )
            continue
        wrong = []
        for a in q.answers:
            value = (key["answers"].get(q.name) or {}).get(a.name, {}).get("value")
            if a.is_function or a.expect != "solution" or value is None:
                continue
            try:
                problem = grader.value_problem(q.name, a.name, value)
            except Exception as e:  # noqa: BLE001 - a malformed released check is a finding too
                problem = f"cannot be checked ({type(e).__name__}: {e})"
            if problem:
                wrong.append(f"{a.name} ({problem})")
        if wrong:
            problems[q.name] = (
                "the key fails the released check for " + ", ".join(wrong) + ": the solution "
                "changed since the release, so learners whose check passed are graded against "
                "another value"
            )
    for name in sorted(set(shipped) - {q.name for q in assignment.questions}):
        problems[name] = "in the released checks but not in the solution (renamed or removed?)"
    return problems


def missing_names(assignment: spec.Assignment, nb) -> dict[str, list[str]]:
    """Per question, the answers whose names the submission's code never mentions (a notebook
    made from an earlier version of the set, or an answer cell deleted)."""
    words = set()
    for cell in nb.cells:
        if cell.cell_type == "code" and isinstance(cell.source, str):
            words.update(_NAME.findall(cell.source))
    missing: dict[str, list[str]] = {}
    for q in assignment.questions:
        for a in q.answers:
            root = _NAME.match(a.expr.strip())
            if root and root.group() not in words:
                missing.setdefault(q.name, []).append(root.group())
    return missing
