"""Hosted notebooks (Colab, Kaggle, a JupyterHub): the course beside the platform's own packages.

Every lesson and exercise set opens with :func:`install_cell`'s code. On a hosted runtime that has
no course yet (detected by an environment variable, :data:`HOSTED_RUNTIMES`), it installs this
course's release, the same version as the notebook, from the repository's tagged archive without
its dependencies, then runs ``python -m course.selfcheck.hosted``: :func:`install_dependencies`
installs what the platform lacks of ``[project] dependencies`` under a constraint that keeps the
torch, triton, numpy and ipywidgets already there (:data:`PROTECTED`; pip would otherwise be free
to replace them to satisfy a new package). Anywhere else the cell does nothing. An exercise set's
public checks are fetched from the same tag when the learner's checker does not find them
(:func:`fetch_checks`). Standard library only: it runs before anything else is installed.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
import tempfile
import urllib.request
from collections.abc import Callable, Mapping
from importlib import metadata
from pathlib import Path

DISTRIBUTION = "gpu-course"
#: Hosted notebook platforms, each detected by an environment variable its kernels carry, with
#: where the variable is set or read. Kaggle comes first: its image is built FROM Colab's runtime
#: image (Kaggle/docker-python, Dockerfile.tmpl), so a Kaggle kernel may carry Colab's variable too.
HOSTED_RUNTIMES = (
    (
        "Kaggle Notebooks",
        "KAGGLE_KERNEL_RUN_TYPE",
        "set in Kaggle kernels ('Interactive' while editing, 'Batch' on Save & Run All); Kaggle's "
        "own image reads it (Kaggle/docker-python, patches/kaggle_module_resolver.py)",
    ),
    (
        "Google Colab",
        "COLAB_RELEASE_TAG",
        "set in every Colab runtime (the runtime image's release tag), the variable libraries test "
        "to detect Colab (no Colab page documents it; the module google.colab is the fallback "
        "a learner can check)",
    ),
    (
        "JupyterHub",
        "JUPYTERHUB_USER",
        "set by JupyterHub's Spawner.get_env for every single-user server (JupyterHub docs, "
        "'Spawners': environment variables of the single-user server)",
    ),
)
#: What a hosted platform brings itself and the course never replaces there.
PROTECTED = ("torch", "triton", "numpy", "ipywidgets")


def hosted_runtime(environ: Mapping[str, str] | None = None) -> str | None:
    """The hosted platform this kernel runs on (a name of :data:`HOSTED_RUNTIMES`), or None."""
    environ = os.environ if environ is None else environ
    for name, variable, _source in HOSTED_RUNTIMES:
        if environ.get(variable):
            return name
    return None


def archive_url(repository: str, version: str) -> str:
    """The source archive of release ``version`` (git tag ``v<version>``) on GitHub."""
    return f"{repository.rstrip('/')}/archive/refs/tags/v{version}.zip"


def raw_url(repository: str, version: str, path: str) -> str:
    """A file of release ``version`` as GitHub serves it raw."""
    owner_repo = repository.rstrip("/").removeprefix("https://github.com/")
    return f"https://raw.githubusercontent.com/{owner_repo}/v{version}/{path}"


def install_cell(repository: str, version: str) -> str:
    """The first code cell of every notebook: installs release ``version`` on a hosted runtime
    without the course, nothing anywhere else. ``COURSE_SOURCE`` overrides the archive (a wheel
    built by ``make dist``, as benchmarks/hosted_like.sh does)."""
    variables = ", ".join(f'"{variable}"' for _name, variable, _source in HOSTED_RUNTIMES)
    return (
        "# Colab, Kaggle or a JupyterHub without the course: install it (release "
        f"{version}) beside the\n"
        "# platform's own torch, triton, numpy and ipywidgets. On your own install this "
        "does nothing.\n"
        "import importlib.util\nimport os\nimport subprocess\nimport sys\n\n"
        f"hosted = {{{variables}}} & set(os.environ)\n"
        'if hosted and not importlib.util.find_spec("course"):\n'
        f'    archive = "{archive_url(repository, version)}"\n'
        '    source = os.environ.get("COURSE_SOURCE", archive)\n'
        '    pip = [sys.executable, "-m", "pip", "install", "-q", "--no-deps", source]\n'
        "    subprocess.run(pip, check=True)\n"
        '    subprocess.run([sys.executable, "-m", "course.selfcheck.hosted"], check=True)'
    )


def _installed(name: str) -> str | None:
    try:
        return metadata.version(name)
    except metadata.PackageNotFoundError:
        return None


def _name(requirement: str) -> str:
    return re.split(r"[\s<>=!~;\[(@]", requirement.strip(), maxsplit=1)[0]


def install_plan(
    requires: list[str], installed: Callable[[str], str | None] | None = None
) -> tuple[list[str], list[str]]:
    """(requirements to hand to pip, constraints): the declared requirements less the protected
    packages already present, and ``name==version`` for each of those, so that nothing pip installs
    may replace them."""
    present = {name: (installed or _installed)(name) for name in PROTECTED}
    keep = {name: version for name, version in present.items() if version}
    requirements = [r for r in requires if "extra ==" not in r and _name(r).lower() not in keep]
    return requirements, [f"{name}=={version}" for name, version in keep.items()]


def install_dependencies(run: Callable = subprocess.run, requires: list[str] | None = None) -> int:
    """Install the course's dependencies that this environment lacks, keeping :data:`PROTECTED`."""
    if requires is None:
        requires = metadata.requires(DISTRIBUTION) or []
    requirements, constraints = install_plan(requires)
    kept = ", ".join(c.replace("==", " ") for c in constraints) or "none of them present"
    print(f"Keeping the platform's {kept}.")
    if not requirements:
        return 0
    with tempfile.NamedTemporaryFile("w", suffix=".txt", delete=False) as f:
        f.write("\n".join(constraints) + "\n")
    try:
        cmd = [sys.executable, "-m", "pip", "install", "-q", "-c", f.name, *requirements]
        done = run(cmd, check=False)
    finally:
        os.unlink(f.name)
    if done.returncode == 0:
        print(f"The course {metadata.version(DISTRIBUTION)} is installed: run the next cells.")
    return done.returncode


def repository_url() -> str:
    """``[project.urls] Repository`` of the installed course (its package metadata)."""
    for entry in metadata.metadata(DISTRIBUTION).get_all("Project-URL") or []:
        label, _, url = entry.partition(",")
        if label.strip().lower() == "repository":
            return url.strip()
    raise LookupError(f"{DISTRIBUTION} declares no Repository URL")


def fetch_checks(
    assignment: str, folder: str | Path = "checks", urlopen: Callable = urllib.request.urlopen
) -> Path:
    """Download an exercise set's public checks of this release into ``folder``."""
    url = raw_url(
        repository_url(), metadata.version(DISTRIBUTION), f"exercises/checks/{assignment}.json"
    )
    with urlopen(url, timeout=60) as response:
        data = response.read()
    path = Path(folder) / f"{assignment}.json"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(data)
    return path


if __name__ == "__main__":
    sys.exit(install_dependencies())
