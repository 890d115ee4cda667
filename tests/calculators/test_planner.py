"""course.calculators.planner: the smallest tensor x pipeline split that fits, checked against
layouts derived by hand from 16 bytes per parameter of mixed-precision Adam (Rajbhandari et al.
2019, ZeRO, sec. 3.1) and against the layouts Narayanan et al. 2021 trained GPT-3 with."""

from __future__ import annotations

import pytest

from course.calculators.planner import LayoutSettings, layout_memory_bytes, smallest_layout
from course.facts.models import param_count, preset

GPT3 = preset("gpt-3-175b")


def test_llama_7b_needs_two_gpus_of_80_gb():
    """6.74e9 params x 16 B = 107.8 GB of model states: more than 80 GB on one GPU. Split in two
    (t = 2): 53.9 GB, plus selective-recompute activations with sequence parallelism (Korthikanti
    et al. 2022, eq. 4: 34 sbh / t per layer = 34 x 2048 x 4096 / 2 = 142.6 MB, x 32 layers =
    4.6 GB) = 58.5 GB."""
    llama = preset("llama-2-7b")
    states = 16 * param_count(llama)
    assert states > 80e9
    layout = smallest_layout(llama, usable_memory_bytes=80e9, max_tensor_parallel=8)
    assert (layout.tensor_parallel, layout.pipeline_parallel) == (2, 1)
    activations = 32 * 34 * 2048 * 4096 / 2
    assert layout.memory_per_gpu_bytes == pytest.approx(states / 2 + activations, rel=0.01)


def test_gpt3_on_80_gb_gpus_needs_six_pipeline_stages_at_tensor_parallel_8():
    """174.6e9 params x 16 B over t = 8 and p stages (p must divide the 96 layers): p = 4 leaves
    87.3 GB per GPU for model states alone, p = 6 leaves 58.2 GB, under 80 GB with room for
    activations."""
    states = 16 * param_count(GPT3)
    assert states / (8 * 4) > 80e9 > states / (8 * 6)
    for settings in (LayoutSettings(), LayoutSettings(recompute="full", zero_stage=0)):
        layout = smallest_layout(
            GPT3, usable_memory_bytes=80e9, max_tensor_parallel=8, settings=settings
        )
        assert (layout.tensor_parallel, layout.pipeline_parallel) == (8, 6)


def test_the_published_gpt3_layouts_fit_and_are_no_smaller_than_the_planners():
    """Narayanan et al. 2021 trained GPT-3 175B on 80 GB A100s with t = 8 and p = 16 (Table 1) or
    p = 12 (Table 2, model-parallel size 96), full recomputation, chosen for throughput: both
    fit, and the planner's split uses no more GPUs per replica."""
    full = LayoutSettings(recompute="full", zero_stage=0)
    layout = smallest_layout(GPT3, usable_memory_bytes=80e9, max_tensor_parallel=8, settings=full)
    for p in (16, 12):
        assert layout_memory_bytes(GPT3, 8, p, settings=full) <= 80e9
        assert layout.tensor_parallel * layout.pipeline_parallel <= 8 * p


def test_tensor_parallel_must_divide_the_heads_so_gpt2_xl_pipelines_instead():
    """GPT-2 XL has 25 attention heads: no power of two above 1 divides them, so t stays 1 and
    the 48 layers are split into stages (1.56e9 x 16 B = 24.9 GB does not fit in 16 GB)."""
    xl = preset("gpt2-xl")
    layout = smallest_layout(xl, usable_memory_bytes=16e9, max_tensor_parallel=8)
    assert layout.tensor_parallel == 1
    assert layout.pipeline_parallel > 1 and 48 % layout.pipeline_parallel == 0
    assert layout.memory_per_gpu_bytes <= 16e9


def test_what_cannot_fit_or_is_not_a_setting_is_refused():
    with pytest.raises(ValueError, match="does not fit"):
        smallest_layout(GPT3, usable_memory_bytes=1e9, max_tensor_parallel=8)
    with pytest.raises(ValueError, match="usable_memory_bytes"):
        smallest_layout(GPT3, usable_memory_bytes=0, max_tensor_parallel=8)
    with pytest.raises(ValueError, match="settings must be a LayoutSettings"):
        layout_memory_bytes(GPT3, 8, 16, settings={"seq_len": 2048})
