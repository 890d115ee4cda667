"""Tests mirror modules: ``course/<layer>/<sub>/<module>.py`` is tested in
``tests/<layer>/test_<sub>_<module>.py``; ``instructors/teaching/<sub>/<module>.py`` in
``tests/teaching/test_<sub>_<module>.py``.

A package's ``__init__.py`` is tested as the package (``course/<layer>/<pkg>/__init__.py`` ->
``tests/<layer>/test_<pkg>.py``), a ``__main__.py`` as ``test_main.py``; an ``__init__`` that
only re-exports (no function or class of its own) needs no test file; a private module drops its
underscore (``findings/_common.py`` -> ``test_findings_common.py``). Every other module without
its test file is listed in :data:`ALLOWED` with the file its tests live in (checked: the file
exists and names the module or something it defines) or, with ``None``, the reason it has none.
The list only shrinks: an entry whose module has its own test file now, or that is gone, fails.
"""

from __future__ import annotations

import ast
import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]

_DEMOS = "tests/distributed/test_distributed_demos.py"
_SCALE = "tests/distributed/test_distributed_scale.py"
_ONE_LAUNCH = "one 2-process launch runs every demo; a file per module would launch once each"
_QUIZ = "question data: tests/presentation/test_quizzes.py finds every lesson's and checks it"

#: module -> (test file that holds its tests, or None; why it is not tests/<layer>/test_<name>.py)
ALLOWED: dict[str, tuple[str | None, str]] = {
    "instructors/teaching/__main__.py": (
        "tests/teaching/test_grading_class.py",
        "the CLI, driven verb by verb by the tests of each verb",
    ),
    "course/distributed/collectives.py": (_DEMOS, _ONE_LAUNCH),
    "course/distributed/common.py": (_DEMOS, _ONE_LAUNCH),
    "course/distributed/ddp.py": (_DEMOS, _ONE_LAUNCH),
    "course/distributed/fsdp.py": (_DEMOS, _ONE_LAUNCH),
    "course/distributed/pipeline.py": (_DEMOS, _ONE_LAUNCH),
    "course/distributed/tensor_parallel.py": (_DEMOS, _ONE_LAUNCH),
    "course/distributed/checkpoint.py": (_SCALE, "shares the scale tests' launches"),
    "course/distributed/elastic.py": (_SCALE, "shares the scale tests' launches"),
    "course/distributed/expert_parallel.py": (_SCALE, "shares the scale tests' launches"),
    "course/distributed/ring_attention.py": (_SCALE, "shares the scale tests' launches"),
    "course/distributed/job_mix.py": ("tests/distributed/test_slurm.py", "with Slurm"),
    "course/selfcheck/answers.py": (
        "tests/teaching/test_grading_release.py",
        "checks of a release",
    ),
    "course/selfcheck/coarse.py": ("tests/teaching/test_grading_release.py", "checks of a release"),
    "course/selfcheck/plain.py": ("tests/teaching/test_grading_units.py", "shared with grading"),
    "course/selfcheck/values.py": ("tests/teaching/test_grading_units.py", "shared with grading"),
    "instructors/teaching/grading/keycheck.py": (
        "tests/teaching/test_grading_instructor_side.py",
        "with the gradebook's outputs: what the instructor is told, one graded-folder fixture",
    ),
    "instructors/teaching/grading/sandbox_init.py": (
        "tests/teaching/test_grading_hostile.py",
        "runs as root inside fresh namespaces only: what it sets up is observed from inside by the"
        " hostile submissions of the one shared sandboxed run (its limits, its root, its mounts)",
    ),
    "instructors/teaching/grading/zygote.py": (
        "tests/teaching/test_grading_sandbox.py",
        "a script sandbox.start_factory runs as a file inside the sandbox: started by these tests"
        " and by every grading run",
    ),
    "instructors/teaching/site_usability.py": ("tests/teaching/test_site.py", "the site's checks"),
    "instructors/teaching/widget_html.py": ("tests/teaching/test_offline.py", "offline widgets"),
    **{f"course/presentation/quizzes/lesson_{n:02d}.py": (None, _QUIZ) for n in (11, 12, 13)},
}


def _mirror(module: Path) -> Path:
    """The test file a module's tests belong in."""
    parts = module.relative_to(ROOT).parts
    if parts[0] == "course":
        layer, rest = (parts[1], parts[2:]) if len(parts) > 2 else ("", parts[1:])
    else:  # instructors/teaching/...
        layer, rest = "teaching", parts[2:]
    names = [*rest[:-1], Path(rest[-1]).stem]
    if not names[-1].startswith("__"):  # a private module: findings/_common -> test_findings_common
        names[-1] = names[-1].lstrip("_")
    if names[-1] == "__init__":
        names = names[:-1] or [layer]
    elif names[-1] == "__main__":  # course/__main__.py -> tests/test_main.py
        names[-1] = "main"
    return ROOT.joinpath("tests", layer, "test_" + "_".join(names) + ".py")


def _defines(module: Path) -> set[str]:
    tree = ast.parse(module.read_text(encoding="utf-8"))
    names = set()
    for node in tree.body:
        if isinstance(node, ast.FunctionDef | ast.ClassDef):
            names.add(node.name)
        elif isinstance(node, ast.Assign):
            names.update(t.id for t in node.targets if isinstance(t, ast.Name))
        elif isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name):
            names.add(node.target.id)
    return names


def _re_exports_only(module: Path) -> bool:
    tree = ast.parse(module.read_text(encoding="utf-8"))
    return not any(isinstance(n, ast.FunctionDef | ast.ClassDef) for n in ast.walk(tree))


def _modules() -> list[Path]:
    found = [*ROOT.glob("course/**/*.py"), *ROOT.glob("instructors/teaching/**/*.py")]
    return sorted(p for p in found if "__pycache__" not in p.parts)


def _mirrored(module: Path) -> bool:
    """Its test file exists, as ``test_<name>.py`` or, where another layer has a module of the same
    name (pytest needs unique basenames), as ``test_<layer>_<name>.py``."""
    path = _mirror(module)
    layer = path.parent.name
    return path.exists() or path.with_name(f"test_{layer}_{path.name[5:]}").exists()


def _unmirrored() -> list[str]:
    out = []
    for module in _modules():
        if _mirrored(module):
            continue
        if module.name == "__init__.py" and _re_exports_only(module):
            continue
        out.append(module.relative_to(ROOT).as_posix())
    return out


def test_test_file_basenames_are_unique():
    # pytest imports test files by basename (no __init__.py in tests/): two alike break collection
    seen: dict[str, list[str]] = {}
    for path in ROOT.glob("tests/**/test_*.py"):
        seen.setdefault(path.name, []).append(path.relative_to(ROOT).as_posix())
    assert not {n: p for n, p in seen.items() if len(p) > 1}


def test_every_module_has_its_test_file_or_a_listed_reason():
    missing = [m for m in _unmirrored() if m not in ALLOWED]
    assert not missing, (
        "modules without tests/<layer>/test_<module>.py (write it, or move their tests there): "
        f"{missing}"
    )


def test_the_allow_list_only_shrinks():
    stale = sorted(set(ALLOWED) - set(_unmirrored()))
    assert not stale, f"these have their own test file now (or are gone): drop them: {stale}"


def test_each_listed_test_file_exercises_its_module():
    wrong = []
    for module, (test_file, reason) in ALLOWED.items():
        assert reason, module
        if test_file is None:
            continue
        path = ROOT / test_file
        dotted = module.removeprefix("instructors/").removesuffix(".py").replace("/", ".")
        words = {dotted, Path(module).stem, *_defines(ROOT / module)}
        text = path.read_text(encoding="utf-8") if path.exists() else ""
        if not any(re.search(rf"\b{re.escape(w)}\b", text) for w in words if len(w) > 3):
            wrong.append(f"{module} -> {test_file}")
    assert not wrong, f"listed test files that do not name their module: {wrong}"


def test_the_mirror_rule_reads_layers_and_sub_packages():
    assert _mirror(ROOT / "course/facts/units.py") == ROOT / "tests/facts/test_units.py"
    assert _mirror(ROOT / "course/presentation/findings/power.py") == (
        ROOT / "tests/presentation/test_findings_power.py"
    )
    assert (
        _mirror(ROOT / "course/facts/hardware/__init__.py") == ROOT / "tests/facts/test_hardware.py"
    )
    assert _mirrored(
        ROOT / "course/measure/training_optimisations.py"
    )  # as tests/measure/test_training_optimisations.py
    assert _mirror(ROOT / "course/presentation/findings/_common.py") == (
        ROOT / "tests/presentation/test_findings_common.py"
    )
    assert _mirror(ROOT / "instructors/teaching/grading/spec.py") == (
        ROOT / "tests/teaching/test_grading_spec.py"
    )


_SPLIT = "a second file of one module's tests (to merge into its mirror: it predates the rule)"
_ACROSS = "tests that cross modules: what the whole layer promises, not one module"
_SETS = "one exercise set graded end to end (its solution, its wrong answers, its checks)"
_SANDBOX = "the grading sandbox attacked or exercised as a whole (every module of grading/ at once)"

#: test file -> why it mirrors no module; tests/project/ holds the repository's tests and needs none
TEST_FILES_WITHOUT_MODULE: dict[str, str] = {
    "tests/calculators/test_calculator_properties.py": _ACROSS + ": property tests of physics",
    "tests/calculators/test_cost.py": "lesson 05's time, cost and energy against published runs",
    "tests/distributed/test_distributed_demos.py": _ONE_LAUNCH,
    "tests/distributed/test_distributed_scale.py": "lesson 12's demos, sharing their launches",
    "tests/distributed/test_launch_gpus.py": "the launcher on GPUs (CUDA only)",
    "tests/distributed/test_scheduling_fallback.py": "the recorded Slurm run where Slurm is absent",
    "tests/measure/test_measure_numpy_threads.py": _ACROSS + ": numpy's and torch's thread pools",
    "tests/measure/test_memory_cuda.py": _SPLIT + " (CUDA only)",
    "tests/measure/test_scratch_dir.py": _ACROSS + ": where measurements write",
    "tests/presentation/test_layout_korthikanti.py": "the layout model against a published table",
    "tests/presentation/test_widget_calculators.py": _ACROSS + ": every widget's inputs",
    "tests/selfcheck/test_coarse_no_oracle.py": "a release's coarse checks searched as an oracle",
    **{f"tests/teaching/test_exercises_{n:02d}.py": _SETS for n in (2, 5, 11, 12, 13, 14)},
    "tests/teaching/test_grading_anywhere.py": _SANDBOX + ", from any clone path",
    "tests/teaching/test_grading_attacks.py": _SANDBOX,
    "tests/teaching/test_grading_class.py": "the `grade` command over a class (the CLI)",
    "tests/teaching/test_grading_hostile.py": _SANDBOX,
    "tests/teaching/test_grading_imports.py": "what grading may import",
    "tests/teaching/test_grading_instructor_side.py": "what a grading run tells the instructor",
    "tests/teaching/test_grading_lms.py": "the exports run as each LMS or autograder runs them",
    "tests/teaching/test_grading_units.py": "units and plain values (grading and selfcheck)",
    "tests/teaching/test_measured_answers.py": "measured answers graded across sets",
}


def _test_files_without_module() -> list[str]:
    mirrors = set()
    for module in _modules():
        path = _mirror(module)
        mirrors |= {path, path.with_name(f"test_{path.parent.name}_{path.name[5:]}")}
    return [
        p.relative_to(ROOT).as_posix()
        for p in sorted(ROOT.glob("tests/**/test_*.py"))
        if p not in mirrors and p.parent.name != "project"
    ]


def test_every_test_file_mirrors_a_module_or_gives_its_reason():
    unlisted = [t for t in _test_files_without_module() if t not in TEST_FILES_WITHOUT_MODULE]
    assert not unlisted, (
        f"test files named after no module (rename to tests/<layer>/test_<module>.py): {unlisted}"
    )
    stale = sorted(set(TEST_FILES_WITHOUT_MODULE) - set(_test_files_without_module()))
    assert not stale, f"these mirror a module now (or are gone): drop them from the list: {stale}"
