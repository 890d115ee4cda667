"""Device discovery reads the real machine; the CUDA version checks reason correctly."""

import torch

from course.measure import devices
from course.measure.devices import CudaDevice, CudaStack


def test_machine_info_reports_this_machine():
    info = devices.machine_info()
    assert info.logical_cores >= info.usable_cores >= 1
    assert info.ram_bytes > 2**30
    assert info.torch == torch.__version__
    assert info.accelerator in ("cpu", "cuda", "mps")
    assert all(size > 0 for size in info.caches.values())


def test_describe_machine_names_the_cpu_and_the_accelerator():
    line = devices.describe_machine()
    assert line.startswith("measured on: ")
    assert devices.cpu_model() in line
    assert ("no GPU" in line) == (not torch.cuda.is_available() and not devices.mps_available())


def test_available_devices_always_starts_with_cpu():
    found = devices.available_devices()
    assert found[0] == "cpu"
    assert ("cuda" in found) == torch.cuda.is_available()


def test_cache_sizes_parse_from_sysfs_strings():
    assert devices._size_to_bytes("32K") == 32 * 1024
    assert devices._size_to_bytes("32768K") == 32 * 2**20
    assert devices._size_to_bytes("1M") == 2**20
    assert devices._size_to_bytes("junk") is None


def test_an_old_driver_is_reported_as_a_problem():
    stack = CudaStack("12.8", 91000, "470.82", "11.4", ("sm_80", "sm_90"))
    [problem] = stack.problems()
    assert "update the driver" in problem


def test_minor_version_compatibility_is_not_a_problem():
    assert CudaStack("12.8", 91000, "550.54", "12.4", ("sm_80",)).problems() == []


def test_a_gpu_the_build_has_no_kernels_for_is_reported():
    old = CudaDevice(0, "Tesla K80", 12 * 2**30, 13, (3, 7), None)
    ampere = CudaDevice(1, "RTX 3090", 24 * 2**30, 82, (8, 6), None)
    problems = CudaStack("12.8", None, None, None, ("sm_80", "sm_90")).problems((old, ampere))
    assert len(problems) == 1 and "sm_37" in problems[0]


def test_verify_device_checks_the_numbers_on_the_cpu():
    result = devices.verify_device("cpu")
    assert result.ok and result.max_rel_error < 1e-5
    assert str(result).startswith("[OK] cpu:")


def test_verify_device_reports_an_unusable_device_instead_of_crashing():
    missing = "cuda" if not torch.cuda.is_available() else "cuda:99"
    result = devices.verify_device(missing)
    assert not result.ok and "Error" in result.detail


def test_parse_cpu_flags_reads_x86_matrix_features():
    avx2 = "processor\t: 0\nflags\t\t: fpu sse2 avx avx2 fma\n"
    amx = "flags\t\t: sse2 avx2 avx512f avx512_bf16 avx512_fp16 amx_bf16 amx_tile amx_int8\n"
    assert devices.parse_cpu_flags(avx2) == ("AVX2",)
    assert devices.parse_cpu_flags(amx) == (
        "AVX2",
        "AVX-512",
        "AVX-512 BF16",
        "AVX-512 FP16",
        "AMX",
        "AMX-BF16",
        "AMX-INT8",
    )
    assert not devices.has_bf16_units(devices.parse_cpu_flags(avx2))
    assert devices.has_bf16_units(devices.parse_cpu_flags(amx))


def test_parse_cpu_flags_reads_arm_features_and_tolerates_none():
    arm = "Features\t: fp asimd evtstrm aes sve bf16 i8mm\n"
    assert devices.parse_cpu_flags(arm) == ("NEON", "SVE", "BF16", "I8MM")
    assert devices.parse_cpu_flags("") == ()


def test_describe_machine_names_the_cpu_features_and_torch_kernels():
    info = devices.machine_info()
    text = devices.describe_machine(info)
    assert "CPU features:" in text
    assert info.cpu_capability == "" or info.cpu_capability in text
    for feature in info.cpu_features:
        assert feature in text
