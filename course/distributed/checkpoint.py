"""Checkpoints for real: ``torch.save`` of a full state dict against
``torch.distributed.checkpoint``.

- :func:`save_both` trains an FSDP2-sharded model a few Adam steps on every rank, then writes the
  same state twice: gathered to rank 0 and written with ``torch.save`` (one file, one writer), and
  with DCP (``dcp.save``: every rank writes its own shards, one file per rank plus a ``.metadata``
  the planner writes, describing which rank holds which piece of which tensor).
- :func:`async_overlap` times ``dcp.async_save`` (:func:`save_in_background`: returns once the
  state is staged; the write runs in the background while training continues) against a blocking
  ``dcp.save``.
- **Resharding**: a DCP checkpoint records global shapes and offsets, so it loads on any number of
  ranks. :func:`load_on_one` reads the 2-rank checkpoint in a single process (no process group) and
  :func:`save_on_one` writes one from a single process; :func:`load_sharded` loads that back into 2
  FSDP2 ranks. ``tests/distributed/test_distributed_scale.py`` checks every tensor equal to the
  byte.

State saved: the model, Adam's states (step, m, v) and the step counter and RNG state a restart
needs (:func:`course.calculators.reliability.checkpoint_bytes` counts the same).

Run: ``torchrun --nproc-per-node 2 -m course.distributed.checkpoint`` (it writes to
``./course-checkpoints``, or to ``$COURSE_CHECKPOINT_DIR``).
"""

from __future__ import annotations

import contextlib
import os
import time
import warnings
from pathlib import Path

import torch
import torch.distributed as dist
import torch.distributed.checkpoint as dcp
from torch.distributed.checkpoint.state_dict import (
    StateDictOptions,
    get_state_dict,
    set_state_dict,
)

from course.distributed.common import TINY_CONFIG, lm_loss, seeded_model, shard_of, token_batch
from course.distributed.fsdp import shard_model
from course.distributed.launch import device
from course.facts.models import TransformerConfig

LR = 1e-2


def train(
    model: torch.nn.Module,
    opt: torch.optim.Optimizer,
    steps: int,
    *,
    start: int = 0,
    batch: int = 4,
    seq_len: int = 16,
) -> list[float]:
    """``steps`` Adam steps; step ``i`` uses the seeded batch ``i`` (so a resumed run sees the same
    data order), each rank its share of it. Returns the losses."""
    r, p = (dist.get_rank(), dist.get_world_size()) if dist.is_initialized() else (0, 1)
    dev = next(model.parameters()).device
    losses = []
    for i in range(start, start + steps):
        x, y = token_batch(model.config, batch * p, seq_len, seed=1000 + i)
        x, y = shard_of(x, r, p).to(dev), shard_of(y, r, p).to(dev)
        loss = lm_loss(model(x), y)
        loss.backward()
        opt.step()
        opt.zero_grad(set_to_none=True)
        losses.append(float(loss.detach()))
    return losses


def sharded_model(config: TransformerConfig = TINY_CONFIG, seed: int = 0):
    """A seeded model sharded with FSDP2 over every rank, and its Adam optimizer."""
    model = shard_model(seeded_model(config, seed, device()))
    return model, torch.optim.Adam(model.parameters(), lr=LR)


def plain_model(config: TransformerConfig = TINY_CONFIG, seed: int = 0):
    """The same model in one process, unsharded, and its Adam optimizer."""
    model = seeded_model(config, seed)
    return model, torch.optim.Adam(model.parameters(), lr=LR)


def app_state(model, opt, *, full: bool = False, cpu: bool = False) -> dict:
    """``{"model", "optim"}`` state dicts keyed by parameter name (sharded unless ``full``)."""
    opts = StateDictOptions(full_state_dict=full, cpu_offload=cpu)
    model_sd, optim_sd = get_state_dict(model, opt, options=opts)
    return {"model": model_sd, "optim": optim_sd}


def files_of(path: str | Path) -> dict[str, int]:
    """The files of a checkpoint directory and their sizes in bytes."""
    p = Path(path)
    return {f.name: f.stat().st_size for f in sorted(p.iterdir()) if f.is_file()}


def _synced() -> float:
    if torch.cuda.is_available():
        torch.cuda.synchronize()
    if dist.is_initialized():
        dist.barrier()
    return time.perf_counter()


def save_both(root: str, config: TransformerConfig = TINY_CONFIG, steps: int = 3) -> dict:
    """Train ``steps`` steps sharded, then save with ``torch.save`` (full, rank 0) and with DCP.

    Writes ``root/full.pt`` and ``root/dcp/``. Returns the losses, both save times (every rank
    waits at a barrier before and after, so each is the job's time), the DCP files and the bytes
    this rank's shards hold.
    """
    r = dist.get_rank()
    model, opt = sharded_model(config)
    losses = train(model, opt, steps)
    t0 = _synced()
    full = app_state(model, opt, full=True, cpu=True)  # every rank takes part in the gather
    if r == 0:
        torch.save(full, os.path.join(root, "full.pt"))
    t1 = _synced()
    dcp.save(app_state(model, opt), checkpoint_id=os.path.join(root, "dcp"))
    t2 = _synced()
    return {
        "rank": r,
        "losses": losses,
        "torch_save_seconds": t1 - t0,
        "dcp_save_seconds": t2 - t1,
        "full_bytes": os.path.getsize(os.path.join(root, "full.pt")) if r == 0 else None,
        "dcp_files": files_of(os.path.join(root, "dcp")) if r == 0 else None,
    }


def save_in_background(state: dict, path: str, *, process_group=None, storage_writer=None):
    """``dcp.async_save``: stage a copy of ``state`` and return a future at once; the files are
    written on a background thread while training goes on (``future.result()`` waits for them).
    Changes made to the tensors after it returns are not in the checkpoint. ``storage_writer``
    replaces the file-system writer at ``path`` (tests record which thread writes)."""
    with single_process():
        return dcp.async_save(
            state,
            checkpoint_id=None if storage_writer is not None else path,
            storage_writer=storage_writer,
            process_group=process_group,
        )


def async_overlap(
    root: str, config: TransformerConfig = TINY_CONFIG, repeats: int = 3, steps_between: int = 2
) -> dict:
    """Blocking ``dcp.save`` against ``dcp.async_save``, paired and interleaved ``repeats`` times.

    For each pair: the seconds a blocking save stops training, the seconds ``async_save`` blocks
    (staging a copy of the state), the seconds its background write took, and the training steps
    run while it wrote.
    """
    model, opt = sharded_model(config)
    train(model, opt, 1)
    # the background write runs its own collectives: on the default group they would interleave
    # with training's and mismatch (DCP's docs: give async_save a process group of its own)
    ckpt_group = dist.new_group(backend="gloo")
    records = []
    for i in range(repeats):
        t0 = _synced()
        dcp.save(app_state(model, opt), checkpoint_id=os.path.join(root, f"sync{i}"))
        t1 = _synced()
        future = save_in_background(
            app_state(model, opt), os.path.join(root, f"async{i}"), process_group=ckpt_group
        )
        t2 = _synced()
        train(model, opt, steps_between, start=1 + i * steps_between)
        t3 = _synced()
        future.result()
        t4 = _synced()
        records.append(
            {
                "repeat": i,
                "blocking_save_seconds": t1 - t0,
                "async_blocked_seconds": t2 - t1,
                "overlapped_steps": steps_between,
                "training_seconds": t3 - t2,
                "async_total_seconds": t4 - t1,
            }
        )
    dist.destroy_process_group(ckpt_group)
    return {"rank": dist.get_rank(), "records": records}


@contextlib.contextmanager
def single_process():
    """DCP in a process without a process group: it warns that it assumes one process, which is
    what is meant here."""
    with warnings.catch_warnings():
        warnings.filterwarnings(
            "ignore", message="torch.distributed is disabled", category=UserWarning
        )
        yield


def load_on_one(path: str, config: TransformerConfig = TINY_CONFIG) -> dict:
    """Load a DCP checkpoint saved by any number of ranks into one process (no process group):
    DCP reads each tensor's pieces from the ranks' files and assembles the whole. Returns the
    full ``{"model", "optim"}`` state."""
    model, opt = plain_model(config, seed=123)  # other weights: the load must overwrite them
    state = app_state(model, opt)
    with single_process():
        dcp.load(state, checkpoint_id=path)
    set_state_dict(model, opt, model_state_dict=state["model"], optim_state_dict=state["optim"])
    return app_state(model, opt)


def save_on_one(state: dict, path: str, config: TransformerConfig = TINY_CONFIG) -> None:
    """Write a full ``{"model", "optim"}`` state from one process as a DCP checkpoint."""
    model, opt = plain_model(config, seed=123)
    set_state_dict(model, opt, model_state_dict=state["model"], optim_state_dict=state["optim"])
    with single_process():
        dcp.save(app_state(model, opt), checkpoint_id=path)


def load_sharded(path: str, config: TransformerConfig = TINY_CONFIG) -> dict:
    """Load a DCP checkpoint (saved on any number of ranks) into this world's FSDP2 shards;
    return the full state gathered back (on every rank, on the CPU)."""
    model, opt = sharded_model(config, seed=123)
    state = app_state(model, opt)
    dcp.load(state, checkpoint_id=path)
    set_state_dict(model, opt, model_state_dict=state["model"], optim_state_dict=state["optim"])
    return to_cpu(app_state(model, opt, full=True))  # full on every rank (cpu_offload: rank 0)


def to_cpu(x):
    """``x`` (a tensor, or dicts, lists and tuples of them) with every tensor on the CPU."""
    if isinstance(x, torch.Tensor):
        return x.cpu()
    if isinstance(x, dict):
        return {k: to_cpu(v) for k, v in x.items()}
    if isinstance(x, list | tuple):
        return type(x)(to_cpu(v) for v in x)
    return x


def states_equal(a: dict, b: dict) -> list[str]:
    """Names of the tensors (or values) that differ between two nested state dicts, dtype and
    bytes compared; an empty list when the two are equal to the byte."""
    diffs: list[str] = []

    def walk(x, y, name):
        if isinstance(x, dict) and isinstance(y, dict):
            if x.keys() != y.keys():
                diffs.append(f"{name}: keys differ")
            for k in x.keys() & y.keys():
                walk(x[k], y[k], f"{name}.{k}")
        elif isinstance(x, torch.Tensor) and isinstance(y, torch.Tensor):
            x, y = (t.full_tensor() if hasattr(t, "full_tensor") else t for t in (x, y))
            if x.dtype != y.dtype or x.shape != y.shape or not torch.equal(x.cpu(), y.cpu()):
                diffs.append(name)
        elif isinstance(x, list | tuple) and isinstance(y, list | tuple) and len(x) == len(y):
            for i, (u, v) in enumerate(zip(x, y, strict=True)):
                walk(u, v, f"{name}[{i}]")
        elif x != y:
            diffs.append(name)

    walk(a, b, "state")
    return sorted(diffs)


def main() -> None:
    from course.distributed._script import run_script

    # one folder for every rank (DCP writes each rank's files beside the others'), kept: a learner
    # looks at what was written; on several nodes it must be storage that every node sees
    root = os.environ.get("COURSE_CHECKPOINT_DIR") or os.path.join(
        os.getcwd(), "course-checkpoints"
    )
    os.makedirs(root, exist_ok=True)

    def worker():
        saved = save_both(root)
        overlap = async_overlap(root, repeats=1)
        return {
            "checkpoint": root,
            "torch.save (s)": round(saved["torch_save_seconds"], 4),
            "dcp.save (s)": round(saved["dcp_save_seconds"], 4),
            "dcp files": saved["dcp_files"],
            "async_save": overlap["records"],
        }

    run_script(worker, "torch.save against torch.distributed.checkpoint")


if __name__ == "__main__":
    main()

__all__ = [
    "app_state",
    "async_overlap",
    "files_of",
    "load_on_one",
    "load_sharded",
    "main",
    "plain_model",
    "save_both",
    "save_on_one",
    "sharded_model",
    "states_equal",
    "train",
]
