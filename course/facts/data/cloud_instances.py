"""Cloud GPU instance types and the prices seen for them, each price with its date and source.

Three tables:

- :data:`INSTANCE_TYPES`: what an instance *is* (provider, name, GPU model as a key into
  ``course.facts.hardware.GPUS``, GPU count, network), from the provider's own documentation. GPU
  memory is not typed here: ``course.calculators.cloud`` computes it from the hardware registry.
- :data:`PRICE_QUOTES`: what an instance *cost*, one row per price seen: the kind of price
  (on-demand, spot, capacity block), USD per instance-hour, the region, the date it was seen and
  where. Prices move (AWS announced cuts of "up to 45 %" for P4 and P5 on 5 June 2025:
  :data:`PRICE_ANNOUNCEMENTS`), so a price without a date is not recorded. Where no sourced
  price was found, the quote is ``None`` with the reason.
- :data:`PRICE_ANNOUNCEMENTS`: announced price changes, with the instances they cover.

Prices from the providers' price lists (AWS Price List, Azure Retail Prices API) were read through
public third-party transcriptions that name the list, the region and the date; those transcriptions
are cited beside the primary list so the row can be checked, with the commit where one was opened.
Re-checked on 2026-11-24 (issue 19): Lambda's two prices against the transcription's file at a named
commit; Azure's against a second, independent machine-read of the Azure Retail Prices API (SkyPilot's
catalog); RunPod's and GCP's A3 Ultra prices could not be traced to a source that could be opened, so
they were dropped (RunPod's replaced by a dated, named snapshot). *AI Infrastructure*'s Azure and GCP
prices ("~$30", "~$90", "~$35", "~$110"/hour) have no source and are not here.

 Used by ``course.calculators.cloud`` (lesson 09).
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class InstanceType:
    """One cloud GPU instance type (a virtual machine with GPUs attached)."""

    key: str
    provider: str
    name: str
    gpu: str  # key in course.facts.hardware.GPUS
    gpus: int
    network: str  # scale-out network between instances, as the provider states it
    source: str
    notes: str = ""


@dataclass(frozen=True)
class PriceQuote:
    """A price seen for an instance type: USD per instance-hour (all its GPUs), or None."""

    instance: str  # key in INSTANCE_TYPES
    kind: str  # "on-demand", "spot" or "capacity-block"
    usd_per_hour: float | None
    seen: str  # ISO date the price was read or took effect
    region: str
    source: str
    notes: str = ""


# Sources quoted more than once.
AWS_P4D_LAUNCH = (
    "AWS News Blog, 'New - GPU-Equipped EC2 P4 Instances for Machine Learning & HPC' "
    "(2 Nov 2020), https://aws.amazon.com/blogs/aws/new-gpu-equipped-ec2-p4-instances-for-"
    "machine-learning-hpc/"
)
AWS_P5_LAUNCH = (
    "AWS EC2 on-demand price list at P5 general availability (26 Jul 2023, AWS News Blog 'New Amazon "
    "EC2 P5 Instances Powered by NVIDIA H100 Tensor Core GPUs', https://aws.amazon.com/blogs/aws/"
    "new-amazon-ec2-p5-instances-powered-by-nvidia-h100-tensor-core-gpus-for-accelerating-"
    "generative-ai-and-hpc-applications/), price as reported by "
    "The Next Platform, 'H100 GPU Instance Pricing On AWS: Grin And Bear It' (27 Jul 2023), "
    "https://www.nextplatform.com/2023/07/27/h100-gpu-instance-pricing-on-aws-grin-and-bear-it/"
)
AWS_LIST_2026 = (
    "AWS Price List (EC2 on-demand, Linux, us-east-1), https://aws.amazon.com/ec2/pricing/"
    "on-demand/; read 2026-11-09 as transcribed in datareceipts/data-receipts "
    "109-gpu-pricing/hyperscalers.json, https://raw.githubusercontent.com/datareceipts/"
    "data-receipts/main/109-gpu-pricing/hyperscalers.json (that file could not be opened on "
    "2026-11-24 and no second dated copy was found: unverified beyond its consistency with "
    "AWS's announced cut, which a test checks)"
)
AWS_P5EN_2026 = (
    "AWS Price List as returned by `dstack offer -b aws --instance-type p5en.48xlarge` on "
    "2026-08-06, quoted in dstackai/dstack pull request #4110, https://github.com/dstackai/"
    "dstack/pull/4110"
)
AWS_CAPACITY_BLOCKS = (
    "AWS, 'Amazon EC2 Capacity Blocks for ML Pricing', https://aws.amazon.com/ec2/"
    "capacityblocks/pricing/ (page version stating the next update on 1 Jan 2025)"
)
AZURE_LIST_2026 = (
    "Azure Retail Prices API (Virtual Machines, Linux, pay-as-you-go, eastus), "
    "https://prices.azure.com/api/retail/prices; read 2026-11-09 as transcribed in "
    "datareceipts/data-receipts 109-gpu-pricing (hyperscalers.json, compare.json), "
    "https://raw.githubusercontent.com/datareceipts/data-receipts/main/109-gpu-pricing/ "
    "(that file could not be opened on 2026-11-24); the same eastus prices (ND96asr_v4 27.197, "
    "ND96isr_H100_v5 98.32 USD/h) are in SkyPilot's catalog, a machine-read of the same API: "
    "skypilot-org/skypilot-catalog catalogs/v6/azure/vms.csv at commit "
    "098741e70562f65d7af1cceb81e33b284f742604 (commit date not available here), "
    "https://github.com/skypilot-org/skypilot-catalog"
)
AZURE_ND_DOCS = (
    "Microsoft Learn, 'ND family VM size series' (ND_A100_v4, NDm_A100_v4, ND_H100_v5), "
    "https://learn.microsoft.com/azure/virtual-machines/sizes/gpu-accelerated/nd-family"
)
GCP_MACHINES = (
    "Google Cloud, 'Accelerator-optimized machine family', https://cloud.google.com/compute/"
    "docs/accelerator-optimized-machines"
)
LAMBDA_2026 = (
    "Lambda, GPU instances price list, https://lambda.ai/instances; read 2026-09-20 as "
    "transcribed in api-evangelist/lambda-labs plans/lambda-labs-plans-pricing.yml at commit "
    "1929382e7f9b4777d980aec12b6fc9e04e6718cb (generated 2026-09-20; 'every price_text was found "
    "verbatim in the fetched page text'; per GPU-hour, 8x H100 SXM $3.99, 8x A100 SXM 80 GB "
    "$2.79), https://github.com/api-evangelist/lambda-labs/blob/"
    "1929382e7f9b4777d980aec12b6fc9e04e6718cb/plans/lambda-labs-plans-pricing.yml"
)
RUNPOD_2025 = (
    "RunPod's H100 SXM5 on-demand offers as listed by Prime Intellect's GPU marketplace API, "
    "snapshot of 2025-11-01T14:09Z recorded by tugot17/gpu-price-tracker "
    "data/summary/H100_80GB_SXM5.jsonl at commit 00118715b4bf22166871877419d0cb374cfe2572 "
    "(by_provider runpod: 10 offers, lowest $2.69 and mean $2.70 per GPU-hour; RunPod's tier, "
    "Secure or Community Cloud, not stated), https://github.com/tugot17/gpu-price-tracker"
)
NO_SOURCE = "no primary or list-derived price found while writing this table (2026-11-23)"
NOT_CHECKABLE = (
    "no primary or list-derived price that could be checked (2026-11-24): the transcription cited "
    "before could not be opened and no other dated copy of the list was found"
)


INSTANCE_TYPES: tuple[InstanceType, ...] = (
    InstanceType("aws-p4d.24xlarge", "AWS", "p4d.24xlarge", "a100-40gb-sxm", 8,
                 "400 Gb/s EFA", AWS_P4D_LAUNCH,
                 "A100 40GB: the 80 GB version is p4de.24xlarge."),
    InstanceType("aws-p5.48xlarge", "AWS", "p5.48xlarge", "h100-sxm", 8,
                 "3,200 Gb/s EFA", AWS_CAPACITY_BLOCKS),
    InstanceType("aws-p5e.48xlarge", "AWS", "p5e.48xlarge", "h200-sxm", 8,
                 "3,200 Gb/s EFA", AWS_CAPACITY_BLOCKS),
    InstanceType("aws-p5en.48xlarge", "AWS", "p5en.48xlarge", "h200-sxm", 8,
                 "3,200 Gb/s EFA", AWS_P5EN_2026, "p5e with newer CPUs and networking."),
    InstanceType("azure-nd96asr-v4", "Azure", "Standard_ND96asr_v4 (ND A100 v4)",
                 "a100-40gb-sxm", 8, "8 x 200 Gb/s HDR InfiniBand", AZURE_ND_DOCS,
                 "*AI Infrastructure* calls ND A100 v4 '8x A100 (80GB)': its GPUs are the 40 GB ones."),
    InstanceType("azure-nd96amsr-a100-v4", "Azure", "Standard_ND96amsr_A100_v4 (NDm A100 v4)",
                 "a100-80gb-sxm", 8, "8 x 200 Gb/s HDR InfiniBand", AZURE_ND_DOCS,
                 "The 80 GB A100 series is NDm A100 v4."),
    InstanceType("azure-nd96isr-h100-v5", "Azure", "Standard_ND96isr_H100_v5 (ND H100 v5)",
                 "h100-sxm", 8, "8 x 400 Gb/s NDR InfiniBand", AZURE_ND_DOCS),
    InstanceType("gcp-a2-ultragpu-8g", "GCP", "a2-ultragpu-8g", "a100-80gb-sxm", 8,
                 "see source", GCP_MACHINES),
    InstanceType("gcp-a3-highgpu-8g", "GCP", "a3-highgpu-8g", "h100-sxm", 8,
                 "GPUDirect-TCPX", GCP_MACHINES),
    InstanceType("gcp-a3-ultragpu-8g", "GCP", "a3-ultragpu-8g", "h200-sxm", 8,
                 "8 x CX-7 RDMA over Ethernet (RoCE), one per GPU", GCP_MACHINES),
    InstanceType("lambda-8x-h100-sxm", "Lambda", "8x NVIDIA H100 SXM", "h100-sxm", 8,
                 "not stated for on-demand instances", LAMBDA_2026),
    InstanceType("lambda-8x-a100-80gb-sxm", "Lambda", "8x NVIDIA A100 SXM 80 GB",
                 "a100-80gb-sxm", 8, "not stated for on-demand instances", LAMBDA_2026),
    InstanceType("runpod-h100-sxm", "RunPod", "H100 SXM (1 GPU)", "h100-sxm", 1,
                 "not stated", "RunPod, pricing page, https://www.runpod.io/pricing",
                 "Sold as Secure Cloud (RunPod's datacentres) and Community Cloud (third-party "
                 "hosts); the recorded price does not say which."),
)  # fmt: skip


PRICE_QUOTES: tuple[PriceQuote, ...] = (
    # AWS: launch prices, then the list after the June 2025 cut.
    PriceQuote("aws-p4d.24xlarge", "on-demand", 32.77, "2020-11-02", "us-east-1",
               AWS_P4D_LAUNCH, "launch price"),
    PriceQuote("aws-p4d.24xlarge", "on-demand", 21.957642, "2026-11-09", "us-east-1",
               AWS_LIST_2026),
    PriceQuote("aws-p5.48xlarge", "on-demand", 98.32, "2023-07-26", "us-east-1",
               AWS_P5_LAUNCH, "launch price"),
    PriceQuote("aws-p5.48xlarge", "capacity-block", 39.33, "2024-12-01", "us-east-1",
               AWS_CAPACITY_BLOCKS, "reserved block of 1-182 days, paid up front; date is the "
               "page version (next update announced for 2025-01-01)"),
    PriceQuote("aws-p5.48xlarge", "on-demand", 55.04, "2026-11-09", "us-east-1",
               AWS_LIST_2026, "after AWS's June 2025 cut of up to 45 %"),
    PriceQuote("aws-p5e.48xlarge", "on-demand", None, "2026-11-23", "us-east-1", NO_SOURCE),
    PriceQuote("aws-p5en.48xlarge", "on-demand", 63.296, "2026-08-06", "us-east-1",
               AWS_P5EN_2026),
    PriceQuote("aws-p5en.48xlarge", "spot", 27.1988, "2026-08-06", "us-east-1", AWS_P5EN_2026,
               "spot prices change every few minutes"),
    # Azure: per-GPU list price x 8.
    PriceQuote("azure-nd96asr-v4", "on-demand", 27.1968, "2026-11-09", "eastus",
               AZURE_LIST_2026, "$3.3996 per GPU-hour x 8"),
    PriceQuote("azure-nd96amsr-a100-v4", "on-demand", None, "2026-11-23", "eastus", NO_SOURCE),
    PriceQuote("azure-nd96isr-h100-v5", "on-demand", 98.32, "2026-11-09", "eastus",
               AZURE_LIST_2026, "$12.29 per GPU-hour x 8"),
    # GCP: per-GPU share of the whole machine (GPU + vCPU + memory SKUs) x 8.
    PriceQuote("gcp-a2-ultragpu-8g", "on-demand", None, "2026-11-23", "us-central1", NO_SOURCE),
    PriceQuote("gcp-a3-highgpu-8g", "on-demand", None, "2026-11-23", "us-central1", NO_SOURCE),
    PriceQuote("gcp-a3-ultragpu-8g", "on-demand", None, "2026-11-24", "us-central1",
               NOT_CHECKABLE, "the on-demand and spot prices recorded before (from the dataset "
               "tanod/cloud-gpu-list-prices, 2026-10-13) were dropped"),
    # Smaller GPU clouds: per-GPU list price x GPUs.
    PriceQuote("lambda-8x-h100-sxm", "on-demand", 31.92, "2026-09-20", "US", LAMBDA_2026,
               "$3.99 per GPU-hour x 8"),
    PriceQuote("lambda-8x-a100-80gb-sxm", "on-demand", 22.32, "2026-09-20", "US", LAMBDA_2026,
               "$2.79 per GPU-hour x 8"),
    PriceQuote("runpod-h100-sxm", "on-demand", 2.69, "2025-11-01", "varies", RUNPOD_2025,
               "lowest of RunPod's 10 listed offers (mean $2.70)"),
)  # fmt: skip


@dataclass(frozen=True)
class PriceAnnouncement:
    """A provider's announced price change: date, instance families, the largest cut, source."""

    provider: str
    announced: str  # ISO date
    instances: tuple[str, ...]  # keys in INSTANCE_TYPES covered by it
    max_cut_fraction: float  # "up to 45 %" -> 0.45
    source: str


PRICE_ANNOUNCEMENTS: tuple[PriceAnnouncement, ...] = (
    PriceAnnouncement(
        "AWS",
        "2025-06-05",
        ("aws-p4d.24xlarge", "aws-p5.48xlarge", "aws-p5en.48xlarge"),
        0.45,
        "AWS News Blog, 'Announcing up to 45% price reduction for Amazon EC2 NVIDIA GPU-accelerated "
        "instances' (5 Jun 2025): P4d, P4de, P5 and P5en on-demand, https://aws.amazon.com/blogs/"
        "aws/announcing-up-to-45-price-reduction-for-amazon-ec2-nvidia-gpu-accelerated-instances/",
    ),
)


#: The "When Cloud Makes Sense" table of *Computational Resources for ML*, as printed there (its figures, not checked
#: prices): label, hardware key, GPUs, purchase USD, cloud USD per hour, the reading's break-even
#: hours ("~4,700"; 150,000 / 32 = 4,687.5). The reading does not say which 8x A100: 80 GB assumed.
BUY_VS_RENT_AS_WRITTEN: tuple[tuple[str, str, int, int, float, float], ...] = (
    ("RTX 4090", "rtx-4090", 1, 1_600, 0.40, 4_000),
    ("A100 80GB", "a100-80gb-sxm", 1, 15_000, 4.0, 3_750),
    ("8x A100", "a100-80gb-sxm", 8, 150_000, 32.0, 4_700),
)

#: The purchase prices per GPU of *AI Infrastructure* ("Purchase: ~$15,000" for the A100, "~$30,000-$40,000" for
#: the H100): the reading's unsourced figures, used only as a stated starting point a learner
#: replaces with a real quote. GPU key -> (low, high) USD.
PURCHASE_USD_PER_GPU_AS_WRITTEN: dict[str, tuple[float, float]] = {
    "a100-80gb-sxm": (15_000, 15_000),
    "h100-sxm": (30_000, 40_000),
}


__all__ = [
    "INSTANCE_TYPES",
    "PRICE_ANNOUNCEMENTS",
    "PRICE_QUOTES",
    "PURCHASE_USD_PER_GPU_AS_WRITTEN",
    "BUY_VS_RENT_AS_WRITTEN",
    "InstanceType",
    "PriceAnnouncement",
    "PriceQuote",
]
