"""requirements/install.py: the lock as it is, except torch's CUDA wheels beside a CPU or
PyTorch-index build of the pinned torch (the course machines' local CPU wheel, an older driver's
CUDA 12.6 build)."""

import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "requirements"))
import install  # noqa: E402

LOCK = (ROOT / "requirements" / "learners.txt").read_text().splitlines()


def test_the_pin_is_read_without_its_comment_or_marker():
    assert install.torch_pin(LOCK) == "torch==2.13.0"
    assert (
        install.torch_pin(["torch==2.13.0 ; sys_platform == 'linux'  # via x"]) == "torch==2.13.0"
    )
    assert install.torch_pin(["numpy==2.4.6"]) is None


def test_only_torchs_cuda_runtime_is_left_out():
    kept = install.without_cuda_runtime(LOCK)
    removed = set(LOCK) - set(kept)
    assert removed and all(line.startswith(("nvidia-", "cuda-")) for line in removed)
    assert any(line.startswith("nvidia-cublas") for line in removed)
    assert any(line.startswith(("torch==", "triton==", "numpy==")) for line in kept)


def test_a_cpu_or_pytorch_index_build_of_the_pin_keeps_its_own_cuda():
    assert install.keeps_its_own_cuda("torch==2.13.0", "2.13.0+cpu")
    assert install.keeps_its_own_cuda("torch==2.13.0", "2.13.0+cu126")
    assert not install.keeps_its_own_cuda("torch==2.13.0", "2.13.0")  # PyPI's: needs the lock's
    assert not install.keeps_its_own_cuda("torch==2.13.0", "2.12.0+cpu")  # not the pin: replaced
    assert not install.keeps_its_own_cuda("torch==2.13.0", None)


# --- TORCH_INDEX fails fast and says why (issue 46, item 6) -----------------------------------

import contextlib  # noqa: E402
import http.server  # noqa: E402
import os  # noqa: E402
import socket  # noqa: E402
import subprocess  # noqa: E402
import threading  # noqa: E402
import time  # noqa: E402
import venv  # noqa: E402
import zipfile  # noqa: E402

import pytest  # noqa: E402

INSTALL = ROOT / "requirements" / "install.py"
PIN_VERSION = install.torch_pin(LOCK).split("==")[1]
#: The issue's bound: an index that cannot be used stops the install within a minute.
FAIL_FAST_S = 60


def _closed_port() -> int:
    """A loopback port nothing listens on (bound, then released): connections are refused."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@contextlib.contextmanager
def _index(root: Path):
    """A static web server of ``root`` on a loopback port: a PEP 503 index made of files."""

    class Quiet(http.server.SimpleHTTPRequestHandler):
        def __init__(self, *args, **kwargs):
            super().__init__(*args, directory=str(root), **kwargs)

        def log_message(self, *args):
            pass

    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Quiet)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}"
    finally:
        server.shutdown()
        server.server_close()


def _page(folder: Path, *files: str) -> None:
    folder.mkdir(parents=True, exist_ok=True)
    links = "".join(f'<a href="{f.replace("+", "%2B")}">{f}</a>\n' for f in files)
    (folder / "index.html").write_text(f"<html><body>\n{links}</body></html>\n")


def _fake_wheel(folder: Path, version: str) -> str:
    """A pure-Python wheel named torch, metadata only: what pip's resolver reads."""
    name = f"torch-{version}-py3-none-any.whl"
    info = f"torch-{version}.dist-info"
    with zipfile.ZipFile(folder / name, "w") as whl:
        whl.writestr(
            f"{info}/METADATA", f"Metadata-Version: 2.1\nName: torch\nVersion: {version}\n"
        )
        whl.writestr(
            f"{info}/WHEEL", "Wheel-Version: 1.0\nGenerator: test\nRoot-Is-Purelib: true\n"
        )
        whl.writestr(f"{info}/RECORD", "")
    return name


def _run(python: str, lock: Path, env: dict[str, str]) -> tuple[int, str, float]:
    start = time.monotonic()
    done = subprocess.run(
        [python, str(INSTALL), str(lock)],
        env=env,
        capture_output=True,
        text=True,
        timeout=FAIL_FAST_S * 3,
    )
    return done.returncode, done.stdout + done.stderr, time.monotonic() - start


def _learner_env(**extra: str) -> dict[str, str]:
    """The environment of a learner's shell: no pip configuration of the course machines."""
    env = {k: v for k, v in os.environ.items() if not k.startswith(("PIP_", "TORCH_INDEX"))}
    return {**env, "PIP_CONFIG_FILE": os.devnull, "PIP_NO_CACHE_DIR": "1", **extra}


def test_the_build_an_index_serves_is_read_from_its_last_folder():
    assert install.wanted_build("https://download.pytorch.org/whl/cpu") == "cpu"
    assert install.wanted_build("https://download.pytorch.org/whl/cu126/") == "cu126"
    assert install.wanted_build("https://mirror.example.edu/pytorch/simple") is None
    assert install.build_problem("https://download.pytorch.org/whl/cpu", "2.13.0+cpu", "x") is None
    said = install.build_problem("https://download.pytorch.org/whl/cpu", "2.13.0", "pip gave")
    assert "cpu build" in said and "2.13.0" in said and "NVIDIA" in said
    said = install.build_problem("https://download.pytorch.org/whl/cu126", "2.13.0+cpu", "x")
    assert "cu126" in said and "+cpu" in said


def test_an_unreachable_index_stops_the_install_within_a_minute_and_says_what_to_do(tmp_path):
    """The issue's case: pip retried for 19 minutes, then installed PyPI's CUDA build and said 0."""
    index = f"http://127.0.0.1:{_closed_port()}/whl/cpu"
    rc, said, seconds = _run(
        sys.executable, ROOT / "requirements" / "learners.txt", _learner_env(TORCH_INDEX=index)
    )
    assert rc != 0, said
    assert seconds < FAIL_FAST_S, seconds
    assert f"TORCH_INDEX={index} cannot be reached" in said, said
    assert "make install " in said and install.CPU_INDEX in said  # the fallback, by name
    assert "Nothing" in said or "nothing was installed" in said


def test_an_index_without_torch_is_named_as_wrong(tmp_path):
    (tmp_path / "simple").mkdir()
    with _index(tmp_path) as url:
        rc, said, seconds = _run(
            sys.executable,
            ROOT / "requirements" / "learners.txt",
            _learner_env(TORCH_INDEX=f"{url}/simple"),
        )
    assert rc != 0 and seconds < FAIL_FAST_S, said
    assert "has no torch" in said and "HTTP 404" in said and "make install " in said, said


def test_an_index_without_the_pinned_release_is_named_as_wrong(tmp_path):
    _page(tmp_path / "whl" / "cpu" / "torch", "torch-2.0.0+cpu-cp311-cp311-linux_x86_64.whl")
    with _index(tmp_path) as url:
        rc, said, _ = _run(
            sys.executable,
            ROOT / "requirements" / "learners.txt",
            _learner_env(TORCH_INDEX=f"{url}/whl/cpu"),
        )
    assert rc != 0 and f"no wheel of torch {PIN_VERSION}" in said, said


@pytest.fixture(scope="module")
def bare_python(tmp_path_factory) -> str:
    """A new virtual environment with no torch, as at a learner's first `make install`, and with
    this environment's pip linked in (ensurepip took minutes on a loaded machine)."""
    where = tmp_path_factory.mktemp("bare-venv")
    venv.create(where, with_pip=False)
    python = where / "bin" / "python"
    site = subprocess.run(
        [str(python), "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
        capture_output=True,
        text=True,
        check=True,
    ).stdout.strip()
    import importlib.util

    pip = importlib.util.find_spec("pip").submodule_search_locations[0]  # this venv's pip
    Path(site, "pip").symlink_to(pip, target_is_directory=True)
    return str(python)


def test_asking_for_the_cpu_build_and_being_offered_another_fails_before_any_download(
    tmp_path, bare_python
):
    """The CPU index answers but offers no wheel this platform can use (here: a CPython 2.7 one),
    so pip would fall back to the default index's torch, PyPI's CUDA build (here a metadata-only
    stand-in): the install stops, says so, and installs nothing."""
    cpu = tmp_path / "whl" / "cpu" / "torch"
    _page(cpu, f"torch-{PIN_VERSION}+cpu-cp27-cp27mu-manylinux1_x86_64.whl")
    pypi = tmp_path / "pypi" / "torch"
    pypi.mkdir(parents=True)
    _page(pypi, _fake_wheel(pypi, PIN_VERSION))
    lock = tmp_path / "lock.txt"
    lock.write_text(f"torch=={PIN_VERSION}\nnvidia-cublas==13.1.0.3 ; sys_platform == 'linux'\n")
    with _index(tmp_path) as url:
        env = _learner_env(TORCH_INDEX=f"{url}/whl/cpu", PIP_INDEX_URL=f"{url}/pypi")
        rc, said, _ = _run(bare_python, lock, env)
        listed = subprocess.run([bare_python, "-m", "pip", "list"], capture_output=True, text=True)
    assert rc != 0, said
    assert f"pip would install torch {PIN_VERSION}: PyPI's build" in said, said
    assert "NVIDIA" in said and "Nothing was installed" in said
    assert "torch" not in listed.stdout.lower()


def test_a_different_build_installed_already_is_not_kept_silently(tmp_path):
    """This environment has the course machines' torch (+cpu); asking for CUDA 12.6 stops with
    the command that removes it, instead of pip keeping it and saying nothing."""
    have = install.installed_torch_version()
    if not have or "+" not in have:
        pytest.skip(f"needs a +label build of torch installed here, found {have}")
    other = "cu126" if not have.endswith("+cu126") else "cpu"
    _page(tmp_path / "whl" / other / "torch", f"torch-{PIN_VERSION}+{other}-cp311-none-any.whl")
    with _index(tmp_path) as url:
        rc, said, _ = _run(
            sys.executable,
            ROOT / "requirements" / "learners.txt",
            _learner_env(TORCH_INDEX=f"{url}/whl/{other}"),
        )
    assert rc != 0 and "pip uninstall -y torch" in said and f"+{have.split('+')[1]}" in said, said
