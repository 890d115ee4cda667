"""Model configs: exact parameter counts, checked against real torch modules built from them
(the modules themselves: tests/measure/test_torchmodels.py)."""

from __future__ import annotations

import pytest

from course.facts.models import (
    MOE_PRESETS,
    PRESETS,
    TransformerConfig,
    active_param_count,
    matmul_params_per_layer,
    non_embedding_param_count,
    param_breakdown,
    param_count,
    preset,
)
from course.measure.torchmodels import build_model, count_parameters

# Published / released parameter counts. Each is the total of the released checkpoint's tensors
# (the Hugging Face model card or config + safetensors index), rounded in the papers as shown.
PUBLISHED = {
    # Radford et al. 2019; openai-community/gpt2 (HF model reports 124,439,808; "124M")
    "gpt2": 124_439_808,
    # openai-community/gpt2-xl ("1.5B" in the paper; 1,557,611,200 in the checkpoint)
    "gpt2-xl": 1_557_611_200,
    # google-bert/bert-base-uncased, BertModel with pooler ("110M" in Devlin et al. 2019)
    "bert-base": 109_482_240,
    # google-bert/bert-large-uncased, BertModel with pooler ("340M" in Devlin et al. 2019)
    "bert-large": 335_141_888,
    # Touvron et al. 2023 / meta-llama/Llama-2-{7,13,70}b-hf: 6.74B, 13.02B, 68.98B
    "llama-2-7b": 6_738_415_616,
    "llama-2-13b": 13_015_864_320,
    "llama-2-70b": 68_976_648_192,
    # meta-llama/Meta-Llama-3-8B and -70B model cards: 8.03B, 70.55B
    "llama-3-8b": 8_030_261_248,
    "llama-3-70b": 70_553_706_496,
    # mistralai/Mistral-7B-v0.1: 7.24B
    "mistral-7b": 7_241_732_096,
}


@pytest.fixture(scope="module")
def built() -> dict[str, int]:
    """Every preset built on the meta device once; its real parameter count."""
    return {key: count_parameters(build_model(cfg)) for key, cfg in PRESETS.items()}


@pytest.mark.parametrize("key", list(PRESETS))
def test_param_count_equals_meta_module_parameter_count_exactly(key, built):
    assert param_count(PRESETS[key]) == built[key]


@pytest.mark.parametrize("key", list(PUBLISHED))
def test_param_count_matches_released_checkpoint(key):
    assert param_count(PRESETS[key]) == PUBLISHED[key]


def test_llama2_7b_param_count_matches_meta_module(built):
    """The brief's anchor: Llama-2-7B is 6,738,415,616 parameters, config and module alike."""
    assert param_count(PRESETS["llama-2-7b"]) == built["llama-2-7b"] == 6_738_415_616


def test_gpt3_175b_count_rounds_to_the_papers_175_billion():
    """Brown et al. 2020, Table 2.1: 175.0B. GPT-2 architecture at 96 x 12288 gives 174.6B."""
    n = param_count(PRESETS["gpt-3-175b"])
    assert n == pytest.approx(175.0e9, rel=0.005)


def test_every_preset_names_a_source():
    for key, cfg in PRESETS.items():
        assert cfg.name == key
        assert len(cfg.source) > 20, key


def test_gqa_shrinks_only_key_and_value_projections():
    """Llama-2-70B: 64 query heads, 8 KV heads of 128: K and V are 8192 x 1024 each."""
    cfg = PRESETS["llama-2-70b"]
    per_layer_attention = param_breakdown(cfg).attention_params / cfg.layers
    assert per_layer_attention == 2 * 8192 * 8192 + 2 * 8192 * 1024
    mha = cfg.replace(kv_heads=64)
    assert param_count(mha) - param_count(cfg) == cfg.layers * 2 * 8192 * (8192 - 1024)


def test_tied_embedding_is_counted_once():
    """GPT-2 ties the LM head to the token embedding: untying adds exactly vocab x hidden."""
    cfg = PRESETS["gpt2"]
    untied = cfg.replace(tied_embeddings=False)
    assert param_count(untied) - param_count(cfg) == 50257 * 768
    assert count_parameters(build_model(untied)) == param_count(untied)


def test_non_embedding_count_excludes_vocabulary_and_position_tables():
    """Kaplan et al. 2020's N excludes vocabulary and positional embeddings (and untied heads)."""
    gpt2 = PRESETS["gpt2"]
    assert non_embedding_param_count(gpt2) == param_count(gpt2) - 50257 * 768 - 1024 * 768
    llama = PRESETS["llama-2-7b"]
    assert llama.non_embedding_params == param_count(llama) - 2 * 32000 * 4096


def test_matmul_params_per_layer_is_the_layer_without_norms_and_biases():
    cfg = PRESETS["llama-2-7b"]
    assert matmul_params_per_layer(cfg) == 4 * 4096**2 + 3 * 4096 * 11008


def test_head_dim_is_hidden_over_heads():
    assert PRESETS["llama-2-7b"].head_dim == 128
    assert PRESETS["gpt2-xl"].head_dim == 64


def test_breakdown_parts_add_up_to_total():
    for cfg in PRESETS.values():
        b = param_breakdown(cfg)
        parts = (
            b.embedding_params
            + b.attention_params
            + b.mlp_params
            + b.norm_params
            + b.lm_head_params
            + b.pooler_params
        )
        assert parts == b.total_params


def test_breakdown_prints_as_a_table_with_exact_counts():
    text = str(param_breakdown(PRESETS["llama-2-7b"]))
    assert "6,738,415,616" in text and "6.74B" in text
    assert "<table>" in param_breakdown(PRESETS["gpt2"])._repr_html_()


@pytest.mark.parametrize(
    ("base", "change", "message"),
    [
        ("llama-2-7b", {"heads": 7, "kv_heads": 7}, "hidden must be divisible by heads"),
        ("llama-2-7b", {"kv_heads": 5}, "kv_heads must divide heads"),
        ("llama-2-7b", {"kv_heads": 64}, "kv_heads must be an integer"),
        ("llama-2-7b", {"layers": 0}, "layers must be an integer >= 1"),
        ("llama-2-7b", {"layers": 2.0}, "layers must be an integer"),
        ("llama-2-7b", {"vocab": True}, "vocab must be an integer"),
        ("llama-2-7b", {"norm": "batchnorm"}, "norm must be one of"),
        ("llama-2-7b", {"gated_mlp": 1}, "gated_mlp must be one of"),
        ("gpt2", {"lm_head": False}, "tied_embeddings=True needs lm_head=True"),
    ],
)
def test_invalid_config_raises_value_error_naming_the_field(base, change, message):
    with pytest.raises(ValueError, match=message):
        PRESETS[base].replace(**change)


def test_preset_lookup_lists_choices_on_a_typo():
    assert preset("mistral-7b") is PRESETS["mistral-7b"]
    with pytest.raises(ValueError, match="llama-2-7b"):
        preset("llama2-7b")


def test_config_constructor_validates_directly():
    with pytest.raises(ValueError, match="ffn_hidden"):
        TransformerConfig(
            name="x",
            layers=1,
            hidden=8,
            heads=2,
            kv_heads=2,
            ffn_hidden=-1,
            vocab=10,
            max_positions=8,
        )


MIXTRAL = MOE_PRESETS["mixtral-8x7b"]
DEEPSEEK = MOE_PRESETS["deepseek-v3"]


def test_mixtral_total_and_active_match_the_paper():
    """Jiang et al. 2024, 'Mixtral of Experts': 47B parameters, 13B active per token. The
    released config.json (mistralai/Mixtral-8x7B-v0.1) gives exactly 46,702,792,704 (32 layers x
    (attention + 8 experts + router) + embeddings + head)."""
    assert MIXTRAL.params == 46_702_792_704
    assert round(MIXTRAL.params / 1e9, 1) == 46.7
    assert round(active_param_count(MIXTRAL) / 1e9, 1) == 12.9


def test_deepseek_v3_within_the_stated_tolerance():
    """DeepSeek-V3 report: 671B total, 37B activated per token. The course stands in plain
    attention for multi-head latent attention (MLA, low-rank Q and KV projections: 187M per layer
    against 206M here), so the total is within 0.5 % and the active count within 5 %."""
    assert DEEPSEEK.params == pytest.approx(671e9, rel=5e-3)
    assert active_param_count(DEEPSEEK) == pytest.approx(37e9, rel=0.05)


def test_dense_models_are_unchanged():
    for cfg in PRESETS.values():
        assert active_param_count(cfg) == cfg.params
        assert not cfg.is_moe
