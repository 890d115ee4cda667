"""``python -m teaching collect HOMES --assignment SET --out SUBMISSIONS``: a hub's submissions.

On a JupyterHub each learner works in their own home (``HOMES/<hub user>``), where the nbgitpuller
link cloned the student release into one folder (``--folder``, the release repository's name: what
``teaching.hosted_links.nbgitpuller_url`` opens). This copies each learner's
``<folder>/exercises/<SET>.ipynb`` into ``SUBMISSIONS/<SET>-<hub user>.ipynb``: the file names
``grade --roster ROSTER --pattern default`` reads, with the hub user name as the student id. Then

    python -m teaching grade SUBMISSIONS --assignment SET --roster ROSTER --pattern default

Nothing is dropped silently: the report lists every home without a copy of the set (never pulled,
or deleted), and, with ``--roster``, every student with no home and every home whose user is not
on the roster (not collected: an id that does not match would be graded as nobody's).

Run it where the homes are readable (as root on the hub's machine, or in a hub-shared folder laid
out the same way). A copy is plain bytes: nothing of the learner's is run or parsed here.
"""

from __future__ import annotations

import shutil
from dataclasses import dataclass, field
from pathlib import Path

#: Names that are a folder under /home but never a learner's home.
NOT_HOMES = frozenset({"lost+found"})


@dataclass
class Collected:
    """What :func:`collect` did: who was copied, and every learner it could not copy."""

    copied: dict[str, Path] = field(default_factory=dict)  # hub user -> the copy
    no_submission: dict[str, str] = field(default_factory=dict)  # hub user -> why
    not_on_roster: list[str] = field(default_factory=list)
    no_home: list[str] = field(default_factory=list)  # roster ids without a home

    def lines(self, assignment: str, out: Path) -> list[str]:
        said = [f"[OK] {user}: {path}" for user, path in sorted(self.copied.items())]
        said += [f"[MISSING] {u}: {why}" for u, why in sorted(self.no_submission.items())]
        said += [
            f"[MISSING] {sid}: on the roster, but no home on the hub (never logged in?)"
            for sid in self.no_home
        ]
        said += [
            f"[NOT ON ROSTER] {u}: a home on the hub, but no such student id on the roster: not "
            "collected (add the id to the roster, or check the spelling)"
            for u in self.not_on_roster
        ]
        missing = len(self.no_submission) + len(self.no_home)
        said.append(
            f"{len(self.copied)} submission(s) of {assignment} in {out}; {missing} learner(s) "
            f"without one; {len(self.not_on_roster)} home(s) not on the roster"
        )
        return said


def homes(root: Path, folder: str) -> dict[str, Path]:
    """Hub user -> home, for every folder of ``root`` that holds the release ``folder``; a
    ValueError naming ``root`` if there is none (the wrong folder, or no learner has pulled)."""
    if not root.is_dir():
        raise ValueError(f"collect: {root} is not a folder (give the hub's homes, e.g. /home)")
    try:
        entries = sorted(p for p in root.iterdir() if p.is_dir() and p.name not in NOT_HOMES)
    except PermissionError:
        raise ValueError(f"collect: cannot list {root}: run it as a user who can") from None
    found = {}
    for home in entries:
        try:
            if (home / folder).is_dir():
                found[home.name] = home
        except PermissionError:
            raise ValueError(
                f"collect: cannot read {home}: learners' homes are private, so run collect as "
                "root on the hub's machine (sudo)"
            ) from None
    if not found:
        raise ValueError(
            f"collect: no learner's home in {root}: none of its {len(entries)} folder(s) holds "
            f"{folder}/, the folder the nbgitpuller link clones (give the hub's homes, e.g. /home, "
            "and --folder, the release repository's name)"
        )
    return found


def collect(
    root: str | Path,
    assignment: str,
    out: str | Path,
    folder: str,
    roster_ids: list[str] | None = None,
) -> Collected:
    """Copy each learner's ``<folder>/exercises/<assignment>.ipynb`` from the homes under
    ``root`` into ``out`` as ``<assignment>-<hub user>.ipynb``; with ``roster_ids``, only the
    learners on the roster (compared as ``grade --roster`` compares ids: case and spaces aside)."""
    from teaching.grading.roster import key

    root, out = Path(root), Path(out)
    if not assignment or "/" in assignment or assignment.endswith(".ipynb"):
        raise ValueError(
            f"collect: --assignment is a set's name, e.g. 04_model_memory: {assignment!r}"
        )
    found = homes(root, folder)
    result = Collected()
    wanted = None if roster_ids is None else {key(s): s for s in roster_ids}
    if wanted is not None:
        by_key = {key(u): u for u in found}
        result.not_on_roster = sorted(u for k, u in by_key.items() if k not in wanted)
        result.no_home = sorted(s for k, s in wanted.items() if k not in by_key)
    out.mkdir(parents=True, exist_ok=True)
    for user, home in found.items():
        if user in result.not_on_roster:
            continue
        source = home / folder / "exercises" / f"{assignment}.ipynb"
        if not source.is_file():
            result.no_submission[user] = f"no {source}"
            continue
        target = out / f"{assignment}-{user}.ipynb"
        shutil.copyfile(source, target)
        result.copied[user] = target
    return result


def run_collect(
    root: str, assignment: str, out: str, folder: str, roster: str | None = None
) -> int:
    """The command: 0 when at least one submission was collected, 2 on bad input."""
    from teaching.grading.roster import read_roster

    try:
        ids = None
        if roster:
            ids = [s.student_id for s in read_roster(roster).students.values()]
        result = collect(root, assignment, out, folder=folder, roster_ids=ids)
    except ValueError as e:
        print(e)
        return 2
    for line in result.lines(assignment, Path(out)):
        print(line)
    return 0 if result.copied else 1
