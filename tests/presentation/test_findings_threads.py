"""course.presentation.findings.threads: every outcome, from synthetic records."""

import pytest

from course.presentation.findings import threads


def mm(threads_, rate, spread=0.02):
    seconds = 2 * 1024**3 / rate
    return {
        "threads": threads_,
        "flop_per_s": rate,
        "seconds": seconds,
        "spread_seconds": spread * seconds,
    }


@pytest.mark.parametrize(
    ("two", "spread", "phrase"),
    [
        (1.95e11, 0.02, "nearly linear"),
        (1.4e11, 0.02, "less than 2×"),
        (1.02e11, 0.02, "no gain"),
        (0.58e11, 0.02, "*slower*"),
        (1.3e11, 0.4, "rerun"),
    ],
)
def test_thread_scaling_reads_every_outcome(two, spread, phrase):
    text = threads.scaling([mm(1, 1e11), mm(2, two, spread)])
    assert phrase in text and "ideal 2×" in text


def test_thread_scaling_with_one_count_says_so():
    assert "Only one thread count" in threads.scaling([mm(1, 1e11)])
