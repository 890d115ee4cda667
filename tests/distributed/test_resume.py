"""A run stopped, saved with DCP and resumed in a fresh state is *bitwise* the run that never
stopped (torch.equal on every parameter, losses compared exactly), and it is not once the RNG
states, the data position, the scheduler or the step are left out of the checkpoint."""

from __future__ import annotations

import functools
import random

import numpy as np
import pytest
import torch

from course.distributed import resume
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
    """FSDP2 on 2 ranks: each rank's own RNG states and the sharded model and optimizer."""
    runs = launch(
        functools.partial(resume.interrupted_and_uninterrupted, str(tmp_path / "ck"), steps=5),
        2,
        timeout_seconds=300,
    )
    assert [(r["losses_differ"], r["params_differ"]) for r in runs] == [([], [])] * 2
    assert runs[0]["losses_uninterrupted"] != runs[1]["losses_uninterrupted"]  # own shares
    assert {p.name for p in (tmp_path / "ck").iterdir()} >= {"__0_0.distcp", "__1_0.distcp"}


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
