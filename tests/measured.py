"""Helpers shared by the measurement-layer tests (tests/measure/, tests/presentation/)."""

from __future__ import annotations

import math

import torch

from course.measure import bandwidth

HAS_CUDA = torch.cuda.is_available()
NO_CUDA = "no CUDA GPU on this machine: the CUDA path is exercised only where one exists"


def finite_positive(x: float) -> bool:
    return isinstance(x, float) and math.isfinite(x) and x > 0


def bandwidth_record(size: int, rate: float) -> bandwidth.BandwidthRecord:
    """A synthetic read record: ``size`` bytes at ``rate`` bytes/s, one repeat, no spread."""
    return bandwidth.BandwidthRecord("read", "cpu", size, 1e6, 1e6 / rate, 0.0, 1, rate, 1)
