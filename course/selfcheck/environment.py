"""``python -m course check``: can this machine run the course? One [OK]/[WARN]/[FAIL] line each.

A better version of *Computational Resources for ML*'s verification script: it checks the Python
version, every package (installed, and at the pinned version), torch and the devices it sees,
JupyterLab and the widget extension. **FAIL** is kept for what breaks the course: a missing package
the lessons import, torch older than :data:`MIN_TORCH`, Python older than :data:`MIN_PYTHON`, a
device whose verified matmul is wrong, no JupyterLab or widget extension. A version that differs
from the pin (a conda or CUDA build of torch, a newer numpy) is **WARN** with the pin shown, as is a
missing tool that only developing the course needs. So is a torch build that cannot use this
machine's GPU (a CUDA 13 build under a driver older than 580: the line names the CUDA 12 build to
install, with the pip command) and each feature the GPU lacks that a lesson uses (a T4: no bf16 or
FP8 Tensor Cores...; ``course.measure.gpu_guards``). On a hosted runtime (Colab, Kaggle, a
JupyterHub: :data:`HOSTED_RUNTIMES`) the platform's torch is OK from :data:`MIN_TORCH` to the pin
and WARN outside, and a missing JupyterLab is OK. The exit status is 0 when the course can run
here, 1 when it cannot, so scripts and CI can rely on it. Lesson 00 runs it first.
"""

from __future__ import annotations

import re
import sys
from dataclasses import dataclass
from importlib import metadata
from pathlib import Path

from course.selfcheck.hosted import hosted_runtime

MIN_PYTHON = (3, 11)
#: The lowest supported torch, the one place it is stated: the oldest release the course has run
#: end to end, Kaggle's torch 2.10.0 (benchmarks/hosted_like.sh with PLATFORM_SET=kaggle: every
#: lesson and exercise set, on the CPU, 2026-11-28; the H100 reference run used 2.11.0+cu130, the
#: pin is 2.13). Older releases fail sooner or later (``course.measure.precision`` names
#: ``torch.float8_e8m0fnu``, new in 2.7, at import) and no lesson has run on them. From here to the
#: pin is the supported range.
MIN_TORCH = (2, 10)

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


def check_runtime() -> Check:
    """Where the course runs: a hosted platform (its packages are kept) or a local install."""
    hosted = hosted_runtime()
    if hosted is None:
        return Check(True, "runtime", "local install (no hosted-notebook variable set)")
    return Check(
        True,
        "runtime",
        f"{hosted}: the platform's own torch and notebook front end are used; a torch from "
        f"{_text(MIN_TORCH)} to the pin is supported",
    )


def _served_by(hosted: str) -> str:
    return f"not in this kernel: {hosted} serves the notebook"


def _text(version: tuple[int, ...]) -> str:
    return ".".join(map(str, version))


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
    hosted = hosted_runtime()
    results = []
    for name in names:
        dev_only = _normalise(name) in DEV_ONLY
        try:
            installed = metadata.version(name)
        except metadata.PackageNotFoundError:
            if _normalise(name) == "jupyterlab" and hosted:
                results.append(Check(True, name, _served_by(hosted)))
            elif dev_only:
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
        if _normalise(name) == "torch" and hosted:
            results.append(_hosted_torch(installed, wanted))
        elif _normalise(name) == "torch" and _version(local_free) < MIN_TORCH:
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


def _hosted_torch(installed: str, pinned: str | None) -> Check:
    """A hosted platform's own torch: OK from :data:`MIN_TORCH` to the pin (release, not patch),
    WARN outside that range (never FAIL: the course keeps the platform's torch)."""
    release = _version(installed)[:2]
    if pinned:
        newest = _version(pinned)[:2]
        supported = f"supported: {_text(MIN_TORCH)} to {_text(newest)}"
    else:  # installed from a wheel: the lock, and so the pin, is not here
        newest = max(release, MIN_TORCH)
        supported = f"supported: {_text(MIN_TORCH)} or newer"
    if MIN_TORCH <= release <= newest:
        return Check(True, "torch", f"{installed}, the platform's own ({supported})")
    side = "older" if release < MIN_TORCH else "newer"
    return Check(
        True,
        "torch",
        f"{installed}, the platform's own, is {side} than the course supports ({supported}): "
        "lessons may fail; install the pin in a fresh environment if one does",
        warn=True,
    )


def check_torch() -> list[Check]:
    """torch imports, computes, and which devices it sees (CPU always; CUDA/MPS when present)."""
    try:
        import torch

        from course.measure import gpu_guards
        from course.measure.devices import cuda_stack, machine_info, verify_devices
    except Exception as exc:  # a broken install must be reported, not crash the check
        return [Check(False, "torch", f"import failed: {exc}")]
    results = []
    results += [Check(t.ok, f"compute on {t.device}", t.detail) for t in verify_devices()]
    info = machine_info()
    results.append(Check(True, "cpu", f"{info.cpu_model}, {info.usable_cores} usable cores"))
    # the verified matmul above says whether CUDA works; a stack mismatch (a driver too old for
    # this torch build, a CPU build on a GPU machine) is a caveat: the lessons run on the CPU
    results += [Check(True, "cuda stack", p, warn=True) for p in cuda_stack().problems(info.cuda)]
    if info.cuda:
        for d in info.cuda:
            cc = ".".join(map(str, d.compute_capability))
            results.append(Check(True, f"cuda:{d.index}", f"{d.name}, compute capability {cc}"))
            # what this card lacks: the lessons skip those cells and say why
            results += [
                Check(True, f"cuda:{d.index} lacks", p, warn=True)
                for p in gpu_guards.report(f"cuda:{d.index}")
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
    """JupyterLab and the widget extension (needed for the calculators and quizzes).

    On a hosted platform the notebook front end is the platform's (Colab's and Kaggle's own, a
    hub's server environment, which need not be the kernel's): a missing JupyterLab is OK there
    and a widget extension the kernel cannot see is a WARN, never a FAIL."""
    hosted = hosted_runtime()
    results = []
    for module, name in (("jupyterlab", "JupyterLab"), ("ipywidgets", "ipywidgets")):
        try:
            mod = __import__(module)
            results.append(Check(True, name, mod.__version__))
        except Exception as exc:
            if hosted and module == "jupyterlab":
                results.append(Check(True, name, _served_by(hosted)))
            else:
                results.append(Check(False, name, f"import failed: {exc}"))
    ext = Path(sys.prefix) / "share/jupyter/labextensions/@jupyter-widgets/jupyterlab-manager"
    if ext.is_dir():
        results.append(Check(True, "widget extension", "installed"))
    elif hosted:
        detail = (
            f"not in this kernel's environment: {hosted}'s front end renders widgets itself; if a "
            "calculator shows as text, ask the platform for ipywidgets support"
        )
        results.append(Check(True, "widget extension", detail, warn=True))
    else:
        detail = f"missing ({ext}): widgets will not render"
        results.append(Check(False, "widget extension", detail))
    return results


def all_checks() -> list[Check]:
    return [
        check_runtime(),
        check_python(),
        *check_packages(),
        *check_torch(),
        *check_jupyter(),
    ]


def run_checks() -> int:
    """Print every check; 0 if the course can run here (no FAIL), 1 otherwise."""
    checks = all_checks()
    for c in checks:
        print(c)
    counts = {level: sum(c.level == level for c in checks) for level in ("OK", "WARN", "FAIL")}
    verdict = "the course cannot run here" if counts["FAIL"] else "the course can run here"
    print(f"{counts['OK']} OK, {counts['WARN']} WARN, {counts['FAIL']} FAIL: {verdict}")
    return 1 if counts["FAIL"] else 0
