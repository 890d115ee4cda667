"""The driver minimums and the feature table that `course check` and the GPU guards read."""

import pytest

from course.facts import gpu_support


def test_driver_minimums_are_the_release_notes_figures():
    # NVIDIA CUDA Toolkit release notes, 'CUDA Toolkit and Minimum Required Driver Version for
    # CUDA Minor Version Compatibility': 12.x >= 525.60.13 (Linux), >= 528.33 (Windows); 13.x >= 580
    assert gpu_support.driver_minimum(12, "linux") == (525, 60, 13)
    assert gpu_support.driver_minimum(12, "windows") == (528, 33)
    assert gpu_support.driver_minimum(13, "linux") == (580,)
    assert gpu_support.driver_minimum(11, "linux") is None
    # a CUDA 12 build runs on drivers a CUDA 13 build refuses: the advice depends on it
    assert gpu_support.driver_minimum(12, "linux") < gpu_support.driver_minimum(13, "linux")


def test_the_cuda12_build_is_on_pytorchs_own_index():
    assert gpu_support.CUDA12_BUILD.index_url == "https://download.pytorch.org/whl/cu126"
    assert gpu_support.CUDA12_BUILD.cuda.startswith("12.")
    assert gpu_support.CUDA13_BUILD.cuda.startswith("13.")


@pytest.mark.parametrize(
    ("triton", "oldest"), [((3, 7), (8, 0)), ((3, 3), (8, 0)), ((3, 2), (7, 0)), ((2, 1), (7, 0))]
)
def test_triton_supports_compute_capability_8_from_release_3_3(triton, oldest):
    assert gpu_support.triton_min_capability(triton) == oldest


def test_a_t4_lacks_tf32_bf16_fp8_and_flash_attention():
    t4 = (7, 5)  # NVIDIA T4: Turing, compute capability 7.5
    lacking = {key for key, f in gpu_support.FEATURES.items() if t4 < f.since}
    assert lacking == {"tf32", "bf16", "fp8", "flash_attention"}
    h100 = (9, 0)
    assert all(h100 >= f.since for f in gpu_support.FEATURES.values())
    l4 = (8, 9)  # Ada: FP8 Tensor Cores
    assert l4 >= gpu_support.FEATURES["fp8"].since > (8, 6)
    for feature in gpu_support.FEATURES.values():
        assert feature.source and feature.without
