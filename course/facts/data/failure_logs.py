"""Published failure logs of large training runs, and the storage they checkpoint to.

Data, not results: what the authors reported. Lesson 12 and tests/calculators/test_reliability.py reproduce
them with :mod:`course.calculators.reliability`. Units: seconds, bytes, bytes/s (SI), as
everywhere in ``course``.
"""

from __future__ import annotations

from dataclasses import dataclass
from types import MappingProxyType

_DAY = 86_400.0

LLAMA3_RELIABILITY = (
    "Llama Team, AI @ Meta 2024, 'The Llama 3 Herd of Models', sec. 3.3.4 (Reliability and "
    "operational challenges) and Table 5 (root-cause categorization of unexpected interruptions "
    "during a 54-day period of Llama 3 405B pre-training), https://arxiv.org/abs/2407.21783"
)
LLAMA3_STORAGE = (
    "Llama Team, AI @ Meta 2024, 'The Llama 3 Herd of Models', sec. 3.3.1 (Storage: Tectonic, "
    "240 PB on 7,500 SSD servers, 2 TB/s sustainable and 7 TB/s peak throughput; checkpoints of "
    "1 MB to 4 GB per GPU), https://arxiv.org/abs/2407.21783"
)
OPT_LOGBOOK = (
    "Zhang et al. 2022, 'OPT: Open Pre-trained Transformer Language Models', sec. 2.5 (Training "
    "Processes: hardware failures caused at least 35 manual restarts and the cycling of over 100 "
    "hosts over 2 months, and 'we estimate 70+ automatic restarts due to hardware failures'; "
    "992 80GB A100 GPUs, sec. 2.4), https://arxiv.org/abs/2205.01068; the "
    "day-by-day logbook is metaseq's projects/OPT/chronicles"
)


@dataclass(frozen=True)
class FailureLog:
    """Interruptions a published run reports over a window of its training."""

    name: str
    gpus: int
    window_seconds: float
    interruptions: int  # every job interruption in the window (planned and unexpected)
    unexpected: int  # the failures: what a failure model predicts
    hardware_fraction: float | None  # share of the unexpected ones the authors blame on hardware
    effective_training_fraction: float | None  # the authors' "effective training time" (a floor)
    source: str
    note: str = ""


#: Table 5 of the Llama 3 paper, row by row: root cause -> (category, interruptions). The rows add
#: up to the 419 unexpected interruptions. The paper prints 30.1 % beside "Faulty GPU, 148",
#: which is not 148/419 (35.3 %); its 58.7 % for all GPU issues is the sum of the printed
#: percentages (268 GPU rows / 419 = 64.0 %). The counts are kept as printed.
LLAMA3_TABLE5: MappingProxyType = MappingProxyType({
    "Faulty GPU": ("GPU", 148),
    "GPU HBM3 Memory": ("GPU", 72),
    "Software Bug": ("Dependency", 54),
    "Network Switch/Cable": ("Network", 35),
    "Host Maintenance": ("Unplanned Maintenance", 32),
    "GPU SRAM Memory": ("GPU", 19),
    "GPU System Processor": ("GPU", 17),
    "NIC": ("Host", 7),
    "NCCL Watchdog Timeouts": ("Unknown", 7),
    "Silent Data Corruption": ("GPU", 6),
    "GPU Thermal Interface + Sensor": ("GPU", 6),
    "SSD": ("Host", 3),
    "Power Supply": ("Host", 3),
    "Server Chassis": ("Host", 2),
    "IO Expansion Board": ("Host", 2),
    "Dependency": ("Dependency", 2),
    "CPU": ("Host", 2),
    "System Memory": ("Host", 2),
})  # fmt: skip

FAILURE_LOGS: MappingProxyType = MappingProxyType({
    "llama-3-405b": FailureLog(
        name="Llama 3 405B pre-training (54-day snapshot)", gpus=16_384, window_seconds=54 * _DAY,
        interruptions=466, unexpected=419, hardware_fraction=0.78,
        effective_training_fraction=0.90, source=LLAMA3_RELIABILITY,
        note="47 of the 466 were planned (automated maintenance); 'about 78 %' of the unexpected "
             "ones confirmed or suspected hardware; 'higher than 90 %' effective training time; "
             "3 needed significant manual intervention."),
    "opt-175b": FailureLog(
        name="OPT-175B (about 2 months)", gpus=992, window_seconds=60 * _DAY,
        interruptions=35, unexpected=35, hardware_fraction=1.0,
        effective_training_fraction=None, source=OPT_LOGBOOK,
        note="'at least 35 manual restarts' from hardware failures: a floor. The paper also "
             "estimates '70+ automatic restarts due to hardware failures' (from the hosts cycled), "
             "not counted here, nor the loss-divergence restarts; 2 months taken as 60 days."),
})  # fmt: skip


@dataclass(frozen=True)
class Storage:
    """A storage system's sustained write bandwidth (what a checkpoint write sees)."""

    name: str
    write_bytes_per_s: float
    peak_bytes_per_s: float | None
    source: str


STORAGE: MappingProxyType = MappingProxyType({
    "tectonic-llama3": Storage(
        name="Meta Tectonic (Llama 3 cluster, whole filesystem)", write_bytes_per_s=2e12,
        peak_bytes_per_s=7e12, source=LLAMA3_STORAGE),
})  # fmt: skip

__all__ = ["FAILURE_LOGS", "LLAMA3_TABLE5", "STORAGE", "FailureLog", "Storage"]
