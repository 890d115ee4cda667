"""course.facts.data.cloud_instances: every price has a date and a source, launch prices are
kept beside today's, recorded cuts stay within what the provider announced, and each instance's
GPUs are the ones its provider's page names."""

from __future__ import annotations

import re

import pytest

from course.calculators import cloud
from course.calculators.cloud import INSTANCES, instance, instance_gpu
from course.facts.data import cloud_instances as data
from course.facts.hardware import GPUS


def test_every_quote_names_a_known_instance_an_iso_date_and_a_linked_source():
    keys = {t.key for t in data.INSTANCE_TYPES}
    for q in data.PRICE_QUOTES:
        assert q.instance in keys
        assert q.kind in cloud.PRICE_KINDS
        assert re.fullmatch(r"\d{4}-\d{2}-\d{2}", q.seen), q
        if q.usd_per_hour is None:
            assert "no primary" in q.source  # a missing price says why
        else:
            assert "http" in q.source, q
            assert 0 < q.usd_per_hour < 200


def test_every_instance_has_a_known_gpu_an_on_demand_row_and_memory_from_the_registry():
    for t in data.INSTANCE_TYPES:
        assert t.gpu in GPUS and "http" in t.source
        assert cloud.price_history(t.key) or instance(t.key).usd_per_hour is None
        inst = instance(t.key)
        assert inst.gpu_memory_bytes == t.gpus * GPUS[t.gpu].memory_bytes
    assert set(INSTANCES) == {t.key for t in data.INSTANCE_TYPES}


def test_launch_prices_are_kept_beside_todays():
    """AWS's launch announcements: p4d.24xlarge $32.77/h (Nov 2020), p5.48xlarge $98.32/h
    (July 2023); the table keeps them and the later list prices, each dated."""
    p4d = cloud.price_history("aws-p4d.24xlarge")
    p5 = cloud.price_history("aws-p5.48xlarge")
    assert (p4d[0].usd_per_hour, p4d[0].seen) == (32.77, "2020-11-02")
    assert (p5[0].usd_per_hour, p5[0].seen) == (98.32, "2023-07-26")
    assert instance("aws-p5.48xlarge").usd_per_hour == p5[-1].usd_per_hour == 55.04
    assert instance("aws-p5.48xlarge").as_of == "2026-11-09"


def test_recorded_cuts_are_within_what_aws_announced_in_june_2025():
    """AWS News Blog (5 Jun 2025): on-demand cuts of "up to 45 %" for P4d, P4de, P5 and P5en.
    p5.48xlarge: 98.32 -> 55.04 is -44 %; every covered instance with a price before and after the
    announcement fell by no more than the announced maximum."""
    (aws,) = data.PRICE_ANNOUNCEMENTS
    assert aws.announced == "2025-06-05" and aws.max_cut_fraction == 0.45
    assert cloud.price_change_fraction("aws-p5.48xlarge") == pytest.approx(-0.4402, abs=1e-4)
    for key in aws.instances:
        quotes = cloud.price_history(key)
        before = [q for q in quotes if q.seen < aws.announced]
        after = [q for q in quotes if q.seen > aws.announced]
        if before and after:
            cut = 1 - after[-1].usd_per_hour / before[-1].usd_per_hour
            assert 0 < cut <= aws.max_cut_fraction + 1e-9, key
    with pytest.raises(ValueError, match="need 2"):
        cloud.price_change_fraction("azure-nd96isr-h100-v5")


def test_small_cloud_and_azure_prices_are_resourced_or_dropped():
    """Lambda, RunPod, GCP a3-ultragpu and Azure ND96asr_v4 prices, each re-sourced or dropped
    (checked 2026-11-24).

    - Lambda: api-evangelist/lambda-labs plans/lambda-labs-plans-pricing.yml at commit 1929382e
      (generated 2026-09-20 from https://lambda.ai/instances): 8x H100 SXM $3.99 and 8x A100 SXM
      80 GB $2.79 per GPU-hour.
    - Azure: skypilot-org/skypilot-catalog catalogs/v6/azure/vms.csv at commit 098741e7, eastus:
      Standard_ND96asr_v4 27.197 and Standard_ND96isr_H100_v5 98.32 USD/h, the figures the
      datareceipts transcription gives per GPU ($3.3996 and $12.29 x 8).
    - RunPod: tugot17/gpu-price-tracker data/summary/H100_80GB_SXM5.jsonl at commit 00118715,
      record of 2025-11-01T14:09Z, by_provider runpod min 2.69 (mean 2.70) per GPU-hour.
    - GCP a3-ultragpu-8g: no checkable source, so no price (and no spot price) is recorded.
    """
    lam_h100, lam_a100 = instance("lambda-8x-h100-sxm"), instance("lambda-8x-a100-80gb-sxm")
    assert (lam_h100.usd_per_gpu_hour, lam_a100.usd_per_gpu_hour) == pytest.approx((3.99, 2.79))
    assert lam_h100.as_of == lam_a100.as_of == "2026-09-20" and "1929382e" in lam_h100.source
    nd = instance("azure-nd96asr-v4")
    assert nd.usd_per_hour == pytest.approx(27.197, abs=5e-4)  # 8 x 3.3996 = 27.1968
    assert instance("azure-nd96isr-h100-v5").usd_per_hour == pytest.approx(98.32)
    assert "098741e7" in nd.source
    runpod = instance("runpod-h100-sxm")
    assert (runpod.gpus, runpod.usd_per_hour, runpod.as_of) == (1, 2.69, "2025-11-01")
    assert "00118715" in runpod.source
    assert {i.key for i in INSTANCES.values() if i.provider == "RunPod"} == {"runpod-h100-sxm"}
    assert instance("gcp-a3-ultragpu-8g").usd_per_hour is None
    assert not any(q.instance == "gcp-a3-ultragpu-8g" and q.usd_per_hour for q in data.PRICE_QUOTES)


def test_azure_nd_a100_v4_has_40gb_gpus_and_ndm_has_80gb():
    """Azure's ND A100 v4 series page: *AI Infrastructure*'s "ND A100 v4 = 8x A100 80GB" is
    wrong; NDm A100 v4 is the 80 GB one."""
    nd, ndm = instance("azure-nd96asr-v4"), instance("azure-nd96amsr-a100-v4")
    assert nd.gpu == "a100-40gb-sxm" and ndm.gpu == "a100-80gb-sxm"
    assert ndm.gpu_memory_bytes == 2 * nd.gpu_memory_bytes
    assert instance_gpu("aws-p4d.24xlarge").memory_bytes == 40 * 2**30  # 40 GB A100s, not 80
