"""Mixture of experts: total against active parameters, FLOPs per token, all-to-all traffic.

A mixture-of-experts (MoE) layer replaces the MLP by ``experts`` MLPs and a router that sends each
token to ``experts_per_token`` of them (Shazeer et al. 2017; GShard, Lepikhin et al. 2020; Switch
Transformer, Fedus et al. 2021, top-1; Mixtral, Jiang et al. 2024, top-2 of 8). Memory follows the
*total* parameters (every expert is stored); FLOPs follow the *active* ones (each token uses k).
With expert parallelism each rank holds ``experts / ranks`` experts, and every MoE layer exchanges
tokens twice with ``all_to_all`` (dispatch to the experts, combine back), four times in training
(the backward pass sends the gradients the same way).

Parameter counts come from :mod:`course.facts.models`
(:func:`~course.facts.models.active_param_count`), FLOPs from
:func:`course.calculators.compute.forward_flops_per_token`, bytes from
:func:`course.calculators.memory.weights_bytes`. Used by lesson 12.
"""

from __future__ import annotations

from dataclasses import dataclass

from course.calculators import compute, memory
from course.facts import validate
from course.facts.models import TransformerConfig, active_param_count
from course.facts.report import Report


@dataclass(frozen=True)
class MoEAccount(Report):
    """What a mixture of experts stores against what one token uses."""

    _title = "Mixture of experts: total and active"

    experts: int
    experts_per_token: int
    total_params: float
    active_params: float
    active_fraction: float
    weights_bytes: float  # every expert, in ``dtype``: what memory must hold
    forward_flops_per_token: float  # active experts only
    dense_equivalent_flops_per_token: float  # if every expert ran (a dense model of the same size)


def moe_account(
    config: TransformerConfig, *, seq_len: int = 4096, dtype: str = "bf16"
) -> MoEAccount:
    """Total vs active parameters of ``config``, its weights' bytes and forward FLOPs per token.

    Mixtral 8x7B: 46.7B stored, 12.9B used per token (counted from its released config.json;
    Jiang et al. 2024 give 47B and 13B).
    """
    if not isinstance(config, TransformerConfig):
        raise ValueError(f"config must be a TransformerConfig, got {config!r}")
    total, active = float(config.params), float(active_param_count(config))
    flops = compute.forward_flops_per_token(config, seq_len)
    dense = config.replace(experts_per_token=config.experts)
    return MoEAccount(
        experts=config.experts,
        experts_per_token=config.experts_per_token,
        total_params=total,
        active_params=active,
        active_fraction=active / total,
        weights_bytes=memory.weights_bytes(total, dtype),
        forward_flops_per_token=flops,
        dense_equivalent_flops_per_token=compute.forward_flops_per_token(dense, seq_len),
    )


@dataclass(frozen=True)
class AllToAll(Report):
    """The tokens an expert-parallel MoE layer sends between ranks (one rank's share)."""

    _title = "All-to-all traffic of expert parallelism (per rank)"

    dispatch_bytes: float  # one layer, forward: tokens to their experts on other ranks
    combine_bytes: float  # one layer, forward: expert outputs back
    exchanges: int  # all-to-alls per layer per step: 2 (inference) or 4 (training)
    off_rank_fraction: float  # share of routed tokens whose expert is elsewhere: (p-1)/p
    per_step_bytes: float  # all MoE layers, every exchange


def all_to_all_bytes(
    tokens_per_rank: int,
    hidden: int,
    *,
    experts_per_token: int = 1,
    ranks: int = 2,
    moe_layers: int = 1,
    bytes_per_value: float = 2,
    training: bool = True,
) -> AllToAll:
    """Bytes one rank sends in the all-to-alls of expert parallelism, routing assumed uniform.

    Each of the rank's ``tokens_per_rank`` tokens goes to ``experts_per_token`` experts; with the
    experts spread evenly over ``ranks`` a share (p-1)/p of them live elsewhere. Dispatch sends
    ``tokens x k x hidden x bytes x (p-1)/p``; combine returns as much. Training adds the backward
    (4 exchanges). Real routers are not uniform: the demo counts the real splits.
    """
    t = validate.positive_int("tokens_per_rank", tokens_per_rank, maximum=10**12)
    h = validate.positive_int("hidden", hidden, maximum=10**6)
    k = validate.positive_int("experts_per_token", experts_per_token, maximum=10**5)
    p = validate.positive_int("ranks", ranks, maximum=10**6)
    layers = validate.positive_int("moe_layers", moe_layers, maximum=10**4)
    b = validate.number("bytes_per_value", bytes_per_value, minimum=0.125, maximum=8)
    validate.choice("training", training, (True, False))
    off = (p - 1) / p
    one_way = t * k * h * b * off
    exchanges = 4 if training else 2
    return AllToAll(
        dispatch_bytes=one_way,
        combine_bytes=one_way,
        exchanges=exchanges,
        off_rank_fraction=off,
        per_step_bytes=one_way * exchanges * layers,
    )


def all_to_all_seconds(bytes_off_rank: float, link_bytes_per_s: float) -> float:
    """Seconds one all-to-all takes when every rank sends ``bytes_off_rank`` through its own link
    at ``link_bytes_per_s`` per direction (all ranks at once, a non-blocking switch: NVSwitch in a
    node, a full fat tree between nodes). A lower bound: latency and congestion come on top."""
    sent = validate.number("bytes_off_rank", bytes_off_rank, minimum=0, maximum=1e18)
    bw = validate.number(
        "link_bytes_per_s", link_bytes_per_s, minimum=0, strict_min=True, maximum=1e15
    )
    return sent / bw


__all__ = ["AllToAll", "MoEAccount", "all_to_all_bytes", "all_to_all_seconds", "moe_account"]
