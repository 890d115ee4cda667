"""course.presentation.findings.caches: every outcome, from synthetic records."""

from course.presentation.findings import caches


def plateau(level, size, bw):
    return {"level": level, "capacity_bytes": size, "bytes_per_s": bw, "points": 3}


def test_cache_hierarchy_steps_in_order():
    levels = [
        plateau("L1d", 48 * 2**10, 150e9),
        plateau("L2", 2**20, 95e9),
        plateau("memory", None, 17e9),
    ]
    text = caches.hierarchy(levels)
    assert "L1d (48.0 KiB): 150.0 GB/s" in text and "L2 → memory: a step, 5.6× slower below" in text
    assert caches.in_order(levels)


def test_cache_hierarchy_flags_an_inverted_level_as_the_method():
    # the 16-core host of the H100 reference run: L1d 143.5, L2 494.1, L3 281.6 GB/s
    levels = [
        plateau("L1d", 48 * 2**10, 143.5e9),
        plateau("L2", 2 * 2**20, 494.1e9),
        plateau("L3", 300 * 2**20, 281.6e9),
    ]
    text = caches.hierarchy(levels)
    assert "**inverted**" in text and "not the hardware" in text
    assert "No point reached main memory" in text
    assert not caches.in_order(levels)


def test_cache_hierarchy_no_step_and_missing():
    text = caches.hierarchy(
        [plateau("L2", 2**20, 95e9), plateau("L3", 32 * 2**20, 92e9), plateau("memory", None, 20e9)]
    )
    assert "L2 → L3: no clear step" in text
    assert "No cache level" in caches.hierarchy([])
