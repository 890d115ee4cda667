"""Data parallelism with ``DistributedDataParallel``: same model on every rank, batch split.

Each rank computes the gradient of its share of the batch; DDP all-reduces (averages) the gradients
in buckets while the backward pass is still running, so every rank ends with the gradient of the
full batch (:func:`ddp_gradients`; tests/distributed/test_distributed_demos.py holds it equal to one
process on the whole batch, :func:`reference_gradients`, to 1e-6). :func:`ddp_timeline` records when
each bucket's all-reduce started and finished against the backward pass, and the step time with and
without gradient synchronisation (``no_sync``).

Run: ``torchrun --nproc-per-node 2 -m course.distributed.ddp``.
"""

from __future__ import annotations

import statistics
import time

import torch
import torch.distributed as dist
from torch.nn.parallel import DistributedDataParallel as DDP

from course.distributed.common import (
    TINY_CONFIG,
    lm_loss,
    scaled_batch,
    seeded_model,
    shard_of,
    token_batch,
)
from course.distributed.launch import device
from course.facts.models import TransformerConfig


def reference_gradients(
    config: TransformerConfig = TINY_CONFIG, batch: int = 4, seq_len: int = 16
) -> dict[str, torch.Tensor]:
    """Gradients of one process on the full batch (the same seeded model and batch as the ranks)."""
    model = seeded_model(config)
    inputs, targets = token_batch(config, batch, seq_len)
    lm_loss(model(inputs), targets).backward()
    return {name: p.grad.detach().clone() for name, p in model.named_parameters()}


def _ddp(config: TransformerConfig, bucket_cap_mb: float) -> DDP:
    dev = device()
    model = seeded_model(config, device=dev)
    ids = [dev.index] if dev.type == "cuda" else None
    return DDP(model, device_ids=ids, bucket_cap_mb=bucket_cap_mb)


def ddp_gradients(
    config: TransformerConfig = TINY_CONFIG, batch: int | None = None, seq_len: int = 16
) -> dict[str, torch.Tensor]:
    """One DDP backward on this rank's share of the batch; returns the (averaged) gradients.

    ``batch`` defaults to 2 sequences per rank (4 on 2 ranks: :func:`reference_gradients`'s
    default), so any number of ranks splits it evenly."""
    r, n = dist.get_rank(), dist.get_world_size()
    batch = batch or scaled_batch(n)
    model = _ddp(config, bucket_cap_mb=25)
    inputs, targets = token_batch(config, batch, seq_len)
    dev = device()
    x, y = shard_of(inputs, r, n).to(dev), shard_of(targets, r, n).to(dev)
    lm_loss(model(x), y).backward()
    return {name: p.grad.detach().cpu().clone() for name, p in model.module.named_parameters()}


def _timing_hook(events: list, clock) -> callable:
    def hook(state, bucket):
        start, buf, n = clock(), bucket.buffer(), dist.get_world_size()
        fut = dist.all_reduce(buf, async_op=True).get_future()

        def finish(f):
            events.append(
                {
                    "kind": "all-reduce",
                    "bucket": bucket.index(),
                    "start": start,
                    "end": clock(),
                    "bytes": buf.numel() * buf.element_size(),
                }
            )
            return f.value()[0].div_(n)

        return fut.then(finish)

    return hook


def ddp_timeline(
    config: TransformerConfig = TINY_CONFIG,
    batch: int = 8,
    seq_len: int = 32,
    steps: int = 5,
    bucket_cap_mb: float = 0.1,
) -> dict:
    """Measured DDP training steps on this rank (``batch`` sequences per rank).

    Returns ``{"rank", "events", "gradients_ready_seconds", "pairs", "sync_seconds",
    "no_sync_seconds", "buckets"}``:

    - ``events``: the last synchronised step's backward pass and each gradient bucket's
      all-reduce (start/end seconds from the step's start, bytes);
    - ``gradients_ready_seconds``: when the last parameter's gradient was computed in that step
      (a hook on every parameter's gradient). A bucket overlaps the computation only if its
      all-reduce starts before this instant; the backward's own end is no yardstick, because DDP
      makes the backward wait for every bucket;
    - ``pairs``: ``steps`` pairs of (step with gradient all-reduce, step without it under
      ``no_sync``) seconds, taken alternately so that both see the same state of the machine;
      ``sync_seconds`` / ``no_sync_seconds`` their medians.

    ``bucket_cap_mb`` is small so that the tiny model has several buckets.
    """
    r, n = dist.get_rank(), dist.get_world_size()
    dev = device()
    model = _ddp(config, bucket_cap_mb)
    opt = torch.optim.SGD(model.parameters(), lr=1e-3)
    inputs, targets = token_batch(config, batch * n, seq_len)
    x, y = shard_of(inputs, r, n).to(dev), shard_of(targets, r, n).to(dev)
    events: list = []
    ready: list = []
    t0 = [0.0]

    def clock() -> float:
        if dev.type == "cuda":
            torch.cuda.synchronize(dev)
        return time.perf_counter() - t0[0]

    model.register_comm_hook(None, _timing_hook(events, clock))
    for p in model.module.parameters():  # runs when p's gradient is computed, before DDP sees it
        p.register_hook(lambda g: ready.append(time.perf_counter() - t0[0]) or g)

    def step(sync: bool) -> float:
        events.clear()
        ready.clear()
        dist.barrier()
        t0[0] = time.perf_counter()
        loss = lm_loss(model(x), y)
        b0 = clock()
        if sync:
            loss.backward()
        else:
            with model.no_sync():
                loss.backward()
        events.append({"kind": "backward", "bucket": -1, "start": b0, "end": clock(), "bytes": 0})
        opt.step()
        opt.zero_grad(set_to_none=True)
        end = clock()
        if sync:
            last_sync[:] = [list(events), list(ready)]
        return end

    last_sync: list = [[], []]
    step(True)  # warm-up (DDP rebuilds its buckets after the first step)
    step(False)
    pairs = []
    for i in range(steps):  # alternate which of the pair goes first
        if i % 2 == 0:
            a = step(True)
            b = step(False)
        else:
            b = step(False)
            a = step(True)
        pairs.append((a, b))
    sync_events, sync_ready = last_sync
    return {
        "rank": r,
        "events": [dict(e, rank=r) for e in sync_events],
        "gradients_ready_seconds": max(sync_ready) if sync_ready else None,
        "pairs": pairs,
        "sync_seconds": statistics.median(p[0] for p in pairs) if pairs else None,
        "no_sync_seconds": statistics.median(p[1] for p in pairs) if pairs else None,
        "buckets": len([e for e in sync_events if e["kind"] == "all-reduce"]),
    }


def main() -> None:
    from course.distributed._script import run_script

    def worker():
        grads = ddp_gradients()
        timing = ddp_timeline(steps=3)
        return {
            "gradient tensors": len(grads),
            "buckets": timing["buckets"],
            "step with all-reduce (s)": round(timing["sync_seconds"], 4),
            "step without (no_sync) (s)": round(timing["no_sync_seconds"], 4),
        }

    run_script(worker, "DDP on the tiny transformer")


if __name__ == "__main__":
    main()

__all__ = ["ddp_gradients", "ddp_timeline", "main", "reference_gradients"]
