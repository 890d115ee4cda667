"""course.presentation.findings threads / caches / overhead / batching / precision: every
outcome, synthetic records."""

import pytest

from course.presentation.findings import batching, caches, overhead, precision, threads


def mm(threads_, rate, spread=0.02):
    seconds = 2 * 1024**3 / rate
    return {
        "threads": threads_,
        "flop_per_s": rate,
        "seconds": seconds,
        "spread_seconds": spread * seconds,
    }


@pytest.mark.parametrize(
    ("two", "spread", "phrase"),
    [
        (1.95e11, 0.02, "nearly linear"),
        (1.4e11, 0.02, "less than 2×"),
        (1.02e11, 0.02, "no gain"),
        (0.58e11, 0.02, "*slower*"),
        (1.3e11, 0.4, "rerun"),
    ],
)
def test_thread_scaling_reads_every_outcome(two, spread, phrase):
    text = threads.scaling([mm(1, 1e11), mm(2, two, spread)])
    assert phrase in text and "ideal 2×" in text


def test_thread_scaling_with_one_count_says_so():
    assert "Only one thread count" in threads.scaling([mm(1, 1e11)])


def plateau(level, size, bw):
    return {"level": level, "capacity_bytes": size, "bytes_per_s": bw, "points": 3}


def test_cache_hierarchy_steps_in_order():
    levels = [
        plateau("L1d", 48 * 2**10, 150e9),
        plateau("L2", 2**20, 95e9),
        plateau("memory", None, 17e9),
    ]
    text = caches.hierarchy(levels)
    assert "L1d (48.0 KiB): 150.0 GB/s" in text and "L2 → memory: a step, 5.6× slower below" in text
    assert caches.in_order(levels)


def test_cache_hierarchy_flags_an_inverted_level_as_the_method():
    # the 16-core host of the H100 reference run: L1d 143.5, L2 494.1, L3 281.6 GB/s
    levels = [
        plateau("L1d", 48 * 2**10, 143.5e9),
        plateau("L2", 2 * 2**20, 494.1e9),
        plateau("L3", 300 * 2**20, 281.6e9),
    ]
    text = caches.hierarchy(levels)
    assert "**inverted**" in text and "not the hardware" in text
    assert "No point reached main memory" in text
    assert not caches.in_order(levels)


def test_cache_hierarchy_no_step_and_missing():
    text = caches.hierarchy(
        [plateau("L2", 2**20, 95e9), plateau("L3", 32 * 2**20, 92e9), plateau("memory", None, 20e9)]
    )
    assert "L2 → L3: no clear step" in text
    assert "No cache level" in caches.hierarchy([])


class Fit:
    def __init__(self, fixed, rate):
        self.fixed_seconds, self.flop_per_s = fixed, rate


def test_fixed_costs_crossover_smallest_never_and_missing():
    fits = {
        "python": Fit(2e-6, 3e7),
        "numpy": Fit(1.2e-6, 3.5e10),
        "torch": Fit(5e-6, 3e10),
        "slow": Fit(9e-6, 1e7),
    }
    text = overhead.fixed_costs(
        fits, {"numpy": 0.0, "torch": 3.2, "slow": float("inf")}, baseline="python"
    )
    assert "Least fixed cost per call: **numpy**" in text
    assert "numpy works 1,167× as fast as the python per FLOP" in text
    assert "wins from the smallest size measured (n = 1)" in text
    assert "overtakes the python from n ≈ 3" in text
    assert "slow never overtakes" in text
    assert "Fewer than two" in overhead.fixed_costs({"numpy": fits["numpy"]}, {}, baseline="numpy")


def batch(b, seconds, spread=0.02):
    flops = 2 * 4096 * 4096 * b
    return {
        "batch": b,
        "seconds": seconds,
        "flop_per_s": flops / seconds,
        "spread_seconds": spread * seconds,
    }


def test_batching_curve_free_compute_bound_none_noisy_missing():
    free = batching.curve([batch(1, 1e-3), batch(64, 2e-3)])
    assert "almost free" in free and "32× the throughput" in free
    bound = batching.curve([batch(1, 1e-3), batch(16, 1.5e-3), batch(256, 1e-1)])
    assert "up to batch 16" in bound and "compute-bound" in bound
    assert "not limited by reading its weights" in batching.curve(
        [batch(1, 1e-3), batch(2, 1.9e-3)]
    )
    assert "rerun" in batching.curve([batch(1, 1e-3, 0.9), batch(2, 1.9e-3)])
    assert "Fewer than two" in batching.curve([batch(1, 1e-3)])


def test_decode_vs_floor_on_the_reference_h100_figures():
    # inference_7b.json of the H100 SXM reference run: 13.48 GB of bf16 weights, 3.35 TB/s datasheet
    w = 13_476_831_232
    decode = [
        {
            "batch": 1,
            "cuda_graph": False,
            "seconds_per_step": 7.69e-3,
            "tokens_per_s": 130,
            "weight_bytes": w,
            "kv_bytes_read": 5.4e8,
        },
        {
            "batch": 1,
            "cuda_graph": True,
            "seconds_per_step": 6.38e-3,
            "tokens_per_s": 157,
            "weight_bytes": w,
            "kv_bytes_read": 5.4e8,
        },
        {
            "batch": 64,
            "cuda_graph": True,
            "seconds_per_step": 17.7e-3,
            "tokens_per_s": 3618,
            "weight_bytes": w,
            "kv_bytes_read": 3.4e10,
        },
    ]
    text = batching.decode_vs_floor(decode, 3.35e12, label="H100")
    assert (
        "4.02 ms per token" in text and "1.6× the floor" in text and "63% of the datasheet" in text
    )
    assert "1.31 ms more per token" in text and "3,618 tokens/s" in text
    assert "no batch-1" in batching.decode_vs_floor([], 3.35e12, label="H100")


@pytest.mark.parametrize(
    ("bf16_ms", "units", "device", "phrase"),
    [
        (1.2, True, "cpu", "2.1× faster: this cpu has 16-bit matrix instructions"),
        (13.7, False, "cpu", "no 16-bit matrix instructions"),
        (13.7, True, "cpu", "spends its time in the casts"),
        (2.6, None, "cpu", "about the same"),
        (0.5, True, "cuda", "Tensor Cores"),
    ],
)
def test_autocast_speed_every_outcome(bf16_ms, units, device, phrase):
    text = precision.autocast_speed(
        {"fp32": [2.5e-3] * 8, "bf16": [bf16_ms * 1e-3] * 8}, device=device, bf16_units=units
    )
    assert phrase in text and "fp16 autocast: not run" in text


def test_autocast_speed_noisy_and_missing():
    noisy = precision.autocast_speed(
        {"fp32": [2e-3, 2.5e-3, 3e-3, 4e-3], "bf16": [1.5e-3, 2.5e-3, 3e-3, 5e-3]},
        device="cpu",
        bf16_units=None,
    )
    assert "rerun" in noisy
    assert "fp32 run is missing" in precision.autocast_speed({}, device="cpu", bf16_units=None)


def variant(name, b, ms, iqr=0.02):
    return {"name": name, "batch": b, "median_seconds": ms * 1e-3, "iqr_seconds": iqr * ms * 1e-3}


def test_quantised_speed_small_batch_wins_and_large_batch_loses():
    text = precision.quantised_speed(
        [
            variant("fp32", 1, 2.4),
            variant("int8 (course)", 1, 1.3),
            variant("fp32", 64, 17.8),
            variant("int8 (course)", 64, 25.3),
            variant("bf16", 64, 100.9),
        ]
    )
    assert (
        "batch 1: against fp32, int8 (course) 1.8× faster" in text and "reading the weights" in text
    )
    assert "batch 64" in text and "fp32 was fastest" in text and "bf16 5.7× slower" in text


def test_quantised_speed_large_batch_wins_noisy_and_missing():
    text = precision.quantised_speed([variant("fp32", 64, 17.8), variant("int8 (course)", 64, 9.0)])
    assert "kernels for the smaller type" in text
    noisy = precision.quantised_speed([variant("fp32", 1, 2.4, 0.4), variant("bf16", 1, 2.0, 0.3)])
    assert "bf16 noisy" in noisy
    assert "fp32 was not measured" in precision.quantised_speed([variant("bf16", 1, 2.0)])
    assert "No variant" in precision.quantised_speed([])
