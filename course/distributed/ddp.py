"""Data parallelism with ``DistributedDataParallel``: same model on every rank, batch split.

Each rank computes the gradient of its share of the batch; DDP all-reduces (averages) the
gradients in buckets while the backward pass is still running, so every rank ends with the gradient
of the full batch (:func:`ddp_gradients`; tests/test_distributed_demos.py holds it equal to one
process on the whole batch, :func:`reference_gradients`, to 1e-6). :func:`ddp_timeline` records
when each bucket's all-reduce started and finished against the backward pass, and the step time
with and without gradient synchronisation (``no_sync``).

Run: ``torchrun --nproc-per-node 2 -m course.distributed.ddp``. Layer 3.
"""

from __future__ import annotations

import statistics
import time

import torch
import torch.distributed as dist
from torch.nn.parallel import DistributedDataParallel as DDP

from course.distributed.common import TINY_CONFIG, lm_loss, seeded_model, shard_of, token_batch
from course.distributed.launch import device
from course.facts.models import TransformerConfig


def reference_gradients(config: TransformerConfig = TINY_CONFIG, batch: int = 4,
                        seq_len: int = 16) -> dict[str, torch.Tensor]:  # fmt: skip
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


def ddp_gradients(config: TransformerConfig = TINY_CONFIG, batch: int = 4,
                  seq_len: int = 16) -> dict[str, torch.Tensor]:  # fmt: skip
    """One DDP backward on this rank's share of the batch; returns the (averaged) gradients."""
    r, n = dist.get_rank(), dist.get_world_size()
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
            events.append({"kind": "all-reduce", "bucket": bucket.index(), "start": start,
                           "end": clock(), "bytes": buf.numel() * buf.element_size()})  # fmt: skip
            return f.value()[0].div_(n)

        return fut.then(finish)

    return hook


def ddp_timeline(config: TransformerConfig = TINY_CONFIG, batch: int = 8, seq_len: int = 32,
                 steps: int = 5, bucket_cap_mb: float = 0.1) -> dict:  # fmt: skip
    """Measured DDP training steps on this rank.

    Returns ``{"rank", "events", "sync_seconds", "no_sync_seconds", "buckets"}``: ``events`` are
    the last step's backward pass and each gradient bucket's all-reduce (start/end seconds from
    the step's start, bytes); ``sync_seconds`` / ``no_sync_seconds`` the median step time with
    gradient all-reduce and without it (``no_sync``: what the step would cost with free
    communication). ``bucket_cap_mb`` is small so that the tiny model has several buckets.
    """
    r, n = dist.get_rank(), dist.get_world_size()
    dev = device()
    model = _ddp(config, bucket_cap_mb)
    opt = torch.optim.SGD(model.parameters(), lr=1e-3)
    inputs, targets = token_batch(config, batch * n, seq_len)
    x, y = shard_of(inputs, r, n).to(dev), shard_of(targets, r, n).to(dev)
    events: list = []
    t0 = [0.0]

    def clock() -> float:
        if dev.type == "cuda":
            torch.cuda.synchronize(dev)
        return time.perf_counter() - t0[0]

    model.register_comm_hook(None, _timing_hook(events, clock))

    def step(sync: bool) -> float:
        events.clear()
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
        return clock()

    step(True)  # warm-up (DDP rebuilds its buckets after the first step)
    no_sync = statistics.median(step(False) for _ in range(steps))
    sync = statistics.median(step(True) for _ in range(steps))
    return {"rank": r, "events": [dict(e, rank=r) for e in events], "sync_seconds": sync,
            "no_sync_seconds": no_sync,
            "buckets": len([e for e in events if e["kind"] == "all-reduce"])}  # fmt: skip


def main() -> None:
    from course.distributed._script import run_script

    def worker():
        grads = ddp_gradients()
        timing = ddp_timeline(steps=3)
        return {"gradient tensors": len(grads), "buckets": timing["buckets"],
                "step with all-reduce (s)": round(timing["sync_seconds"], 4),
                "step without (no_sync) (s)": round(timing["no_sync_seconds"], 4)}  # fmt: skip

    run_script(worker, "DDP on the tiny transformer")


if __name__ == "__main__":
    main()

__all__ = ["ddp_gradients", "ddp_timeline", "main", "reference_gradients"]
