"""Pipeline parallelism with ``torch.distributed.pipelining``: stages, schedules, a measured
timeline.

The course's transformer is cut into consecutive stages (the first holds the embedding, the last
the final norm and LM head); each rank runs its stage(s) on micro-batches, sending activations
forward and their gradients back. Schedules compared on the same micro-batches:

- **GPipe** (Huang et al. 2019): all forwards, then all backwards; each stage keeps the activations
  of all ``m`` micro-batches;
- **1F1B** (PipeDream-Flush, Narayanan et al. 2019/2021): after a warm-up, one forward then one
  backward; the same bubble, but at most ``p`` micro-batches in flight on the first stage;
- **Interleaved 1F1B** (Narayanan et al. 2021): each rank holds ``v`` non-adjacent stages
  ("virtual stages"), dividing the bubble by ``v``.

:func:`pipeline_run` trains steps under one schedule and records every forward and backward of
every micro-batch (rank, stage, start, end) by wrapping the stage's ``forward_one_chunk`` and
``backward_one_chunk``; :func:`bubble_from_events` and :func:`in_flight_from_events` turn the
records into the measured bubble and the activations held per stage. :func:`pipeline_output` is
the last stage's output, equal to the unsplit model's (tests/distributed/test_distributed_demos.py).

Run: ``torchrun --nproc-per-node 2 -m course.distributed.pipeline``.
"""

from __future__ import annotations

import dataclasses
import time

import torch
import torch.distributed as dist
from torch import nn
from torch.distributed.pipelining import (
    PipelineStage,
    Schedule1F1B,
    ScheduleGPipe,
    ScheduleInterleaved1F1B,
)

from course.distributed.common import lm_loss, seeded_model, token_batch
from course.distributed.launch import device
from course.facts.models import TransformerConfig

#: The pipeline demo's model: 4 layers so that 2 ranks x 2 virtual stages each get one, and wide
#: enough (hidden 256) that a stage's compute outweighs gloo's ~0.5 ms per message.
PIPE_CONFIG = TransformerConfig(
    name="pipe-llama",
    layers=4,
    hidden=256,
    heads=4,
    kv_heads=4,
    ffn_hidden=688,
    vocab=256,
    max_positions=128,
    source="course demo: a small decoder for the pipeline schedules",
)


def pipeline_config(world: int, virtual: int = 2) -> TransformerConfig:
    """:data:`PIPE_CONFIG` with enough layers for ``world`` ranks of ``virtual`` stages each (at
    least its 4): the stages scale with the number of ranks, one layer per stage at least."""
    return dataclasses.replace(PIPE_CONFIG, layers=max(PIPE_CONFIG.layers, world * virtual))


SCHEDULES = {
    "GPipe": (ScheduleGPipe, 1),
    "1F1B": (Schedule1F1B, 1),
    "Interleaved1F1B": (ScheduleInterleaved1F1B, 2),
}


class Stage(nn.Module):
    """Consecutive blocks of a :class:`course.measure.torchmodels.Transformer`, with the
    embedding on the first stage and the final norm and LM head on the last."""

    def __init__(self, model: nn.Module, index: int, count: int) -> None:
        super().__init__()
        layers = len(model.blocks)
        if count > layers:
            raise ValueError(
                f"stages must be at most the {layers} layers, got {count}: a stage "
                "holds one layer at least; use a deeper model "
                "(pipeline_config(world) gives one) or fewer ranks"
            )
        lo, hi = index * layers // count, (index + 1) * layers // count
        self.embed = model.embed if index == 0 else None
        self.blocks = nn.ModuleList(model.blocks[lo:hi])
        last = index == count - 1
        names = {id(p): name for name, p in model.named_parameters()}
        self._whole_names = names  # parameter -> its name in the whole model (for tests)
        self.final_norm = model.final_norm if last else None
        self.lm_head = model.lm_head if last else None

    def whole_model_names(self) -> dict[str, torch.nn.Parameter]:
        """This stage's parameters keyed by their names in the whole model (``blocks.5...``)."""
        return {self._whole_names[id(p)]: p for p in self.parameters()}

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        if self.embed is not None:
            x = self.embed(x)
        for block in self.blocks:
            x = block(x)
        if self.final_norm is not None:
            x = self.final_norm(x)
        return self.lm_head(x) if self.lm_head is not None else x


def _instrument(stage: PipelineStage, events: list, clock) -> None:
    for kind, name in (
        ("F", "forward_one_chunk"),
        ("B", "backward_one_chunk"),
        ("W", "backward_weight_one_chunk"),
    ):
        original = getattr(stage, name)

        def timed(chunk, *args, _original=original, _kind=kind, **kwargs):
            start = clock()
            out = _original(chunk, *args, **kwargs)
            events.append(
                {
                    "rank": dist.get_rank(),
                    "stage": stage.stage_index,
                    "kind": _kind,
                    "microbatch": int(chunk),
                    "start": start,
                    "end": clock(),
                }
            )
            return out

        setattr(stage, name, timed)


def _build(
    schedule: str, config: TransformerConfig | None, microbatches: int | None, events: list, clock
):
    if schedule not in SCHEDULES:
        raise ValueError(f"schedule must be one of {', '.join(SCHEDULES)}, got {schedule!r}")
    cls, virtual = SCHEDULES[schedule]
    r, n, dev = dist.get_rank(), dist.get_world_size(), device()
    count = n * virtual
    config = config or pipeline_config(n)
    microbatches = microbatches or default_microbatches(n)
    if microbatches < 1:
        raise ValueError(f"microbatches must be at least 1, got {microbatches}")
    model = seeded_model(config, device=dev)
    stages = []
    for index in range(r, count, n):  # rank r holds stages r, r + n, ... (looped placement)
        stage = PipelineStage(Stage(model, index, count), index, count, dev)
        _instrument(stage, events, clock)
        stages.append(stage)
    arg = stages if virtual > 1 else stages[0]
    return cls(arg, n_microbatches=microbatches, loss_fn=lm_loss), stages, count


def default_microbatches(world: int) -> int:
    """Micro-batches per step on ``world`` ranks: 2 per stage (4 on 2 ranks), enough for 1F1B's
    steady state; the batch holds 2 sequences per micro-batch."""
    return 2 * world


def _split_batch(batch: int | None, microbatches: int | None, n: int) -> tuple[int, int]:
    m = microbatches or default_microbatches(n)
    b = batch or 2 * m
    if b % m:
        raise ValueError(f"the batch ({b}) must split evenly into {m} micro-batches")
    return b, m


def pipeline_run(
    schedule: str = "1F1B",
    config: TransformerConfig | None = None,
    microbatches: int | None = None,
    batch: int | None = None,
    seq_len: int = 64,
    steps: int = 2,
) -> dict:
    """Train ``steps`` steps under ``schedule`` on this rank; the last step's timeline.

    ``config`` defaults to :func:`pipeline_config` of the world size, ``microbatches`` to
    :func:`default_microbatches` and ``batch`` to 2 sequences per micro-batch, so any number of
    ranks has stages and work.

    Returns ``{"schedule", "rank", "stages" (total), "microbatches", "events", "loss"}``; each
    event is ``{"rank", "stage", "kind" ("F", "B" or "W"), "microbatch", "start", "end"}`` in
    seconds from the step's start (after a barrier). ``loss`` is the mean loss over micro-batches
    on the rank holding the last stage, else None.
    """
    events: list = []
    t0 = [0.0]
    dev = device()
    batch, microbatches = _split_batch(batch, microbatches, dist.get_world_size())
    config = config or pipeline_config(dist.get_world_size())

    def clock() -> float:
        if dev.type == "cuda":
            torch.cuda.synchronize(dev)
        return time.perf_counter() - t0[0]

    sched, stages, count = _build(schedule, config, microbatches, events, clock)
    inputs, targets = token_batch(config, batch, seq_len)
    holds_first = any(s.is_first for s in stages)
    holds_last = any(s.is_last for s in stages)
    losses: list = []
    for _ in range(steps):
        events.clear()
        losses.clear()
        dist.barrier()
        t0[0] = time.perf_counter()
        args = (inputs.to(dev),) if holds_first else ()
        target = targets.to(dev) if holds_last else None
        sched.step(*args, target=target, losses=losses if holds_last else None)
    loss = float(torch.stack(losses).detach().mean()) if losses else None
    return {
        "schedule": schedule,
        "rank": dist.get_rank(),
        "stages": count,
        "microbatches": microbatches,
        "events": list(events),
        "loss": loss,
    }


def all_schedules(microbatches: int | None = None, steps: int = 2) -> list[dict]:
    """:func:`pipeline_run` for each schedule of :data:`SCHEDULES`, on this rank."""
    return [pipeline_run(name, microbatches=microbatches, steps=steps) for name in SCHEDULES]


def pipeline_output(
    config: TransformerConfig | None = None,
    microbatches: int | None = None,
    batch: int | None = None,
    seq_len: int = 16,
) -> dict:
    """One GPipe step's output (logits of the whole batch) and loss, on the last stage's rank,
    and the gradients of this rank's stage (``"grads"``: parameter name in the whole model ->
    gradient). Defaults scale with the world size: :func:`pipeline_config`, one micro-batch of
    2 sequences per rank."""
    dev = device()
    n = dist.get_world_size()
    config = config or pipeline_config(n)
    batch, microbatches = _split_batch(batch, microbatches or n, n)
    sched, stages, _ = _build("GPipe", config, microbatches, [], time.perf_counter)
    inputs, targets = token_batch(config, batch, seq_len)
    losses: list = []
    first, last = stages[0].is_first, stages[-1].is_last
    out = sched.step(
        *((inputs.to(dev),) if first else ()),
        target=targets.to(dev) if last else None,
        losses=losses if last else None,
    )
    grads = {
        name: p.grad.detach().cpu().clone()
        for stage in stages
        for name, p in stage.submod.whole_model_names().items()
        if p.grad is not None
    }
    if not last:
        return {
            "rank": dist.get_rank(),
            "logits": None,
            "loss": None,
            "grads": grads,
            "microbatches": microbatches,
            "batch": batch,
        }
    return {
        "rank": dist.get_rank(),
        "logits": out.detach().cpu(),
        "grads": grads,
        "loss": float(torch.stack(losses).detach().mean()),
        "microbatches": microbatches,
        "batch": batch,
    }


def bubble_from_events(events: list[dict]) -> dict:
    """Measured bubble of one step from all ranks' events.

    Span = first start to last end over all ranks; busy = each rank's summed F/B/W time; the
    bubble is the idle fraction ``1 - busy / (ranks x span)`` (communication and waiting count as
    idle). Returns ``{"span_seconds", "busy_seconds", "bubble_fraction", "ranks"}``.
    """
    if not events:
        raise ValueError("events must not be empty")
    ranks = sorted({e["rank"] for e in events})
    start = min(e["start"] for e in events)
    span = max(e["end"] for e in events) - start
    busy = sum(e["end"] - e["start"] for e in events)
    return {
        "span_seconds": span,
        "busy_seconds": busy,
        "ranks": len(ranks),
        "bubble_fraction": 1 - busy / (len(ranks) * span),
    }


def in_flight_from_events(events: list[dict]) -> dict[int, int]:
    """Most micro-batches whose activations a stage held at once: forwards done minus backwards
    done, maximised over the step (per stage index). GPipe: m on every stage; 1F1B: p - stage."""
    peak: dict[int, int] = {}
    for stage in sorted({e["stage"] for e in events}):
        held, most = 0, 0
        mine = sorted(
            (e for e in events if e["stage"] == stage and e["kind"] in "FB"), key=lambda e: e["end"]
        )
        for e in mine:
            held += 1 if e["kind"] == "F" else -1
            most = max(most, held)
        peak[stage] = most
    return peak


def bubble_summary(runs: dict[str, list[dict]], microbatches: int) -> list[dict]:
    """Measured idle fraction of each schedule (``runs``: name -> all ranks' events) beside the
    formula (p - 1)/(v m + p - 1) (:func:`course.calculators.parallel.pipeline_bubble_fraction`)."""
    from course.calculators.parallel import pipeline_bubble_fraction

    rows = []
    for name, events in runs.items():
        measured = bubble_from_events(events)
        virtual = SCHEDULES[name][1]
        rows.append(
            {
                "schedule": name,
                "bubble_fraction": measured["bubble_fraction"],
                "formula": pipeline_bubble_fraction(
                    measured["ranks"], microbatches, virtual_stages=virtual
                ),
                "span_seconds": measured["span_seconds"],
            }
        )
    return rows


def main() -> None:
    from course.distributed._script import run_script

    def worker():
        runs = all_schedules(steps=1)
        return [
            {"schedule": r["schedule"], "events": len(r["events"]), "loss": r["loss"]} for r in runs
        ]

    run_script(worker, "Pipeline schedules (each rank's events; loss on the last stage)")


if __name__ == "__main__":
    main()

__all__ = [
    "PIPE_CONFIG",
    "SCHEDULES",
    "Stage",
    "all_schedules",
    "bubble_from_events",
    "bubble_summary",
    "default_microbatches",
    "pipeline_config",
    "in_flight_from_events",
    "main",
    "pipeline_output",
    "pipeline_run",
]
