"""course.presentation.plots.memory_bars: the bars and lines show the bytes they are given."""

from __future__ import annotations

import matplotlib
import pytest

matplotlib.use("Agg")

from course.calculators import memory  # noqa: E402
from course.facts.hardware import gpu  # noqa: E402
from course.presentation.plots import memory_bars as plots  # noqa: E402

LLAMA2_7B = 6_738_415_616  # parameters (Touvron et al. 2023, Llama 2, table 1: "7B")


def test_stacked_bytes_tops_each_bar_at_its_total_and_draws_the_gpu_line():
    # Mixed-precision Adam keeps 16 bytes per parameter (Rajbhandari et al. 2020, ZeRO, sec. 3.1).
    states = memory.model_state_bytes(LLAMA2_7B)
    parts = {
        "weights": [states.weights_bytes],
        "gradients": [states.gradients_bytes],
        "master weights": [states.master_weights_bytes],
        "optimizer states": [states.optimizer_states_bytes],
    }
    a100 = gpu("a100-80gb-sxm")
    ax = plots.stacked_bytes(["Llama-2-7B"], parts, lines={a100.name: a100.memory_bytes})
    top = max(p.get_y() + p.get_height() for p in ax.patches)
    assert top == pytest.approx(16 * LLAMA2_7B)
    assert [line.get_ydata()[0] for line in ax.lines] == [a100.memory_bytes]
    assert [t.get_text() for t in ax.texts] == [a100.name]
    with pytest.raises(ValueError, match=r"parts\['weights'\] must have 2 values, got 1"):
        plots.stacked_bytes(["a", "b"], {"weights": [1.0]})


def test_bytes_vs_tokens_plots_each_series_log_log():
    # KV cache of Llama-2-7B in fp16: 2 (K, V) x 32 layers x 4096 x 2 bytes = 512 KiB a token.
    tokens = [1024, 2048, 4096]
    ax = plots.bytes_vs_tokens({"KV cache": (tokens, [t * 512 * 1024 for t in tokens])})
    (line,) = ax.lines
    assert list(line.get_xdata()) == tokens
    assert line.get_ydata()[-1] == 2 * 1024**3  # 4,096 tokens: 2 GiB
    assert ax.get_xscale() == ax.get_yscale() == "log"
