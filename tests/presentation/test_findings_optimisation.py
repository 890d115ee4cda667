"""Every branch of course/presentation/findings/optimisation.py, driven by synthetic records."""

from __future__ import annotations

from types import SimpleNamespace as R

import pytest

from course.presentation.findings import optimisation as f


@pytest.mark.parametrize(
    ("base", "new", "verdict"),
    [
        (1.0, 0.5, "faster"),
        (1.0, 2.0, "slower"),
        (1.0, 1.05, "same"),
        (1.0, 0.95, "same"),
    ],
)
def test_compare(base, new, verdict):
    assert f.compare(base, 0.01, new, 0.01) == verdict


def test_compare_noisy_and_degenerate():
    """One rule for every finding (findings._common.outcome): noise wins only when the spreads
    added up are as large as the difference."""
    assert f.compare(1.0, 1.5, 0.5, 0.01) == "noisy"
    assert f.compare(1.0, 0.9, 0.5, 0.01) == "faster"  # 2x beats a 90 % spread
    assert f.compare(1.0, 0.3, 0.8, 0.01) == "noisy"  # 1.25x does not beat a 31 % spread
    assert f.compare(0.0, 0.0, 0.5, 0.01) == "noisy"


def acc(m, steps, peak, sps, iqr=0.0):
    return R(
        micro_batch=m,
        accumulation_steps=steps,
        peak_bytes=peak,
        seconds_per_sample=sps,
        iqr_seconds=iqr,
    )


@pytest.mark.parametrize(
    ("big_sps", "iqr", "text"),
    [
        (0.5, 0.0, "faster"),
        (2.0, 0.0, "*slower*"),
        (1.0, 0.0, "about the same"),
        (0.5, 1.5, "Rerun"),
    ],
)
def test_accumulation_branches(big_sps, iqr, text):
    out = f.accumulation([acc(1, 8, 1e6, 1.0, iqr), acc(8, 1, 5e6, big_sps)])
    assert text in out and "keeps" in out


def test_accumulation_missing():
    assert "rerun" in f.accumulation([acc(1, 8, 1e6, 1.0)])


def rec(mode, acts, s, iqr=0.0):
    return R(recompute=mode, activations_bytes=acts, step_seconds=s, iqr_seconds=iqr)


def test_recomputation_branches():
    out = f.recomputation([rec("none", 100, 1.0), rec("selective", 80, 1.02), rec("full", 20, 1.3)])
    assert "20% less" in out and "within 10 %" in out and "30% more time" in out
    assert "faster" in f.recomputation([rec("none", 100, 1.0), rec("full", 20, 0.5)])
    assert "noise" in f.recomputation([rec("none", 100, 1.0), rec("full", 20, 1.3, 1.0)])
    assert "not measured" in f.recomputation([rec("none", 100, 1.0), rec("full", 20, 1.3)])
    assert "missing" in f.recomputation([rec("full", 20, 1.3)])


def test_recomputation_timed_once_is_not_judged_and_selective_slower_than_full_is_noise():
    once = R(recompute="full", activations_bytes=20, step_seconds=1.3, iqr_seconds=0.0, repeats=1)
    out = f.recomputation([rec("none", 100, 1.0), once])
    assert "timed only once" in out and "more time" not in out
    out = f.recomputation([rec("none", 100, 1.0), rec("selective", 80, 1.33), rec("full", 20, 1.1)])
    assert "33% more time" in out and "Selective took longer than full" in out
    out = f.recomputation([rec("none", 100, 1.0), rec("selective", 80, 1.05), rec("full", 20, 1.3)])
    assert "Selective took longer" not in out


def att(kind, s, peak, t, iqr=0.0):
    return R(
        kind=kind,
        seq_len=s,
        peak_bytes=peak,
        scores_bytes=peak / 2,
        median_seconds=t,
        iqr_seconds=iqr,
    )


@pytest.mark.parametrize(
    ("fused_t", "iqr", "text"),
    [
        (0.5, 0.0, "faster"),
        (2.0, 0.0, "slower"),
        (1.0, 0.0, "about the same"),
        (1.0, 0.9, "Rerun"),
    ],
)
def test_attention_branches(fused_t, iqr, text):
    out = f.attention(
        [
            att("naive", 512, 8e6, 1.0),
            att("sdpa", 512, 1e6, fused_t, iqr),
            att("naive", 1024, 3e7, 4.0),
        ]
    )
    assert text in out and "512 tokens" in out and "8.0x less memory" in out


def test_attention_missing():
    assert "rerun" in f.attention([att("naive", 512, 8e6, 1.0)])


def srv(v, b, size, t, err=0.0, iqr=0.0):
    return R(
        variant=v, batch=b, weights_bytes=size, step_seconds=t, iqr_seconds=iqr, relative_error=err
    )


def test_precision_branches():
    out = f.precision(
        [
            srv("fp32", 1, 4e6, 1.0),
            srv("bf16", 1, 2e6, 0.5, 0.004),
            srv("int8", 1, 1e6, 3.0),
            srv("int8", 16, 1e6, 1.0),
            srv("bf16", 4, 2e6, 1.0, iqr=0.9),
            srv("fp32", 4, 4e6, 1.0),
        ],
        skipped=["int4: torchao says no"],
    )
    assert "2.0x the fp32 tokens/s" in out and "50% of fp32" in out and "*slower*" in out
    assert "not run: int4: torchao says no" in out and "too noisy" in out
    assert "0.40%" in out
    assert "int8**, batch 16" not in out  # no fp32 baseline at batch 16
    same = f.precision([srv("fp32", 1, 4e6, 1.0), srv("bf16", 1, 2e6, 1.0)])
    assert "about fp32's speed" in same
    assert "missing" in f.precision([srv("bf16", 1, 2e6, 1.0)])
    assert "Only fp32" in f.precision([srv("fp32", 1, 4e6, 1.0)])


def bat(b, t, iqr=0.0):
    return R(batch=b, step_seconds=t, iqr_seconds=iqr, tokens_per_s=b / t)


def test_batching_branches():
    assert "Batching paid" in f.batching([bat(1, 1.0), bat(16, 2.0)])
    assert "did not grow" in f.batching([bat(1, 1.0), bat(16, 16.0)])
    assert "Rerun" in f.batching([bat(1, 1.0, 10.0), bat(16, 2.0)])  # spread beats 8x
    assert "rerun" in f.batching([bat(1, 1.0)])


def cmp(b, e, c, iqr=0.0):
    return R(
        batch=b,
        eager_seconds=e,
        compiled_seconds=c,
        speedup=e / c,
        eager_iqr_seconds=iqr,
        compiled_iqr_seconds=0.0,
    )


def test_compile_branches():
    out = f.compile_speedup(
        R(
            compile_seconds=10.0,
            records=[
                cmp(4, 1e-4, 5e-5),
                cmp(64, 1e-4, 2e-4),
                cmp(4096, 0.1, 0.1),
                cmp(8, 1.0, 1.0, 0.9),
            ],
        )
    )
    assert "pays for itself after about 200,000 calls" in out
    assert "*slower*" in out and "no gain" in out and "Rerun" in out
    assert "no call was timed" in f.compile_speedup(R(compile_seconds=10.0, records=[]))
    failed = R(compile_seconds=1.0, records=[], failure="the path contains a space")
    assert f.compile_speedup(failed) == "torch.compile did not run here: the path contains a space."


def ft(method, n, mem, t, iqr=0.0):
    return R(
        method=method,
        trainable_params=n,
        gradients_and_states_bytes=mem,
        step_seconds=t,
        iqr_seconds=iqr,
    )


@pytest.mark.parametrize(
    ("lora_t", "iqr", "text"),
    [
        (0.5, 0.0, "faster"),
        (2.0, 0.0, "slower"),
        (1.0, 0.0, "about as long"),
        (1.0, 0.9, "Rerun"),
    ],
)
def test_lora_branches(lora_t, iqr, text):
    out = f.lora([ft("full", 1000, 12000, 1.0), ft("lora", 10, 120, lora_t, iqr)])
    assert text in out and "1.0%" in out


def test_lora_missing():
    assert "missing" in f.lora([ft("full", 1000, 12000, 1.0)])


def test_offload_branches():
    step = R(seconds_per_param=1e-8, threads=2, step_seconds=0.01, iqr_seconds=0.0)
    slow = R(
        params=7e9,
        cpu_optimizer_seconds=70.0,
        link_time_seconds=0.4,
        compute_seconds=2.0,
        slowdown=36.0,
    )
    fast = R(
        params=7e9,
        cpu_optimizer_seconds=0.5,
        link_time_seconds=0.4,
        compute_seconds=20.0,
        slowdown=1.05,
    )
    assert "100 M parameters/s" in f.offload(step, slow) and "dominates" in f.offload(step, slow)
    assert "nearly free" in f.offload(step, fast)
    noisy = R(seconds_per_param=1e-8, threads=2, step_seconds=0.01, iqr_seconds=0.01)
    assert "Rerun" in f.offload(noisy, slow)
    assert "not measured" in f.offload(None, slow)
