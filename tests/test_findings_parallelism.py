"""course.presentation.findings.parallelism: every outcome, from synthetic records."""

from __future__ import annotations

import pytest

from course.calculators import parallel
from course.presentation.findings import parallelism as F


def fit(bw, lat=2e-4, r2=0.99):
    return {"ranks": 2, "bandwidth_bytes_per_s": bw, "latency_seconds": lat, "r_squared": r2}


@pytest.mark.parametrize("f, phrase", [
    (fit(1e9), "more: here every byte is copied"), (fit(1e12), "fit larger messages"),
    (fit(1e9, r2=0.3), "rerun"), (None, "Nothing was measured"),
])  # fmt: skip
def test_alpha_beta_reads_every_outcome(f, phrase):
    assert phrase in F.alpha_beta(f, 450e9, "NVLink 4")


def test_alpha_beta_on_a_real_fit_object():
    sizes = [1e4, 1e5, 1e6]
    t = [parallel.ring_allreduce_seconds(s, 2, 1e9, latency_s=1e-4) for s in sizes]
    text = F.alpha_beta(parallel.fit_alpha_beta(sizes, t), 450e9, "NVLink 4")
    assert "100 µs" in text and "1,000.0 MB/s" in text and "450×" in text


def coll(name, size, seconds):
    return {"collective": name, "bytes": size, "seconds": seconds, "ranks": 2}


@pytest.mark.parametrize("rs, phrase", [(2e-3, "gloo on CPU does not run a ring"),
                                        (0.5e-3, "faster one here"), (1.02e-3, "as the ring model")])  # fmt: skip
def test_gloo_reduce_scatter_reads_every_outcome(rs, phrase):
    recs = [coll("all_gather", 1e6, 1e-3), coll("reduce_scatter", 1e6, rs),
            coll("all_gather", 1e3, 1e-4)]  # fmt: skip
    assert phrase in F.gloo_reduce_scatter(recs)


def test_gloo_reduce_scatter_without_both_collectives_says_so():
    assert F.gloo_reduce_scatter([coll("all_gather", 1e6, 1e-3)]) == F.MISSING


@pytest.mark.parametrize("sync, local, phrase", [
    (0.020, 0.0199, "no measurable cost"), (0.030, 0.010, "67%"), (0.012, 0.010, "added 17%"),
])  # fmt: skip
def test_ddp_overhead_reads_every_outcome(sync, local, phrase):
    rows = [{"sync_seconds": sync, "no_sync_seconds": local}] * 2
    assert phrase in F.ddp_overhead(rows)
    assert F.ddp_overhead([]) == F.MISSING


def ev(kind, start, end):
    return {"kind": kind, "start": start, "end": end}


@pytest.mark.parametrize("starts, phrase", [((1, 2), "All 2 buckets"), ((6, 7), "None of the 2"),
                                            ((1, 7), "1 of 2 buckets")])  # fmt: skip
def test_ddp_overlap_reads_every_outcome(starts, phrase):
    events = [ev("backward", 0, 5)] + [ev("all-reduce", s, s + 1) for s in starts]
    assert phrase in F.ddp_overlap(events)
    assert F.ddp_overlap([ev("backward", 0, 5)]) == F.MISSING


def test_pipeline_bubbles_reads_every_outcome():
    rows = [{"schedule": "GPipe", "bubble_fraction": 0.21, "formula": 0.2},
            {"schedule": "1F1B", "bubble_fraction": 0.45, "formula": 0.2},
            {"schedule": "Interleaved1F1B", "bubble_fraction": 0.0, "formula": 0.11}]  # fmt: skip
    text = F.pipeline_bubbles(rows)
    assert "close to the formula" in text and "sends, receives" in text and "uneven" in text
    assert "Interleaving shrank" in text
    rows[2]["bubble_fraction"] = 0.5
    assert "did *not* shrink" in F.pipeline_bubbles(rows)
    assert F.pipeline_bubbles([]) == F.MISSING


def gil_rec(kind, serial, threads, processes):
    return [{"kind": kind, "mode": m, "seconds": s}
            for m, s in (("serial", serial), ("threads", threads), ("processes", processes))]  # fmt: skip


@pytest.mark.parametrize("py, torch_, phrases", [
    ((1.0, 1.0, 0.55), (1.0, 0.55, 0.6), ["no gain", "own interpreter", "run them at the same"]),
    ((1.0, 0.5, 0.5), (1.0, 1.0, 1.0), ["free-threaded", "nothing to overlap"]),
    ((1.0, 0.7, 1.2), (1.0, 1.0, 1.0), ["free-threaded", "did not speed it up:"]),
    ((1.0, 1.05, 1.3), (1.0, 1.0, 1.0), ["no gain", "did not speed it up either", "rerun"]),
])  # fmt: skip
def test_gil_reads_every_outcome(py, torch_, phrases):
    text = F.gil(gil_rec("pure Python", *py) + gil_rec("torch matmul", *torch_))
    for phrase in phrases:
        assert phrase in text
    assert F.gil(gil_rec("torch matmul", *torch_)) == F.MISSING
    assert "Torch" not in F.gil(gil_rec("pure Python", *py))


def dl(w, seconds, wait):
    return {"num_workers": w, "seconds": seconds, "wait_seconds": wait}


@pytest.mark.parametrize("recs, phrase", [
    ([dl(0, 1.0, 0.1), dl(2, 0.95, 0.05)], "the model, not the data"),
    ([dl(0, 1.0, 0.9), dl(1, 0.6, 0.4), dl(2, 0.4, 0.1)], "2 worker(s) made the epoch 2.5×"),
    ([dl(0, 1.0, 0.9), dl(2, 1.1, 0.9)], "workers did not help"),
    ([dl(2, 1.1, 0.9)], "Nothing was measured"),
])  # fmt: skip
def test_dataloader_reads_every_outcome(recs, phrase):
    assert phrase in F.dataloader(recs)
