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

**Zig-zag.** With a causal mask a contiguous split leaves most of the work to the last rank.
:func:`zigzag_ring_attention` cuts the sequence in ``2 x ranks`` chunks and gives each rank two
(:func:`chunks_held`: ``r`` and ``2p - 1 - r``, Llama 3's chunks, or ``2r`` and ``2r + 1``); each
step attends each query chunk to the key chunks not after it, so every rank computes the same
(query, key) pairs (:func:`course.calculators.context.causal_balance`). Llama 3 itself does not
pass K/V round a ring: its context parallelism all-gathers K and V, then attends its own chunks
(sec. 3.3.2). Its backward, :class:`RecomputedRing`, recomputes each block as FlashAttention does
and saves only the rank's own blocks: plain autograd through the ring saves every step's K/V block
and probabilities, so its memory grows with the rank count (:func:`saved_bytes` measures both).

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


# Zig-zag context parallelism

#: How the 2 x ranks chunks of a causal sequence are dealt (rank r holds two of s / 2p tokens).
LAYOUTS = ("zigzag", "contiguous")


def chunks_held(rank: int, ranks: int, layout: str = "zigzag") -> tuple[int, int]:
    """The two chunks (of ``2 ranks``) rank ``rank`` holds: ``(r, 2p - 1 - r)`` zig-zag (Llama 3,
    sec. 3.3.2: one early chunk, one late), ``(2r, 2r + 1)`` contiguous (the plain split)."""
    if layout not in LAYOUTS:
        raise ValueError(f"layout must be one of {LAYOUTS}, got {layout!r}")
    if not 0 <= rank < ranks:
        raise ValueError(f"rank must be in [0, {ranks - 1}], got {rank}")
    return (rank, 2 * ranks - 1 - rank) if layout == "zigzag" else (2 * rank, 2 * rank + 1)


def local_chunks(t: torch.Tensor, rank: int, ranks: int, layout: str = "zigzag") -> torch.Tensor:
    """This rank's rows of a whole sequence ``t`` (tokens on dim -2): its two chunks, in order."""
    parts = t.chunk(2 * ranks, dim=-2)
    return torch.cat([parts[i] for i in chunks_held(rank, ranks, layout)], dim=-2).contiguous()


def _pairs(mine: tuple, theirs: tuple):
    """For each of my query chunks ``j``: the key chunks ``i`` of the block in hand it attends to
    (key chunk not after the query chunk) and whether one is its own diagonal chunk."""
    for j, a in enumerate(mine):
        keys = [i for i, b in enumerate(theirs) if b <= a]
        if keys:
            yield j, keys, [theirs[i] == a for i in keys]


def _chunk_mask(c: int, diag: list, dev) -> torch.Tensor | None:
    """The causal mask of ``c`` queries over ``len(diag)`` key chunks: only a diagonal chunk masks
    its upper triangle; None when no chunk is diagonal."""
    if not any(diag):
        return None
    tri = torch.ones(c, c, dtype=torch.bool, device=dev).triu(1)
    none = torch.zeros(c, c, dtype=torch.bool, device=dev)
    return torch.cat([tri if d else none for d in diag], dim=-1)


def _zigzag_forward(q, k, v, layout, *, autograd_ring):
    """The causal ring over two chunks per rank. Returns ``(out, lse, work)``; ``work`` counts the
    causal (query, key) pairs this rank computed, the scores it computed (masked ones included),
    the chunk blocks and the ring steps with any work."""
    r, p = dist.get_rank(), dist.get_world_size()
    c = q.shape[-2] // 2
    mine = chunks_held(r, p, layout)
    qs = q.split(c, dim=-2)
    outs: list = [None, None]
    lses: list = [None, None]
    kv = torch.stack([k, v]).contiguous()
    work = {"pairs": 0, "scores": 0, "blocks": 0, "steps": 0}
    shifted = []
    for i in range(p):
        theirs = chunks_held((r - i) % p, p, layout)
        pending = []
        if i < p - 1 and autograd_ring:
            incoming = RingShift.apply(kv)
            shifted.append(incoming)
        elif i < p - 1:  # the transfer runs while this block is computed
            incoming = torch.empty_like(kv)
            pending = [dist.isend(kv, (r + 1) % p), dist.irecv(incoming, (r - 1) % p)]
        did = False
        for j, keys, diag in _pairs(mine, theirs):
            kk, vv = (
                torch.cat([kv[t][..., x * c : (x + 1) * c, :] for x in keys], -2) for t in (0, 1)
            )
            b_out, b_lse, _ = _block(qs[j], kk, vv, _chunk_mask(c, diag, q.device))
            if outs[j] is None:
                outs[j], lses[j] = b_out, b_lse
            else:
                new = torch.logaddexp(lses[j], b_lse)
                outs[j] = outs[j] * torch.exp(lses[j] - new) + b_out * torch.exp(b_lse - new)
                lses[j] = new
            work["pairs"] += sum(c * (c + 1) // 2 if d else c * c for d in diag)
            work["scores"] += c * c * len(keys)
            work["blocks"] += len(keys)
            did = True
        work["steps"] += did
        for w in pending:
            w.wait()
        if i < p - 1:
            kv = incoming
    out, lse = torch.cat(outs, dim=-2), torch.cat(lses, dim=-2)
    if shifted:  # every rank's backward runs every shift (some blocks attend to nothing here)
        out = out + 0 * sum(t.sum() for t in shifted)
    return out, lse, work


class RecomputedRing(torch.autograd.Function):
    """Causal zig-zag (or contiguous) ring attention whose backward recomputes, FlashAttention's
    way: the forward saves only this rank's Q, K, V, output and log-sum-exp (independent of the
    rank count); the backward sends the K/V blocks round the ring a second time, with each
    block's dK/dV travelling beside it, and recomputes each block's probabilities from the saved
    log-sum-exp: ``P = exp(S - lse)``, ``dV += P^T dO``, ``dS = P (dO V^T - rowsum(dO O))``,
    ``dQ += dS K / sqrt(d)``, ``dK += dS^T Q / sqrt(d)`` (Dao et al. 2022, Algorithm 4)."""

    @staticmethod
    def forward(ctx, q, k, v, layout, work):
        out, lse, counted = _zigzag_forward(q, k, v, layout, autograd_ring=False)
        work.update(counted)
        ctx.layout = layout
        ctx.save_for_backward(q, k, v, out, lse)
        return out

    @staticmethod
    def backward(ctx, dout):
        q, k, v, out, lse = ctx.saved_tensors
        r, p = dist.get_rank(), dist.get_world_size()
        c, scale = q.shape[-2] // 2, 1 / math.sqrt(q.shape[-1])
        mine = chunks_held(r, p, ctx.layout)
        qs, dos, lses = (t.split(c, dim=-2) for t in (q, dout, lse))
        ds = (dout * out).sum(-1, keepdim=True).split(c, dim=-2)  # rowsum(dO * O)
        dqs = [torch.zeros_like(t) for t in qs]
        kv = torch.stack([k, v]).contiguous()
        dkv = torch.zeros_like(kv)  # the gradient of the block in hand, travelling with it
        for i in range(p):
            theirs = chunks_held((r - i) % p, p, ctx.layout)
            for j, keys, diag in _pairs(mine, theirs):
                for x, d in zip(keys, diag, strict=True):
                    rows = slice(x * c, (x + 1) * c)
                    kb, vb = kv[0][..., rows, :], kv[1][..., rows, :]
                    s = qs[j] @ kb.transpose(-1, -2) * scale
                    if d:
                        s = s.masked_fill(_chunk_mask(c, [True], q.device), float("-inf"))
                    prob = torch.exp(s - lses[j])
                    dkv[1][..., rows, :] += prob.transpose(-1, -2) @ dos[j]
                    dscore = prob * (dos[j] @ vb.transpose(-1, -2) - ds[j])
                    dqs[j] += dscore @ kb * scale
                    dkv[0][..., rows, :] += dscore.transpose(-1, -2) @ qs[j] * scale
            if i < p - 1:
                kv = _shift(kv, +1)
            dkv = _shift(dkv, +1)  # after the last step: back to the rank that owns the block
        dk, dv = dkv
        return torch.cat(dqs, dim=-2), dk, dv, None, None


def zigzag_ring_attention(
    q: torch.Tensor,
    k: torch.Tensor,
    v: torch.Tensor,
    *,
    layout: str = "zigzag",
    recompute: bool = True,
) -> dict:
    """Causal attention of this rank's two chunks (:func:`local_chunks`) over the whole sequence,
    round the ring. Each step attends each query chunk to the key chunks of the block in hand that
    are not after it, with the causal mask only on its own chunk.

    ``recompute`` (the default) trains through :class:`RecomputedRing` (saved for backward: the
    local blocks only); ``recompute=False`` through plain autograd and :class:`RingShift` (saved:
    every step's K/V block and probabilities, growing with the ranks). Returns ``{"out", "work"}``,
    ``work`` as :func:`course.calculators.context.causal_balance` counts it (``pairs``) and the
    scores actually computed (``scores``, masked ones included), chunk ``blocks`` and ``steps``.
    """
    if q.shape[-2] % 2:
        raise ValueError(f"q must hold two equal chunks, got {q.shape[-2]} tokens")
    work: dict = {}
    grad = torch.is_grad_enabled() and any(t.requires_grad for t in (q, k, v))
    if recompute and grad:
        out = RecomputedRing.apply(q, k, v, layout, work)
    else:
        out, _, work = _zigzag_forward(q, k, v, layout, autograd_ring=grad)
    return {"out": out, "work": work}


def saved_bytes(fn, *args, **kwargs) -> tuple:
    """``(fn(*args, **kwargs), bytes)``: the result and the bytes of the distinct tensors autograd
    saved for the backward while ``fn`` ran (``torch.autograd.graph.saved_tensors_hooks``; a
    storage saved twice counts once)."""
    seen: dict = {}

    def pack(t):
        st = t.untyped_storage()
        seen[st.data_ptr()] = st.nbytes()
        return t

    with torch.autograd.graph.saved_tensors_hooks(pack, lambda t: t):
        res = fn(*args, **kwargs)
    return res, sum(seen.values())


def zigzag_demo(
    layout: str = "zigzag",
    recompute: bool = True,
    tokens_per_rank: int = 32,
    batch: int = 1,
    heads: int = 4,
    head_dim: int = 16,
    seed: int = 0,
) -> dict:
    """Causal ring attention with ``layout`` on this rank, forward and backward, against
    ``scaled_dot_product_attention`` on the whole sequence in one process (the loss: outputs times
    seeded targets). Returns the largest differences of the output and of the Q, K, V gradients
    on this rank's rows, the work this rank did, and the bytes saved for its backward."""
    r, p = dist.get_rank(), dist.get_world_size()
    full = [t.requires_grad_() for t in qkv(batch, heads, tokens_per_rank * p, head_dim, seed)]
    target = torch.randn(full[0].shape, generator=torch.Generator().manual_seed(seed + 1))
    ref = torch.nn.functional.scaled_dot_product_attention(*full, is_causal=True)
    (ref * target).sum().backward()
    mine = [local_chunks(t.detach(), r, p, layout).requires_grad_() for t in full]
    res, saved = saved_bytes(zigzag_ring_attention, *mine, layout=layout, recompute=recompute)
    (res["out"] * local_chunks(target, r, p, layout)).sum().backward()

    def err(a, b):
        return float((a - local_chunks(b, r, p, layout)).abs().max())

    return {
        "rank": r,
        "ranks": p,
        "layout": layout,
        "recompute": recompute,
        "out_error": err(res["out"].detach(), ref.detach()),
        **{
            f"grad_{n}_error": err(m.grad, f.grad)
            for n, m, f in zip("qkv", mine, full, strict=True)
        },
        "grad_scale": max(float(f.grad.abs().max()) for f in full),
        **res["work"],
        "saved_bytes": saved,
    }


def main() -> None:
    from course.distributed._script import run_script

    def worker():
        return [{k: v for k, v in ring_demo(causal=c).items() if k != "out"} for c in (False, True)]

    run_script(worker, "Ring attention against full attention")


if __name__ == "__main__":
    main()

__all__ = [
    "LAYOUTS",
    "RecomputedRing",
    "RingShift",
    "chunks_held",
    "local_chunks",
    "saved_bytes",
    "zigzag_demo",
    "zigzag_ring_attention",
    "full_attention",
    "main",
    "qkv",
    "ring_attention",
    "ring_demo",
    "ring_grad_demo",
]
