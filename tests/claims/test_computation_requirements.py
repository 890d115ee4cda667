"""course.claims.computation_requirements: the reading's GPU-count rules beside
:mod:`course.calculators.memory`."""

from __future__ import annotations

import pytest

from course.calculators.memory import model_state_bytes
from course.claims.computation_requirements import (
    inference_gpus_as_written,
    training_gpus_as_written,
)


def test_seed001_rules_of_thumb_as_written():
    """Seed 001: GPUs ~ params(B) x bytes / memory(GB); training 6x that."""
    assert inference_gpus_as_written(70e9, 2, 80e9) == pytest.approx(1.75)
    assert training_gpus_as_written(70e9, 2, 80e9) == pytest.approx(10.5)
    # The 6x rule at 2 bytes is 12 B/param, below the 16 B/param of mixed-precision Adam.
    rule = training_gpus_as_written(7e9, 2, 1.0)
    assert rule < model_state_bytes(7e9).total_bytes
