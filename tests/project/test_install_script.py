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
