"""Datacenter calculators: energy bills, racks and cooling, and planning a cluster for a model."""

from __future__ import annotations

import math

import pytest

from course.calculators import energy
from course.calculators.cluster import cluster_for_model
from course.calculators.facility import WATTS_PER_COOLING_TON, pod_annual_energy, rack_check
from course.facts.hardware import SYSTEMS
from course.facts.models import PRESETS
from course.facts.units import DAY


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


def test_energy_cost_of_a_run():
    assert energy.electricity_usd(energy.energy_joules(1000, 3600), 0.2) == pytest.approx(0.2)
    assert energy.electricity_usd(energy.energy_joules(1000, 3600, pue=1.25), 0.2) == pytest.approx(
        0.25
    )


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


def test_cluster_for_gpt3_175b_uses_a_full_nvlink_domain_for_tensor_parallelism():
    """Practice question 8 of seed 003. Megatron practice (Narayanan et al. 2021): tensor
    parallelism across the 8 GPUs of a DGX, pipeline stages across systems. 175B needs
    2.8 TB of model states alone, so one 8-GPU system cannot hold it."""
    plan = cluster_for_model(PRESETS["gpt-3-175b"], system="dgx-h100")
    assert plan.tensor_parallel == 8
    assert plan.pipeline_parallel > 1 and 96 % plan.pipeline_parallel == 0
    assert plan.memory_per_gpu_bytes <= plan.usable_memory_per_gpu_bytes == 0.9 * 80 * 2**30
    assert plan.data_parallel == 1 and plan.systems == plan.pipeline_parallel
    assert math.isnan(plan.training_seconds)


def test_cluster_time_target_adds_data_parallel_replicas():
    plan = cluster_for_model(PRESETS["gpt-3-175b"], tokens=300e9, days=30, mfu=0.4)
    assert plan.training_seconds <= 30 * DAY
    assert plan.gpus == plan.tensor_parallel * plan.pipeline_parallel * plan.data_parallel
    assert plan.systems == math.ceil(plan.gpus / 8)
    fewer = cluster_for_model(PRESETS["gpt-3-175b"], tokens=300e9, days=60, mfu=0.4)
    assert fewer.gpus < plan.gpus


def test_small_model_fits_one_gpu():
    plan = cluster_for_model(PRESETS["gpt2"], system="dgx-a100-640gb")
    assert (plan.tensor_parallel, plan.pipeline_parallel, plan.gpus, plan.systems) == (1, 1, 1, 1)


def test_cluster_planner_refuses_what_cannot_fit_and_incomplete_targets():
    with pytest.raises(ValueError, match="does not fit"):
        cluster_for_model(
            PRESETS["gpt-3-175b"], recompute="none", micro_batch=64, sequence_parallel=False
        )
    with pytest.raises(ValueError, match="days needs tokens"):
        cluster_for_model(PRESETS["gpt2"], days=3)
    with pytest.raises(ValueError, match="system must be one of"):
        cluster_for_model(PRESETS["gpt2"], system="dgx-b200")


@pytest.mark.parametrize(
    ("call", "message"),
    [
        (lambda: energy.annual_electricity_usd(-1, 0.1), "power_watts must be"),
        (lambda: energy.annual_electricity_usd(1000, 0.1, pue=0.8), "pue must be"),
        (lambda: energy.annual_electricity_usd(1000, 0.1, systems=0), "systems must be an integer"),
        (lambda: rack_check("dgx-h100", 0), "systems must be an integer >= 1"),
    ],
)
def test_bad_inputs_raise_value_error_naming_the_parameter(call, message):
    with pytest.raises(ValueError, match=message):
        call()
