"""Install a lock into this environment with pip: ``python requirements/install.py LOCK``.

The locks (``learners.txt``, ``instructors.txt``) are universal: ``make lock`` resolves them with uv
against the public index for Linux, macOS and Windows, Python 3.11 to 3.13, so on Linux they carry
torch's CUDA runtime wheels (``nvidia-*``, ``cuda-*``, about 3 GB). Where pip offers a CPU build of
the lock's torch instead (``2.13.0+cpu``: a local wheel, as on the course machines, or PyTorch's CPU
index named by ``TORCH_INDEX``), or where a build of the pinned release from PyTorch's own index is
installed already (``2.13.0+cu126`` for an older driver: README, "With a GPU"), those wheels are
left out: a CPU build never loads them, and a PyTorch-index build brought its own. Everywhere else
the lock installs exactly as it is. Standard library only: it runs before anything is installed.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import tempfile
from pathlib import Path

#: torch's CUDA runtime packages on PyPI (NVIDIA's names): what a CPU build of torch does not need.
CUDA_RUNTIME = re.compile(r"^(nvidia-|cuda-)", re.IGNORECASE)


def _pip(*args: str) -> list[str]:
    extra = os.environ.get("TORCH_INDEX")
    return [sys.executable, "-m", "pip", *args, *(["--extra-index-url", extra] if extra else [])]


def torch_pin(lock_lines: list[str]) -> str | None:
    """The lock's ``torch==X`` requirement, or None if it pins no torch."""
    for line in lock_lines:
        if re.match(r"^torch==", line):
            return line.split("#")[0].split(";")[0].strip()
    return None


def chosen_torch_version(requirement: str) -> str | None:
    """The version pip would install for ``requirement`` here (``2.13.0+cpu`` from a CPU index or
    a local wheel), or None if pip cannot say (an old pip without ``--report``)."""
    cmd = _pip("install", "--dry-run", "--no-deps", "--quiet", "--ignore-installed")
    done = subprocess.run([*cmd, "--report", "-", requirement], capture_output=True, text=True)
    if done.returncode != 0:
        return None
    try:
        return json.loads(done.stdout)["install"][0]["metadata"]["version"]
    except (ValueError, KeyError, IndexError):
        return None


def installed_torch_version() -> str | None:
    """The version of the torch installed in this environment, or None."""
    from importlib import metadata

    try:
        return metadata.version("torch")
    except metadata.PackageNotFoundError:
        return None


def keeps_its_own_cuda(pin: str, version: str | None) -> bool:
    """Whether ``version`` is a build of the pinned release with a local label (``+cpu``,
    ``+cu126``): a CPU build, or one from PyTorch's index that carries its own CUDA libraries."""
    if not version or "+" not in version:
        return False
    return version.split("+", 1)[0] == pin.split("==", 1)[1]


def without_cuda_runtime(lock_lines: list[str]) -> list[str]:
    """The lock without torch's CUDA runtime wheels (their ``# via`` comments stay, harmlessly)."""
    return [line for line in lock_lines if not CUDA_RUNTIME.match(line)]


def main(argv: list[str]) -> int:
    if len(argv) != 1:
        print(__doc__.splitlines()[0], file=sys.stderr)
        return 2
    lock = Path(argv[0])
    lines = lock.read_text(encoding="utf-8").splitlines()
    pin = torch_pin(lines)
    installed = installed_torch_version()
    version = installed if pin and keeps_its_own_cuda(pin, installed) else None
    if pin and version is None:
        offered = chosen_torch_version(pin)
        version = offered if offered and offered.endswith("+cpu") else None
    if version:
        print(f"torch {version}, a CPU or PyTorch-index build: leaving out the lock's CUDA wheels")
        with tempfile.NamedTemporaryFile("w", suffix=".txt", delete=False) as f:
            f.write("\n".join(without_cuda_runtime(lines)) + "\n")
        try:
            return subprocess.call(_pip("install", "--quiet", "-r", f.name))
        finally:
            os.unlink(f.name)
    return subprocess.call(_pip("install", "--quiet", "-r", str(lock)))


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
