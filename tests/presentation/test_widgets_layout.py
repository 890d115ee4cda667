"""The layout chooser: driven like a learner would, it shows the calculator's numbers or its
reason."""

from __future__ import annotations

from course.calculators import parallel
from course.facts.models import PRESETS
from course.presentation.widgets import layout_chooser


def test_defaults_show_llama_70b_fitting_on_64_h100s_with_the_step_split():
    calc = layout_chooser()
    assert calc.error is None
    expected = parallel.layout_step(
        PRESETS["llama-2-70b"],
        nodes=8,
        data_parallel=4,
        tensor_parallel=8,
        pipeline_parallel=2,
        microbatches=16,
    )
    out = calc.output.value
    assert "Fits" in out and "compute" in out and "pipeline bubble" in out
    assert expected.layout in out
    assert f"{expected.compute_efficiency:.0%} of it compute" in out


def test_a_layout_that_does_not_fit_says_so():
    calc = layout_chooser()
    calc.controls["data_parallel"].value = "64"
    calc.controls["tensor_parallel"].value = "1"
    calc.controls["pipeline_parallel"].value = "1"
    calc.controls["zero_stage"].value = 0
    assert calc.error is None and "Does not fit" in calc.output.value


def test_impossible_layouts_show_the_reason_with_on_screen_labels():
    calc = layout_chooser()
    calc.controls["data_parallel"].value = "3"
    assert "must equal GPUs per node x nodes" in calc.error
    calc.controls["data_parallel"].value = "4"
    calc.controls["gpus_per_node"].value = "4"
    calc.controls["nodes"].value = "16"
    assert "tensor parallel (TP) (8) must be at most GPUs per node (4)" in calc.error
    calc.controls["gpus_per_node"].value = "8"
    calc.controls["nodes"].value = "8"
    calc.controls["microbatches"].value = "two"
    assert "micro-batches per step must be a whole number" in calc.error
    calc.controls["microbatches"].value = "2.5"
    assert "micro-batches per step must be a whole number" in calc.error
    calc.controls["microbatches"].value = "16"
    calc.controls["compute_hfu"].value = "1.5"
    assert "HFU while computing" in calc.error
    calc.controls["compute_hfu"].value = "0.4"
    assert calc.error is None


def test_every_gpu_gets_its_own_links_and_format():
    calc = layout_chooser()
    calc.controls["gpu"].value = "l40s"
    assert calc.error is None and "PCIe 4.0" in calc.output.value
    calc.controls["gpu"].value = "b200"
    assert "NVLink 5" in calc.output.value
    calc.controls["gpu"].value = "v100-sxm2-32gb"
    assert calc.error is None and "no bf16" in calc.output.value and "fp16" in calc.output.value
