"""course.facts.data.failure_logs: the published failure logs and storage as their papers print
them (Llama Team 2024, The Llama 3 Herd of Models, sec. 3.3.1, 3.3.4 and Table 5; Zhang et al.
2022, OPT, sec. 2.4-2.5)."""

from __future__ import annotations

import pytest

from course.facts.data.failure_logs import FAILURE_LOGS, LLAMA3_TABLE5, STORAGE
from course.facts.units import DAY


def test_llama3_table5_rows_add_up_to_the_unexpected_interruptions():
    """Table 5: 466 interruptions, 47 planned, 419 unexpected; the rows add up to 419."""
    LLAMA3 = FAILURE_LOGS["llama-3-405b"]
    assert LLAMA3.interruptions == 466 and LLAMA3.interruptions - LLAMA3.unexpected == 47
    assert sum(n for _, n in LLAMA3_TABLE5.values()) == LLAMA3.unexpected == 419
    gpu = sum(n for cat, n in LLAMA3_TABLE5.values() if cat == "GPU")
    assert gpu / 419 == pytest.approx(0.640, abs=5e-4)  # the paper's 58.7 % adds printed percents
    assert LLAMA3_TABLE5["GPU HBM3 Memory"][1] / 419 == pytest.approx(0.172, abs=5e-4)


def test_each_log_and_storage_row_is_the_papers_and_names_it():
    """Llama 3: 16,384 H100s, a 54-day window, about 78 % hardware; OPT-175B: 992 A100s, at least
    35 manual restarts; Tectonic: 2 TB/s sustainable, 7 TB/s peak."""
    llama, opt = FAILURE_LOGS["llama-3-405b"], FAILURE_LOGS["opt-175b"]
    assert (llama.gpus, llama.window_seconds, llama.hardware_fraction) == (16_384, 54 * DAY, 0.78)
    assert (opt.gpus, opt.unexpected) == (992, 35)
    tectonic = STORAGE["tectonic-llama3"]
    assert (tectonic.write_bytes_per_s, tectonic.peak_bytes_per_s) == (2e12, 7e12)
    for row in (*FAILURE_LOGS.values(), *STORAGE.values()):
        assert "arxiv.org/abs/" in row.source
    for log in FAILURE_LOGS.values():
        assert 0 < log.unexpected <= log.interruptions
