"""Context parallelism: ring attention over the ranks with point-to-point ``isend``/``irecv``.

Each rank holds one block of a long sequence: its queries, keys and values (``seq_len / ranks``
tokens). The K/V blocks travel round the ring: at every step a rank sends the block it holds to
the next rank and receives one from the previous, while it attends its queries to the block in
hand. Every step gives a partial softmax over one block of keys; the partials merge by the
log-sum-exp rule (Milakov & Gimelshein 2018, as in FlashAttention and Ring Attention, Liu et al.
2023)::

    lse = logaddexp(lse_a, lse_b)
    out = out_a * exp(lse_a - lse) + out_b * exp(lse_b - lse)

so after ``ranks`` steps each rank holds exactly its rows of full attention, without any rank ever
holding more than one (s/p) x (s/p) block of scores. ``causal=True`` skips the blocks in a query's
future and masks the diagonal block. ``dist.batch_isend_irecv`` is not used: it can hang on gloo.
PyTorch's own ``context_parallel`` has no CPU kernel, so this is written out by hand.

**Backward.** When the inputs need gradients the K/V block moves with :class:`RingShift`, an
autograd function: forward, send the block to the next rank and receive the previous rank's;
backward, the reverse (each block's gradient goes back to the rank it came from). The merge is
plain torch, so autograd goes through the whole ring and each rank's K and V collect the
gradients of every rank's queries. :func:`ring_grad_demo` checks them against
``scaled_dot_product_attention`` in one process.

Run: ``torchrun --nproc-per-node 2 -m course.distributed.ring_attention``.
"""

from __future__ import annotations

import math

import torch
import torch.distributed as dist

from course.distributed.launch import device


def qkv(
    batch: int = 1,
    heads: int = 4,
    seq_len: int = 64,
    head_dim: int = 16,
    seed: int = 0,
    dev: str | torch.device = "cpu",
) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    """Seeded full ``(q, k, v)`` of shape ``batch x heads x seq_len x head_dim`` (every rank the
    same)."""
    g = torch.Generator().manual_seed(seed)
    shape = (batch, heads, seq_len, head_dim)
    return tuple(torch.randn(shape, generator=g).to(dev) for _ in range(3))  # type: ignore[return-value]


def full_attention(
    q: torch.Tensor, k: torch.Tensor, v: torch.Tensor, *, causal: bool = False
) -> torch.Tensor:
    """Softmax attention on one device (the reference), scaled by 1/sqrt(head_dim)."""
    scores = q @ k.transpose(-1, -2) / math.sqrt(q.shape[-1])
    if causal:
        s = q.shape[-2]
        scores = scores.masked_fill(
            torch.ones(s, s, dtype=torch.bool, device=q.device).triu(1), float("-inf")
        )
    return torch.softmax(scores, dim=-1) @ v


class RingShift(torch.autograd.Function):
    """Send a tensor to the next rank of the ring and receive the previous rank's; the backward
    sends the gradient to the previous rank and receives the next one's."""

    @staticmethod
    def forward(ctx, t: torch.Tensor) -> torch.Tensor:
        return _shift(t.contiguous(), +1)

    @staticmethod
    def backward(ctx, grad: torch.Tensor) -> torch.Tensor:
        return _shift(grad.contiguous(), -1)


def _shift(t: torch.Tensor, direction: int) -> torch.Tensor:
    r, p = dist.get_rank(), dist.get_world_size()
    incoming = torch.empty_like(t)
    works = [dist.isend(t, (r + direction) % p), dist.irecv(incoming, (r - direction) % p)]
    for w in works:
        w.wait()
    return incoming


def _block(q, k, v, mask):
    scores = q @ k.transpose(-1, -2) / math.sqrt(q.shape[-1])
    if mask is not None:
        scores = scores.masked_fill(mask, float("-inf"))
    lse = torch.logsumexp(scores, dim=-1, keepdim=True)
    return torch.exp(scores - lse) @ v, lse, scores


def ring_attention(
    q: torch.Tensor, k: torch.Tensor, v: torch.Tensor, *, causal: bool = False
) -> dict:
    """Attention of this rank's block ``q`` over every rank's ``k``/``v`` blocks, round the ring.

    Returns ``{"out", "lse", "steps", "sent_bytes", "peak_block_bytes"}``: the output block, its
    log-sum-exp, the blocks attended (``causal`` skips some), the bytes this rank sent and the bytes
    of the tensors it held at once (Q, K, V, output, the K/V block in flight, one block of scores
    and the fp32 log-sum-exp per query row), for
    :func:`course.calculators.context.ring_attention_bytes`.
    """
    r, p = dist.get_rank(), dist.get_world_size()
    out = torch.zeros_like(q)
    lse = torch.full(q.shape[:-1] + (1,), float("-inf"), dtype=q.dtype, device=q.device)
    kv = torch.stack([k, v]).contiguous()
    n = q.shape[-2]
    diag = torch.ones(n, n, dtype=torch.bool, device=q.device).triu(1)
    steps, sent, held = 0, 0, 0
    grad = torch.is_grad_enabled() and any(t.requires_grad for t in (q, k, v))
    shifted = []
    for i in range(p):
        src = (r - i) % p  # whose block is in hand
        pending = []
        if i < p - 1 and grad:  # autograd's shift waits for the block before the compute
            incoming = RingShift.apply(kv)
            shifted.append(incoming)
            sent += kv.numel() * kv.element_size()
        elif i < p - 1:  # the transfer runs while this block is computed
            incoming = torch.empty_like(kv)
            pending = [dist.isend(kv, (r + 1) % p), dist.irecv(incoming, (r - 1) % p)]
            sent += kv.numel() * kv.element_size()
        if not causal or src <= r:
            b_out, b_lse, scores = _block(q, kv[0], kv[1], diag if causal and src == r else None)
            new = torch.logaddexp(lse, b_lse)
            out = out * torch.exp(lse - new) + b_out * torch.exp(b_lse - new)
            lse, steps = new, steps + 1
            tensors = [q, out, kv, scores] + ([incoming] if i < p - 1 else [])
            held = max(held, sum(t.numel() * t.element_size() for t in tensors) + lse.numel() * 4)
        for work in pending:
            work.wait()
        if i < p - 1:
            kv = incoming
    if shifted:  # every rank's backward must run every shift (a causal rank skips some blocks):
        out = out + 0 * sum(t.sum() for t in shifted)  # keep each one in the graph
    return {"out": out, "lse": lse, "steps": steps, "sent_bytes": sent, "peak_block_bytes": held}


def ring_demo(
    batch: int = 1,
    heads: int = 4,
    seq_len: int | None = None,
    head_dim: int = 16,
    causal: bool = False,
    seed: int = 0,
) -> dict:
    """Ring attention on this rank's block of a seeded sequence, against full attention.

    Every rank builds the same full q, k, v (``seed``) and keeps its block; the result carries the
    rank's output block and the largest difference from the same rows of full attention.
    ``seq_len`` defaults to 32 tokens per rank (64 on 2 ranks), so any world size divides it.
    """
    r, p = dist.get_rank(), dist.get_world_size()
    seq_len = 32 * p if seq_len is None else seq_len
    if seq_len % p:
        raise ValueError(f"seq_len must be divisible by the {p} ranks, got {seq_len}")
    dev = device()
    q, k, v = qkv(batch, heads, seq_len, head_dim, seed, dev)
    blocks = [t.chunk(p, dim=-2)[r].contiguous() for t in (q, k, v)]
    res = ring_attention(*blocks, causal=causal)
    ref = full_attention(q, k, v, causal=causal).chunk(p, dim=-2)[r]
    return {
        "rank": r,
        "ranks": p,
        "seq_len": seq_len,
        "causal": causal,
        "out": res["out"].cpu(),
        "max_abs_error": float((res["out"] - ref).abs().max()),
        "steps": res["steps"],
        "sent_bytes": res["sent_bytes"],
        "peak_block_bytes": res["peak_block_bytes"],
    }


def ring_grad_demo(
    batch: int = 1, heads: int = 4, head_dim: int = 16, causal: bool = True, seed: int = 0
) -> dict:
    """One backward pass through :func:`ring_attention` (32 tokens per rank) against
    ``torch.nn.functional.scaled_dot_product_attention`` on the whole sequence in one process.
    Loss: the sum of the outputs times seeded targets. Returns the largest differences of this
    rank's output and of the gradients of its Q, K and V blocks."""
    r, p = dist.get_rank(), dist.get_world_size()
    full = [t.requires_grad_() for t in qkv(batch, heads, 32 * p, head_dim, seed)]
    target = torch.randn(full[0].shape, generator=torch.Generator().manual_seed(seed + 1))
    ref = torch.nn.functional.scaled_dot_product_attention(*full, is_causal=causal)
    (ref * target).sum().backward()
    mine = [t.detach().chunk(p, dim=-2)[r].clone().requires_grad_() for t in full]
    out = ring_attention(*mine, causal=causal)["out"]
    (out * target.chunk(p, dim=-2)[r]).sum().backward()

    def err(a, b):
        return float((a - b.chunk(p, dim=-2)[r]).abs().max())

    return {
        "rank": r,
        "causal": causal,
        "out_error": err(out.detach(), ref.detach()),
        **{
            f"grad_{n}_error": err(m.grad, f.grad)
            for n, m, f in zip("qkv", mine, full, strict=True)
        },
        "grad_scale": max(float(f.grad.abs().max()) for f in full),
    }


def main() -> None:
    from course.distributed._script import run_script

    def worker():
        return [{k: v for k, v in ring_demo(causal=c).items() if k != "out"} for c in (False, True)]

    run_script(worker, "Ring attention against full attention")


if __name__ == "__main__":
    main()

__all__ = [
    "RingShift",
    "full_attention",
    "main",
    "qkv",
    "ring_attention",
    "ring_demo",
    "ring_grad_demo",
]
