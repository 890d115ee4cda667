"""Expert parallelism: a mixture-of-experts layer whose experts live on different ranks.

A router (replicated on every rank) scores each token against ``experts`` experts and keeps the
top ``k``; the experts themselves are split over the ranks (``experts / ranks`` each). Tokens travel
to their experts' ranks with one ``all_to_all_single`` (uneven splits: each rank sends as many rows
to a peer as it has tokens routed there, the counts exchanged first with an all-to-all of their
own), the experts run on what arrived, and a second ``all_to_all_single`` brings the outputs back,
where each token sums its k outputs weighted by the router's softmax. Gloo supports
``all_to_all_single`` with split sizes (the list form ``all_to_all`` it does not).

:func:`moe_demo` checks the result against :func:`moe_reference` (the same layer in one process)
and counts tokens per expert and the bytes each rank sends off-rank, for
:func:`course.calculators.moe.all_to_all_bytes`.

Run: ``torchrun --nproc-per-node 2 -m course.distributed.moe``.
"""

from __future__ import annotations

import torch
import torch.distributed as dist
import torch.nn.functional as F

from course.distributed.launch import device


def moe_weights(experts: int = 4, hidden: int = 32, ffn: int = 64, seed: int = 0) -> dict:
    """Seeded router and SwiGLU expert weights: ``router`` (hidden x experts), ``w1``/``w3``
    (experts x hidden x ffn), ``w2`` (experts x ffn x hidden). Every rank draws the same."""
    g = torch.Generator().manual_seed(seed)
    scale = hidden**-0.5
    return {
        "router": torch.randn(hidden, experts, generator=g) * scale,
        "w1": torch.randn(experts, hidden, ffn, generator=g) * scale,
        "w3": torch.randn(experts, hidden, ffn, generator=g) * scale,
        "w2": torch.randn(experts, ffn, hidden, generator=g) * ffn**-0.5,
    }


def tokens(n: int = 64, hidden: int = 32, seed: int = 1) -> torch.Tensor:
    """``n`` seeded token vectors (all ranks' tokens; each rank takes its share)."""
    return torch.randn(n, hidden, generator=torch.Generator().manual_seed(seed))


def _route(x: torch.Tensor, router: torch.Tensor, k: int):
    probs = torch.softmax(x @ router, dim=-1)
    gate, idx = probs.topk(k, dim=-1)
    return gate / gate.sum(-1, keepdim=True), idx  # Mixtral's renormalised top-k


def _expert(x: torch.Tensor, w: dict, e: int) -> torch.Tensor:
    return (F.silu(x @ w["w1"][e]) * (x @ w["w3"][e])) @ w["w2"][e]


def moe_reference(x: torch.Tensor, w: dict, k: int = 2) -> torch.Tensor:
    """The layer in one process: every token through its top-``k`` experts, outputs weighted."""
    gate, idx = _route(x, w["router"], k)
    out = torch.zeros_like(x)
    for e in range(w["router"].shape[1]):
        rows, slot = (idx == e).nonzero(as_tuple=True)
        if len(rows):
            out.index_add_(0, rows, gate[rows, slot, None] * _expert(x[rows], w, e))
    return out


def moe_layer(x: torch.Tensor, w: dict, k: int = 2) -> dict:
    """Expert-parallel forward of this rank's tokens ``x``; the experts of rank r are
    ``r * E/p ... (r+1) * E/p - 1``. Returns the output and what was exchanged."""
    r, p = dist.get_rank(), dist.get_world_size()
    n_exp, hidden = w["router"].shape[1], x.shape[1]
    if n_exp % p:
        raise ValueError(f"experts ({n_exp}) must be divisible by the {p} ranks")
    local = n_exp // p
    gate, idx = _route(x, w["router"], k)
    flat = idx.reshape(-1)  # (token, slot) pairs
    order = flat.argsort(stable=True)  # sorted by expert, hence by destination rank
    send_rows = x.repeat_interleave(k, dim=0)[order]
    send_counts = torch.bincount(flat // local, minlength=p)
    recv_counts = torch.empty_like(send_counts)
    dist.all_to_all_single(recv_counts, send_counts)
    s_split, r_split = send_counts.tolist(), recv_counts.tolist()
    recv_rows = x.new_empty(sum(r_split), hidden)
    dist.all_to_all_single(recv_rows, send_rows, r_split, s_split)  # dispatch
    recv_exp = flat.new_empty(sum(r_split))
    dist.all_to_all_single(recv_exp, flat[order].contiguous(), r_split, s_split)
    done = torch.empty_like(recv_rows)
    for e in range(r * local, (r + 1) * local):
        mine = recv_exp == e
        done[mine] = _expert(recv_rows[mine], w, e)
    back = torch.empty_like(send_rows)
    dist.all_to_all_single(back, done, s_split, r_split)  # combine
    slots = torch.empty_like(back)
    slots[order] = back
    out = (slots.view(-1, k, hidden) * gate[..., None]).sum(1)
    row_bytes = hidden * x.element_size()
    off = sum(c for j, c in enumerate(s_split) if j != r)
    return {
        "out": out,
        "tokens_per_expert": torch.bincount(flat, minlength=n_exp),
        "send_counts": s_split,
        "dispatch_bytes": off * row_bytes,
        "combine_bytes": (sum(r_split) - r_split[r]) * row_bytes,
    }


def moe_demo(
    experts: int | None = None,
    k: int = 2,
    n_tokens: int | None = None,
    hidden: int = 32,
    ffn: int = 64,
    seed: int = 0,
) -> dict:
    """Run :func:`moe_layer` on this rank's share of ``n_tokens`` seeded tokens; compare with the
    single-process layer on the same tokens; count tokens per expert over all ranks.

    Defaults scale with the world size, so the demo runs on any number of ranks: 2 experts and 32
    tokens per rank (4 experts and 64 tokens on 2 ranks).
    """
    r, p = dist.get_rank(), dist.get_world_size()
    experts = 2 * p if experts is None else experts
    n_tokens = 32 * p if n_tokens is None else n_tokens
    if n_tokens % p:
        raise ValueError(f"n_tokens must be divisible by the {p} ranks, got {n_tokens}")
    dev = device()
    w = {name: t.to(dev) for name, t in moe_weights(experts, hidden, ffn, seed).items()}
    x = tokens(n_tokens, hidden, seed + 1).to(dev).chunk(p)[r].contiguous()
    res = moe_layer(x, w, k)
    per_expert = res["tokens_per_expert"].clone()
    dist.all_reduce(per_expert)
    err = float((res["out"] - moe_reference(x, w, k)).abs().max())
    return {
        "rank": r,
        "ranks": p,
        "experts": experts,
        "k": k,
        "hidden": hidden,
        "tokens": x.shape[0],
        "out": res["out"].cpu(),
        "max_abs_error": err,
        "tokens_per_expert": per_expert.tolist(),
        "send_counts": res["send_counts"],
        "dispatch_bytes": res["dispatch_bytes"],
        "combine_bytes": res["combine_bytes"],
    }


def main() -> None:
    from course.distributed._script import run_script

    def worker():
        return {k: v for k, v in moe_demo().items() if k != "out"}

    run_script(worker, "Expert parallelism: all-to-all dispatch and combine")


if __name__ == "__main__":
    main()

__all__ = ["main", "moe_demo", "moe_layer", "moe_reference", "moe_weights", "tokens"]
