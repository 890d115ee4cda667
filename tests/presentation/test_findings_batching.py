"""course.presentation.findings.batching: every outcome, from synthetic records."""

from course.presentation.findings import batching


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
