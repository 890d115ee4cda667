"""Real ``torch.nn.Module`` transformers built from a
:class:`course.facts.models.TransformerConfig`.

``build_model(config)`` makes the architecture the config describes, on the ``meta`` device by
default: parameters have shapes but no storage, so even GPT-3 175B builds in a second or two without
memory, and ``sum(p.numel() for p in model.parameters())`` can be compared with
``course.facts.models.param_count(config)``. On ``device="cpu"`` small configs run forward and
backward for real, which the FLOP-counter checks of lesson 05 need.

Attention is written as plain matrix multiplies (``q @ k.T``, softmax, ``@ v``) rather than
``F.scaled_dot_product_attention``: ``torch.utils.flop_counter.FlopCounterMode`` counts the fused
CPU SDPA kernel as 0 FLOPs, and the explicit form is also easier to read.

 Used by lessons 04 and 05 and by tests/facts/test_models.py,
tests/calculators/test_compute.py.
"""

from __future__ import annotations

import math

import torch
import torch.nn.functional as F
from torch import nn
from torch.utils.checkpoint import checkpoint

from course.facts.models import TransformerConfig


def _norm(config: TransformerConfig) -> nn.Module:
    if config.norm == "rmsnorm":
        return nn.RMSNorm(config.hidden, eps=config.norm_eps)
    return nn.LayerNorm(config.hidden, eps=config.norm_eps)


def rotate_half(x: torch.Tensor) -> torch.Tensor:
    """RoPE's rotation of the last dimension's halves, ``(a, b) -> (-b, a)`` (Su et al. 2021)."""
    a, b = x.chunk(2, dim=-1)
    return torch.cat((-b, a), dim=-1)


def _rope(q: torch.Tensor, k: torch.Tensor, theta: float = 10000.0) -> tuple[torch.Tensor, ...]:
    """Rotary position embedding (Su et al. 2021), Llama's "rotate half" layout. No parameters."""
    seq, dim = q.shape[-2], q.shape[-1]
    inv_freq = 1.0 / theta ** (torch.arange(0, dim, 2, device=q.device, dtype=torch.float32) / dim)
    angles = torch.outer(torch.arange(seq, device=q.device, dtype=torch.float32), inv_freq)
    emb = torch.cat((angles, angles), dim=-1)
    cos, sin = emb.cos().to(q.dtype), emb.sin().to(q.dtype)
    return q * cos + rotate_half(q) * sin, k * cos + rotate_half(k) * sin


class Attention(nn.Module):
    """Multi-head attention with separate Q, K, V, O projections and grouped-query K/V."""

    def __init__(self, config: TransformerConfig) -> None:
        super().__init__()
        c = config
        self.heads, self.kv_heads, self.head_dim = c.heads, c.kv_heads, c.head_dim
        self.rope, self.causal = c.positions == "rope", c.causal
        self.q_proj = nn.Linear(c.hidden, c.heads * c.head_dim, bias=c.bias)
        self.k_proj = nn.Linear(c.hidden, c.kv_heads * c.head_dim, bias=c.bias)
        self.v_proj = nn.Linear(c.hidden, c.kv_heads * c.head_dim, bias=c.bias)
        self.o_proj = nn.Linear(c.heads * c.head_dim, c.hidden, bias=c.bias)
        #: Lesson 07's switches (not part of the config): ``sdpa`` computes the core with the fused
        #: ``F.scaled_dot_product_attention`` (no s x s scores kept); ``recompute_core`` is
        #: selective activation recomputation (Korthikanti et al. 2022): the scores and softmax are
        #: dropped after the forward pass and recomputed in the backward pass.
        self.sdpa = False
        self.recompute_core = False

    def core(self, q: torch.Tensor, k: torch.Tensor, v: torch.Tensor) -> torch.Tensor:
        """``softmax(q k^T / sqrt(d)) v`` over (batch, heads, seq, head_dim), causal if
        configured."""
        if self.sdpa:
            return F.scaled_dot_product_attention(q, k, v, is_causal=self.causal)
        s = q.shape[-2]
        scores = (q @ k.transpose(-2, -1)) / math.sqrt(self.head_dim)
        if self.causal:
            mask = torch.ones(s, s, dtype=torch.bool, device=q.device).triu(1)
            scores = scores.masked_fill(mask, float("-inf"))
        return scores.softmax(dim=-1) @ v

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        b, s, _ = x.shape
        q = self.q_proj(x).view(b, s, self.heads, self.head_dim).transpose(1, 2)
        k = self.k_proj(x).view(b, s, self.kv_heads, self.head_dim).transpose(1, 2)
        v = self.v_proj(x).view(b, s, self.kv_heads, self.head_dim).transpose(1, 2)
        if self.rope:
            q, k = _rope(q, k)
        if self.kv_heads != self.heads:  # GQA: each K/V head serves heads // kv_heads queries
            k = k.repeat_interleave(self.heads // self.kv_heads, dim=1)
            v = v.repeat_interleave(self.heads // self.kv_heads, dim=1)
        if self.recompute_core:
            out = checkpoint(self.core, q, k, v, use_reentrant=False)
        else:
            out = self.core(q, k, v)
        return self.o_proj(out.transpose(1, 2).reshape(b, s, self.heads * self.head_dim))


class MLP(nn.Module):
    """Gated (SwiGLU: ``down(silu(gate(x)) * up(x))``) or plain (``fc2(gelu(fc1(x)))``) MLP."""

    def __init__(self, config: TransformerConfig) -> None:
        super().__init__()
        c = config
        self.gated = c.gated_mlp
        self.act = F.silu if c.activation == "silu" else F.gelu
        self.up = nn.Linear(c.hidden, c.ffn_hidden, bias=c.bias)
        if c.gated_mlp:
            self.gate = nn.Linear(c.hidden, c.ffn_hidden, bias=c.bias)
        self.down = nn.Linear(c.ffn_hidden, c.hidden, bias=c.bias)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        if self.gated:
            return self.down(self.act(self.gate(x)) * self.up(x))
        return self.down(self.act(self.up(x)))


class Block(nn.Module):
    """One transformer layer: attention and MLP, each with a residual and a norm (pre or post)."""

    def __init__(self, config: TransformerConfig) -> None:
        super().__init__()
        self.pre = config.norm_placement == "pre"
        self.norm1, self.attn = _norm(config), Attention(config)
        self.norm2, self.mlp = _norm(config), MLP(config)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        if self.pre:
            x = x + self.attn(self.norm1(x))
            return x + self.mlp(self.norm2(x))
        x = self.norm1(x + self.attn(x))
        return self.norm2(x + self.mlp(x))


class Transformer(nn.Module):
    """Decoder LM (GPT, Llama, Mistral) or encoder (BERT), as the config says.

    ``forward(input_ids)`` returns logits ``(batch, seq, vocab)`` when the config has an LM head;
    otherwise the last hidden states, or ``(hidden states, pooled)`` when it has a pooler.
    """

    def __init__(self, config: TransformerConfig) -> None:
        super().__init__()
        c = self.config = config
        self.embed = nn.Embedding(c.vocab, c.hidden)
        self.pos_embed = (
            nn.Embedding(c.max_positions, c.hidden) if c.positions == "learned" else None
        )
        self.type_embed = nn.Embedding(c.token_types, c.hidden) if c.token_types else None
        self.embed_norm = _norm(c) if c.norm_placement == "post" else None
        self.blocks = nn.ModuleList(Block(c) for _ in range(c.layers))
        self.final_norm = _norm(c) if c.norm_placement == "pre" else None
        self.lm_head = nn.Linear(c.hidden, c.vocab, bias=False) if c.lm_head else None
        if self.lm_head is not None and c.tied_embeddings:
            self.lm_head.weight = self.embed.weight  # one tensor, counted once by .parameters()
        self.pooler = nn.Linear(c.hidden, c.hidden) if c.pooler else None

    def forward(self, input_ids: torch.Tensor) -> torch.Tensor | tuple[torch.Tensor, torch.Tensor]:
        s = input_ids.shape[1]
        x = self.embed(input_ids)
        if self.pos_embed is not None:
            x = x + self.pos_embed(torch.arange(s, device=input_ids.device))
        if self.type_embed is not None:
            x = x + self.type_embed(torch.zeros_like(input_ids))
        if self.embed_norm is not None:
            x = self.embed_norm(x)
        for block in self.blocks:
            x = block(x)
        if self.final_norm is not None:
            x = self.final_norm(x)
        if self.lm_head is not None:
            return self.lm_head(x)
        if self.pooler is not None:
            return x, torch.tanh(self.pooler(x[:, 0]))
        return x


def build_model(
    config: TransformerConfig, *, device: str | torch.device = "meta", dtype: torch.dtype = None
) -> Transformer:
    """A ``torch.nn.Module`` with the architecture of ``config`` (on the meta device by default).

    On ``"meta"`` nothing is allocated, so any preset builds in about a second; on ``"cpu"`` the
    weights are randomly initialised and the model runs. ``dtype`` defaults to torch's default
    (float32).
    """
    if not isinstance(config, TransformerConfig):
        raise ValueError(f"config must be a TransformerConfig, got {config!r}")
    with torch.device(device):
        model = Transformer(config)
    return model if dtype is None else model.to(dtype)


def count_parameters(module: nn.Module) -> int:
    """Number of parameters of a module, shared (tied) tensors counted once."""
    return sum(p.numel() for p in module.parameters())


__all__ = ["Attention", "Block", "MLP", "Transformer", "build_model", "count_parameters"]
