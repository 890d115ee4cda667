"""course.presentation.findings.precision_speed: every outcome, from synthetic records."""

import pytest

from course.presentation.findings import precision_speed


@pytest.mark.parametrize(
    ("bf16_ms", "units", "device", "phrase"),
    [
        (1.2, True, "cpu", "2.1× faster: this cpu has 16-bit matrix instructions"),
        (13.7, False, "cpu", "no 16-bit matrix instructions"),
        (13.7, True, "cpu", "spends its time in the casts"),
        (2.6, None, "cpu", "about the same"),
        (0.5, True, "cuda", "Tensor Cores"),
    ],
)
def test_autocast_speed_every_outcome(bf16_ms, units, device, phrase):
    text = precision_speed.autocast_speed(
        {"fp32": [2.5e-3] * 8, "bf16": [bf16_ms * 1e-3] * 8}, device=device, bf16_units=units
    )
    assert phrase in text and "fp16 autocast: not run" in text


def test_autocast_speed_noisy_and_missing():
    noisy = precision_speed.autocast_speed(
        {"fp32": [2e-3, 2.5e-3, 3e-3, 4e-3], "bf16": [1.5e-3, 2.5e-3, 3e-3, 5e-3]},
        device="cpu",
        bf16_units=None,
    )
    assert "rerun" in noisy
    assert "fp32 run is missing" in precision_speed.autocast_speed(
        {}, device="cpu", bf16_units=None
    )


def variant(name, b, ms, iqr=0.02):
    return {"name": name, "batch": b, "median_seconds": ms * 1e-3, "iqr_seconds": iqr * ms * 1e-3}


def test_quantised_speed_small_batch_wins_and_large_batch_loses():
    text = precision_speed.quantised_speed(
        [
            variant("fp32", 1, 2.4),
            variant("int8 (course)", 1, 1.3),
            variant("fp32", 64, 17.8),
            variant("int8 (course)", 64, 25.3),
            variant("bf16", 64, 100.9),
        ]
    )
    assert (
        "batch 1: against fp32, int8 (course) 1.8× faster" in text and "reading the weights" in text
    )
    assert "batch 64" in text and "fp32 was fastest" in text and "bf16 5.7× slower" in text


def test_quantised_speed_large_batch_wins_noisy_and_missing():
    text = precision_speed.quantised_speed(
        [variant("fp32", 64, 17.8), variant("int8 (course)", 64, 9.0)]
    )
    assert "kernels for the smaller type" in text
    noisy = precision_speed.quantised_speed(
        [variant("fp32", 1, 2.4, 0.4), variant("bf16", 1, 2.0, 0.3)]
    )
    assert "bf16 noisy" in noisy
    assert "fp32 was not measured" in precision_speed.quantised_speed([variant("bf16", 1, 2.0)])
    assert "No variant" in precision_speed.quantised_speed([])
