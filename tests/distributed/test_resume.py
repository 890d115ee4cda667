"""A run stopped, saved with DCP and resumed in a fresh state is *bitwise* the run that never
stopped (torch.equal on every parameter, losses compared exactly), and it is not once the RNG
states, the data position, the scheduler or the step are left out of the checkpoint."""

from __future__ import annotations

import functools
import random

import numpy as np
import pytest
import torch

from course.distributed import checkpoint, resume
from course.distributed.launch import launch


def _without(part: str) -> tuple[str, ...]:
    return tuple(p for p in resume.PARTS if p != part)


def test_resumed_run_is_bitwise_the_uninterrupted_one(tmp_path):
    r = resume.interrupted_and_uninterrupted(str(tmp_path / "ck"), steps=6, stop_at=3)
    assert len(r["losses_resumed"]) == len(r["losses_uninterrupted"]) == 6
    assert r["losses_differ"] == [] and r["params_differ"] == []
    assert len(set(r["losses_uninterrupted"])) == 6  # the losses move: the comparison can fail


@pytest.mark.parametrize("part", ["rng", "data", "scheduler", "step"])
def test_each_part_is_needed(part, tmp_path):
    r = resume.interrupted_and_uninterrupted(
        str(tmp_path / "ck"), steps=6, stop_at=3, parts=_without(part)
    )
    assert r["losses_differ"] and r["params_differ"]


@pytest.mark.slow
def test_two_sharded_ranks_resume_bitwise(tmp_path):
    """FSDP2 on 2 ranks, each rank's generators seeded apart: each rank's own RNG states and the
    sharded model and optimizer. A checkpoint that keeps one RNG entry for all ranks (DCP keeps
    one copy of a key) gives rank 1 rank 0's streams and fails this test."""
    runs = launch(
        functools.partial(resume.interrupted_and_uninterrupted, str(tmp_path / "ck"), steps=5),
        2,
        timeout_seconds=900,
    )
    assert [(r["losses_differ"], r["params_differ"]) for r in runs] == [([], [])] * 2
    assert runs[0]["losses_uninterrupted"] != runs[1]["losses_uninterrupted"]  # own shares
    assert {p.name for p in (tmp_path / "ck").iterdir()} >= {"__0_0.distcp", "__1_0.distcp"}


def _rng_equal(a: dict, b: dict) -> bool:
    return checkpoint.states_equal({"rng": a}, {"rng": b}) == []


def _fresh_rng(step: int, rank: int) -> dict:
    resume.seed_everything(resume.fresh_seed(0, step, rank))
    return resume.rng_state()


def _check_resharded(saved: list[dict], loaded: list[dict]) -> None:
    """Every rank of the new world holds the whole saved model, optimizer, scheduler, step and
    data position; its generators are its own saved rank's, or fresh ones for a new rank."""
    n, m = len(saved), len(loaded)
    for r, got in enumerate(loaded):
        snap = got["loaded"]
        assert (snap["rank"], snap["world"], got["saved_world"]) == (r, m, n)
        assert checkpoint.states_equal(snap["state"], saved[0]["state"]) == []
        for key in ("scheduler", "step", "data"):
            assert snap[key] == saved[0][key], key
        if r < n:
            assert _rng_equal(snap["rng"], saved[r]["rng"])
        else:
            assert _rng_equal(snap["rng"], _fresh_rng(saved[0]["step"], r))
            assert not any(_rng_equal(snap["rng"], s["rng"]) for s in saved)


@pytest.mark.slow
def test_a_state_saved_on_2_ranks_reshards_to_4_to_2_and_to_1(tmp_path):
    """2 -> 4 -> 2 and 2 -> 1: DCP reshards the model and Adam's moments (every tensor equal to
    the byte), the data position is global, and each rank's generators follow the stated rule
    (resume.rng_source): an old rank continues its own, a new rank gets fresh ones."""
    two, four = str(tmp_path / "on2"), str(tmp_path / "on4")
    saved = launch(functools.partial(resume.train_and_save, two), 2, timeout_seconds=900)
    assert not _rng_equal(saved[0]["rng"], saved[1]["rng"])  # the ranks are seeded apart
    on4 = launch(
        functools.partial(resume.load_elsewhere, two, save_to=four), 4, timeout_seconds=900
    )
    _check_resharded(saved, on4)  # 2 -> 4
    on2 = launch(functools.partial(resume.load_elsewhere, four), 2, timeout_seconds=900)
    _check_resharded([r["saved"] for r in on4], on2)  # 4 -> 2
    _check_resharded(saved, [resume.load_elsewhere(two)])  # 2 -> 1, in this process


def test_the_rng_rule_keeps_old_ranks_and_gives_new_ones_fresh_streams():
    assert [resume.rng_source(r, 2, 4) for r in range(4)] == [0, 1, None, None]
    assert [resume.rng_source(r, 4, 2) for r in range(2)] == [0, 1]
    assert resume.rng_source(0, 2, 1) == 0
    seeds = {resume.fresh_seed(0, step, rank) for step in (3, 4) for rank in (2, 3)}
    assert len(seeds) == 4  # another step or rank, another stream
    with pytest.raises(ValueError, match="rank must be in"):
        resume.rng_source(4, 2, 4)


def test_rng_state_round_trips_every_generator():
    resume.seed_everything(3)
    saved = resume.rng_state()
    first = (torch.rand(3), np.random.rand(3), [random.random() for _ in range(3)])
    resume.seed_everything(4)
    resume.set_rng_state(saved)
    again = (torch.rand(3), np.random.rand(3), [random.random() for _ in range(3)])
    assert torch.equal(first[0], again[0])
    assert np.array_equal(first[1], again[1]) and first[2] == again[2]


def test_sampler_resumes_mid_epoch_and_reshuffles_each_epoch():
    s = resume.ShuffledSampler(5, seed=1)
    first_epoch = s.take(5)
    assert sorted(first_epoch) == list(range(5))
    s.take(2)
    state = s.state_dict()
    t = resume.ShuffledSampler(5, seed=1)
    t.load_state_dict(state)
    assert state == {"epoch": 1, "position": 2} and t.take(4) == s.take(4)
    assert resume.ShuffledSampler(5, seed=1).take(10)[5:] != first_epoch
