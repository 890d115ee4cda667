"""The disk-write measurement of lesson 12: well-formed records, bounded, nothing left on disk."""

from __future__ import annotations

import math

import pytest

from course.measure import storage


def test_write_bandwidth_is_well_formed_and_cleans_up(tmp_path):
    res = storage.write_bandwidth(
        str(tmp_path), size_bytes=storage.CHUNK_BYTES, repeats=2, show_progress=False
    )
    assert len(res.seconds) == 2 and all(s > 0 for s in res.seconds)
    assert math.isfinite(res.median_bytes_per_s) and res.median_bytes_per_s > 0
    assert res.spread_fraction >= 0 and res.directory == str(tmp_path)
    assert list(tmp_path.iterdir()) == []  # every file removed


@pytest.mark.parametrize("kwargs", [{"size_bytes": 10}, {"repeats": 0}, {"repeats": 100}])
def test_bad_arguments_raise_value_error(tmp_path, kwargs):
    with pytest.raises(ValueError):
        storage.write_bandwidth(str(tmp_path), **kwargs)
