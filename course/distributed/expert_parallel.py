"""Expert parallelism: a mixture-of-experts layer whose experts live on different ranks.

A router (replicated on every rank) scores each token against ``experts`` experts and keeps the
top ``k``; the experts themselves are split over the ranks (``experts / ranks`` each). Tokens travel
to their experts' ranks with one ``all_to_all_single`` (uneven splits: each rank sends as many rows
to a peer as it has tokens routed there, the counts exchanged first with an all-to-all of their
own), the experts run on what arrived, and a second ``all_to_all_single`` brings the outputs back,
where each token sums its k outputs weighted by the router's softmax. Gloo supports
``all_to_all_single`` with split sizes (the list form ``all_to_all`` it does not).

Each rank holds only its own experts (:func:`local_experts`), and the layer trains: both exchanges
are :class:`AllToAll`, an autograd function whose backward sends each row's gradient back to the
rank the row came from. :func:`moe_grad_demo` checks every gradient (this rank's experts, the
router, the tokens) against the same layer's backward in one process.

:func:`moe_demo` checks the result against :func:`moe_reference` (the same layer in one process)
and counts tokens per expert and the bytes each rank sends off-rank, for
:func:`course.calculators.moe.all_to_all_bytes`.

Run: ``torchrun --nproc-per-node 2 -m course.distributed.expert_parallel``.
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


class AllToAll(torch.autograd.Function):
    """``all_to_all_single`` with uneven splits that autograd can go through: row block j of the
    input goes to rank j; the backward sends each row's gradient back where the row came from,
    the same all-to-all with the splits swapped."""

    @staticmethod
    def forward(ctx, rows: torch.Tensor, out_split: list[int], in_split: list[int]):
        ctx.splits = (out_split, in_split)
        out = rows.new_empty(sum(out_split), *rows.shape[1:])
        dist.all_to_all_single(out, rows.contiguous(), out_split, in_split)
        return out

    @staticmethod
    def backward(ctx, grad: torch.Tensor):
        out_split, in_split = ctx.splits
        back = grad.new_empty(sum(in_split), *grad.shape[1:])
        dist.all_to_all_single(back, grad.contiguous(), in_split, out_split)
        return back, None, None


def local_experts(w: dict, rank: int, ranks: int) -> dict:
    """What rank ``rank`` holds: the router (replicated) and only its ``experts / ranks``
    experts."""
    n_exp = w["router"].shape[1]
    if n_exp % ranks:
        raise ValueError(f"experts ({n_exp}) must be divisible by the {ranks} ranks")
    local = n_exp // ranks
    mine = slice(rank * local, (rank + 1) * local)
    return {"router": w["router"], **{k: w[k][mine] for k in ("w1", "w3", "w2")}}


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
    """Expert-parallel forward of this rank's tokens ``x``. ``w`` holds the router and only this
    rank's experts (:func:`local_experts`): rank r's are ``r * E/p ... (r+1) * E/p - 1``. Both
    all-to-alls are differentiable (:class:`AllToAll`: its backward is the all-to-all with the
    splits swapped), so the layer trains. Returns the output
    and what was exchanged."""
    r, p = dist.get_rank(), dist.get_world_size()
    n_exp, hidden = w["router"].shape[1], x.shape[1]
    local = w["w1"].shape[0]
    if local * p != n_exp:
        raise ValueError(f"this rank holds {local} experts: {n_exp} experts need {n_exp // p}")
    gate, idx = _route(x, w["router"], k)
    flat = idx.reshape(-1)  # (token, slot) pairs
    order = flat.argsort(stable=True)  # sorted by expert, hence by destination rank
    send_rows = x.repeat_interleave(k, dim=0)[order]
    send_counts = torch.bincount(flat // local, minlength=p)
    recv_counts = torch.empty_like(send_counts)
    dist.all_to_all_single(recv_counts, send_counts)
    s_split, r_split = send_counts.tolist(), recv_counts.tolist()
    recv_rows = AllToAll.apply(send_rows, r_split, s_split)  # dispatch
    recv_exp = flat.new_empty(sum(r_split))
    dist.all_to_all_single(recv_exp, flat[order].contiguous(), r_split, s_split)
    done = torch.zeros_like(recv_rows)
    for e in range(local):
        mine = recv_exp == r * local + e
        done = done.index_put((mine,), _expert(recv_rows[mine], w, e))
    back = AllToAll.apply(done, s_split, r_split)  # combine
    slots = back[order.argsort()]  # back to (token, slot) order
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
    res = moe_layer(x, local_experts(w, r, p), k)
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


def moe_grad_demo(k: int = 2, hidden: int = 32, ffn: int = 64, seed: int = 0) -> dict:
    """One backward pass through :func:`moe_layer` on every rank, each holding only its experts,
    against the same layer's backward in one process (every rank computes that reference on all
    tokens). Loss: the sum of the outputs times seeded targets. The router is replicated, so its
    gradient is the sum over ranks (an all-reduce, as DDP would do). Returns the largest
    differences of the gradients of this rank's experts, the router and this rank's tokens."""
    r, p = dist.get_rank(), dist.get_world_size()
    experts, n_tokens = 2 * p, 32 * p
    full = moe_weights(experts, hidden, ffn, seed)
    x_all = tokens(n_tokens, hidden, seed + 1)
    target = torch.randn(n_tokens, hidden, generator=torch.Generator().manual_seed(seed + 2))
    ref_w = {name: t.clone().requires_grad_() for name, t in full.items()}
    ref_x = x_all.clone().requires_grad_()
    (moe_reference(ref_x, ref_w, k) * target).sum().backward()
    w = {name: t.clone().requires_grad_() for name, t in local_experts(full, r, p).items()}
    x = x_all.chunk(p)[r].clone().requires_grad_()
    (moe_layer(x, w, k)["out"] * target.chunk(p)[r]).sum().backward()
    router_grad = w["router"].grad.clone()
    dist.all_reduce(router_grad)
    mine = local_experts({n: t.grad for n, t in ref_w.items()}, r, p)
    err = {name: float((w[name].grad - mine[name]).abs().max()) for name in ("w1", "w3", "w2")}
    return {
        "rank": r,
        "experts_held": w["w1"].shape[0],
        "experts": experts,
        "expert_grad_error": max(err.values()),
        "router_grad_error": float((router_grad - ref_w["router"].grad).abs().max()),
        "token_grad_error": float((x.grad - ref_x.grad.chunk(p)[r]).abs().max()),
        "grad_scale": float(ref_w["w1"].grad.abs().max()),
    }


def main() -> None:
    from course.distributed._script import run_script

    def worker():
        return {k: v for k, v in moe_demo().items() if k != "out"}

    run_script(worker, "Expert parallelism: all-to-all dispatch and combine")


if __name__ == "__main__":
    main()

__all__ = [
    "AllToAll",
    "local_experts",
    "main",
    "moe_demo",
    "moe_grad_demo",
    "moe_layer",
    "moe_reference",
    "moe_weights",
    "tokens",
]
