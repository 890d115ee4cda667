"""course.facts.hardware.cpus: the Grace CPU row against the source it names."""

from __future__ import annotations

from course.facts.hardware import CPUS
from course.facts.units import GB


def test_grace_has_72_neoverse_v2_cores_and_480_gb_not_960():
    grace = CPUS["grace"]
    assert (grace.cores, grace.core) == (72, "Arm Neoverse V2")
    assert grace.memory_bytes == 480 * GB and grace.memory_type == "LPDDR5X"
    assert "960" in grace.notes  # the two-CPU Grace Superchip's figure, explained
