"""Measure the peak memory of one real training step, split the way the estimates split it.

:func:`measure_training_step` builds a small transformer from a
:class:`course.facts.models.TransformerConfig` (``course.measure.torchmodels.build_model``), takes
one warm-up step so the optimizer states exist (the steady state of training), then runs a second
step -- forward, cross-entropy loss, backward, AdamW step -- under
``torch.distributed._tools.mem_tracker.MemTracker``. MemTracker sees every tensor torch allocates
and files it under parameters, gradients, optimizer states, activations (made in the forward pass or
recomputed by checkpointing), temporaries (made in the backward pass: gradients of activations) or
other (inputs). It records the breakdown at the moment the total was largest: that peak is what a
GPU's memory must hold.

Options: fp32 or bf16 autocast (``torch.autocast``: weights, gradients and optimizer states stay
fp32; matmuls run in bf16), and gradient (activation) checkpointing of every transformer block
(``torch.utils.checkpoint``, non-reentrant). The estimate of the same quantities is
:func:`course.calculators.memory.training_step_memory`; lesson 04 puts the two side by side, and
tests/measure/test_step_memory.py holds them within 10 % of each other.

MemTracker counts tensor bytes, not what the allocator reserves: on a GPU, add the CUDA context and
the caching allocator's slack (``torch.cuda.max_memory_reserved``). Where the step runs on CUDA the
result also carries ``torch.cuda.max_memory_allocated`` for the step, as a cross-check.

 Used by lesson 04 and its exercise set.
"""

from __future__ import annotations

from dataclasses import dataclass

import torch
import torch.nn.functional as F
from torch import nn
from torch.distributed._tools.mem_tracker import MemTracker
from torch.utils.checkpoint import checkpoint

from course.calculators.memory import RECOMPUTE, STEP_PRECISIONS
from course.facts import validate
from course.facts.models import DEMO_PRESETS, TransformerConfig
from course.facts.report import Report
from course.measure.torchmodels import Block, build_model, count_parameters

#: MemTracker's category names -> the field names of :class:`MeasuredStep`.
_CATEGORIES = {
    "Parameter": "parameters_bytes",
    "Gradient": "gradients_bytes",
    "Optstate": "optimizer_states_bytes",
    "Activation": "activations_bytes",
    "Temp": "temporaries_bytes",
    "Other": "other_bytes",
    "Buffer": "other_bytes",
}

#: The small Llama-shaped model lesson 04 trains for a step (``course.facts.models.DEMO_PRESETS``:
#: 4 layers, hidden 128, 0.86 M parameters; about a second a step on 2 CPU cores).
DEMO_CONFIG = DEMO_PRESETS["small-llama"]

#: Largest model this module will build and run for real (parameters): a measurement is seconds.
MAX_MEASURED_PARAMS = 50_000_000


@dataclass(frozen=True)
class MeasuredStep(Report):
    """Peak memory of one training step as MemTracker measured it, by category (bytes)."""

    _title = "Measured peak of one training step (MemTracker)"
    _formats = {"checkpointing": "text"}

    device: str
    precision: str
    checkpointing: bool
    params: int
    parameters_bytes: int
    gradients_bytes: int
    optimizer_states_bytes: int
    activations_bytes: int
    temporaries_bytes: int
    other_bytes: int  # inputs and targets (and buffers, which the course's models do not have)
    total_bytes: int
    cuda_max_allocated_bytes: int | None = None  # torch.cuda.max_memory_allocated, CUDA only
    recompute: str = "none"  # "none", "selective" (attention core) or "full" (whole blocks)

    def breakdown(self) -> dict[str, int]:
        """The categories as a dict (label -> bytes), in the order of the estimate's fields."""
        return {
            "parameters": self.parameters_bytes,
            "gradients": self.gradients_bytes,
            "optimizer states": self.optimizer_states_bytes,
            "activations": self.activations_bytes,
            "temporaries": self.temporaries_bytes,
            "other": self.other_bytes,
        }


class CheckpointedBlock(nn.Module):
    """A transformer block whose activations are recomputed in the backward pass.

    Only the block's input is kept from the forward pass (``torch.utils.checkpoint``,
    non-reentrant, which also replays the autocast state when it recomputes).
    """

    def __init__(self, block: Block) -> None:
        super().__init__()
        self.block = block

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return checkpoint(self.block, x, use_reentrant=False)


def _check(config: object, batch: object, seq_len: object, precision: object) -> tuple[int, int]:
    if not isinstance(config, TransformerConfig):
        raise ValueError(f"config must be a TransformerConfig, got {config!r}")
    if not config.lm_head or not config.causal:
        raise ValueError(f"config must be a decoder with an LM head, got {config.name!r}")
    if config.params > MAX_MEASURED_PARAMS:
        raise ValueError(
            f"config must have at most {MAX_MEASURED_PARAMS:,} parameters to be measured here, "
            f"got {config.params:,} ({config.name}); estimate it with course.calculators.memory "
            "instead"
        )
    b = validate.positive_int("batch", batch, maximum=64)
    s = validate.positive_int("seq_len", seq_len, maximum=config.max_positions)
    validate.choice("precision", precision, STEP_PRECISIONS)
    return b, s


def tracker_device(device: str) -> torch.device:
    """The device as MemTracker keys its snapshot: CUDA with its index ("cuda" -> cuda:N).

    MemTracker files memory under ``torch.device("cuda", 0)``, and ``torch.device("cuda")`` (no
    index) is a different key, so looking up the bare device found nothing: every category read
    0 B on CUDA (defect found on the H100 reference run).
    """
    dev = torch.device(device)
    if dev.type == "cuda" and dev.index is None:
        dev = torch.device("cuda", torch.cuda.current_device())
    return dev


def measure_training_step(
    config: TransformerConfig,
    *,
    batch: int = 4,
    seq_len: int = 128,
    precision: str = "fp32",
    checkpointing: bool = False,
    device: str = "cpu",
    seed: int = 0,
    recompute: str | None = None,
) -> MeasuredStep:
    """Peak memory of the second training step of ``config`` (forward, loss, backward, AdamW).

    ``precision`` is ``"fp32"`` or ``"bf16_autocast"`` (the forward pass under
    ``torch.autocast(device, dtype=torch.bfloat16)``; parameters, gradients and AdamW's two moments
    stay fp32). ``checkpointing=True`` recomputes each block in the backward pass. AdamW runs its
    per-tensor loop (``foreach=False``), so its temporaries are the size of one parameter rather
    than of all of them. ``recompute`` (lesson 07) names the recomputation: ``"full"`` is
    ``checkpointing=True``; ``"selective"`` recomputes only each attention core (scores, mask,
    softmax) in the backward pass; None follows ``checkpointing``. Inputs are
    ``batch`` x ``seq_len`` random token ids (seeded). Takes about a second for a model of a million
    parameters on 2 CPU cores.
    """
    b, s = _check(config, batch, seq_len, precision)
    validate.choice("checkpointing", checkpointing, (True, False))
    if recompute is None:
        recompute = "full" if checkpointing else "none"
    validate.choice("recompute", recompute, RECOMPUTE)
    if checkpointing and recompute != "full":
        raise ValueError(
            f"recompute must be 'full' (or None) with checkpointing=True, got {recompute!r}"
        )
    checkpointing = recompute == "full"
    dev = tracker_device(device)
    generator = torch.Generator().manual_seed(seed)
    with torch.random.fork_rng(devices=[]):
        torch.manual_seed(seed)
        model = build_model(config, device="cpu").to(dev)
    if checkpointing:
        model.blocks = nn.ModuleList(CheckpointedBlock(block) for block in model.blocks)
    if recompute == "selective":
        for block in model.blocks:
            block.attn.recompute_core = True
    optimizer = torch.optim.AdamW(model.parameters(), lr=1e-3, foreach=False)
    tokens = torch.randint(0, config.vocab, (b, s + 1), generator=generator)
    inputs, targets = tokens[:, :-1].contiguous().to(dev), tokens[:, 1:].contiguous().to(dev)
    autocast = precision == "bf16_autocast"

    def step() -> None:
        with torch.autocast(dev.type, dtype=torch.bfloat16, enabled=autocast):
            logits = model(inputs)
        # fp32 log-softmax over the vocabulary, as mixed-precision recipes do
        loss = F.cross_entropy(logits.float().reshape(-1, config.vocab), targets.reshape(-1))
        del logits  # keep only what autograd saved, as a training loop that returns the loss does
        loss.backward()
        optimizer.step()
        optimizer.zero_grad(set_to_none=True)

    step()  # warm-up: AdamW creates its moments on the first step
    if dev.type == "cuda":
        torch.cuda.synchronize(dev)
        torch.cuda.reset_peak_memory_stats(dev)
    tracker = MemTracker()
    tracker.track_external(model, optimizer, inputs, targets)
    with tracker:
        step()
    cuda_peak = None
    if dev.type == "cuda":
        torch.cuda.synchronize(dev)
        cuda_peak = int(torch.cuda.max_memory_allocated(dev))
    peak = tracker.get_tracker_snapshot("peak").get(dev, {})
    fields = dict.fromkeys(_CATEGORIES.values(), 0)
    for category, value in peak.items():
        name = getattr(category, "value", category)
        if name in _CATEGORIES:
            fields[_CATEGORIES[name]] += int(value)
    return MeasuredStep(
        device=str(dev),
        precision=precision,
        checkpointing=checkpointing,
        params=count_parameters(model),
        total_bytes=int(peak.get("Total", sum(fields.values()))),
        cuda_max_allocated_bytes=cuda_peak,
        recompute=recompute,
        **fields,
    )


__all__ = [
    "CheckpointedBlock",
    "DEMO_CONFIG",
    "MAX_MEASURED_PARAMS",
    "MeasuredStep",
    "measure_training_step",
    "tracker_device",
]
