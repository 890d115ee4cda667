"""course.presentation.findings.crossovers: every outcome, from synthetic records."""

from course.presentation.findings import crossovers


class Fit:
    def __init__(self, fixed, rate):
        self.fixed_seconds, self.flop_per_s = fixed, rate


def test_fixed_costs_crossover_smallest_never_and_missing():
    fits = {
        "python": Fit(2e-6, 3e7),
        "numpy": Fit(1.2e-6, 3.5e10),
        "torch": Fit(5e-6, 3e10),
        "slow": Fit(9e-6, 1e7),
    }
    text = crossovers.fixed_costs(
        fits, {"numpy": 0.0, "torch": 3.2, "slow": float("inf")}, baseline="python"
    )
    assert "Least fixed cost per call: **numpy**" in text
    assert "numpy works 1,167× as fast as the python per FLOP" in text
    assert "wins from the smallest size measured (n = 1)" in text
    assert "overtakes the python from n ≈ 3" in text
    assert "slow never overtakes" in text
    assert "Fewer than two" in crossovers.fixed_costs(
        {"numpy": fits["numpy"]}, {}, baseline="numpy"
    )
