"""course.presentation.findings.matmul_rates: every outcome each finding distinguishes, on
synthetic records."""

from course.presentation.findings import matmul_rates


def rec(library="torch", dtype="fp32", size=512, rate=1e11, spread=0.01, threads=1, device="cpu"):
    seconds = 2 * size**3 / rate
    return {
        "library": library,
        "dtype": dtype,
        "size": size,
        "flop_per_s": rate,
        "device": device,
        "seconds": seconds,
        "spread_seconds": spread * seconds,
        "threads": threads,
    }


def test_library_comparison_numpy_faster_names_both_thread_counts():
    text = matmul_rates.library_comparison(
        [
            rec("numpy", "fp64", 1024, 7e10),
            rec("torch", "fp64", 1024, 3.5e10),
            rec("python", "fp64", 32, 3e7),
        ]
    )
    assert "numpy was 2.0× faster than torch" in text
    assert "1 thread" in text and "2,333× more FLOPs" in text


def test_library_comparison_torch_faster():
    text = matmul_rates.library_comparison(
        [rec("numpy", "fp64", 256, 2e10), rec("torch", "fp64", 256, 6e10)]
    )
    assert "torch was 3.0× faster than numpy" in text


def test_library_comparison_same_and_noisy_and_missing():
    same = matmul_rates.library_comparison(
        [rec("numpy", "fp64", 256, 5e10), rec("torch", "fp64", 256, 5.2e10)]
    )
    assert "about the same" in same
    noisy = matmul_rates.library_comparison(
        [rec("numpy", "fp64", 256, 5e10, spread=0.5), rec("torch", "fp64", 256, 6.5e10, spread=0.3)]
    )
    assert "rerun" in noisy and "too wide to rank" in noisy
    assert "not both measured" in matmul_rates.library_comparison([rec("python", "fp64", 16, 3e7)])


def test_library_comparison_flags_unpinned_threads():
    text = matmul_rates.library_comparison(
        [rec("numpy", "fp64", 256, 5e10, threads=None), rec("torch", "fp64", 256, 2e10)]
    )
    assert "not a like-for-like" in text and "default thread count" in text


def test_dtype_speed_bf16_faster_names_the_units_present():
    text = matmul_rates.dtype_speed(
        [rec(dtype="fp32", rate=1e11), rec(dtype="bf16", rate=3.1e11)],
        features=("AVX2", "AVX-512 BF16", "AMX-BF16"),
    )
    assert "3.1× faster than fp32" in text and "AVX-512 BF16 and AMX-BF16" in text


def test_dtype_speed_bf16_slower_without_units_says_it_converts():
    text = matmul_rates.dtype_speed(
        [rec(dtype="fp32", rate=8e10), rec(dtype="bf16", rate=2e9)], features=("AVX2",)
    )
    assert "40× slower than fp32" in text and "no bf16 matrix instructions" in text


def test_dtype_speed_slower_despite_units_blames_the_path_not_the_cpu():
    text = matmul_rates.dtype_speed(
        [rec(dtype="fp32", rate=8e10), rec(dtype="fp16", rate=2e10)], features=("AVX-512 FP16",)
    )
    assert "4.0× slower" in text and "generic path" in text


def test_dtype_speed_same_noisy_missing_and_gpu():
    same = matmul_rates.dtype_speed([rec(dtype="fp32", rate=1e11), rec(dtype="fp64", rate=1.05e11)])
    assert "about fp32's rate" in same
    noisy = matmul_rates.dtype_speed(
        [rec(dtype="fp32", rate=1e11, spread=0.4), rec(dtype="bf16", rate=1.3e11, spread=0.3)]
    )
    assert "rerun" in noisy
    assert "not both measured" in matmul_rates.dtype_speed([rec(dtype="bf16")])
    gpu = matmul_rates.dtype_speed(
        [rec(dtype="fp32", rate=5e13, device="cuda"), rec(dtype="bf16", rate=7e14, device="cuda")]
    )
    assert "Tensor Cores" in gpu and "14× faster" in gpu
    int8 = matmul_rates.dtype_speed(
        [rec(dtype="fp32", rate=1e11), rec(dtype="int8", rate=9e11)], features=("AMX-INT8",)
    )
    assert "integer operations" in int8 and "9.0× faster" in int8
    fp8 = matmul_rates.dtype_speed(
        [rec(dtype="fp32", rate=2.5e10), rec(dtype="fp8_e4m3", rate=1.5e7)]
    )
    assert "1,667× slower" in fp8 and "no CPU multiplies fp8" in fp8 and "slow generic path" in fp8


def test_dtype_speed_reports_a_dtype_without_a_common_size():
    text = matmul_rates.dtype_speed([rec(dtype="fp32", size=512), rec(dtype="bf16", size=64)])
    assert "not measured at a size" in text


def test_alignment_holds_on_the_reference_h100_figures():
    # H100 SXM, reference run 2026-11-22 (course/facts/data/reference): bf16 TFLOP/s by size
    sizes = {4096: 708e12, 4104: 627e12, 4100: 218e12, 4095: 155e12}
    text = matmul_rates.alignment([rec(dtype="bf16", size=n, rate=v) for n, v in sizes.items()])
    assert text.startswith("The claim holds") and "2.9× slower at least" in text


def test_alignment_fails_and_missing():
    text = matmul_rates.alignment([rec(size=4096, rate=1e12), rec(size=4095, rate=1e12)])
    assert "does not hold" in text
    assert "need sizes both on and off" in matmul_rates.alignment([rec(size=4096)])


def test_peak_fractions_divides_by_the_given_peak():
    text = matmul_rates.peak_fractions(
        [rec(dtype="bf16", size=4096, rate=702e12)], {"bf16": 989.4e12, "fp8": 1e15}, label="H100"
    )
    assert "71% of the dense datasheet peak" in text and "fp8: not measured" in text


def test_dtype_speed_reads_the_amx_host_of_the_h100_run_as_faster_with_amx():
    # the 16-core Xeon beside the H100 (reference run 2026-11-22): bf16 3.2-4.4 TFLOP/s vs fp32
    # 0.8-1.4
    from course.facts.data import reference
    from course.measure.devices import parse_cpu_flags

    rows = reference.records(reference.H100, "matmul", "cpu_matmul_sweep")
    features = parse_cpu_flags(reference.load(reference.H100, "machine")["lscpu"])
    text = matmul_rates.dtype_speed(rows, features=features)
    assert "faster than fp32" in text and "AMX-BF16" in text and "no bf16" not in text
