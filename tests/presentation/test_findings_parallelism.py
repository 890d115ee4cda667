"""course.presentation.findings.parallelism: every outcome, from synthetic records."""

from __future__ import annotations

import pytest

from course.calculators import communication
from course.presentation.findings import parallelism as F


def fit(bw, lat=2e-4, r2=0.99):
    return {"ranks": 2, "bandwidth_bytes_per_s": bw, "latency_seconds": lat, "r_squared": r2}


@pytest.mark.parametrize(
    "f, phrase",
    [
        (fit(1e9), "more: here every byte is copied"),
        (fit(1e12), "fit larger messages"),
        (fit(1e9, r2=0.3), "rerun"),
        (None, "Nothing was measured"),
    ],
)
def test_alpha_beta_reads_every_outcome(f, phrase):
    assert phrase in F.alpha_beta(f, 450e9, "NVLink 4")


@pytest.mark.parametrize(
    "transport, phrase",
    [
        ("nccl, PCIe (PHB: a PCIe host bridge (the CPU))", "ran here, but over PCIe (PHB"),
        ("nccl, NVLink (NV18)", "NCCL ran on NVLink here too"),
    ],
)
def test_alpha_beta_on_gpus_names_the_link_it_ran_over(transport, phrase):
    text = F.alpha_beta(fit(1e9), 450e9, "NVLink 4", transport=transport)
    assert text.startswith("Fitted on this machine (2 nccl processes, ")
    assert phrase in text and "loopback" not in text
    assert "fit larger messages" in F.alpha_beta(fit(1e12), 450e9, "NVLink 4", transport=transport)


def test_alpha_beta_on_a_real_fit_object():
    sizes = [1e4, 1e5, 1e6]
    t = [communication.ring_allreduce_seconds(s, 2, 1e9, latency_seconds=1e-4) for s in sizes]
    text = F.alpha_beta(communication.fit_alpha_beta(sizes, t), 450e9, "NVLink 4")
    assert "100 µs" in text and "1,000.0 MB/s" in text and "450×" in text


def coll(name, size, seconds):
    return {"collective": name, "bytes": size, "seconds": seconds, "ranks": 2}


@pytest.mark.parametrize(
    "rs, phrase",
    [
        (2e-3, "gloo on CPU does not run a ring"),
        (0.5e-3, "faster one here"),
        (1.02e-3, "as the ring model"),
    ],
)
def test_gloo_reduce_scatter_reads_every_outcome(rs, phrase):
    recs = [
        coll("all_gather", 1e6, 1e-3),
        coll("reduce_scatter", 1e6, rs),
        coll("all_gather", 1e3, 1e-4),
    ]
    assert phrase in F.gloo_reduce_scatter(recs)


def test_gloo_reduce_scatter_without_both_collectives_says_so():
    assert F.gloo_reduce_scatter([coll("all_gather", 1e6, 1e-3)]) == F.MISSING


def paired(sync, local, noise=()):
    """Pairs (sync, no_sync) seconds: the same base times, with per-pair noise added to sync."""
    return [(sync + n, local) for n in noise or [0.0] * 5]


@pytest.mark.parametrize(
    "pairs, phrase",
    [
        (paired(0.030, 0.010), "67% of the step"),
        (paired(0.012, 0.010), "added 17% of the step"),
        (
            paired(0.0101, 0.010, (0.002, -0.002, 0.001, -0.001, 0.0)),
            "smaller than the step-to-step",
        ),
        (paired(0.010, 0.012), "*without* communication were the slower"),
    ],
)
def test_ddp_overhead_reads_every_outcome_from_paired_steps(pairs, phrase):
    text = F.ddp_overhead([{"pairs": pairs}, {"pairs": pairs}])
    assert phrase in text and f"of {2 * len(pairs)} pairs" in text
    assert F.ddp_overhead([]) == F.MISSING
    assert F.ddp_overhead([{"pairs": pairs[:2]}]) == F.MISSING  # too few pairs to judge


def test_ddp_overhead_sign_test_needs_four_of_five_pairs():
    three = [(0.012, 0.010)] * 3 + [(0.009, 0.010)] * 2  # 3 of 5 slower with sync: noise
    assert "step-to-step noise" in F.ddp_overhead([{"pairs": three}])
    four = [(0.012, 0.010)] * 4 + [(0.009, 0.010)]
    assert "added" in F.ddp_overhead([{"pairs": four}])


def ev(kind, start, end):
    return {"kind": kind, "start": start, "end": end}


@pytest.mark.parametrize(
    "starts, ready, phrase",
    [
        ((1, 2), 3, "All 2 buckets"),
        ((6, 7), 5, "None of the 2"),
        ((1, 7), 5, "1 of 2 buckets"),
    ],
)
def test_ddp_overlap_is_judged_against_the_last_gradient_not_the_backward_end(
    starts, ready, phrase
):
    # the backward ends at 9, after every bucket: judged against it, every bucket would overlap
    events = [ev("backward", 0, 9)] + [ev("all-reduce", s, s + 1) for s in starts]
    assert phrase in F.ddp_overlap({"events": events, "gradients_ready_seconds": ready})
    assert (
        F.ddp_overlap({"events": [ev("backward", 0, 5)], "gradients_ready_seconds": 1}) == F.MISSING
    )
    assert F.ddp_overlap({"events": events, "gradients_ready_seconds": None}) == F.MISSING


def test_ddp_overlap_states_the_share_of_all_reduce_time_hidden():
    events = [ev("all-reduce", 1, 3), ev("all-reduce", 5, 7)]  # 1 of 2 s hidden before 2
    assert "25% of the all-reduce time" in F.ddp_overlap(
        {"events": events, "gradients_ready_seconds": 2}
    )


def test_pipeline_bubbles_reads_every_outcome():
    rows = [
        {"schedule": "GPipe", "bubble_fraction": 0.21, "formula": 0.2},
        {"schedule": "1F1B", "bubble_fraction": 0.45, "formula": 0.2},
        {"schedule": "Interleaved1F1B", "bubble_fraction": 0.0, "formula": 0.11},
    ]
    text = F.pipeline_bubbles(rows)
    assert "close to the formula" in text and "sends, receives" in text and "uneven" in text
    assert "Interleaving shrank" in text
    rows[2]["bubble_fraction"] = 0.5
    assert "did *not* shrink" in F.pipeline_bubbles(rows)
    assert F.pipeline_bubbles([]) == F.MISSING


def gil_rec(kind, serial, threads, processes):
    return [
        {"kind": kind, "mode": m, "seconds": s}
        for m, s in (("serial", serial), ("threads", threads), ("processes", processes))
    ]


@pytest.mark.parametrize(
    "py, torch_, phrases",
    [
        (
            (1.0, 1.0, 0.55),
            (1.0, 0.55, 0.6),
            ["no gain", "own interpreter", "run them at the same"],
        ),
        ((1.0, 0.5, 0.5), (1.0, 1.0, 1.0), ["free-threaded", "nothing to overlap"]),
        ((1.0, 0.7, 1.2), (1.0, 1.0, 1.0), ["free-threaded", "did not speed it up:"]),
        ((1.0, 1.05, 1.3), (1.0, 1.0, 1.0), ["no gain", "did not speed it up either", "rerun"]),
    ],
)
def test_gil_reads_every_outcome(py, torch_, phrases):
    text = F.gil(gil_rec("pure Python", *py) + gil_rec("torch matmul", *torch_))
    for phrase in phrases:
        assert phrase in text
    assert F.gil(gil_rec("torch matmul", *torch_)) == F.MISSING
    assert "Torch" not in F.gil(gil_rec("pure Python", *py))


def dl(w, seconds, wait):
    return {"num_workers": w, "seconds": seconds, "wait_seconds": wait}


@pytest.mark.parametrize(
    "recs, phrase",
    [
        ([dl(0, 1.0, 0.1), dl(2, 0.95, 0.05)], "the model, not the data"),
        ([dl(0, 1.0, 0.9), dl(1, 0.6, 0.4), dl(2, 0.4, 0.1)], "2 worker(s) made the epoch 2.5×"),
        ([dl(0, 1.0, 0.9), dl(2, 1.1, 0.9)], "workers did not help"),
        ([dl(2, 1.1, 0.9)], "Nothing was measured"),
    ],
)
def test_dataloader_reads_every_outcome(recs, phrase):
    assert phrase in F.dataloader(recs)
