"""course.calculators.facility: datacenter planning against published cases."""

from __future__ import annotations

import pytest

from course.calculators.facility import WATTS_PER_COOLING_TON, pod_annual_energy, rack_check
from course.facts.hardware import SYSTEMS


def test_practice_question_10_both_readings():
    """Seed 003, Q10 "32-GPU DGX POD" (ambiguous): 32 GPUs = 4 DGX H100 = $35,741;
    32 systems (a DGX POD, 256 GPUs) = $285,926 at $0.10/kWh before PUE."""
    four = pod_annual_energy("dgx-h100", usd_per_kwh=0.10, gpus=32)
    assert (four.systems, four.gpus) == (4, 32)
    assert four.cost_per_year_usd == pytest.approx(35_741, abs=1)
    pod = pod_annual_energy("dgx-h100", usd_per_kwh=0.10, systems=32)
    assert pod.gpus == 256 and pod.it_power_watts == 326_400  # seed 003: "326 kW"
    assert pod.cost_per_year_usd == pytest.approx(285_926, abs=1)
    with pytest.raises(ValueError, match="exactly one of gpus and systems"):
        pod_annual_energy("dgx-h100", usd_per_kwh=0.1, gpus=32, systems=4)


def test_seed_003_rack_of_four_dgx_h100_exceeds_its_own_air_cooling_limit():
    """Seed 003: 4 x DGX H100 (40 kW) + switches 2 kW + storage 1 kW ("~43 kW") vs "air cooling
    up to 30-40 kW/rack". With the User Guide's 10.2 kW per system: 43.8 kW. 8U each."""
    rack = rack_check("dgx-h100", 4)
    assert rack.power_watts == 43_800
    assert not rack.fits_power and rack.fits_space
    assert rack.rack_units_used == 4 * SYSTEMS["dgx-h100"].rack_units + 4
    assert rack.cooling_tons == pytest.approx(43_800 / 3516.85, rel=1e-4)
    assert rack.heat_btu_per_hour == pytest.approx(43_800 * 3.412142, rel=1e-5)
    assert rack_check("dgx-h100", 3).fits_power
    assert not rack_check("dgx-h100", 6).fits_space


def test_one_cooling_ton_is_12000_btu_per_hour():
    assert pytest.approx(3516.85, abs=0.01) == WATTS_PER_COOLING_TON


def test_rack_check_names_the_bad_count():
    with pytest.raises(ValueError, match="systems must be an integer >= 1"):
        rack_check("dgx-h100", 0)
