"""Which optimisation to reach for: techniques ranked by their calculated or measured effect.

:func:`rank_techniques` takes a model, a workload (training or serving), the constraint that bites
("does_not_fit", "too_slow", "too_costly") and a GPU, and returns every technique that addresses
that constraint with its effect *for that model*, ranked, each row saying where its number comes
from:

- **memory** (does not fit): bytes saved, calculated with ``course.calculators.memory``,
  ``course.calculators.finetune``, ``course.calculators.offload`` and ``course.calculators.serving``
  for the given batch and sequence length;
- **speed** (too slow): a speed-up factor, from the H100 reference run
  (``course.facts.data.reference``: fused vs naive attention, CUDA graphs vs eager decode, batch 64
  vs 1), from datasheet peaks (bf16 vs fp32 Tensor Cores), from the bandwidth floor of decoding
  (fewer weight bytes read per token) or from the batching simulation (continuous vs static);
- **cost** (too costly): GPUs needed with the technique against without it (fewer GPUs for the
  same job), then the speed-ups (more work per GPU-hour).

A technique that costs something the constraint does not care about says so in its trade-off
column (recomputation saves memory and costs time; offloading saves memory and costs a lot of time).
 Used by ``course.presentation.widgets.technique_chooser`` and lesson 07.
"""

from __future__ import annotations

import html
from collections.abc import Mapping
from dataclasses import dataclass, field

from course.calculators import finetune, memory, offload, serving
from course.facts import hardware, units, validate
from course.facts.data import reference
from course.facts.models import TransformerConfig

CONSTRAINTS = ("does_not_fit", "too_slow", "too_costly")
WORKLOADS = ("training", "serving")


@dataclass(frozen=True)
class Technique:
    """One row of the ranking: what the technique does for this case and what it costs."""

    name: str
    effect: float  # bytes saved (memory), speed-up factor (speed) or GPUs saved (cost)
    effect_text: str  # the effect in words with units
    basis: str  # "calculated: ..." or "measured: ..."
    trade_off: str


@dataclass(frozen=True)
class Ranking:
    """Techniques ranked for one model, workload, constraint and GPU."""

    model: str
    workload: str
    constraint: str
    gpu: str
    baseline_text: str  # the memory or time the ranking starts from
    rows: tuple[Technique, ...] = field(default_factory=tuple)

    def __str__(self) -> str:
        lines = [
            f"{self.constraint.replace('_', ' ')} / {self.workload} / {self.model} on "
            f"{self.gpu}: {self.baseline_text}"
        ]
        for i, r in enumerate(self.rows, 1):
            lines.append(f"{i}. {r.name}: {r.effect_text} ({r.basis}); costs: {r.trade_off}")
        return "\n".join(lines)

    def _repr_html_(self) -> str:
        head = "".join(f"<th>{h}</th>" for h in ("#", "technique", "effect", "from", "trade-off"))
        body = "".join(
            f"<tr><td>{i}</td><td>{html.escape(r.name)}</td><td>{html.escape(r.effect_text)}</td>"
            f"<td>{html.escape(r.basis)}</td><td>{html.escape(r.trade_off)}</td></tr>"
            for i, r in enumerate(self.rows, 1)
        )
        return f"<p>{html.escape(self.baseline_text)}</p><table><tr>{head}</tr>{body}</table>"


def _b(x: float) -> str:
    return units.fmt_bytes(x)


def _reference_factors() -> dict[str, float]:
    """Speed-up factors measured in the H100 reference run (H100 SXM, reference run 2026-11-22)."""
    att = reference.load(reference.H100, "attention_memory")["runs"]
    at = {(r["seq_len"], r["fused_sdpa"]): r for r in att if "step_seconds" in r}
    decode = reference.load(reference.H100, "inference_7b")["decode"]
    d = {(r["batch"], r["cuda_graph"]): r for r in decode}
    return {
        "fused_attention": at[(2048, False)]["step_seconds"] / at[(2048, True)]["step_seconds"],
        "cuda_graphs": d[(1, False)]["seconds_per_step"] / d[(1, True)]["seconds_per_step"],
        "batch_64": d[(64, False)]["tokens_per_s"] / d[(1, False)]["tokens_per_s"],
    }


def _training_memory_rows(c: TransformerConfig, batch: int, seq_len: int) -> list[Technique]:
    base = memory.training_memory(c, batch=batch, seq_len=seq_len)
    sel = memory.training_memory(c, batch=batch, seq_len=seq_len, recompute="selective")
    full = memory.training_memory(c, batch=batch, seq_len=seq_len, recompute="full")
    lora = finetune.lora_memory(
        c, rank=16, targets=finetune.lora_targets(c), batch=batch, seq_len=seq_len
    )
    qlora = finetune.lora_memory(
        c,
        rank=16,
        targets=finetune.lora_targets(c),
        base_dtype="int4",
        batch=batch,
        seq_len=seq_len,
    )
    adam8 = memory.model_state_bytes(c.params, optimizer="adam_8bit")
    states = memory.model_state_bytes(c.params)
    off = offload.optimizer_offload(c.params, compute_seconds=1.0, cpu_seconds_per_param=0.0)
    calc = "calculated: course.calculators.memory (Korthikanti 2022)"
    rows = [
        Technique(
            "selective recomputation / fused attention",
            base.total_bytes - sel.total_bytes,
            f"saves {_b(base.total_bytes - sel.total_bytes)}",
            calc,
            "a few % more compute (attention recomputed), none with FlashAttention",
        ),
        Technique(
            "full activation recomputation",
            base.total_bytes - full.total_bytes,
            f"saves {_b(base.total_bytes - full.total_bytes)}",
            calc,
            "about 33 % more compute: one extra forward pass (8N instead of 6N FLOPs/token)",
        ),
        Technique(
            "LoRA (rank 16, all matrices)",
            base.total_bytes - lora.lora_total_bytes,
            f"saves {_b(base.total_bytes - lora.lora_total_bytes)}",
            "calculated: course.calculators.finetune (Hu et al. 2021)",
            "trains an adapter, not the whole model; quality close to full fine-tuning",
        ),
        Technique(
            "QLoRA (4-bit frozen base + LoRA)",
            base.total_bytes - qlora.lora_total_bytes,
            f"saves {_b(base.total_bytes - qlora.lora_total_bytes)}",
            "calculated: course.calculators.finetune (Dettmers et al. 2023)",
            "dequantisation slows each step; small quality loss",
        ),
        Technique(
            "8-bit Adam states",
            states.total_bytes - adam8.total_bytes,
            f"saves {_b(states.total_bytes - adam8.total_bytes)}",
            "calculated: course.calculators.memory (Dettmers et al. 2022)",
            "bitsandbytes dependency; nearly no quality loss",
        ),
        Technique(
            "optimizer offload to CPU (ZeRO-Offload)",
            off.gpu_states_without_offload_bytes - off.gpu_states_with_offload_bytes,
            f"saves {_b(off.gpu_states_without_offload_bytes - off.gpu_states_with_offload_bytes)}",
            "calculated: course.calculators.offload (Ren et al. 2021)",
            "4 B/param over the CPU link and a CPU optimizer step every step",
        ),
    ]
    if batch > 1:
        one = memory.training_memory(c, batch=1, seq_len=seq_len)
        rows.append(
            Technique(
                f"gradient accumulation ({batch} micro-batches of 1)",
                base.total_bytes - one.total_bytes,
                f"saves {_b(base.total_bytes - one.total_bytes)}",
                calc,
                "smaller matmuls: lower GPU efficiency; same gradient",
            )
        )
    return rows


def _serving_memory_rows(c: TransformerConfig, batch: int, seq_len: int) -> list[Technique]:
    base = memory.inference_memory(c, dtype="bf16", seq_len=seq_len, batch=batch)
    calc = "calculated: course.calculators.memory"
    kv_token = memory.kv_cache_bytes(c.layers, c.kv_heads, c.head_dim, 1)
    mix = serving.request_mix(500, max_seq_len=seq_len, seed=0)
    contiguous = serving.kv_allocation(
        mix, kv_bytes_per_token=kv_token, policy="contiguous", max_seq_len=seq_len
    )
    paged = serving.kv_allocation(mix, kv_bytes_per_token=kv_token, max_seq_len=seq_len)
    per_request = (contiguous.reserved_bytes - paged.reserved_bytes) / len(mix)
    return [
        Technique(
            "int8 weight-only quantisation",
            base.weights_bytes / 2,
            f"saves {_b(base.weights_bytes / 2)}",
            calc,
            "small accuracy loss",
        ),
        Technique(
            "int4 weight-only quantisation (GPTQ/AWQ)",
            base.weights_bytes * 3 / 4,
            f"saves {_b(base.weights_bytes * 3 / 4)}",
            calc,
            "measurable accuracy loss; needs int4 kernels",
        ),
        Technique(
            "KV cache in fp8/int8",
            base.kv_cache_bytes / 2,
            f"saves {_b(base.kv_cache_bytes / 2)}",
            calc,
            "slight accuracy loss",
        ),
        Technique(
            "paged KV cache (vLLM) vs reserving the full context",
            per_request * batch,
            f"saves {_b(per_request * batch)}",
            "calculated: course.calculators.serving on a ShareGPT-like mix (Kwon et al. 2023)",
            "a paging-aware attention kernel; nothing else",
        ),
        Technique(
            "offload weights to CPU memory",
            base.weights_bytes,
            f"saves {_b(base.weights_bytes)}",
            "calculated: course.calculators.offload",
            f"every token streams the weights over PCIe: "
            f"{offload.weight_streaming(c.params).slowdown:.0f}x slower decode",
        ),
    ]


def _speed_rows(c: TransformerConfig, workload: str, gpu: hardware.GPU) -> list[Technique]:
    ref = _reference_factors()
    measured = "measured: H100 SXM, reference run 2026-11-22"
    if workload == "training":
        half = "bf16" if "bf16" in gpu.dense_flop_per_s else "fp16"  # no bf16 before Ampere (V100)
        ratio = gpu.peak_flop_per_s(half) / gpu.peak_flop_per_s("fp32")
        return [
            Technique(
                f"{half} mixed precision (Tensor Cores)",
                ratio,
                f"up to {ratio:.1f}x (peak ratio)",
                f"calculated: {gpu.name} datasheet peaks",
                "loss scaling with fp16; bf16 needs none",
            ),
            Technique(
                "fused attention (scaled_dot_product_attention)",
                ref["fused_attention"],
                f"{ref['fused_attention']:.1f}x per step at 2,048 tokens",
                measured,
                "none: same result, less memory",
            ),
            Technique(
                "full activation recomputation",
                6 / 8,
                "0.75x (slower): an extra forward",
                "calculated: 8N vs 6N FLOPs per token",
                "only worth it for memory",
            ),
        ]
    sim = {
        p: serving.simulate_batching(
            serving.request_mix(300, arrivals_per_second=10, seed=0), policy=p, max_batch=32
        )
        for p in serving.BATCHING
    }
    cont = sim["continuous"].tokens_per_second / sim["static"].tokens_per_second
    return [
        Technique(
            "batching (64 sequences per step)",
            ref["batch_64"],
            f"{ref['batch_64']:.0f}x tokens/s vs batch 1",
            measured,
            "each sequence's step gets slower (latency)",
        ),
        Technique(
            "continuous batching vs static",
            cont,
            f"{cont:.1f}x tokens/s",
            "calculated: course.calculators.serving simulation",
            "a scheduler in the server",
        ),
        Technique(
            "int4 weights (bandwidth floor)",
            4.0,
            "up to 4x per token vs bf16",
            "calculated: bytes read per token",
            "accuracy; needs int4 kernels",
        ),
        Technique(
            "int8 weights (bandwidth floor)",
            2.0,
            "up to 2x per token vs bf16",
            "calculated: bytes read per token",
            "small accuracy loss",
        ),
        Technique(
            "CUDA graphs (launch overhead)",
            ref["cuda_graphs"],
            f"{ref['cuda_graphs']:.2f}x at batch 1",
            measured,
            "static shapes",
        ),
    ]


def rank_techniques(
    config: TransformerConfig,
    *,
    workload: str = "training",
    constraint: str = "does_not_fit",
    gpu: str = "h100-sxm",
    batch: int = 1,
    seq_len: int = 2048,
    measured: Mapping[str, float] | None = None,
) -> Ranking:
    """Techniques for ``constraint`` in ``workload``, ranked by their effect on ``config``.

    Memory rows are ranked by bytes saved, speed rows by speed-up factor, cost rows by GPUs
    saved (memory-driven: fewer GPUs to hold the job) and then by speed-up. See the module
    docstring for where every number comes from. ``measured`` adds speed-ups measured on this
    machine (technique name -> factor, e.g. lesson 07's ``torch.compile`` result) to the speed rows.
    """
    if not isinstance(config, TransformerConfig):
        raise ValueError(f"config must be a TransformerConfig, got {config!r}")
    if measured is not None and not isinstance(measured, Mapping):
        raise ValueError(f"measured must be a mapping of technique -> speed-up, got {measured!r}")
    wl = validate.choice("workload", workload, WORKLOADS)
    goal = validate.choice("constraint", constraint, CONSTRAINTS)
    if not isinstance(gpu, str):
        raise ValueError(f"gpu must be one of {', '.join(hardware.GPUS)}; got {gpu!r}")
    card = hardware.gpu(gpu)
    b = validate.positive_int("batch", batch, maximum=4096)
    s = validate.positive_int("seq_len", seq_len, minimum=16, maximum=10**6)
    if wl == "training":
        base = memory.training_memory(config, batch=b, seq_len=s).total_bytes
    else:
        base = memory.inference_memory(config, dtype="bf16", seq_len=s, batch=b).total_bytes
    need = memory.gpus_needed(base, card)
    baseline = (
        f"{'training (mixed-precision Adam)' if wl == 'training' else 'serving in bf16'} "
        f"needs {_b(base)} at batch {b} x {s:,} tokens: {need} x {card.name}"
    )
    extra = []
    for name, factor in (measured or {}).items():
        f = validate.number(f"measured[{name!r}]", factor, minimum=0, maximum=1e6, strict_min=True)
        extra.append(
            Technique(
                str(name),
                f,
                f"{f:.2f}x",
                "measured here (this machine)",
                "see the lesson section that measured it",
            )
        )
    if goal == "too_slow":
        rows = sorted(_speed_rows(config, wl, card) + extra, key=lambda r: -r.effect)
    else:
        memory_rows = (
            _training_memory_rows(config, b, s)
            if wl == "training"
            else _serving_memory_rows(config, b, s)
        )
        if goal == "does_not_fit":
            rows = []
            for r in sorted(memory_rows, key=lambda r: -r.effect):
                left = max(base - r.effect, 0.0)
                after = memory.gpus_needed(left, card)
                rows.append(
                    Technique(
                        r.name,
                        r.effect,
                        f"{r.effect_text}: {_b(left)} left, {after} GPU{'s' if after > 1 else ''}",
                        r.basis,
                        r.trade_off,
                    )
                )
        else:
            rows = []
            for r in memory_rows:
                after = memory.gpus_needed(max(base - r.effect, 0.0), card)
                rows.append(
                    Technique(
                        r.name,
                        float(need - after),
                        f"{need} -> {after} GPUs ({r.effect_text})",
                        r.basis,
                        r.trade_off,
                    )
                )
            speed = [
                Technique(
                    r.name,
                    r.effect,
                    r.effect_text + " more work per GPU-hour",
                    r.basis,
                    r.trade_off,
                )
                for r in _speed_rows(config, wl, card) + extra
                if r.effect > 1
            ]
            rows = sorted(rows, key=lambda r: -r.effect) + sorted(speed, key=lambda r: -r.effect)
    return Ranking(config.name, wl, goal, card.name, baseline, tuple(rows))


__all__ = ["CONSTRAINTS", "Ranking", "Technique", "WORKLOADS", "rank_techniques"]
