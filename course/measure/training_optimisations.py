"""Training-side optimisations measured on a small transformer: accumulation, recomputation, LoRA,
and a CPU optimizer step (what ZeRO-Offload runs on the host).

- :func:`accumulation_matches` runs one batch of ``batch`` sequences and the same sequences as
  ``micro_batches`` micro-batches whose losses are divided by ``micro_batches`` and whose
  gradients add up, and returns the largest difference between the two gradients (float64 makes
  it ~1e-15; float32 ~1e-7).
- :func:`accumulation_sweep` measures peak memory (MemTracker) and time per sample of one
  forward + backward against the micro-batch size.
- :func:`recompute_sweep` measures the peak and the step time with no recomputation, selective
  recomputation (attention core) and full recomputation (whole blocks), beside the estimates of
  ``course.calculators.memory.step_activation_bytes``.
- :func:`lora_vs_full` measures a training step with LoRA adapters (plain torch:
  :class:`LoRALinear`) against full fine-tuning.
- :func:`cpu_optimizer_step` times AdamW on fp32 parameters on the CPU: seconds per parameter,
  the input of ``course.calculators.offload.optimizer_offload``.

 Used by lesson 07; tests/measure/test_training_optimisations.py holds the equivalences.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import torch
import torch.nn.functional as F
from torch import nn

from course.calculators import memory
from course.facts import validate
from course.facts.models import DEMO_PRESETS, TransformerConfig
from course.measure.step_memory import CheckpointedBlock, measure_training_step
from course.measure.timing import Budget, Sweep, progress, time_call
from course.measure.torchmodels import build_model, count_parameters

#: The model every sweep of lesson 07 measures: ``DEMO_PRESETS["sweep-llama"]``.
SWEEP_CONFIG = DEMO_PRESETS["sweep-llama"]


def seeded_model(
    config: TransformerConfig, seed: int, dtype: torch.dtype = torch.float32
) -> nn.Module:
    """The course's transformer for ``config`` on the CPU, its weights drawn from ``seed`` (the
    global RNG is left as it was)."""
    with torch.random.fork_rng(devices=[]):
        torch.manual_seed(seed)
        return build_model(config, device="cpu", dtype=dtype)


def random_tokens(config: TransformerConfig, batch: int, seq_len: int, seed: int):
    """``(inputs, targets)``: ``batch`` x ``seq_len`` random token ids from ``seed``, the targets
    shifted by one (next-token prediction)."""
    generator = torch.Generator().manual_seed(seed)
    tokens = torch.randint(0, config.vocab, (batch, seq_len + 1), generator=generator)
    return tokens[:, :-1].contiguous(), tokens[:, 1:].contiguous()


def _loss(model: nn.Module, inputs: torch.Tensor, targets: torch.Tensor) -> torch.Tensor:
    logits = model(inputs)
    return F.cross_entropy(logits.float().reshape(-1, logits.shape[-1]), targets.reshape(-1))


def accumulation_matches(
    config: TransformerConfig = SWEEP_CONFIG,
    *,
    batch: int = 8,
    micro_batches: int = 4,
    seq_len: int = 32,
    dtype: torch.dtype = torch.float64,
    seed: int = 0,
) -> float:
    """Largest |gradient of one batch - sum of the micro-batches' gradients|, over all parameters.

    Each micro-batch's mean loss is divided by ``micro_batches`` so the accumulated gradient is the
    gradient of the mean loss over the whole batch (equal-sized micro-batches). Exact in real
    arithmetic; the difference measured is floating-point rounding.
    """
    b = validate.positive_int("batch", batch, maximum=256)
    k = validate.positive_int("micro_batches", micro_batches, maximum=b)
    if b % k:
        raise ValueError(f"micro_batches must divide batch={b}, got {k}")
    inputs, targets = random_tokens(config, b, seq_len, seed)
    model = seeded_model(config, seed, dtype)
    _loss(model, inputs, targets).backward()
    whole = [p.grad.clone() for p in model.parameters()]
    model.zero_grad(set_to_none=True)
    for x, y in zip(inputs.chunk(k), targets.chunk(k), strict=True):
        (_loss(model, x, y) / k).backward()  # gradients add up in .grad
    return max(
        float((p.grad - g).abs().max()) for p, g in zip(model.parameters(), whole, strict=True)
    )


@dataclass(frozen=True)
class AccumulationRecord:
    """One micro-batch size: its peak memory and time per sample of a forward + backward."""

    micro_batch: int
    accumulation_steps: int  # micro-batches per optimizer step for the global batch
    peak_bytes: int  # MemTracker's peak of a full training step at this micro-batch
    seconds_per_sample: float  # forward + backward, median / micro_batch
    iqr_seconds: float  # spread of the per-call time


def _fwd_bwd(model: nn.Module, inputs: torch.Tensor, targets: torch.Tensor):
    def step() -> None:
        _loss(model, inputs, targets).backward()
        model.zero_grad(set_to_none=True)

    return step


def accumulation_sweep(
    config: TransformerConfig = SWEEP_CONFIG,
    *,
    global_batch: int = 16,
    micro_batches: tuple[int, ...] = (1, 2, 4, 8, 16),
    seq_len: int = 64,
    budget_seconds: float = 10.0,
    seed: int = 0,
) -> Sweep:
    """Peak memory and time per sample against the micro-batch size, at a fixed global batch.

    The first two sizes are always measured (a comparison needs two); later ones only when their
    predicted cost fits what is left of ``budget_seconds``.
    """
    validate.positive_int("global_batch", global_batch, maximum=256)
    budget = Budget(budget_seconds)
    sweep = Sweep(
        "Gradient accumulation: micro-batch size vs memory and time per sample", budget_seconds
    )
    model = seeded_model(config, seed)
    cost = 0.0
    with progress(len(micro_batches), desc="accumulation", budget_seconds=budget_seconds) as bar:
        for m in micro_batches:
            if global_batch % m:
                sweep.skipped.append(f"micro-batch {m}: does not divide {global_batch}")
            elif len(sweep.records) >= 2 and not budget.fits(cost):  # two points always
                sweep.skipped.append(f"micro-batch {m}: would not fit the budget")
            else:
                start = budget.elapsed
                step = measure_training_step(config, batch=m, seq_len=seq_len, seed=seed)
                peak = step.total_bytes
                step_fn = _fwd_bwd(model, *random_tokens(config, m, seq_len, seed))
                t = time_call(step_fn, min_run_time=0.1)
                cost = (budget.elapsed - start) * 1.5  # the next micro-batch is larger
                sweep.records.append(
                    AccumulationRecord(
                        m, global_batch // m, peak, t.median_seconds / m, t.iqr_seconds / m
                    )
                )
            bar.update()
    sweep.elapsed_seconds = budget.elapsed
    return sweep


@dataclass(frozen=True)
class RecomputeRecord:
    """One recomputation mode: measured and estimated activations, peak, and step time."""

    recompute: str
    activations_bytes: int  # MemTracker's activations at the step's peak
    estimated_activations_bytes: (
        float  # course.calculators.memory.step_activation_bytes (see recompute_sweep)
    )
    peak_bytes: int  # MemTracker's total at the peak
    step_seconds: float  # forward + backward, median
    iqr_seconds: float
    repeats: int = 0  # timed repeats behind the median (1: no spread is known; 0: not recorded)


def estimated_activations(
    config: TransformerConfig, *, batch: int, seq_len: int, recompute: str
) -> float:
    """Activations held at the step's peak, fp32, by ``course.calculators.memory``'s
    tensor-by-tensor count.

    - ``"none"``: every activation the forward pass keeps (``step_activation_bytes``); the peak is
      at the start of the backward pass.
    - ``"selective"``: the same minus, per layer, what the attention core keeps: the softmax output
      (4 x heads x batch x seq_len^2 bytes in fp32) and the causal mask (seq_len^2 bools).
    - ``"full"``: each block's input, plus the one block being recomputed in the backward pass
      (``training_step_memory(checkpointing=True)``, whose peak is inside that backward).

    Holds where the activations set the peak (not for the tiniest inputs, where the optimizer
    step's temporaries do).
    """
    mode = validate.choice("recompute", recompute, memory.RECOMPUTE)
    if mode == "full":
        step = memory.training_step_memory(config, batch=batch, seq_len=seq_len, checkpointing=True)
        return step.activations_bytes
    acts = memory.step_activation_bytes(config, batch=batch, seq_len=seq_len)
    if mode == "none":
        return acts.total_bytes
    core = 4.0 * config.heads * batch * seq_len**2 + float(seq_len) ** 2
    return acts.total_bytes - config.layers * core


def _recompute_model(config: TransformerConfig, mode: str, seed: int) -> nn.Module:
    model = seeded_model(config, seed)
    if mode == "full":
        model.blocks = nn.ModuleList(CheckpointedBlock(b) for b in model.blocks)
    for block in model.blocks if mode == "selective" else ():
        block.attn.recompute_core = True
    return model


def recompute_sweep(
    config: TransformerConfig = SWEEP_CONFIG,
    *,
    batch: int = 4,
    seq_len: int = 128,
    budget_seconds: float = 10.0,
    seed: int = 0,
) -> Sweep:
    """No, selective and full recomputation: peak memory (MemTracker), estimate, step time.

    The three modes are the comparison, so all three are always measured; ``budget_seconds`` sets
    how long each is timed (``budget_seconds / 30`` seconds of repeats), and the sweep reports its
    elapsed time.
    """
    budget = Budget(budget_seconds)
    sweep = Sweep(f"Activation recomputation, batch {batch} x {seq_len} tokens", budget_seconds)
    with progress(
        len(memory.RECOMPUTE), desc="recomputation", budget_seconds=budget_seconds
    ) as bar:
        for mode in memory.RECOMPUTE:
            m = measure_training_step(
                config, batch=batch, seq_len=seq_len, recompute=mode, seed=seed
            )
            model = _recompute_model(config, mode, seed)
            t = time_call(
                _fwd_bwd(model, *random_tokens(config, batch, seq_len, seed)),
                min_run_time=budget_seconds / 30,
            )
            est = estimated_activations(config, batch=batch, seq_len=seq_len, recompute=mode)
            sweep.records.append(
                RecomputeRecord(
                    mode,
                    m.activations_bytes,
                    est,
                    m.total_bytes,
                    t.median_seconds,
                    t.iqr_seconds,
                    t.repeats,
                )
            )
            bar.update()
    sweep.elapsed_seconds = budget.elapsed
    return sweep


class LoRALinear(nn.Module):
    """A frozen ``nn.Linear`` plus a trainable low-rank update: ``W x + (alpha / r) B A x``.

    ``A`` (r x in) starts random (Kaiming-uniform, as Hu et al. 2021 and peft do), ``B`` (out x r)
    at zero, so the adapted layer starts equal to the original (Hu et al. 2021, sec. 4.1).
    """

    def __init__(self, linear: nn.Linear, rank: int = 8, alpha: float = 16.0):
        super().__init__()
        self.base = linear
        for p in self.base.parameters():
            p.requires_grad_(False)
        self.rank = validate.positive_int(
            "rank", rank, maximum=min(linear.in_features, linear.out_features)
        )
        self.scaling = alpha / rank
        self.lora_a = nn.Parameter(torch.empty(rank, linear.in_features))
        self.lora_b = nn.Parameter(torch.zeros(linear.out_features, rank))
        nn.init.kaiming_uniform_(self.lora_a, a=math.sqrt(5))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.base(x) + (x @ self.lora_a.T @ self.lora_b.T) * self.scaling


def add_lora(
    model: nn.Module, *, rank: int = 8, targets: tuple[str, ...] = ("q", "v")
) -> nn.Module:
    """Freeze ``model`` and wrap its ``{target}_proj`` linears in :class:`LoRALinear` (in place)."""
    for p in model.parameters():
        p.requires_grad_(False)
    names = {f"{t}_proj" for t in targets}
    for module in list(model.modules()):
        for name, child in list(module.named_children()):
            if name in names and isinstance(child, nn.Linear):
                setattr(module, name, LoRALinear(child, rank))
    return model


def trainable_parameters(model: nn.Module) -> int:
    """Parameters that receive gradients."""
    return sum(p.numel() for p in model.parameters() if p.requires_grad)


@dataclass(frozen=True)
class FineTuneRecord:
    """One training step of a fine-tuning method: trainable parameters, memory, time."""

    method: str
    trainable_params: int
    gradients_and_states_bytes: int  # parameter gradients + AdamW moments actually allocated
    step_seconds: float  # forward + backward + AdamW step, median
    iqr_seconds: float


def lora_vs_full(
    config: TransformerConfig = SWEEP_CONFIG,
    *,
    rank: int = 8,
    targets: tuple[str, ...] = ("q", "v"),
    batch: int = 4,
    seq_len: int = 64,
    seed: int = 0,
) -> list[FineTuneRecord]:
    """A full fine-tuning step against a LoRA step on the same model, both with AdamW.

    Memory is counted from the tensors themselves after a step: every ``.grad`` and every AdamW
    state tensor (fp32). Time is one forward + backward + optimizer step, median.
    """
    records = []
    inputs, targets_ = random_tokens(config, batch, seq_len, seed)
    for method in ("full", "lora"):
        model = seeded_model(config, seed)
        if method == "lora":
            add_lora(model, rank=rank, targets=targets)
        params = [p for p in model.parameters() if p.requires_grad]
        optimizer = torch.optim.AdamW(params, lr=1e-4, foreach=False)

        def step(model=model, optimizer=optimizer) -> None:
            _loss(model, inputs, targets_).backward()
            optimizer.step()
            optimizer.zero_grad(set_to_none=False)

        step()
        states = sum(
            t.numel() * t.element_size()
            for s in optimizer.state.values()
            for t in s.values()
            if torch.is_tensor(t) and t.dim() > 0
        )
        grads = sum(p.grad.numel() * p.grad.element_size() for p in params)
        t = time_call(step, min_run_time=0.2)
        records.append(
            FineTuneRecord(
                method,
                sum(p.numel() for p in params),
                states + grads,
                t.median_seconds,
                t.iqr_seconds,
            )
        )
    return records


@dataclass(frozen=True)
class OptimizerStepRecord:
    """AdamW on fp32 parameters on the CPU (ZeRO-Offload's host-side update)."""

    params: int
    step_seconds: float  # median
    iqr_seconds: float
    seconds_per_param: float
    threads: int


def cpu_optimizer_step(
    params: int = 2_000_000, *, tensors: int = 8, seed: int = 0
) -> OptimizerStepRecord:
    """Time one ``torch.optim.AdamW`` step (foreach) over ``params`` fp32 parameters on the CPU."""
    n = validate.positive_int("params", params, minimum=tensors, maximum=200_000_000)
    generator = torch.Generator().manual_seed(seed)
    weights = [nn.Parameter(torch.randn(n // tensors, generator=generator)) for _ in range(tensors)]
    for w in weights:
        w.grad = torch.randn(w.shape, generator=generator)
    optimizer = torch.optim.AdamW(weights, lr=1e-4)
    t = time_call(optimizer.step, min_run_time=0.2)
    total = count_parameters(nn.ParameterList(weights))
    return OptimizerStepRecord(
        total, t.median_seconds, t.iqr_seconds, t.median_seconds / total, torch.get_num_threads()
    )


__all__ = [
    "AccumulationRecord",
    "SWEEP_CONFIG",
    "FineTuneRecord",
    "LoRALinear",
    "OptimizerStepRecord",
    "RecomputeRecord",
    "accumulation_matches",
    "accumulation_sweep",
    "add_lora",
    "cpu_optimizer_step",
    "estimated_activations",
    "lora_vs_full",
    "recompute_sweep",
    "trainable_parameters",
]
