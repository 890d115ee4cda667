"""Published training runs: the figures their papers state, each row with its source and table.

These are *data*, not results: what the authors reported (GPU-hours, utilisation, energy, emissions,
rental cost). Lesson 05 and tests/calculators/test_cost.py reproduce them with the calculators of
``course.calculators.compute``, ``course.calculators.inference`` and ``course.calculators.energy``; a lesson never retypes them.
Only figures checked against the paper (or a copy quoting it) are here. Left out because they could
not be checked: Chinchilla's FLOP count, BLOOM's token count, the PUE of runs that do not state one.

Units: SI base units as everywhere in ``course`` (FLOP/s, watts, joules, USD); GPU-hours are hours
of one GPU; CO2 in kilograms of CO2-equivalent. ``None``: the source does not state it.

"""

from __future__ import annotations

from dataclasses import dataclass
from types import MappingProxyType

#: One kilowatt-hour in joules (as ``course.facts.units.KWH``; repeated so this table stays stdlib-only).
_KWH = 3.6e6

LLAMA2 = (
    "Touvron et al. 2023, 'Llama 2: Open Foundation and Fine-Tuned Chat Models', sec. 2.2.1 and "
    "Table 2 (CO2 emissions during pretraining: GPU-hours, power per GPU, tCO2eq per size), "
    "https://arxiv.org/abs/2307.09288"
)
PALM = (
    "Chowdhery et al. 2022, 'PaLM: Scaling Language Modeling with Pathways', sec. 4.1, Table 3 "
    "and appendix B (MFU and HFU), https://arxiv.org/abs/2204.02311"
)
MEGATRON = (
    "Narayanan et al. 2021, 'Efficient Large-Scale Language Model Training on GPU Clusters Using "
    "Megatron-LM', abstract and Table 1 (1T model, 3,072 A100s, 502 PFLOP/s = 163 TFLOP/s per "
    "GPU, 52 % of the 312 TFLOP/s peak), https://arxiv.org/abs/2104.04473"
)
LLAMA3 = (
    "Llama Team, AI @ Meta 2024, 'The Llama 3 Herd of Models', sec. 3.3 and Table 4 (405B: "
    "430 TFLOP/s per GPU, BF16 MFU 43 % on 8,192 H100s; 400 TFLOP/s, 41 % on 16,384; 380 TFLOP/s, "
    "38 % on 16,384 at 131K context), "
    "https://arxiv.org/abs/2407.21783"
)
BLOOM = (
    "Luccioni, Viguier, Ligozat 2022, 'Estimating the Carbon Footprint of BLOOM, a 176B Parameter "
    "Language Model', Table 1 and sec. 4 (1,082,990 A100 GPU-hours at 400 W = 433,196 kWh; "
    "57 gCO2eq/kWh French grid; 24.7 t CO2eq dynamic consumption), "
    "https://arxiv.org/abs/2211.02001 (JMLR 24(253), 2023)"
)
DEEPSEEK_V3 = (
    "DeepSeek-AI 2024, 'DeepSeek-V3 Technical Report', sec. 1 and Table 1 (training costs: "
    "2,664K + 119K + 5K = 2,788K H800 GPU-hours, $5.576M at an assumed $2 per GPU-hour), "
    "https://arxiv.org/abs/2412.19437"
)
GPT3 = (
    "Brown et al. 2020, 'Language Models are Few-Shot Learners', Table D.1 (3.14e23 training "
    "FLOPs for 175B), https://arxiv.org/abs/2005.14165"
)
BERT = (
    "Devlin et al. 2019, 'BERT: Pre-training of Deep Bidirectional Transformers for Language "
    "Understanding', appendix A.2 (batch of 256 sequences for 1,000,000 steps, 90 % of them at "
    "sequence length 128 and the rest at 512; BERT-base on 16 TPU chips for 4 days), "
    "https://arxiv.org/abs/1810.04805"
)
CHINCHILLA = (
    "Hoffmann et al. 2022, 'Training Compute-Optimal Large Language Models', sec. 3-4 "
    "(Chinchilla: 70B parameters, 1.4T tokens, Gopher's compute budget; 20 tokens per "
    "parameter), https://arxiv.org/abs/2203.15556"
)


@dataclass(frozen=True)
class PublishedRun:
    """What one paper states about one training run (``None`` where it states nothing)."""

    key: str
    model: str
    source: str
    params: float | None = None  # parameters (active parameters for a mixture of experts)
    tokens: float | None = None  # training tokens
    flops: float | None = None  # stated training FLOPs
    gpu: str | None = None  # accelerator as the paper names it
    n_gpus: int | None = None
    gpu_hours: float | None = None
    watts_per_gpu: float | None = None  # power per GPU the paper's energy figure assumes
    flop_per_s_per_gpu: float | None = None  # achieved model FLOP/s per GPU
    mfu: float | None = None  # model FLOPs utilisation as stated (or the low end of a range)
    mfu_high: float | None = None  # the high end where a range is stated
    hfu: float | None = None  # hardware FLOPs utilisation as stated
    energy_joules: float | None = None
    pue: float | None = None  # power usage effectiveness the paper's energy figure includes
    grid_g_per_kwh: float | None = None  # gCO2eq per kWh of the grid the paper used
    co2_kg: float | None = None
    usd_per_gpu_hour: float | None = None
    cost_usd: float | None = None
    notes: str = ""


RUNS: MappingProxyType = MappingProxyType({r.key: r for r in [
    PublishedRun("gpt-3", "GPT-3 175B", GPT3, params=175e9, tokens=300e9, flops=3.14e23,
                 gpu="V100"),
    PublishedRun("chinchilla", "Chinchilla 70B", CHINCHILLA, params=70e9, tokens=1.4e12),
    PublishedRun("bert-base", "BERT-base (110M)", BERT, params=110e6,
                 tokens=256 * (900_000 * 128 + 100_000 * 512),
                 gpu="Cloud TPU chips", n_gpus=16,
                 notes="Batches of 256 sequences for 1M steps: 90 % of the steps at length 128, "
                       "the last 10 % at 512 (about 42.6 B tokens; 256 x 512 x 1M = 131 B "
                       "would count every step at 512). 4 days."),
    PublishedRun("llama-2-7b", "Llama 2 7B", LLAMA2, params=7e9, tokens=2e12, gpu="A100-80GB",
                 gpu_hours=184_320, watts_per_gpu=400, pue=1.1, grid_g_per_kwh=385,
                 co2_kg=31.22e3),
    PublishedRun("llama-2-13b", "Llama 2 13B", LLAMA2, params=13e9, tokens=2e12,
                 gpu="A100-80GB", gpu_hours=368_640, watts_per_gpu=400, pue=1.1,
                 grid_g_per_kwh=385, co2_kg=62.44e3),
    PublishedRun("llama-2-34b", "Llama 2 34B", LLAMA2, params=34e9, tokens=2e12,
                 gpu="A100-80GB", gpu_hours=1_038_336, watts_per_gpu=350, pue=1.1,
                 grid_g_per_kwh=385, co2_kg=153.90e3),
    PublishedRun("llama-2-70b", "Llama 2 70B", LLAMA2, params=70e9, tokens=2e12,
                 gpu="A100-80GB", gpu_hours=1_720_320, watts_per_gpu=400, pue=1.1,
                 grid_g_per_kwh=385, co2_kg=291.42e3),
    PublishedRun("llama-2-all", "Llama 2, all four sizes", LLAMA2, gpu="A100-80GB",
                 gpu_hours=3_311_616, pue=1.1, grid_g_per_kwh=385, co2_kg=539.00e3,
                 notes="Table 2's power column is the GPU's power cap (400 W, or 350 W for 34B) "
                       "and its caption says it is adjusted for power usage effectiveness: every "
                       "row reproduces as GPU-hours x watts x 1.1 x 0.385 kg/kWh. No "
                       "manufacturing counted; 100 % offset."),
    PublishedRun("palm-540b", "PaLM 540B", PALM, params=540e9, tokens=780e9, gpu="TPU v4",
                 n_gpus=6144, mfu=0.462, hfu=0.578,
                 notes="HFU counts the rematerialised (recomputed) forward FLOPs; MFU does not."),
    PublishedRun("megatron-1t", "Megatron-LM GPT 1T", MEGATRON, params=1e12, gpu="A100",
                 n_gpus=3072, flop_per_s_per_gpu=163e12, mfu=0.39, hfu=0.52,
                 notes="502 PFLOP/s in all, 52 % of peak, counting the recomputed forward (their "
                       "eq. 3, 8N per token plus attention): a hardware utilisation (HFU) in "
                       "PaLM's terms. Without the recomputation (72 B s l h^2 (1 + s/6h + "
                       "V/12lh) instead of 96 B s l h^2 (1 + s/6h + V/16lh), l = 128, h = 25,600, "
                       "s = 2,048, V = 51,200) the same run is 0.75 x 52 % = 39 % MFU."),
    PublishedRun("llama-3-405b", "Llama 3 405B, 8K context", LLAMA3, params=405e9,
                 tokens=15.6e12, gpu="H100", n_gpus=16384, flop_per_s_per_gpu=400e12, mfu=0.41,
                 notes="Table 4, second row: 16,384 GPUs, sequences of 8,192 tokens."),
    PublishedRun("llama-3-405b-8192-gpus", "Llama 3 405B, 8K context", LLAMA3, params=405e9,
                 tokens=15.6e12, gpu="H100", n_gpus=8192, flop_per_s_per_gpu=430e12, mfu=0.43,
                 notes="Table 4, first row: the 43 % was on half the GPUs."),
    PublishedRun("llama-3-405b-131k-context", "Llama 3 405B, 131K context", LLAMA3,
                 params=405e9, gpu="H100", n_gpus=16384, flop_per_s_per_gpu=380e12, mfu=0.38,
                 notes="Table 4, third row: long-context training (context parallelism 16)."),
    PublishedRun("bloom-176b", "BLOOM 176B", BLOOM, params=176e9,
                 gpu="A100-80GB", gpu_hours=1_082_990, watts_per_gpu=400,
                 energy_joules=433_196 * _KWH, grid_g_per_kwh=57, co2_kg=24.7e3,
                 notes="Dynamic (GPU) consumption only; idle and infrastructure add 14.6 t and "
                       "manufacturing 11.2 t, 50.5 t in all."),
    PublishedRun("deepseek-v3", "DeepSeek-V3 (671B MoE, 37B active)", DEEPSEEK_V3, params=37e9,
                 tokens=14.8e12, gpu="H800", n_gpus=2048, gpu_hours=2_788e3,
                 usd_per_gpu_hour=2.0, cost_usd=5.576e6,
                 notes="Pre-training 2,664K, context extension 119K, post-training 5K GPU-hours; "
                       "the cost is a rental at an assumed $2/GPU-hour and excludes research "
                       "and ablations."),
]})  # fmt: skip


def run(key: str) -> PublishedRun:
    """One published run by key (``"llama-2-7b"``); ValueError lists the choices."""
    if not isinstance(key, str) or key not in RUNS:
        raise ValueError(f"run must be one of {', '.join(RUNS)}; got {key!r}")
    return RUNS[key]


__all__ = ["PublishedRun", "RUNS", "run"]
