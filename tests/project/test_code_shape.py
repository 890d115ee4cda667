"""The shape of the code the next maintainer reads: no private name used across modules, one name
per module, lessons that import modules by their names, and modules, functions and signatures held
to a size (``course/`` and the instructors' ``teaching/``).

Targets (from the maintainability issue): no module in ``course/`` over :data:`MODULE_LINES`
lines except data tables, no function over :data:`FUNCTION_CODE_LINES` code lines (docstring,
comments and blank lines not counted), no public function over :data:`PUBLIC_PARAMETERS`
parameters. :data:`OVER_TARGET` lists what is over today, with today's size: an entry may shrink
(and must leave the list when it meets the target), never grow, and nothing new may join it.
"""

from __future__ import annotations

import ast
import functools
import json
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
PACKAGES = (ROOT / "course", ROOT / "instructors" / "teaching")
OWN = ("course", "teaching")
DATA_TABLES = ("course/facts/hardware/", "course/facts/data/", "course/presentation/quizzes/")
MODULE_LINES = 500
FUNCTION_CODE_LINES = 60
PUBLIC_PARAMETERS = 8

#: What is over a target today, and by how much (lines, code lines or parameters).
OVER_TARGET: dict[str, int] = {
    # modules over 500 lines
    "course/calculators/cloud.py": 607,
    "course/calculators/compute.py": 586,
    "course/calculators/fleet.py": 690,
    "course/calculators/gpu_systems.py": 582,
    "course/calculators/memory.py": 669,
    "course/calculators/parallel.py": 560,
    "course/calculators/queueing.py": 506,
    "course/distributed/launch.py": 546,
    "course/measure/devices.py": 517,
    "course/measure/llm_server.py": 757,
    "course/measure/loadgen.py": 718,
    "course/measure/triton_kernels.py": 540,
    "course/presentation/findings/server_load.py": 531,
    # functions over 60 code lines
    "course/calculators/cluster.py:dgx_design": 104,
    "course/calculators/fleet.py:replicas_for_slo": 86,
    "course/calculators/fleet.py:simulate_day": 61,
    "course/calculators/gpu_systems.py:choose_gpu": 75,
    "course/calculators/memory.py:training_step_memory": 66,
    "course/calculators/parallel.py:layout_step": 139,
    "course/calculators/techniques.py:_speed_rows": 72,
    "course/calculators/techniques.py:_training_memory_rows": 74,
    "course/calculators/techniques.py:rank_techniques": 80,
    "course/distributed/fsdp.py:sharded_states": 61,
    "course/distributed/job_mix.py:run_mix": 78,
    "course/distributed/launch.py:_run_ranks": 63,
    "course/measure/loadgen.py:serving_run": 62,
    "course/measure/triton_kernels.py:_build_kernels": 114,
    "course/presentation/diagrams.py:gpu_anatomy": 109,
    "course/presentation/diagrams.py:memory_pyramid": 68,
    "course/presentation/findings/server_load.py:queue_model": 61,
    "course/selfcheck/answers.py:_check": 68,
    # public functions over 8 parameters
    "course/calculators/cloud.py:own_vs_rent()": 12,
    "course/calculators/cluster.py:cluster_for_model()": 16,
    "course/calculators/cluster.py:dgx_design()": 14,
    "course/calculators/context.py:ring_overlap()": 9,
    "course/calculators/energy.py:run_footprint()": 12,
    "course/calculators/fleet.py:batch_latency_frontier()": 9,
    "course/calculators/fleet.py:replica_option()": 11,
    "course/calculators/fleet.py:replicas_for_slo()": 15,
    "course/calculators/fleet.py:tensor_parallel_options()": 10,
    "course/calculators/gpu_systems.py:choose_gpu()": 11,
    "course/calculators/gpu_systems.py:gpu_job()": 13,
    "course/calculators/inference.py:serving()": 9,
    "course/calculators/parallel.py:layout_step()": 16,
    "course/calculators/parallel.py:parallel_training_memory_per_gpu()": 13,
    "course/measure/loadgen.py:prefill_interference()": 11,
    "course/measure/loadgen.py:serving_run()": 13,
    "course/measure/matmul.py:matmul_sweep()": 9,
    "course/measure/profiling.py:profile_training_step()": 11,
    "course/measure/triton_kernels.py:attention_kernel()": 14,
    "course/measure/triton_kernels.py:matmul_kernel()": 10,
    "course/presentation/plots/measurements.py:grouped_bars()": 9,
    "course/presentation/widgets/buy_vs_rent.py:buy_vs_rent_calculator()": 13,
    "course/presentation/widgets/dgx_design.py:dgx_design_calculator()": 11,
    "course/presentation/widgets/fit.py:will_it_fit()": 11,
    "course/presentation/widgets/gpu_choice.py:a100_or_h100()": 13,
    "course/presentation/widgets/layout.py:layout_chooser()": 14,
    "course/presentation/widgets/run_cost.py:how_long_and_how_much()": 17,
}


def _modules() -> list[Path]:
    return sorted(p for package in PACKAGES for p in package.rglob("*.py"))


def _name(path: Path) -> str:
    return path.relative_to(ROOT).as_posix()


def _code_lines(node: ast.FunctionDef | ast.AsyncFunctionDef, lines: list[str]) -> int:
    body = node.body
    first = body[0]
    docstring = (
        isinstance(first, ast.Expr)
        and isinstance(first.value, ast.Constant)
        and isinstance(first.value.value, str)
    )
    skipped = set(range(first.lineno, first.end_lineno + 1)) if docstring else set()
    numbers = {n for stmt in body for n in range(stmt.lineno, stmt.end_lineno + 1)} - skipped
    return sum(
        1 for n in numbers if lines[n - 1].strip() and not lines[n - 1].lstrip().startswith("#")
    )


@functools.cache
def _tree(path: Path) -> ast.Module:
    return ast.parse(path.read_text(encoding="utf-8"))


def _functions(body: list[ast.stmt]):
    """Every function defined in ``body``, nested ones too (statements only, not ast.walk)."""
    for stmt in body:
        if isinstance(stmt, ast.FunctionDef | ast.AsyncFunctionDef):
            yield stmt
        for field in ("body", "orelse", "finalbody", "handlers"):
            yield from _functions(getattr(stmt, field, []))


@functools.cache
def _sizes() -> dict[str, int]:
    """Every module, function and public signature, with its size."""
    sizes: dict[str, int] = {}
    for path in _modules():
        text = path.read_text(encoding="utf-8")
        lines = text.splitlines()
        if path.is_relative_to(ROOT / "course") and not _name(path).startswith(DATA_TABLES):
            sizes[_name(path)] = len(lines)
        for node in _functions(_tree(path).body):
            sizes[f"{_name(path)}:{node.name}"] = _code_lines(node, lines)
            args = node.args
            named = [*args.posonlyargs, *args.args, *args.kwonlyargs]
            params = [a for a in named if a.arg not in ("self", "cls")]
            if not node.name.startswith("_"):
                sizes[f"{_name(path)}:{node.name}()"] = len(params)
    return sizes


def _limit(key: str) -> int:
    if key.endswith("()"):
        return PUBLIC_PARAMETERS
    return FUNCTION_CODE_LINES if ":" in key else MODULE_LINES


def test_nothing_new_goes_over_a_size_target():
    over = {k: n for k, n in _sizes().items() if n > _limit(k)}
    new = {k: n for k, n in over.items() if k not in OVER_TARGET}
    assert not new, (
        f"over the targets (split the module or function, or take a settings value): {new}"
    )
    grown = {
        k: (OVER_TARGET[k], n) for k, n in over.items() if k in OVER_TARGET and n > OVER_TARGET[k]
    }
    assert not grown, f"grew past what OVER_TARGET records (was, now): {grown}"


def test_the_list_of_what_is_over_target_is_not_stale():
    sizes = _sizes()
    stale = sorted(k for k in OVER_TARGET if sizes.get(k, 0) <= _limit(k))
    assert not stale, (
        f"these meet the target now (or are gone): drop them from OVER_TARGET: {stale}"
    )
    shrunk = {k: (n, sizes[k]) for k, n in OVER_TARGET.items() if k not in stale and sizes[k] < n}
    assert not shrunk, f"record the smaller size in OVER_TARGET (was, now): {shrunk}"


def _private_uses(path: Path) -> list[str]:
    """``from course.<module> import _name`` and ``module._name`` on an imported course module."""
    tree = _tree(path)
    modules: set[str] = set()
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and (node.module or "").split(".")[0] in OWN:
            for alias in node.names:
                if alias.name.startswith("_"):
                    found.append(f"from {node.module} import {alias.name}")
                else:
                    modules.add(alias.asname or alias.name)  # may be a module
        elif isinstance(node, ast.Import):
            for alias in node.names:
                if alias.name.split(".")[0] in OWN:
                    modules.add(alias.asname or alias.name.split(".")[0])
    for node in ast.walk(tree):
        if (
            isinstance(node, ast.Attribute)
            and node.attr.startswith("_")
            and not node.attr.startswith("__")
            and isinstance(node.value, ast.Name)
            and node.value.id in modules
        ):
            found.append(f"{node.value.id}.{node.attr}")
    return found


@pytest.mark.parametrize("path", _modules(), ids=_name)
def test_no_private_name_crosses_a_module(path):
    uses = _private_uses(path)
    assert not uses, f"{_name(path)} uses another module's private names (make them public): {uses}"


def test_the_private_name_check_catches_both_forms(tmp_path):
    sample = tmp_path / "sample.py"
    sample.write_text(
        "from course.facts.hardware.gpus import _frozen\n"
        "from course.distributed import checkpoint\n"
        "checkpoint._to_cpu(1)\n"
        "checkpoint.app_state(1)\n",
        encoding="utf-8",
    )
    assert _private_uses(sample) == [
        "from course.facts.hardware.gpus import _frozen",
        "checkpoint._to_cpu",
    ]


def test_module_basenames_are_unique_in_course():
    """One name, one module: ``grep``, tracebacks and pytest's test files never have to ask which
    ``serving.py`` (package faces, ``__init__`` and ``__main__``, excepted)."""
    seen: dict[str, list[str]] = {}
    for path in sorted((ROOT / "course").rglob("*.py")):
        if not path.name.startswith("__"):
            seen.setdefault(path.stem, []).append(_name(path))
    repeated = {stem: paths for stem, paths in seen.items() if len(paths) > 1}
    assert not repeated, f"module names used twice (rename one by what it does): {repeated}"


#: Aliases the scientific Python world writes the same way everywhere (numpy, pandas, pyplot).
CONVENTIONAL_ALIASES = {"numpy": "np", "pandas": "pd", "matplotlib.pyplot": "plt"}


def _import_aliases(source: str) -> list[str]:
    found = []
    python = "\n".join(
        line for line in source.splitlines() if not line.lstrip().startswith(("%", "!"))
    )  # IPython's magics and shell escapes are not Python
    tree = ast.parse(python)
    for node in ast.walk(tree):
        if isinstance(node, ast.Import | ast.ImportFrom):
            for alias in node.names:
                full = (
                    f"{node.module}.{alias.name}"
                    if isinstance(node, ast.ImportFrom)
                    else alias.name
                )
                if alias.asname and CONVENTIONAL_ALIASES.get(full) != alias.asname:
                    found.append(f"{full} as {alias.asname}")
    return found


@pytest.mark.parametrize(
    "notebook",
    sorted(
        p
        for folder in ("notebooks", "solutions", "exercises")
        for p in (ROOT / folder).glob("*.ipynb")
    ),
    ids=_name,
)
def test_notebooks_import_modules_by_their_own_names(notebook):
    cells = json.loads(notebook.read_text(encoding="utf-8"))["cells"]
    aliases = [
        alias
        for cell in cells
        if cell["cell_type"] == "code"
        for alias in _import_aliases("".join(cell["source"]))
    ]
    assert not aliases, f"{_name(notebook)} renames modules on import (use their names): {aliases}"
