"""The configurations the junk-input cases share."""

from __future__ import annotations

from course.calculators import serving
from course.facts import models
from course.facts.models import PRESETS

CFG = PRESETS["llama-2-7b"]
MOE = models.MOE_PRESETS["mixtral-8x7b"]
SMALL = PRESETS["gpt2"]
MIX = serving.request_mix(12, max_seq_len=512, arrivals_per_second=1.0, seed=2)
