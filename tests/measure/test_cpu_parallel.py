"""course.measure.cpu_parallel: records well formed, budgets small (speeds are never asserted)."""

from __future__ import annotations

import pytest
import torch

from course.measure import cpu_parallel as C


def test_gil_comparison_records_every_kind_and_mode():
    threads = torch.get_num_threads()
    records = C.gil_comparison(tasks=2, workers=2, work=10_000)
    assert torch.get_num_threads() == threads
    assert [(r["kind"], r["mode"]) for r in records] == [(k, m) for k in C.KINDS for m in C.MODES]
    assert all(r["seconds"] > 0 and r["tasks"] == 2 for r in records)
    assert all(r["startup_seconds"] > 0 for r in records if r["mode"] == "processes")


def test_dataloader_sweep_splits_each_epoch_into_wait_and_compute():
    records = C.dataloader_sweep(workers=(0, 1), length=32, batch=8, work=100)
    assert [r["num_workers"] for r in records] == [0, 1]
    for r in records:
        assert r["batches"] == 4
        assert 0 < r["wait_seconds"] + r["compute_seconds"] <= r["seconds"] * 1.01


def test_tasks_and_dataset_are_deterministic_and_bad_arguments_raise():
    assert C.python_task(1000) == C.python_task(1000)
    data = C.SlowDataset(length=4, work=10)
    x0, y0 = data[1]
    x1, y1 = data[1]
    assert len(data) == 4 and torch.equal(x0, x1) and int(y0) == int(y1)
    with pytest.raises(ValueError, match="tasks"):
        C.gil_comparison(tasks=0)
    with pytest.raises(ValueError, match="workers"):
        C.dataloader_sweep(workers=(-1,))
