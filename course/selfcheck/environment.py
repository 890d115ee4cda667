"""``python -m course check``: can this machine run the course? One [OK]/[WARN]/[FAIL] line each.

A better version of *Computational Resources for ML*'s verification script: it checks the Python
version, every package (installed, and at the pinned version), torch and the devices it sees,
JupyterLab and the widget extension. **FAIL** is kept for what breaks the course: a missing package
the lessons import, torch older than :data:`MIN_TORCH`, Python older than :data:`MIN_PYTHON`, a
device whose verified matmul is wrong, no JupyterLab or widget extension. A version that differs
from the pin (a conda or CUDA build of torch, a newer numpy) is **WARN** with the pin shown, as is a
missing tool that only developing the course needs. The exit status is 0 when the course can run
here, 1 when it cannot, so scripts and CI can rely on it. Lesson 00 runs it first. Layer 5 (entry
point).
"""

from __future__ import annotations

import re
import sys
from dataclasses import dataclass
from importlib import metadata
from pathlib import Path

MIN_PYTHON = (3, 11)
#: Oldest torch the course has run on end to end (the H100 reference run used torch 2.11.0+cu130).
MIN_TORCH = (2, 11)
#: Requirements that only developing the course needs (tests, lint, browser tests, packaging).
DEV_ONLY = frozenset(
    {"hypothesis", "pytest", "pytest-xdist", "pytest-timeout", "ruff", "playwright", "setuptools"}
)
REQUIREMENTS_IN = Path(__file__).resolve().parents[2] / "requirements" / "learners.in"
REQUIREMENTS_TXT = REQUIREMENTS_IN.with_suffix(".txt")


@dataclass(frozen=True)
class Check:
    """One requirement: ``ok`` False is a FAIL (the course cannot run); ``warn`` marks an OK with a
    caveat (a version other than the pin, a development tool missing)."""

    ok: bool
    name: str
    detail: str
    warn: bool = False

    @property
    def level(self) -> str:
        return "FAIL" if not self.ok else "WARN" if self.warn else "OK"

    def __str__(self) -> str:
        return f"[{self.level}] {self.name}: {self.detail}"


def _requirement_names(path: Path) -> list[str]:
    names = []
    for line in path.read_text().splitlines():
        line = line.split("#", 1)[0].strip()
        if line and _for_this_platform(line):
            names.append(re.split(r"[=<>!~\[ ;]", line, maxsplit=1)[0])
    return names


def _for_this_platform(requirement: str) -> bool:
    """False for a requirement whose marker names another platform (``; sys_platform ==
    "linux"``)."""
    wanted = re.search(r""";\s*sys_platform\s*==\s*["'](\w+)["']""", requirement)
    return wanted is None or wanted.group(1) == sys.platform


def _declared_names() -> list[str]:
    """The course's ``[project] dependencies`` that apply here, from its installed metadata."""
    from packaging.requirements import Requirement

    try:
        requires = metadata.requires("gpu-course") or []
    except metadata.PackageNotFoundError:
        return []
    wanted = [Requirement(r) for r in requires]
    return [r.name for r in wanted if r.marker is None or r.marker.evaluate({"extra": ""})]


def _pins(path: Path) -> dict[str, str]:
    """name -> pinned version, for the pins whose environment marker holds here (a universal lock
    pins numpy 2.4.6 for Python 3.11 and 2.5.5 from 3.12, say)."""
    from packaging.markers import Marker

    pins = {}
    for line in path.read_text().splitlines():
        requirement = line.split("#", 1)[0]
        if "==" in requirement and not line.startswith("#"):
            spec, _, marker = requirement.partition(";")
            if marker.strip() and not Marker(marker.strip()).evaluate():
                continue
            name, version = spec.strip().split("==")
            pins[_normalise(name)] = version.strip()
    return pins


def _normalise(name: str) -> str:
    return re.sub(r"[-_.]+", "-", name).lower()


def check_python() -> Check:
    version = ".".join(map(str, sys.version_info[:3]))
    ok = sys.version_info[:2] >= MIN_PYTHON
    return Check(ok, "python", f"{version} (needs >= {'.'.join(map(str, MIN_PYTHON))})")


def check_packages() -> list[Check]:
    """Each top-level requirement installed, at its pinned version where the learners' lock pins
    it."""
    # installed from a wheel or an archive (a hosted notebook): its declared ranges
    names = _requirement_names(REQUIREMENTS_IN) if REQUIREMENTS_IN.exists() else _declared_names()
    if not names:
        return [Check(False, "requirements", f"{REQUIREMENTS_IN} not found: run from the repo")]
    pins = _pins(REQUIREMENTS_TXT) if REQUIREMENTS_TXT.exists() else {}
    results = []
    for name in names:
        dev_only = _normalise(name) in DEV_ONLY
        try:
            installed = metadata.version(name)
        except metadata.PackageNotFoundError:
            if dev_only:
                results.append(
                    Check(
                        True,
                        name,
                        "not installed (needed only to develop the course: `make install`)",
                        warn=True,
                    )
                )
            else:
                results.append(Check(False, name, "not installed: run `make install`"))
            continue
        wanted = pins.get(_normalise(name))
        local_free = installed.split("+", 1)[0]  # torch 2.13.0+cpu satisfies the pin 2.13.0
        if _normalise(name) == "torch" and _version(local_free) < MIN_TORCH:
            oldest = ".".join(map(str, MIN_TORCH))
            results.append(
                Check(
                    False,
                    name,
                    f"{installed} installed: the course needs >= "
                    f"{oldest} (pinned {wanted or oldest})",
                )
            )
        elif wanted and local_free != wanted:
            results.append(
                Check(
                    True,
                    name,
                    f"{installed} installed, {wanted} pinned: should "
                    "work; if a lesson fails, install the pin",
                    warn=True,
                )
            )
        else:
            results.append(Check(True, name, installed))
    return results


def _version(text: str) -> tuple[int, ...]:
    return tuple(int(p) for p in re.findall(r"\d+", text)[:3])


def check_torch() -> list[Check]:
    """torch imports, computes, and which devices it sees (CPU always; CUDA/MPS when present)."""
    try:
        import torch

        from course.measure.devices import cuda_stack, machine_info, verify_devices
    except Exception as exc:  # a broken install must be reported, not crash the check
        return [Check(False, "torch", f"import failed: {exc}")]
    results = []
    results += [Check(t.ok, f"compute on {t.device}", t.detail) for t in verify_devices()]
    info = machine_info()
    results.append(Check(True, "cpu", f"{info.cpu_model}, {info.usable_cores} usable cores"))
    if info.cuda:
        for d in info.cuda:
            cc = ".".join(map(str, d.compute_capability))
            results.append(Check(True, f"cuda:{d.index}", f"{d.name}, compute capability {cc}"))
        # the verified matmul above says whether CUDA works; a stack mismatch is a caveat
        results += [
            Check(True, "cuda stack", p, warn=True) for p in cuda_stack().problems(info.cuda)
        ]
    elif torch.version.cuda:
        results.append(
            Check(True, "cuda", f"torch built for CUDA {torch.version.cuda}, no GPU seen")
        )
    else:
        results.append(
            Check(True, "cuda", "no CUDA GPU (CPU-only torch build): lessons use the CPU")
        )
    if info.mps:
        results.append(Check(True, "mps", "Apple GPU available through MPS"))
    return results


def check_jupyter() -> list[Check]:
    """JupyterLab and the widget extension (needed for the calculators and quizzes)."""
    results = []
    for module, name in (("jupyterlab", "JupyterLab"), ("ipywidgets", "ipywidgets")):
        try:
            mod = __import__(module)
            results.append(Check(True, name, mod.__version__))
        except Exception as exc:
            results.append(Check(False, name, f"import failed: {exc}"))
    ext = Path(sys.prefix) / "share/jupyter/labextensions/@jupyter-widgets/jupyterlab-manager"
    ok = ext.is_dir()
    detail = "installed" if ok else f"missing ({ext}): widgets will not render"
    results.append(Check(ok, "widget extension", detail))
    return results


def all_checks() -> list[Check]:
    return [check_python(), *check_packages(), *check_torch(), *check_jupyter()]


def run_checks() -> int:
    """Print every check; 0 if the course can run here (no FAIL), 1 otherwise."""
    checks = all_checks()
    for c in checks:
        print(c)
    counts = {level: sum(c.level == level for c in checks) for level in ("OK", "WARN", "FAIL")}
    verdict = "the course cannot run here" if counts["FAIL"] else "the course can run here"
    print(f"{counts['OK']} OK, {counts['WARN']} WARN, {counts['FAIL']} FAIL: {verdict}")
    return 1 if counts["FAIL"] else 0
