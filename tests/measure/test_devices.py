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


# The driver against the build: NVIDIA's minimums (course.facts.gpu_support), faked versions.
PYPI_LINUX_TORCH = dict(torch_cuda="13.0", cudnn=91000, driver_max_cuda=None, arch_list=("sm_75",))


def test_a_cuda13_build_under_a_550_driver_names_the_cuda12_build_and_its_command():
    stack = CudaStack(driver="550.54.15", torch_version="2.13.0", **PYPI_LINUX_TORCH)
    [problem] = stack.problems()
    assert "older than 580" in problem and "CUDA 13.x" in problem
    assert "525.60.13+ on Linux" in problem
    assert (
        "`python -m pip uninstall -y torch && python -m pip install torch==2.13.0 "
        "--index-url https://download.pytorch.org/whl/cu126`" in problem
    )


def test_a_driver_too_old_for_any_cuda12_build_is_told_to_update_or_take_the_cpu_build():
    [problem] = CudaStack(driver="470.82.01", **PYPI_LINUX_TORCH).problems()
    assert "update the driver" in problem and "whl/cpu" in problem


def test_the_minimum_itself_and_newer_drivers_run_the_build():
    assert CudaStack(driver="580.65.06", **PYPI_LINUX_TORCH).problems() == []
    cu126 = dict(PYPI_LINUX_TORCH, torch_cuda="12.6")
    assert CudaStack(driver="525.60.13", **cu126).problems() == []
    assert CudaStack(driver="528.33", os_name="windows", **cu126).problems() == []
    assert CudaStack(driver="527.41", os_name="windows", **cu126).problems() != []


def test_a_cpu_build_on_a_machine_with_a_driver_names_the_cuda_build_the_driver_runs():
    cpu_build = dict(torch_cuda=None, cudnn=None, driver_max_cuda=None, arch_list=())
    new_driver = CudaStack(driver="581.57", os_name="windows", torch_version="2.13.0", **cpu_build)
    [new] = new_driver.problems()
    assert "CPU-only build" in new and "whl/cu130" in new
    [old] = CudaStack(driver="560.94", os_name="windows", **cpu_build).problems()
    assert "whl/cu126" in old and "install torch --index-url" in old
    assert CudaStack(driver=None, **cpu_build).problems() == []


def test_the_driver_version_comes_from_nvidia_smi_else_nvml_else_none(monkeypatch):
    smi = "| NVIDIA-SMI 550.54.15   Driver Version: 550.54.15   CUDA Version: 12.4 |"
    assert devices.driver_version(smi) == "550.54.15"
    monkeypatch.setattr(devices, "nvml_driver_version", lambda: "535.183.01")
    assert devices.driver_version("") == "535.183.01"


def test_without_nvml_the_driver_is_unknown_not_an_error(monkeypatch):
    def no_library(name):
        raise OSError(f"{name}: cannot open shared object file")

    monkeypatch.setattr(devices.ctypes, "CDLL", no_library)
    assert devices.nvml_driver_version() is None


def test_the_cuda_stack_prints_as_a_table_a_newcomer_can_read():
    """Issue 45: lesson 00 printed ``CudaStack(... cudnn=92000, driver=None ...)``. cudnn.h
    defines CUDNN_VERSION as major x 10,000 + minor x 100 + patch from cuDNN 9 (x 1,000 before):
    the H100 reference run's 91900 is 9.19.0, cuDNN 8.9.2 is 8902."""
    from course.measure.devices import cudnn_version

    assert (cudnn_version(91900), cudnn_version(92000), cudnn_version(8902)) == (
        "9.19.0",
        "9.20.0",
        "8.9.2",
    )
    table = CudaStack("13.0", 92000, None, None, ("sm_80", "sm_90"), torch_version="2.13.0").table()
    versions = {row["layer"]: row["version"] for row in table}
    assert versions["cuDNN"] == "9.20.0" and versions["NVIDIA driver"] == "none found"
    assert versions["GPU architectures torch has kernels for"] == "sm_80, sm_90"
    text = str(table)
    assert "92000" not in text and "driver=None" not in text and "CUDA runtime" in text
    cpu = CudaStack(None, None, None, None, ()).table()
    assert "none (a CPU-only or MPS build)" in str(cpu) and "no cuDNN" in str(cpu)
