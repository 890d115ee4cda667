"""Transformer architectures as configs, and their exact parameter counts.

A :class:`TransformerConfig` says what a model is made of (layers, hidden size, heads, KV heads, FFN
size, vocabulary, positions, norms, biases, tied embeddings); :func:`param_count` counts its
parameters from that alone. ``course.measure.torchmodels.build_model`` builds a real
``torch.nn.Module`` from the same config, and the tests check that the two counts agree exactly for
every preset (Llama-2-7B: 6,738,415,616).

Three families are covered, each by a combination of flags:

- Llama / Mistral (decoder): RoPE (no position parameters), RMSNorm (weight only), gated SiLU MLP
  (three matrices), no biases, grouped-query attention when ``kv_heads < heads``, untied LM head.
- GPT-2 / GPT-3 (decoder): learned positions, LayerNorm (weight and bias), 4x GELU MLP with biases,
  biases in every linear layer, LM head tied to the token embedding.
- BERT (encoder): token, position and token-type embeddings, LayerNorm after each sub-layer and on
  the embeddings ("post-norm"), biases, an optional pooler, no LM head.

Used by lessons 04 (memory), 05 (FLOPs) and 10 (practice questions).
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from types import MappingProxyType
from typing import Literal

from course.facts import validate
from course.facts.report import Report

Norm = Literal["rmsnorm", "layernorm"]
Positions = Literal["rope", "learned"]
NormPlacement = Literal["pre", "post"]


@dataclass(frozen=True)
class TransformerConfig:
    """A transformer's architecture: everything needed to count its parameters exactly.

    ``norm_placement="pre"`` (GPT-2, Llama) normalises each sub-layer's input and adds one final
    norm after the last layer; ``"post"`` (BERT) normalises after each residual add and normalises
    the embeddings instead of the output.
    """

    name: str
    layers: int
    hidden: int
    heads: int
    kv_heads: int
    ffn_hidden: int
    vocab: int
    max_positions: int
    gated_mlp: bool = True
    tied_embeddings: bool = False
    norm: Norm = "rmsnorm"
    bias: bool = False
    positions: Positions = "rope"
    norm_placement: NormPlacement = "pre"
    token_types: int = 0
    causal: bool = True
    lm_head: bool = True
    pooler: bool = False
    activation: Literal["silu", "gelu"] = "silu"
    norm_eps: float = 1e-5
    experts: int = 1  # routed experts per MoE layer (1: a dense MLP)
    experts_per_token: int = 1  # routed experts each token uses (top-k)
    shared_experts: int = 0  # experts every token uses as well (DeepSeek)
    expert_ffn_hidden: int = 0  # FFN size of one expert (0: ffn_hidden)
    dense_layers: int = 0  # first layers with a dense MLP of ffn_hidden (DeepSeek-V3: 3)
    source: str = ""

    def __post_init__(self) -> None:
        if not isinstance(self.name, str):
            raise ValueError(f"name must be a string, got {self.name!r}")
        validate.positive_int("layers", self.layers, maximum=10_000)
        validate.positive_int("hidden", self.hidden, maximum=10**6)
        validate.positive_int("heads", self.heads, maximum=self.hidden)
        validate.positive_int("kv_heads", self.kv_heads, maximum=self.heads)
        validate.positive_int("ffn_hidden", self.ffn_hidden, maximum=10**7)
        validate.positive_int("vocab", self.vocab, maximum=10**8)
        validate.positive_int("max_positions", self.max_positions, maximum=10**9)
        validate.positive_int("token_types", self.token_types, minimum=0, maximum=1000)
        if self.hidden % self.heads:
            raise ValueError(
                f"hidden must be divisible by heads, got hidden={self.hidden}, heads={self.heads}"
            )
        if self.heads % self.kv_heads:
            raise ValueError(
                f"kv_heads must divide heads, got heads={self.heads}, kv_heads={self.kv_heads}"
            )
        for flag in ("gated_mlp", "tied_embeddings", "bias", "causal", "lm_head", "pooler"):
            validate.choice(flag, getattr(self, flag), (True, False))
        validate.choice("norm", self.norm, ("rmsnorm", "layernorm"))
        validate.choice("positions", self.positions, ("rope", "learned"))
        validate.choice("norm_placement", self.norm_placement, ("pre", "post"))
        validate.choice("activation", self.activation, ("silu", "gelu"))
        validate.number("norm_eps", self.norm_eps, minimum=0, maximum=1, strict_min=True)
        validate.positive_int("experts", self.experts, maximum=100_000)
        validate.positive_int("experts_per_token", self.experts_per_token, maximum=self.experts)
        validate.positive_int("shared_experts", self.shared_experts, minimum=0, maximum=1000)
        validate.positive_int("expert_ffn_hidden", self.expert_ffn_hidden, minimum=0, maximum=10**7)
        validate.positive_int("dense_layers", self.dense_layers, minimum=0, maximum=self.layers)
        if self.tied_embeddings and not self.lm_head:
            raise ValueError("tied_embeddings=True needs lm_head=True (there is nothing to tie)")
        if not isinstance(self.source, str):
            raise ValueError(f"source must be a string, got {self.source!r}")

    @property
    def head_dim(self) -> int:
        """Size of one attention head: ``hidden // heads``."""
        return self.hidden // self.heads

    @property
    def params(self) -> int:
        """Exact parameter count (see :func:`param_count`)."""
        return param_count(self)

    @property
    def non_embedding_params(self) -> int:
        """Parameters outside the vocabulary and position tables (see :func:`param_breakdown`)."""
        return param_breakdown(self).non_embedding_params

    @property
    def is_moe(self) -> bool:
        """True for a mixture of experts (more than one routed expert, or shared experts)."""
        return self.experts > 1 or self.shared_experts > 0

    @property
    def moe_layers(self) -> int:
        """Layers whose MLP is a mixture of experts (0 for a dense model)."""
        return self.layers - self.dense_layers if self.is_moe else 0

    @property
    def active_params(self) -> int:
        """Parameters one token uses (see :func:`active_param_count`)."""
        return active_param_count(self)

    def replace(self, **changes: object) -> TransformerConfig:
        """A copy with some fields changed (``cfg.replace(layers=2)``), validated again."""
        return dataclasses.replace(self, **changes)


@dataclass(frozen=True)
class ParamBreakdown(Report):
    """Where a model's parameters are. Counts (not bytes)."""

    _title = "Parameters"

    embedding_params: int  # token + learned position + token-type tables
    attention_params: int  # Q, K, V, O projections (and biases), all layers
    mlp_params: int  # MLP matrices (and biases), all layers
    norm_params: int  # every norm's weight (and bias)
    lm_head_params: int  # output projection when not tied to the embedding
    pooler_params: int  # BERT's pooler (dense hidden x hidden + bias)
    total_params: int
    non_embedding_params: int  # total minus embedding tables and untied LM head


def checked_config(config: object, name: str = "config") -> TransformerConfig:
    """``config`` itself if it is a :class:`TransformerConfig`; else a ValueError that says where
    the presets are. Every calculator that takes a model checks it here."""
    if not isinstance(config, TransformerConfig):
        raise ValueError(
            f"{name} must be a TransformerConfig (a preset from "
            f"course.facts.models.PRESETS), got {config!r}"
        )
    return config


def param_breakdown(config: TransformerConfig) -> ParamBreakdown:
    """Count parameters by part, exactly, from the config alone.

    Per layer: Q and O are ``hidden x heads*head_dim``, K and V ``hidden x kv_heads*head_dim``
    (grouped-query attention shrinks them), the MLP has 3 matrices if gated (SwiGLU) else 2, and two
    norms (RMSNorm: a weight of ``hidden``; LayerNorm: weight and bias). ``non_embedding_params``
    follows Kaplan et al. 2020 ("excluding vocabulary and positional embeddings"): it leaves out the
    token, position and token-type tables and an untied LM head (also a vocabulary matrix).
    """
    c = checked_config(config)
    h, hd = c.hidden, c.head_dim
    q_out, kv_out = c.heads * hd, c.kv_heads * hd
    norm = h if c.norm == "rmsnorm" else 2 * h

    attention = h * q_out + 2 * h * kv_out + q_out * h
    if c.bias:
        attention += q_out + 2 * kv_out + h
    mlp = _mlp_params(c, c.ffn_hidden)
    if c.is_moe:  # dense layers first, then MoE layers: experts + shared experts + router
        per_moe = (c.experts + c.shared_experts) * _mlp_params(c, _expert_ffn(c)) + h * c.experts
        mlp_total = c.dense_layers * mlp + c.moe_layers * per_moe
    else:
        mlp_total = c.layers * mlp

    embedding = c.vocab * h + c.token_types * h
    if c.positions == "learned":
        embedding += c.max_positions * h
    norms = c.layers * 2 * norm + norm  # two per layer; plus the final or the embedding norm
    lm_head = c.vocab * h if c.lm_head and not c.tied_embeddings else 0
    pooler = h * h + h if c.pooler else 0
    total = embedding + c.layers * attention + mlp_total + norms + lm_head + pooler
    return ParamBreakdown(
        embedding_params=embedding,
        attention_params=c.layers * attention,
        mlp_params=mlp_total,
        norm_params=norms,
        lm_head_params=lm_head,
        pooler_params=pooler,
        total_params=total,
        non_embedding_params=total - embedding - lm_head,
    )


def _mlp_params(c: TransformerConfig, ffn: int) -> int:
    if c.gated_mlp:
        return 3 * c.hidden * ffn + (2 * ffn + c.hidden if c.bias else 0)
    return 2 * c.hidden * ffn + (ffn + c.hidden if c.bias else 0)


def _expert_ffn(c: TransformerConfig) -> int:
    return c.expert_ffn_hidden or c.ffn_hidden


def active_param_count(config: TransformerConfig) -> int:
    """Parameters a token passes through: a mixture of experts counts only the
    ``experts_per_token`` routed experts (and the shared ones) of each MoE layer, plus the router;
    a dense model's is :func:`param_count`. The embedding table and LM head are counted, as Mixtral
    does (46.7B total, 12.9B active counted from the released config.json; the paper, Jiang et al.
    2024, sec. 2.1, rounds them to 47B and 13B).
    """
    c = checked_config(config)
    total = param_count(c)
    if not c.is_moe:
        return total
    idle = c.experts - c.experts_per_token
    return total - c.moe_layers * idle * _mlp_params(c, _expert_ffn(c))


def active_matmul_params(config: TransformerConfig) -> int:
    """Weights of all layers that multiply each token (no biases, norms or embeddings): for a
    dense model ``layers x`` :func:`matmul_params_per_layer`; a mixture of experts counts its
    active experts and its router. Each contributes 2 forward FLOPs per token.
    """
    c = checked_config(config)
    if not c.is_moe:
        return c.layers * matmul_params_per_layer(c)
    h, hd = c.hidden, c.head_dim
    attention = 2 * h * c.heads * hd + 2 * h * c.kv_heads * hd
    per = 3 if c.gated_mlp else 2
    dense = c.dense_layers * per * h * c.ffn_hidden
    moe = c.moe_layers * (
        (c.experts_per_token + c.shared_experts) * per * h * _expert_ffn(c) + h * c.experts
    )
    return c.layers * attention + dense + moe


def param_count(config: TransformerConfig) -> int:
    """Exact number of parameters of the model ``config`` describes (checked against torch)."""
    return param_breakdown(config).total_params


def non_embedding_param_count(config: TransformerConfig) -> int:
    """Kaplan et al. 2020's N: parameters excluding vocabulary and position embeddings."""
    return param_breakdown(config).non_embedding_params


def matmul_params_per_layer(config: TransformerConfig) -> int:
    """Weights of one layer that take part in matrix multiplies (no biases, no norms).

    Each contributes 2 FLOPs (a multiply and an add) per token in the forward pass. Dense layers
    only: for a mixture of experts use :func:`active_matmul_params`.
    """
    c = checked_config(config)
    h, hd = c.hidden, c.head_dim
    attention = 2 * h * c.heads * hd + 2 * h * c.kv_heads * hd
    mlp = (3 if c.gated_mlp else 2) * h * c.ffn_hidden
    return attention + mlp


_LLAMA2 = "Touvron et al. 2023, 'Llama 2'; released config.json of meta-llama/Llama-2-{}-hf"
_LLAMA3 = "Meta 2024, 'The Llama 3 Herd of Models'; released config.json of meta-llama/{}"
_GPT2 = "Radford et al. 2019, 'Language Models are Unsupervised Multitask Learners'; config.json"
_BERT = "Devlin et al. 2019, 'BERT'; released config.json of google-bert/{} (BertModel with pooler)"


def _llama(name: str, source: str, **kw: object) -> TransformerConfig:
    return TransformerConfig(name=name, source=source, **kw)  # type: ignore[arg-type]


def _gpt(name: str, source: str, **kw: object) -> TransformerConfig:
    fixed = dict(
        gated_mlp=False,
        tied_embeddings=True,
        norm="layernorm",
        bias=True,
        positions="learned",
        activation="gelu",
    )
    return TransformerConfig(name=name, source=source, **fixed, **kw)  # type: ignore[arg-type]


def _bert(name: str, source: str, **kw: object) -> TransformerConfig:
    fixed = dict(
        gated_mlp=False,
        norm="layernorm",
        bias=True,
        positions="learned",
        norm_placement="post",
        token_types=2,
        causal=False,
        lm_head=False,
        pooler=True,
        activation="gelu",
        norm_eps=1e-12,
        vocab=30522,
        max_positions=512,
    )
    return TransformerConfig(name=name, source=source, **fixed, **kw)  # type: ignore[arg-type]


#: Published architectures, keyed like ``"llama-2-7b"``. Each records where its numbers come from.
PRESETS: MappingProxyType = MappingProxyType({c.name: c for c in [
    _gpt("gpt2", _GPT2 + " of openai-community/gpt2 (GPT-2 small)",
         layers=12, hidden=768, heads=12, kv_heads=12, ffn_hidden=3072, vocab=50257,
         max_positions=1024),
    _gpt("gpt2-xl", _GPT2 + " of openai-community/gpt2-xl",
         layers=48, hidden=1600, heads=25, kv_heads=25, ffn_hidden=6400, vocab=50257,
         max_positions=1024),
    _gpt("gpt-3-175b",
         "Brown et al. 2020, 'Language Models are Few-Shot Learners', Table 2.1 (96 layers, "
         "d_model 12288, 96 heads of 128, context 2048); GPT-2's vocabulary of 50,257 and "
         "architecture (sec. 2.1). The paper rounds the count to 175.0B.",
         layers=96, hidden=12288, heads=96, kv_heads=96, ffn_hidden=4 * 12288, vocab=50257,
         max_positions=2048),
    _bert("bert-base", _BERT.format("bert-base-uncased"),
          layers=12, hidden=768, heads=12, kv_heads=12, ffn_hidden=3072),
    _bert("bert-large", _BERT.format("bert-large-uncased"),
          layers=24, hidden=1024, heads=16, kv_heads=16, ffn_hidden=4096),
    _llama("llama-2-7b", _LLAMA2.format("7b"),
           layers=32, hidden=4096, heads=32, kv_heads=32, ffn_hidden=11008, vocab=32000,
           max_positions=4096),
    _llama("llama-2-13b", _LLAMA2.format("13b"),
           layers=40, hidden=5120, heads=40, kv_heads=40, ffn_hidden=13824, vocab=32000,
           max_positions=4096),
    _llama("llama-2-70b", _LLAMA2.format("70b"),
           layers=80, hidden=8192, heads=64, kv_heads=8, ffn_hidden=28672, vocab=32000,
           max_positions=4096),
    _llama("llama-3-8b", _LLAMA3.format("Meta-Llama-3-8B"),
           layers=32, hidden=4096, heads=32, kv_heads=8, ffn_hidden=14336, vocab=128256,
           max_positions=8192),
    _llama("llama-3-70b", _LLAMA3.format("Meta-Llama-3-70B"),
           layers=80, hidden=8192, heads=64, kv_heads=8, ffn_hidden=28672, vocab=128256,
           max_positions=8192),
    _llama("mistral-7b",
           "Jiang et al. 2023, 'Mistral 7B'; released config.json of mistralai/Mistral-7B-v0.1",
           layers=32, hidden=4096, heads=32, kv_heads=8, ffn_hidden=14336, vocab=32000,
           max_positions=32768),
]})  # fmt: skip


_MIXTRAL = (
    "Jiang et al. 2024, 'Mixtral of Experts', sec. 2 and Table 1 (8 experts, top-2; 47B "
    "total, 13B active parameters); the exact 46,702,792,704 and 12.9B are counted from the "
    "released config.json of mistralai/Mixtral-8x7B-v0.1"
)
_DEEPSEEK = (
    "DeepSeek-AI 2024, 'DeepSeek-V3 Technical Report', sec. 2.1 and 4.2 (61 layers, "
    "hidden 7,168, 3 dense layers of FFN 18,432, then 1 shared + 256 routed experts of "
    "2,048, 8 routed per token; 671B total, 37B active); released config.json of "
    "deepseek-ai/DeepSeek-V3. Multi-head latent attention (MLA) is stood in for by "
    "plain attention of the same width (128 heads of 56): it counts 0.2 % more in all "
    "and 4-5 % more active, see tests/facts/test_models_moe.py"
)

#: Mixtures of experts, kept apart from :data:`PRESETS` (``course.measure.torchmodels`` builds
#: dense models only). Counted by :func:`param_count` and :func:`active_param_count`.
MOE_PRESETS: MappingProxyType = MappingProxyType(
    {
        c.name: c
        for c in [
            _llama(
                "mixtral-8x7b",
                _MIXTRAL,
                layers=32,
                hidden=4096,
                heads=32,
                kv_heads=8,
                ffn_hidden=14336,
                vocab=32000,
                max_positions=32768,
                experts=8,
                experts_per_token=2,
            ),
            _llama(
                "deepseek-v3",
                _DEEPSEEK,
                layers=61,
                hidden=7168,
                heads=128,
                kv_heads=128,
                ffn_hidden=18432,
                vocab=129280,
                max_positions=163840,
                experts=256,
                experts_per_token=8,
                shared_experts=1,
                expert_ffn_hidden=2048,
                dense_layers=3,
            ),
        ]
    }
)


_TINY_LLAMA = TransformerConfig(
    name="tiny-llama",
    layers=2,
    hidden=64,
    heads=4,
    kv_heads=2,
    ffn_hidden=172,
    vocab=256,
    max_positions=128,
    source="course demo: a tiny Llama-style decoder (course.distributed)",
)

#: The tiny Llama-shaped models the course trains for real on a CPU, one table for every demo:
#: ``small-llama`` (lesson 04 measures a training step's memory on it: 4 layers, hidden 128, 4
#: heads, 2 K/V heads, SwiGLU of 344 (about 8/3 x hidden, as Llama), vocabulary 512; 0.86 M
#: parameters, about a second a step of 4 x 128 tokens on 2 CPU cores); ``tiny-llama`` (the
#: distributed demos: 2 layers, hidden 64, 4 heads; 0.11 M parameters, small because each rank gets
#: one core); ``sweep-llama`` (lesson 07's sweeps: as ``tiny-llama`` with an MLP of 176 and 256
#: positions; 0.12 M parameters, every sweep of the lesson in seconds on 2 busy cores);
#: ``scale-llama`` (splits evenly at 1, 2, 3, 4, 6, 8, 12 or 24 ranks: 24 heads and K/V
#: heads, an MLP of 240 = 24 x 10, 8 layers for up to 8 pipeline stages; hidden 96, 0.9 M
#: parameters).
DEMO_PRESETS: MappingProxyType = MappingProxyType(
    {
        c.name: c
        for c in [
            TransformerConfig(
                name="small-llama",
                layers=4,
                hidden=128,
                heads=4,
                kv_heads=2,
                ffn_hidden=344,
                vocab=512,
                max_positions=512,
                source="course demo: a scaled-down Llama-3-style decoder (course.measure.step_memory)",
            ),
            _TINY_LLAMA,
            _TINY_LLAMA.replace(
                name="sweep-llama",
                ffn_hidden=176,
                max_positions=256,
                source="course demo: the tiny decoder lesson 07's sweeps time (course.measure)",
            ),
            TransformerConfig(
                name="scale-llama",
                layers=8,
                hidden=96,
                heads=24,
                kv_heads=24,
                ffn_hidden=240,
                vocab=256,
                max_positions=128,
                source="course demo: a small decoder that splits evenly over 1, 2, 3, 4 or 8 ranks",
            ),
        ]
    }
)


def preset(key: str) -> TransformerConfig:
    """Look up a preset by key (``"llama-2-7b"``); ValueError lists the choices."""
    if not isinstance(key, str) or key not in PRESETS:
        raise ValueError(f"model must be one of {', '.join(PRESETS)}; got {key!r}")
    return PRESETS[key]


__all__ = [
    "DEMO_PRESETS",
    "MOE_PRESETS",
    "PRESETS",
    "ParamBreakdown",
    "TransformerConfig",
    "active_matmul_params",
    "active_param_count",
    "checked_config",
    "matmul_params_per_layer",
    "non_embedding_param_count",
    "param_breakdown",
    "param_count",
    "preset",
]
