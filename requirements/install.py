"""Install a lock into this environment with pip: ``python requirements/install.py LOCK``.

The locks (``learners.txt``, ``instructors.txt``) are universal: ``make lock`` resolves them with uv
against the public index for Linux, macOS and Windows, Python 3.11 to 3.13, so on Linux they carry
torch's CUDA runtime wheels (``nvidia-*``, ``cuda-*``, about 2 GB). Where pip offers a CPU build of
the lock's torch instead (``2.13.0+cpu``: a local wheel, as on the course machines, or PyTorch's CPU
index named by ``TORCH_INDEX``), or where a build of the pinned release from PyTorch's own index is
installed already (``2.13.0+cu126`` for an older driver: README, "With a GPU"), those wheels are
left out: a CPU build never loads them, and a PyTorch-index build brought its own. Everywhere else
the lock installs exactly as it is. Standard library only: it runs before anything is installed.

``TORCH_INDEX`` fails fast and says why. Before pip runs, the index is asked for its torch page
(``INDEX/torch/``, PEP 503): an index that cannot be reached, has no torch, or no wheel of the
pinned release stops the install within a minute (``PROBE_TIMEOUT_S``, twice), naming the index and
the fallback command, instead of pip retrying for many minutes and then quietly installing PyPI's
CUDA build. An index named for a build (``.../whl/cpu``, ``.../whl/cu126``: the folder is the local
label) must give that build: the torch pip would install is checked before anything is downloaded
and the torch installed is checked after, and a different build ends the install with a non-zero
status. pip itself runs with ``--retries 2 --timeout 15`` when an extra index is named.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import tempfile
import urllib.error
import urllib.parse
import urllib.request
from pathlib import Path

#: torch's CUDA runtime packages on PyPI (NVIDIA's names): what a CPU build of torch does not need.
CUDA_RUNTIME = re.compile(r"^(nvidia-|cuda-)", re.IGNORECASE)
#: Seconds the probe of TORCH_INDEX waits for an answer; it tries twice.
PROBE_TIMEOUT_S = 15
#: pip's own limits when TORCH_INDEX is named (its defaults: 5 retries, 15 s, each with back-off).
PIP_NETWORK = ("--retries", "2", "--timeout", "15")
#: A PyTorch index's last folder is the local label of the builds it serves (cpu, cu126, rocm6.4).
BUILD_LABEL = re.compile(r"^(cpu|cu\d+|rocm[\d.]+|xpu)$")
CPU_INDEX = "https://download.pytorch.org/whl/cpu"
FALLBACK = (
    "What to do: check the address (PyTorch's CPU index is {cpu}) and the network (behind a\n"
    "proxy, set HTTPS_PROXY), then run the same command again; or install without it:\n"
    "    make install      (PyPI's torch; on Linux it brings NVIDIA's libraries, 2 GB more)\n"
    "or put a torch {version} wheel for this platform into .venv by hand first\n"
    "    .venv/bin/python -m pip install ./torch-{version}+cpu-...whl && make install\n"
    "(a +cpu or +cuNNN build of the pin that is installed already is kept)."
)


class InstallError(Exception):
    """An install that cannot give what was asked for: the message says why and what to do."""


def _pip(*args: str) -> list[str]:
    extra = os.environ.get("TORCH_INDEX")
    network = ["--extra-index-url", extra, *PIP_NETWORK] if extra else []
    return [sys.executable, "-m", "pip", *args, *network]


def torch_pin(lock_lines: list[str]) -> str | None:
    """The lock's ``torch==X`` requirement, or None if it pins no torch."""
    for line in lock_lines:
        if re.match(r"^torch==", line):
            return line.split("#")[0].split(";")[0].strip()
    return None


def wanted_build(index: str) -> str | None:
    """The local label of the builds ``index`` serves (``cpu`` for PyTorch's CPU index), or None
    for an index whose name says nothing (a mirror, a local folder)."""
    last = urllib.parse.urlparse(index).path.rstrip("/").rsplit("/", 1)[-1]
    return last if BUILD_LABEL.match(last) else None


def _fallback(pin: str) -> str:
    return FALLBACK.format(cpu=CPU_INDEX, version=pin.split("==", 1)[1])


def probe_index(index: str, pin: str, timeout_s: float = PROBE_TIMEOUT_S) -> None:
    """Raise :class:`InstallError` unless ``index`` answers with a torch page (PEP 503's
    ``INDEX/torch/``) that lists a wheel of ``pin``'s release."""
    version = pin.split("==", 1)[1]
    page = index.rstrip("/") + "/torch/"
    head = f"TORCH_INDEX={index}"
    if urllib.parse.urlparse(index).scheme == "file":  # a local folder: pip reads it directly
        folder = Path(urllib.request.url2pathname(urllib.parse.urlparse(page).path))
        if not folder.is_dir():
            raise InstallError(f"{head}: no folder {folder}.\n{_fallback(pin)}")
        return
    reason = ""
    for _ in range(2):
        try:
            with urllib.request.urlopen(page, timeout=timeout_s) as answer:
                text = answer.read().decode("utf-8", "replace")
            break
        except urllib.error.HTTPError as e:
            if e.code == 404:
                raise InstallError(
                    f"{head} answers, but has no torch ({page}: HTTP 404): it is not a PyTorch "
                    f"wheel index such as {CPU_INDEX}.\n{_fallback(pin)}"
                ) from None
            reason = f"HTTP {e.code}"
        except (OSError, ValueError) as e:  # URLError, a timeout, a malformed address
            reason = str(getattr(e, "reason", e)) or type(e).__name__
    else:
        raise InstallError(
            f"{head} cannot be reached ({reason}; {page} did not answer within {timeout_s:g} s, "
            f"twice): nothing was installed.\n{_fallback(pin)}"
        )
    if not re.search(rf"torch-{re.escape(version)}(\+|%2B|-)", text):
        raise InstallError(
            f"{head} has no wheel of torch {version}, the lock's pin ({page} lists other "
            f"releases).\n{_fallback(pin)}"
        )


def build_problem(index: str, version: str | None, what: str) -> str | None:
    """Why torch ``version`` is not the build ``index`` was named for, or None if it is (or the
    index's name names no build). ``what`` says whose version it is, for the message."""
    label = wanted_build(index)
    if label is None:
        return None
    if version is None:
        return f"TORCH_INDEX={index} asks for torch's {label} build, but {what} no torch at all"
    if version.partition("+")[2] == label:
        return None
    got = f"+{version.partition('+')[2]}" if "+" in version else "PyPI's build (no label)"
    extra = " with NVIDIA's CUDA libraries" if "+" not in version and label == "cpu" else ""
    return (
        f"TORCH_INDEX={index} asks for torch's {label} build (+{label}), but {what} torch "
        f"{version}: {got}{extra}"
    )


def chosen_torch_version(requirement: str) -> str | None:
    """The version pip would install for ``requirement`` here (``2.13.0+cpu`` from a CPU index or
    a local wheel), or None if pip cannot say (an old pip without ``--report``)."""
    cmd = _pip("install", "--dry-run", "--no-deps", "--quiet", "--ignore-installed")
    done = subprocess.run([*cmd, "--report", "-", requirement], capture_output=True, text=True)
    if done.returncode != 0:
        if os.environ.get("TORCH_INDEX"):
            raise InstallError(
                f"pip could not choose a torch for {requirement} with TORCH_INDEX="
                f"{os.environ['TORCH_INDEX']}:\n{done.stderr.strip()[-2000:]}"
            )
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


def no_nvidia_driver() -> bool:
    """Linux without NVIDIA's kernel driver (no ``/proc/driver/nvidia/version``): what uv's
    ``--torch-backend=auto`` also reads to decide that no CUDA build is of use."""
    return sys.platform == "linux" and not Path("/proc/driver/nvidia/version").exists()


def _install(lock: Path, lines: list[str], pin: str | None, index: str | None) -> int:
    installed = installed_torch_version()
    version = installed if pin and keeps_its_own_cuda(pin, installed) else None
    if pin and index:
        probe_index(index, pin)
        if version:  # pip keeps a build of the pin that is installed already
            problem = build_problem(index, version, "this environment already has")
            if problem:
                raise InstallError(
                    f"{problem}, which pip would keep. Remove it first:\n"
                    f"    {sys.executable} -m pip uninstall -y torch"
                )
    if pin and version is None:
        offered = chosen_torch_version(pin)
        if index:  # before anything is downloaded
            problem = build_problem(index, offered, "pip would install")
            if problem:
                raise InstallError(f"{problem}. Nothing was installed.\n{_fallback(pin)}")
        version = offered if offered and offered.endswith("+cpu") else None
        if offered and "+" not in offered and not index and no_nvidia_driver():
            print(
                f"No NVIDIA driver here, but pip installs PyPI's torch {offered} with NVIDIA's "
                "CUDA libraries (about 2 GB) that only an NVIDIA GPU uses."
                f" For the CPU build instead: make install TORCH_INDEX={CPU_INDEX}"
            )
    if version:
        print(f"torch {version}, a CPU or PyTorch-index build: leaving out the lock's CUDA wheels")
        with tempfile.NamedTemporaryFile("w", suffix=".txt", delete=False) as f:
            f.write("\n".join(without_cuda_runtime(lines)) + "\n")
        try:
            status = subprocess.call(_pip("install", "--quiet", "-r", f.name))
        finally:
            os.unlink(f.name)
    else:
        status = subprocess.call(_pip("install", "--quiet", "-r", str(lock)))
    if status != 0:
        return status
    if pin and index:  # what is there now, whatever pip decided
        problem = build_problem(index, installed_torch_version(), "this environment now has")
        if problem:
            raise InstallError(f"{problem}.\n{_fallback(pin)}")
    return 0


def main(argv: list[str]) -> int:
    if len(argv) != 1:
        print(__doc__.splitlines()[0], file=sys.stderr)
        return 2
    lock = Path(argv[0])
    lines = lock.read_text(encoding="utf-8").splitlines()
    try:
        return _install(lock, lines, torch_pin(lines), os.environ.get("TORCH_INDEX") or None)
    except InstallError as e:
        print(f"requirements/install.py: {e}", file=sys.stderr)
        return 1


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
