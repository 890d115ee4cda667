"""The whole training state in one DCP checkpoint, and a run that resumes from it bitwise.

A restart continues *exactly* where the job stopped only if the checkpoint holds everything the next
step depends on, not just the weights and the optimizer:

- the **model** and the **optimizer** (AdamW's step count and two moments);
- the **LR scheduler** (where it is on its cosine);
- the **step** counter;
- the **data position**: the sampler's epoch and its place in that epoch's shuffled order;
- every **random-number generator** the step draws from: torch's CPU (and CUDA) generators, NumPy's
  global one and Python's ``random``, per rank (each rank draws its own numbers).

:class:`TrainingState` is a ``torch.distributed.checkpoint.stateful.Stateful``: ``dcp.save`` calls
its ``state_dict()`` and ``dcp.load`` its ``load_state_dict()``. The data pipeline of
:func:`next_batch` draws from all three global generators on purpose (a random crop from
``random``, a masking rate from NumPy, the masked tokens from torch), as augmentation does, so a
state without them resumes to different numbers. ``parts`` leaves pieces out, to show which ones
a bitwise restart needs (``tests/distributed/test_resume.py``).

Runs in one process or on every rank of a process group (the model then sharded with FSDP2), and
**reshards**: a state saved on N ranks loads on M (:func:`load`). The model and optimizer are
DTensors that DCP cuts to the new mesh; the rest follows two rules, stated here once:

- **data position**: the sampler walks the *global* order, and a step takes the same
  :data:`GLOBAL_BATCH` sequences on any number of ranks (rank r of M augments and trains on the
  r-th of M equal shares), so the saved ``(epoch, position)`` means the same on M ranks as on N;
- **random generators** (:func:`rng_source`): each rank draws its own numbers (its augmentation,
  its dropout), seeded apart. A rank that existed before (r < N) continues its own saved streams;
  a new rank (r >= N) starts fresh streams derived from ``(seed, step, rank)``
  (:func:`fresh_seed`, NumPy's ``SeedSequence``), never a copy of another rank's (two ranks drawing
  the same masks would be one rank's randomness twice); a saved rank r >= M ends with its streams.
  On the same world size this is a bitwise restart; on another it cannot be one, since the shards
  themselves change.
"""

from __future__ import annotations

import copy
import random
import re
from dataclasses import dataclass

import numpy as np
import torch
import torch.distributed as dist
import torch.distributed.checkpoint as dcp
from torch.distributed.checkpoint.state_dict import (
    StateDictOptions,
    get_state_dict,
    set_state_dict,
)
from torch.distributed.checkpoint.stateful import Stateful

from course.distributed.checkpoint import single_process, to_cpu
from course.distributed.common import TINY_CONFIG, lm_loss, seeded_model, shard_of
from course.distributed.fsdp import shard_model
from course.facts import validate
from course.facts.models import TransformerConfig

#: What :class:`TrainingState` saves; ``parts=`` may leave some out.
PARTS = ("model", "optim", "scheduler", "step", "data", "rng")

#: The demo's data: this many sequences, each this many tokens plus the crop margin.
SEQUENCES, SEQ_LEN, CROP = 24, 16, 4

#: Sequences per step, whatever the world size (1, 2 or 4 ranks share them evenly).
GLOBAL_BATCH = 8


def _world() -> tuple[int, int]:
    return (dist.get_rank(), dist.get_world_size()) if dist.is_initialized() else (0, 1)


class ShuffledSampler:
    """Sequence indices in a new seeded order each epoch; its state is the data position
    ``(epoch, position)``: the order itself follows from ``seed + epoch``."""

    def __init__(self, n: int, seed: int = 0) -> None:
        self.n, self.seed, self.epoch, self.position = n, seed, 0, 0

    def take(self, count: int) -> list[int]:
        out = []
        for _ in range(count):
            if self.position == self.n:
                self.epoch, self.position = self.epoch + 1, 0
            order = np.random.default_rng(self.seed + self.epoch).permutation(self.n)
            out.append(int(order[self.position]))
            self.position += 1
        return out

    def state_dict(self) -> dict:
        return {"epoch": self.epoch, "position": self.position}

    def load_state_dict(self, state: dict) -> None:
        self.epoch, self.position = int(state["epoch"]), int(state["position"])


def rng_state() -> dict:
    """This process's generators as tensors and numbers (DCP stores tensors natively)."""
    _, keys, pos, has_gauss, gauss = np.random.get_state()
    version, mt, _ = random.getstate()
    state = {
        "torch_cpu": torch.get_rng_state(),
        "numpy_keys": torch.from_numpy(keys.astype(np.int64)),
        "numpy_pos": int(pos),
        "numpy_gauss": [int(has_gauss), float(gauss)],
        "python": torch.tensor(mt, dtype=torch.int64),
        "python_version": int(version),
    }
    if torch.cuda.is_available():
        state["torch_cuda"] = torch.stack(torch.cuda.get_rng_state_all())
    return state


def set_rng_state(state: dict) -> None:
    """Put back what :func:`rng_state` took."""
    torch.set_rng_state(state["torch_cpu"])
    if "torch_cuda" in state and torch.cuda.is_available():
        torch.cuda.set_rng_state_all(list(state["torch_cuda"]))
    has_gauss, gauss = state["numpy_gauss"]
    keys = state["numpy_keys"].numpy().astype(np.uint32)
    np.random.set_state(("MT19937", keys, int(state["numpy_pos"]), int(has_gauss), float(gauss)))
    mt = tuple(int(v) for v in state["python"].tolist())
    random.setstate((int(state["python_version"]), mt, None))


@dataclass
class TrainingState(Stateful):
    """Model, optimizer, scheduler, sampler and step of one run, as one DCP ``Stateful``."""

    model: torch.nn.Module
    opt: torch.optim.Optimizer
    scheduler: torch.optim.lr_scheduler.LRScheduler
    sampler: ShuffledSampler
    step: int = 0
    parts: tuple[str, ...] = PARTS
    #: whose saved generators this rank loads (:func:`rng_source`); None: none (a new rank)
    rng_from: int | None = -1

    def state_dict(self) -> dict:
        model_sd, optim_sd = get_state_dict(self.model, self.opt)
        r, _ = _world()
        src = r if self.rng_from == -1 else self.rng_from
        every = {
            "model": model_sd,
            "optim": optim_sd,
            "scheduler": self.scheduler.state_dict(),
            "step": self.step,
            "data": self.sampler.state_dict(),
            # each rank draws its own numbers: one entry per rank (DCP keeps one copy of a key)
            "rng": {f"rank{src}": rng_state()} if src is not None else {},
        }
        return {k: v for k, v in every.items() if k in self.parts}

    def load_state_dict(self, state: dict) -> None:
        if "model" in state or "optim" in state:
            set_state_dict(
                self.model,
                self.opt,
                model_state_dict=state.get("model", {}),
                optim_state_dict=state.get("optim", {}),
            )
        if "scheduler" in state:
            self.scheduler.load_state_dict(state["scheduler"])
        if "step" in state:
            self.step = int(state["step"])
        if "data" in state:
            self.sampler.load_state_dict(state["data"])
        if state.get("rng"):
            (saved,) = state["rng"].values()  # the one entry state_dict asked for
            set_rng_state(saved)


def new_state(
    config: TransformerConfig = TINY_CONFIG,
    total_steps: int = 8,
    parts: tuple[str, ...] = PARTS,
    seed: int = 0,
) -> TrainingState:
    """A fresh run: a model drawn from ``seed`` (FSDP2-sharded in a process group), AdamW, a
    cosine schedule over ``total_steps``, the sampler at the start."""
    model = seeded_model(config, seed=seed)
    if dist.is_initialized():
        model = shard_model(model)
    opt = torch.optim.AdamW(model.parameters(), lr=1e-2, weight_decay=0.1)
    sched = torch.optim.lr_scheduler.CosineAnnealingLR(opt, T_max=total_steps, eta_min=1e-4)
    return TrainingState(model, opt, sched, ShuffledSampler(SEQUENCES), parts=parts)


def rng_source(rank: int, saved_world: int, world: int) -> int | None:
    """The saved rank whose generators rank ``rank`` of ``world`` continues after a restart from
    ``saved_world`` ranks: its own while it existed (``rank < saved_world``), else None (fresh
    streams, :func:`fresh_seed`). The rule of this module's docstring."""
    validate.positive_int("saved_world", saved_world)
    validate.positive_int("world", world)
    if not 0 <= rank < world:
        raise ValueError(f"rank must be in [0, {world - 1}], got {rank}")
    return rank if rank < saved_world else None


def fresh_seed(seed: int, step: int, rank: int) -> int:
    """A seed for a rank with no saved generators: NumPy's ``SeedSequence((seed, step, rank))``,
    built to give independent streams for distinct tuples (NumPy, "Parallel random number
    generation")."""
    return int(np.random.SeedSequence([seed, step, rank]).generate_state(1)[0])


def saved_world_size(path: str) -> int:
    """How many ranks wrote the DCP checkpoint at ``path`` (one generator entry each)."""
    meta = dcp.FileSystemReader(path).read_metadata()
    ranks = {
        int(m[1]) for k in meta.state_dict_metadata if (m := re.search(r"\.rng\.rank(\d+)\.", k))
    }
    if not ranks:
        raise ValueError(f"path: {path} holds no per-rank generators (saved without 'rng'?)")
    return max(ranks) + 1


def load(state: TrainingState, path: str, seed: int = 0) -> TrainingState:
    """Load the training state saved at ``path`` on any number of ranks into ``state`` on this
    world: DCP reshards the model and optimizer; the data position is global; the generators
    follow :func:`rng_source` (a new rank is seeded with :func:`fresh_seed` of ``seed``, the
    loaded step and its rank)."""
    r, p = _world()
    state.rng_from = rng_source(r, saved_world_size(path), p) if "rng" in state.parts else None
    with single_process():
        dcp.load({"train": state}, checkpoint_id=path)
    if state.rng_from is None and "rng" in state.parts:
        seed_everything(fresh_seed(seed, state.step, r))
    state.rng_from = -1  # its next save is its own rank's
    return state


def corpus(config: TransformerConfig = TINY_CONFIG) -> torch.Tensor:
    """The demo's fixed token sequences, ``SEQUENCES x (SEQ_LEN + CROP + 1)``."""
    g = torch.Generator().manual_seed(7)
    return torch.randint(0, config.vocab, (SEQUENCES, SEQ_LEN + CROP + 1), generator=g)


def next_batch(state: TrainingState, data: torch.Tensor):
    """The next :data:`GLOBAL_BATCH` sequences from the sampler (the same on every rank), this
    rank's share of them, augmented by this rank with all three of its global generators:
    ``(inputs, targets)``."""
    r, p = _world()
    rows = shard_of(data[state.sampler.take(GLOBAL_BATCH)], r, p)
    off = random.randrange(CROP + 1)  # Python's generator: where to crop
    rows = rows[:, off : off + SEQ_LEN + 1]
    rate = float(np.random.uniform(0.0, 0.2))  # NumPy's: how many tokens to mask
    x, y = rows[:, :-1], rows[:, 1:]
    x = x.masked_fill(torch.rand(x.shape) < rate, 0)  # torch's: which ones
    return x, y


def train_steps(state: TrainingState, steps: int, data: torch.Tensor) -> list[float]:
    """``steps`` AdamW steps (the scheduler steps each time); the losses."""
    dev = next(state.model.parameters()).device
    losses = []
    for _ in range(steps):
        x, y = next_batch(state, data)
        loss = lm_loss(state.model(x.to(dev)), y.to(dev))
        loss.backward()
        state.opt.step()
        state.scheduler.step()
        state.opt.zero_grad(set_to_none=True)
        state.step += 1
        losses.append(float(loss.detach()))
    return losses


def seed_everything(seed: int) -> None:
    """Seed torch, NumPy and Python's global generators (a new process starts elsewhere)."""
    torch.manual_seed(seed)
    np.random.seed(seed)
    random.seed(seed)


def full_params(model: torch.nn.Module) -> dict[str, torch.Tensor]:
    """The whole parameters (gathered from FSDP2 shards), on the CPU."""
    out = {}
    for k, v in model.state_dict().items():
        out[k] = (v.full_tensor() if hasattr(v, "full_tensor") else v).detach().cpu().clone()
    return out


def interrupted_and_uninterrupted(
    path: str, steps: int = 8, stop_at: int = 3, parts: tuple[str, ...] = PARTS
) -> dict:
    """Train ``steps`` steps straight through (each rank's generators seeded with its rank); then
    again, stopping after ``stop_at`` steps to
    save the state with ``dcp.save``, and resuming in a new state whose generators were seeded
    elsewhere (a new process) from ``dcp.load`` of ``path``. Saves and loads only ``parts``.

    Returns both runs' losses and final parameters, and the lists of losses and parameters that are
    not bitwise equal (``torch.equal``; floats compared exactly)."""
    data = corpus()
    r, _ = _world()
    seed_everything(r)  # each rank its own numbers
    straight = new_state(total_steps=steps)
    losses_a = train_steps(straight, steps, data)
    seed_everything(r)
    first = new_state(total_steps=steps, parts=parts)
    losses_b = train_steps(first, stop_at, data)
    with single_process():
        dcp.save({"train": first}, checkpoint_id=path)
    seed_everything(12345 + r)  # a restarted process: other generator states, a fresh model
    resumed = new_state(total_steps=steps, parts=parts, seed=99)  # other weights: load them
    if "rng" in parts:
        load(resumed, path)
    else:
        with single_process():
            dcp.load({"train": resumed}, checkpoint_id=path)
    losses_b += train_steps(resumed, steps - resumed.step, data)
    a, b = full_params(straight.model), full_params(resumed.model)
    return {
        "steps": steps,
        "stopped_at": stop_at,
        "parts": list(parts),
        "losses_uninterrupted": losses_a,
        "losses_resumed": losses_b,
        "losses_differ": [
            i for i, (u, v) in enumerate(zip(losses_a, losses_b, strict=False)) if u != v
        ]
        + ([len(losses_a)] if len(losses_a) != len(losses_b) else []),
        "params_differ": sorted(k for k in a if not torch.equal(a[k], b[k])),
    }


def snapshot(state: TrainingState) -> dict:
    """What a state holds, comparable across world sizes: the full model and optimizer (gathered
    from the shards, on the CPU, on every rank), the scheduler, the step, the data position and
    this rank's generators, with this rank's place in its world."""
    r, p = _world()
    opts = StateDictOptions(full_state_dict=True)
    model_sd, optim_sd = get_state_dict(state.model, state.opt, options=opts)
    return copy.deepcopy(  # a copy: the optimizer's step counts change in place as it trains on
        {
            "rank": r,
            "world": p,
            "state": to_cpu({"model": model_sd, "optim": optim_sd}),
            "scheduler": state.scheduler.state_dict(),
            "step": state.step,
            "data": state.sampler.state_dict(),
            "rng": rng_state(),
        }
    )


def train_and_save(path: str, stop_at: int = 3, steps: int = 8) -> dict:
    """On every rank of this world (each rank's generators seeded with its rank): train
    ``stop_at`` of ``steps`` steps, save the whole state to ``path``; this rank's
    :func:`snapshot` of what it saved."""
    seed_everything(_world()[0])
    state = new_state(total_steps=steps)
    train_steps(state, stop_at, corpus())
    with single_process():
        dcp.save({"train": state}, checkpoint_id=path)
    return snapshot(state)


def load_elsewhere(path: str, steps: int = 8, save_to: str | None = None, more: int = 1) -> dict:
    """On this world (any size): a fresh state with other weights and other generator states
    (a new process), :func:`load` of ``path``; its :func:`snapshot` and the saved rank whose
    generators it continues. With ``save_to``: then ``more`` steps and a save there (to load
    on yet another world), and the snapshot of that."""
    r, _ = _world()
    seed_everything(12345 + r)
    state = new_state(total_steps=steps, seed=99)
    saved_world = saved_world_size(path)
    load(state, path)
    out = {"loaded": snapshot(state), "saved_world": saved_world}
    if save_to is not None:
        train_steps(state, more, corpus())
        with single_process():
            dcp.save({"train": state}, checkpoint_id=save_to)
        out["saved"] = snapshot(state)
    return out


__all__ = [
    "PARTS",
    "ShuffledSampler",
    "TrainingState",
    "corpus",
    "GLOBAL_BATCH",
    "fresh_seed",
    "full_params",
    "interrupted_and_uninterrupted",
    "load",
    "load_elsewhere",
    "new_state",
    "next_batch",
    "rng_source",
    "rng_state",
    "saved_world_size",
    "seed_everything",
    "set_rng_state",
    "snapshot",
    "train_and_save",
    "train_steps",
]
