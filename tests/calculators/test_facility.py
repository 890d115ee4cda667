"""course.calculators.facility: datacenter planning against published cases."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from course.calculators import facility
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


def test_power_levels_gpu_server_rack_hall():
    """Seed 003's rack: 4 DGX H100 + 3 kW = 43.8 kW; 32 systems = 8 racks; IT x PUE."""
    p = facility.power_levels("dgx-h100", 32, pue=1.5)
    assert p.gpu_watts == 700 and p.server_watts == 10_200
    assert p.gpu_share == pytest.approx(5600 / 10_200)
    assert p.rack_watts == 43_800 and p.racks == 8
    assert p.it_watts == 32 * 10_200 + 8 * 3000
    assert p.facility_watts == pytest.approx(1.5 * p.it_watts)
    assert p.overhead_watts == pytest.approx(0.5 * p.it_watts)


def test_pue_constants_bracket_hyperscale_and_industry():
    """Uptime Institute surveys: 1.55 (2022), 1.57 (2021), 1.58 (2023); Google fleet: 1.10."""
    assert 1.55 <= facility.PUE_INDUSTRY_AVERAGE <= 1.6 and facility.PUE_HYPERSCALE == 1.10
    # DGX GB200 SuperPOD RA: 1.2 MW per SU of 8 racks -> 150 kW per rack, ~19x an average rack
    assert facility.GB200_NVL72_SU_WATTS / facility.GB200_NVL72_RACKS_PER_SU == 150_000


def test_question_10_at_utilisation_and_pue():
    """DGX H100 User Guide: 10.2 kW per system; x 8,760 h x $0.10/kWh: $35,741 (4 systems) and
    $285,926 (32 systems) at full power, before PUE."""
    four = facility.pod_annual_energy(
        "dgx-h100", usd_per_kwh=0.10, gpus=32, utilisation=0.7, pue=1.58
    )
    assert four.cost_per_year_usd == pytest.approx(35_741.4 * 0.7 * 1.58, rel=1e-4)
    pod = facility.pod_annual_energy("dgx-h100", usd_per_kwh=0.10, systems=32, pue=1.1)
    assert pod.cost_per_year_usd == pytest.approx(285_926.4 * 1.1, rel=1e-6)


@settings(max_examples=40, deadline=None)
@given(n=st.integers(1, 500), more=st.integers(1, 500), pue=st.floats(1, 3))
def test_more_systems_never_draw_less_power(n, more, pue):
    a = facility.power_levels("dgx-h100", n, pue=pue)
    b = facility.power_levels("dgx-h100", n + more, pue=pue)
    assert a.it_watts < b.it_watts and a.facility_watts < b.facility_watts


def test_question_10_with_a_power_per_system_of_your_own():
    """DGX A100 datasheet: 6.5 kW maximum; a DGX H100 typed at that power costs what 4 DGX A100
    cost: 4 x 6.5 kW x 8,760 h x $0.10 = $22,776 a year."""
    typed = pod_annual_energy("dgx-h100", usd_per_kwh=0.10, gpus=32, power_watts=6_500)
    a100 = pod_annual_energy("dgx-a100-640gb", usd_per_kwh=0.10, gpus=32)
    assert typed.cost_per_year_usd == pytest.approx(4 * 6.5 * 8_760 * 0.10)
    assert typed.cost_per_year_usd == pytest.approx(a100.cost_per_year_usd)
    assert typed.it_power_watts == 4 * 6_500 and typed.system == "NVIDIA DGX H100"
    with pytest.raises(ValueError, match="power_watts"):
        pod_annual_energy("dgx-h100", usd_per_kwh=0.10, gpus=32, power_watts=-1)
