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

Runs in one process or on every rank of a process group (the model then sharded with FSDP2).
"""

from __future__ import annotations

import random
from dataclasses import dataclass

import numpy as np
import torch
import torch.distributed as dist
import torch.distributed.checkpoint as dcp
from torch.distributed.checkpoint.state_dict import get_state_dict, set_state_dict
from torch.distributed.checkpoint.stateful import Stateful

from course.distributed.checkpoint import _single_process
from course.distributed.common import TINY_CONFIG, lm_loss, seeded_model, shard_of
from course.distributed.fsdp import shard_model
from course.facts.models import TransformerConfig

#: What :class:`TrainingState` saves; ``parts=`` may leave some out.
PARTS = ("model", "optim", "scheduler", "step", "data", "rng")

#: The demo's data: this many sequences, each this many tokens plus the crop margin.
SEQUENCES, SEQ_LEN, CROP = 24, 16, 4


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

    def state_dict(self) -> dict:
        model_sd, optim_sd = get_state_dict(self.model, self.opt)
        r, _ = _world()
        every = {
            "model": model_sd,
            "optim": optim_sd,
            "scheduler": self.scheduler.state_dict(),
            "step": self.step,
            "data": self.sampler.state_dict(),
            # each rank draws its own numbers: one entry per rank (DCP keeps one copy of a key)
            "rng": {f"rank{r}": rng_state()},
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
        if "rng" in state:
            set_rng_state(state["rng"][f"rank{_world()[0]}"])


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


def corpus(config: TransformerConfig = TINY_CONFIG) -> torch.Tensor:
    """The demo's fixed token sequences, ``SEQUENCES x (SEQ_LEN + CROP + 1)``."""
    g = torch.Generator().manual_seed(7)
    return torch.randint(0, config.vocab, (SEQUENCES, SEQ_LEN + CROP + 1), generator=g)


def next_batch(state: TrainingState, data: torch.Tensor, batch: int = 4):
    """The next global batch from the sampler, augmented with all three global generators,
    and this rank's share of it: ``(inputs, targets)``."""
    r, p = _world()
    rows = data[state.sampler.take(batch * p)]
    off = random.randrange(CROP + 1)  # Python's generator: where to crop
    rows = rows[:, off : off + SEQ_LEN + 1]
    rate = float(np.random.uniform(0.0, 0.2))  # NumPy's: how many tokens to mask
    x, y = rows[:, :-1], rows[:, 1:]
    x = x.masked_fill(torch.rand(x.shape) < rate, 0)  # torch's: which ones
    return shard_of(x, r, p), shard_of(y, r, p)


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
    """Train ``steps`` steps straight through; then again, stopping after ``stop_at`` steps to
    save the state with ``dcp.save``, and resuming in a new state whose generators were seeded
    elsewhere (a new process) from ``dcp.load`` of ``path``. Saves and loads only ``parts``.

    Returns both runs' losses and final parameters, and the lists of losses and parameters that are
    not bitwise equal (``torch.equal``; floats compared exactly)."""
    data = corpus()
    seed_everything(0)
    straight = new_state(total_steps=steps)
    losses_a = train_steps(straight, steps, data)
    seed_everything(0)
    first = new_state(total_steps=steps, parts=parts)
    losses_b = train_steps(first, stop_at, data)
    with _single_process():
        dcp.save({"train": first}, checkpoint_id=path)
    seed_everything(12345)  # a restarted process: other generator states, a fresh model
    resumed = new_state(total_steps=steps, parts=parts, seed=99)  # other weights: load them
    with _single_process():
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


__all__ = [
    "PARTS",
    "ShuffledSampler",
    "TrainingState",
    "corpus",
    "full_params",
    "interrupted_and_uninterrupted",
    "new_state",
    "next_batch",
    "rng_state",
    "seed_everything",
    "set_rng_state",
    "train_steps",
]
