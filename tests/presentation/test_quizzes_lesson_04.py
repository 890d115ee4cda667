"""Lesson 04's quiz: its numeric answers agree with the memory calculators (ZeRO's model states,
the KV cache of the Llama-3-8B preset), so a change in the registry or a formula cannot leave
the quiz wrong. Every lesson's questions and options: tests/presentation/test_quizzes.py."""

from __future__ import annotations

import pytest
from quiz_cases import numeric_questions

from course.calculators.memory import kv_cache_bytes, model_state_bytes
from course.facts.models import PRESETS


def test_model_state_bytes_and_the_kv_cache_per_token_are_the_calculators():
    states, kv = numeric_questions("04")
    assert states.answer == model_state_bytes(7e9).bytes_per_param
    cfg = PRESETS["llama-3-8b"]
    assert (cfg.layers, cfg.kv_heads, cfg.hidden // cfg.heads) == (32, 8, 128)  # as the question
    per_token = kv_cache_bytes(cfg.layers, cfg.kv_heads, cfg.hidden // cfg.heads, 1)
    assert kv.answer == pytest.approx(per_token / 1024, rel=1e-9)
