"""course.calculators.energy: datacenter planning against published cases."""

from __future__ import annotations

import pytest

from course.calculators import energy


def test_one_dgx_h100_costs_8935_usd_a_year_at_10_cents():
    """*AI Infrastructure*: 10.2 kW x 24 h x 365 d x $0.10/kWh = $8,935 (it rounds to $9,000);
    10.2 kW from the DGX H100 User Guide."""
    assert energy.annual_electricity_usd(10_200, 0.10) == pytest.approx(8935.2)


def test_pue_and_utilisation_scale_the_bill():
    base = energy.annual_electricity_usd(10_200, 0.10, systems=32)
    assert base == pytest.approx(285_926.4)  # 32 DGX H100 x 10.2 kW x 8,760 h x $0.10, before PUE
    assert energy.annual_electricity_usd(10_200, 0.10, systems=32, pue=1.5) == pytest.approx(
        1.5 * base
    )
    assert energy.annual_electricity_usd(10_200, 0.10, utilisation=0) == 0


def test_energy_cost_of_a_run():
    assert energy.electricity_usd(energy.energy_joules(1000, 3600), 0.2) == pytest.approx(0.2)
    assert energy.electricity_usd(energy.energy_joules(1000, 3600, pue=1.25), 0.2) == pytest.approx(
        0.25
    )


@pytest.mark.parametrize(
    ("call", "message"),
    [
        (lambda: energy.annual_electricity_usd(-1, 0.1), "power_watts must be"),
        (lambda: energy.annual_electricity_usd(1000, 0.1, pue=0.8), "pue must be"),
        (lambda: energy.annual_electricity_usd(1000, 0.1, systems=0), "systems must be an integer"),
    ],
)
def test_bad_inputs_raise_value_error_naming_the_parameter(call, message):
    with pytest.raises(ValueError, match=message):
        call()
