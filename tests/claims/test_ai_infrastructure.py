"""course.claims.ai_infrastructure: *AI Infrastructure*'s bytes-per-parameter rules beside
:mod:`course.calculators.memory`, and its purchase prices as the reading writes them."""

from __future__ import annotations

import pytest

from course.calculators.memory import model_state_bytes, weights_bytes
from course.claims.ai_infrastructure import (
    model_bytes_as_written,
    purchase_usd_as_written,
    training_bytes_as_written,
)


def test_fp16_model_size_rule_is_the_weights_alone():
    """Its "Parameters x 2 bytes": 110M parameters (BERT-base) -> 0.22 GB, the weights alone."""
    assert model_bytes_as_written(110e6) == pytest.approx(0.22e9)
    assert model_bytes_as_written(7e9) == weights_bytes(7e9, "fp16")


def test_18_bytes_per_param_is_mixed_precision_with_fp32_gradients():
    """HF 'efficient training on one GPU' / Bekman: 6 (fp32 + fp16 weights) + 4 (fp32 grads) +
    8 (Adam) = 18; ZeRO's mixed precision (fp16 grads, Rajbhandari et al. 2019) needs 16."""
    m = model_state_bytes(1e9, precision="mixed_fp32_grads")
    assert training_bytes_as_written(1e9) == m.total_bytes
    assert model_state_bytes(1e9).total_bytes == 16e9 < training_bytes_as_written(1e9)


def test_purchase_price_is_the_midpoint_of_the_readings_range():
    """Its "~$30,000-$40,000" per H100 -> 8 x 35,000; "~$15,000" per A100."""
    assert purchase_usd_as_written("h100-sxm", 8) == 280_000
    assert purchase_usd_as_written("a100-80gb-sxm", 1) == 15_000
    with pytest.raises(ValueError, match="gpu must be one of"):
        purchase_usd_as_written("h100", 1)
    with pytest.raises(ValueError, match="gpus"):
        purchase_usd_as_written("h100-sxm", 0)
