"""course.measure.torchmodels: the torch modules built from the presets train on a CPU, a causal
decoder ignores future tokens, BERT returns hidden states and a pooled output, and the largest
preset builds on the meta device without memory. Their parameter counts against the configs:
tests/facts/test_models.py."""

from __future__ import annotations

import time

import pytest
import torch

from course.facts.models import PRESETS
from course.measure.torchmodels import build_model


def test_small_config_runs_forward_and_backward_on_cpu():
    cfg = PRESETS["llama-3-8b"].replace(
        layers=2, hidden=64, heads=4, kv_heads=2, ffn_hidden=96, vocab=100, max_positions=32
    )
    torch.manual_seed(0)
    model = build_model(cfg, device="cpu")
    logits = model(torch.randint(0, 100, (2, 16)))
    assert logits.shape == (2, 16, 100)
    logits.logsumexp(-1).mean().backward()
    assert all(p.grad is not None for p in model.parameters())


def test_causal_decoder_output_does_not_depend_on_future_tokens():
    cfg = PRESETS["gpt2"].replace(
        layers=1, hidden=32, heads=2, kv_heads=2, ffn_hidden=64, vocab=50, max_positions=16
    )
    torch.manual_seed(0)
    model = build_model(cfg, device="cpu").eval()
    ids = torch.randint(0, 50, (1, 8))
    changed = ids.clone()
    changed[0, -1] = (ids[0, -1] + 1) % 50
    with torch.no_grad():
        a, b = model(ids), model(changed)
    torch.testing.assert_close(a[:, :-1], b[:, :-1])
    assert not torch.allclose(a[:, -1], b[:, -1])


def test_bert_returns_hidden_states_and_pooled_output():
    cfg = PRESETS["bert-base"].replace(
        layers=1, hidden=32, heads=2, kv_heads=2, ffn_hidden=64, vocab=50, max_positions=16
    )
    states, pooled = build_model(cfg, device="cpu")(torch.randint(0, 50, (3, 8)))
    assert states.shape == (3, 8, 32) and pooled.shape == (3, 32)


def test_largest_preset_builds_on_meta_quickly():
    """Meta tensors have no storage: GPT-3 175B builds without memory (speed is reported, the
    bound here is only a generous guard against accidentally allocating)."""
    start = time.perf_counter()
    model = build_model(PRESETS["gpt-3-175b"])
    assert next(model.parameters()).is_meta
    assert time.perf_counter() - start < 30


def test_build_model_refuses_a_non_config():
    with pytest.raises(ValueError, match="TransformerConfig"):
        build_model("llama-2-7b")
