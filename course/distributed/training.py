"""One training run, five ways: 1 process, DDP, FSDP2, tensor parallel and pipeline parallel.

Every way trains the same seeded model (:data:`course.distributed.common.SCALE_CONFIG`, which splits
evenly over 1, 2, 3, 4 or 8 ranks) on the same batch with the same Adam, for the same steps. The
parallel ways split the work differently (the batch for DDP and FSDP2, every layer's heads for TP,
the layers for PP) but compute the same mathematics, so their loss curves and final weights equal
the single process's to float rounding: tests/distributed/test_distributed_training.py holds them to
it, and lesson 06 draws the curves on top of each other.

:func:`train` runs one way on this rank and returns its losses and the whole model's weights (the
shards gathered); :func:`all_ways` runs each in turn. :func:`reference_train` is the single process.

Run: ``torchrun --nproc-per-node 2 -m course.distributed.training``.
"""

from __future__ import annotations

import torch
import torch.distributed as dist
from torch.distributed.device_mesh import init_device_mesh

from course.distributed.common import (
    SCALE_CONFIG,
    lm_loss,
    scaled_batch,
    seeded_model,
    shard_of,
    token_batch,
)
from course.distributed.launch import device
from course.facts.models import TransformerConfig

#: The ways :func:`train` knows, in the order the lesson shows them.
WAYS = ("1 process", "DDP", "FSDP2", "TP", "PP")
#: Adam's learning rate: large enough that the loss falls visibly in a few steps.
LR = 1e-2
SEQ_LEN = 16
#: Adam's epsilon, above the default 1e-8: a gradient that is zero in one process and 1e-12 from
#: float rounding in another would otherwise become updates of very different size.
EPS = 1e-6


def _adam(params) -> torch.optim.Optimizer:
    return torch.optim.Adam(params, lr=LR, eps=EPS, foreach=False)


def _full(t: torch.Tensor) -> torch.Tensor:
    return (t.full_tensor() if hasattr(t, "full_tensor") else t).detach().cpu().clone()


def reference_train(
    steps: int = 4, batch: int = 4, config: TransformerConfig = SCALE_CONFIG, seq_len: int = SEQ_LEN
) -> dict:
    """The single process: ``steps`` Adam steps on the whole batch. ``{"losses", "params"}``."""
    model = seeded_model(config)
    opt = _adam(model.parameters())
    x, y = token_batch(config, batch, seq_len)
    losses = []
    for _ in range(steps):
        loss = lm_loss(model(x), y)
        loss.backward()
        opt.step()
        opt.zero_grad(set_to_none=True)
        losses.append(loss.item())
    return {"losses": losses, "params": {n: _full(p) for n, p in model.named_parameters()}}


def _mean_over_ranks(value: float) -> float:
    t = torch.tensor([value], dtype=torch.float64)
    dist.all_reduce(t)
    return float(t) / dist.get_world_size()


def _data_parallel(way: str, steps: int, batch: int, config: TransformerConfig) -> dict:
    from torch.nn.parallel import DistributedDataParallel as DDP

    from course.distributed.fsdp import shard_model

    r, n, dev = dist.get_rank(), dist.get_world_size(), device()
    model = seeded_model(config, device=dev)
    if way == "DDP":
        trained = DDP(model, device_ids=[dev.index] if dev.type == "cuda" else None)
    else:
        trained = model = shard_model(model)
    opt = _adam(model.parameters())
    x, y = token_batch(config, batch, SEQ_LEN)
    x, y = shard_of(x, r, n).to(dev), shard_of(y, r, n).to(dev)
    losses = []
    for _ in range(steps):
        loss = lm_loss(trained(x), y)
        loss.backward()  # DDP averages the gradients; FSDP2 reduce-scatters their average
        opt.step()
        opt.zero_grad(set_to_none=True)
        losses.append(_mean_over_ranks(loss.item()))  # each rank saw 1/n of the batch
    return {"losses": losses, "params": {k: _full(p) for k, p in model.named_parameters()}}


def _tensor_parallel(steps: int, batch: int, config: TransformerConfig) -> dict:
    from course.distributed.tensor_parallel import split_block

    dev = device()
    model = seeded_model(config, device=dev)
    mesh = init_device_mesh(dev.type, (dist.get_world_size(),))
    for block in model.blocks:  # embedding, norms and LM head stay whole on every rank
        split_block(block, mesh)
    opt = _adam(model.parameters())
    x, y = token_batch(config, batch, SEQ_LEN)
    losses = []
    for _ in range(steps):
        loss = lm_loss(model(x.to(dev)), y.to(dev))  # every rank: the whole batch, its heads
        loss.backward()
        opt.step()
        opt.zero_grad(set_to_none=True)
        losses.append(loss.item())
    return {"losses": losses, "params": {k: _full(p) for k, p in model.named_parameters()}}


def _pipeline(steps: int, batch: int, config: TransformerConfig) -> dict:
    from torch.distributed.pipelining import PipelineStage, ScheduleGPipe

    from course.distributed.pipeline import Stage

    r, n, dev = dist.get_rank(), dist.get_world_size(), device()
    model = seeded_model(config, device=dev)
    stage = PipelineStage(Stage(model, r, n), r, n, dev)
    sched = ScheduleGPipe(stage, n_microbatches=n, loss_fn=lm_loss)  # grads of the mean loss
    opt = _adam(stage.submod.parameters())
    x, y = token_batch(config, batch, SEQ_LEN)
    losses = []
    for _ in range(steps):
        mine: list = []
        sched.step(
            *((x.to(dev),) if stage.is_first else ()),
            target=y.to(dev) if stage.is_last else None,
            losses=mine if stage.is_last else None,
        )
        opt.step()
        opt.zero_grad(set_to_none=True)
        loss = torch.stack(mine).mean().detach().cpu() if mine else torch.zeros(())
        t = loss.reshape(1).double()
        dist.broadcast(t, src=n - 1)  # the last stage computed it
        losses.append(float(t))
    params = {k: _full(p) for k, p in stage.submod.whole_model_names().items()}
    return {"losses": losses, "params": params}


def train(
    way: str, steps: int = 4, batch: int | None = None, config: TransformerConfig = SCALE_CONFIG
) -> dict:
    """Train ``steps`` Adam steps one ``way`` (of :data:`WAYS`) on this rank.

    Returns ``{"way", "rank", "ranks", "batch", "losses", "params"}``: the loss of each step (of
    the whole batch), and the weights after the last step by their names in the whole model
    (gathered from the shards; under PP only this rank's stage). ``batch`` defaults to 2
    sequences per rank; "1 process" trains alone on this rank, on the same batch.
    """
    if way not in WAYS:
        raise ValueError(f"way must be one of {', '.join(WAYS)}, got {way!r}")
    n = dist.get_world_size()
    batch = batch or scaled_batch(n)
    if way == "1 process":
        out = reference_train(steps, batch, config)
    elif way in ("DDP", "FSDP2"):
        out = _data_parallel(way, steps, batch, config)
    elif way == "TP":
        out = _tensor_parallel(steps, batch, config)
    else:
        out = _pipeline(steps, batch, config)
    return {"way": way, "rank": dist.get_rank(), "ranks": n, "batch": batch, **out}


def all_ways(steps: int = 4, with_params: bool = True) -> list[dict]:
    """:func:`train` each of :data:`WAYS` in turn on this rank (the weights left out unless
    ``with_params``: they are what the tests compare, the curves what the lesson draws)."""
    runs = [train(way, steps) for way in WAYS]
    if not with_params:
        runs = [{k: v for k, v in run.items() if k != "params"} for run in runs]
    return runs


def loss_curves(steps: int = 4) -> list[dict]:
    """:func:`all_ways` without the weights: what a notebook needs to draw the curves."""
    return all_ways(steps, with_params=False)


def main() -> None:
    from course.distributed._script import run_script

    def worker():
        return {run["way"]: [round(x, 5) for x in run["losses"]] for run in loss_curves()}

    run_script(worker, "One loss curve, five ways (loss of each step)")


if __name__ == "__main__":
    main()

__all__ = ["LR", "WAYS", "all_ways", "loss_curves", "main", "reference_train", "train"]
