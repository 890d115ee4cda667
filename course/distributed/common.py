"""What the demos share: a tiny transformer config, seeded models and batches, result types.

Every rank builds the *same* model (the same seed) and the *same* full batch, then takes its own
share of the batch, so a test can rebuild both in one process and compare.
"""

from __future__ import annotations

import torch
import torch.nn.functional as F

from course.facts.models import DEMO_PRESETS, TransformerConfig
from course.measure.torchmodels import Transformer, build_model

#: The model the distributed demos train (``course.facts.models.DEMO_PRESETS``): 2 layers, hidden
#: 64, 4 heads, vocabulary 256 (0.11 M parameters). Small on purpose: each rank gets one core.
TINY_CONFIG = DEMO_PRESETS["tiny-llama"]

#: The model every demo can split at 1, 2, 3, 4, 6, 8, 12 or 24 ranks (``DEMO_PRESETS``).
SCALE_CONFIG = DEMO_PRESETS["scale-llama"]

#: Sequences each rank takes when a demo scales its batch with the world size.
PER_RANK_BATCH = 2


def scaled_batch(world: int, per_rank: int = PER_RANK_BATCH) -> int:
    """The global batch of a demo on ``world`` ranks: ``per_rank`` sequences each, so it always
    splits evenly (a fixed batch of 4 does not split over 3 or 8 ranks)."""
    return per_rank * world


def require_divisible(what: str, count: int, world: int, fix: str = "") -> None:
    """A clear ``ValueError`` when ``count`` ``what`` cannot be split evenly over ``world``
    ranks."""
    if world < 1 or count % world:
        hint = f" {fix}" if fix else ""
        raise ValueError(
            f"{what} ({count}) cannot be split evenly over {world} ranks: choose a "
            f"number of processes that divides {count}.{hint}"
        )


def seeded_model(
    config: TransformerConfig = TINY_CONFIG, seed: int = 0, device: str | torch.device = "cpu"
) -> Transformer:
    """``build_model(config)`` with weights drawn from ``seed`` (the global RNG is left alone)."""
    with torch.random.fork_rng(devices=[]):
        torch.manual_seed(seed)
        model = build_model(config, device="cpu")
    return model.to(device)


def token_batch(
    config: TransformerConfig = TINY_CONFIG, batch: int = 4, seq_len: int = 16, seed: int = 1
) -> tuple[torch.Tensor, torch.Tensor]:
    """A seeded ``(inputs, targets)`` pair of ``batch x seq_len`` token ids (targets shifted)."""
    generator = torch.Generator().manual_seed(seed)
    tokens = torch.randint(0, config.vocab, (batch, seq_len + 1), generator=generator)
    return tokens[:, :-1].contiguous(), tokens[:, 1:].contiguous()


def lm_loss(logits: torch.Tensor, targets: torch.Tensor) -> torch.Tensor:
    """Mean cross-entropy over every token (what the demos train on)."""
    return F.cross_entropy(logits.float().reshape(-1, logits.shape[-1]), targets.reshape(-1))


def shard_of(tensor: torch.Tensor, rank: int, world: int) -> torch.Tensor:
    """Rank ``rank``'s equal share of ``tensor`` along dim 0 (the batch must divide evenly)."""
    require_divisible(
        "the batch",
        tensor.shape[0],
        world,
        "Leave the batch at its default: it scales with the number of ranks.",
    )
    return tensor.chunk(world)[rank]


def tensor_bytes(t: torch.Tensor) -> int:
    """Bytes of this rank's part of ``t``: the local shard of a DTensor, else the tensor."""
    local = t.to_local() if hasattr(t, "to_local") else t
    return local.numel() * local.element_size()


__all__ = [
    "PER_RANK_BATCH",
    "SCALE_CONFIG",
    "TINY_CONFIG",
    "lm_loss",
    "require_divisible",
    "scaled_batch",
    "seeded_model",
    "shard_of",
    "tensor_bytes",
    "token_batch",
]
