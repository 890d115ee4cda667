"""Training, not only a forward pass, is the same computation under every kind of parallelism.

One launch of 2 gloo ranks trains the same seeded model on the same batch with Adam, one process
alone and then under DDP, FSDP2, tensor parallelism and pipeline parallelism; each must reproduce
the single process's loss curve and its weights after the last step (float rounding only).
"""

from __future__ import annotations

import pytest
import torch

from course.distributed import training
from course.distributed.launch import launch

STEPS = 4


@pytest.fixture(scope="module")
def ways():
    return launch(training.all_ways, 2, args=(STEPS,), timeout_seconds=300)


@pytest.fixture(scope="module")
def reference():
    return training.reference_train(STEPS, batch=4)


def test_every_way_reproduces_the_single_process_loss_curve(ways, reference):
    assert reference["losses"][-1] < 0.5 * reference["losses"][0]  # it trains: the curve falls
    for rank in ways:
        assert [w["way"] for w in rank] == list(training.WAYS)
        for w in rank:
            assert w["batch"] == 4 and len(w["losses"]) == STEPS
            assert w["losses"] == pytest.approx(reference["losses"], rel=1e-5), w["way"]


@pytest.mark.parametrize("way", training.WAYS)
def test_every_way_ends_with_the_single_process_weights(ways, reference, way):
    """FSDP2 and DDP after 4 Adam steps, TP's gathered shards, each PP rank's stage."""
    names: set[str] = set()
    for rank in ways:
        (w,) = [w for w in rank if w["way"] == way]
        names |= set(w["params"])
        for name, p in w["params"].items():
            torch.testing.assert_close(p, reference["params"][name], atol=1e-4, rtol=1e-4)
    assert names == set(reference["params"])  # every weight checked (PP: over both ranks)


def test_train_rejects_an_unknown_way():
    with pytest.raises(ValueError, match="way must be one of"):
        training.train("ZeRO-7")
