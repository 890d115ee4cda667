"""course.measure.profiling (lesson 11): traces with phases, timeline and memory; slow vs fixed."""

from __future__ import annotations

import json

from course.measure import profiling


def test_profile_writes_a_trace_with_phases_timeline_and_memory(tmp_path):
    r = profiling.profile_training_step(steps=1, trace_dir=tmp_path)
    assert r.trace_path.parent == tmp_path and r.trace_path.stat().st_size > 0
    json.loads(r.trace_path.read_text())  # a valid Chrome trace
    assert set(profiling.PHASES) - {"logging"} <= set(r.phase_us)
    assert r.top_ops and all(o.self_seconds >= 0 and o.calls >= 1 for o in r.top_ops)
    assert r.top_ops.columns == [
        "name",
        "calls",
        "self_seconds",
        "total_seconds",
        "per_call_seconds",
    ]
    # seconds, not the profiler's µs: no operator of one small CPU step takes as long as the step
    step = r.phase_us["forward"] / 1e6 + r.phase_us["backward"] / 1e6
    assert all(o.self_seconds <= o.total_seconds < 10 * step for o in r.top_ops)
    assert all(cell.endswith(("s", "ms", "µs", "ns")) for cell in r.top_ops.text_rows()[0][2:])
    assert {e["name"] for e in r.timeline if e["depth"] == 0} >= {"forward", "backward"}
    assert r.memory and max(p["allocated_bytes"] for p in r.memory) > 0


def test_slow_step_shows_thousands_of_tiny_calls_in_the_profile():
    r = profiling.profile_training_step(steps=1, logging="python", memory=False, export=False)
    calls = {o.name: o.calls for o in r.top_ops}
    assert calls.get("aten::select", 0) >= 64 * 256  # one per element of the embedding gradient
    # read without the event tree: no self time, so the table leaves that column out
    assert r.top_ops.columns == ["name", "calls", "total_seconds", "per_call_seconds"]
    select = r.top_ops.where(name="aten::select")[0]
    assert select.per_call_seconds == select.total_seconds / select.calls < 1e-3
    assert r.trace_path is None and "logging" in r.phase_us


def test_slow_and_fixed_log_the_same_value():
    slow, fast = profiling.slow_and_fixed()
    paired = profiling.paired_times(slow, fast, repeats=3)
    assert len(paired.ratios) == 3 and all(x > 0 for x in paired.ratios)
    assert paired.low_ratio <= paired.median_ratio <= paired.high_ratio


def test_timeline_from_a_synthetic_trace_nests_by_time():
    events = [
        {"ph": "X", "name": "train_step", "ts": 0, "dur": 100},
        {"ph": "X", "name": "forward", "ts": 1, "dur": 50},
        {"ph": "X", "name": "aten::mm", "ts": 2, "dur": 10},
        {"ph": "X", "name": "aten::t", "ts": 3, "dur": 1},
        {"ph": "X", "name": "backward", "ts": 60, "dur": 30},
        {"ph": "i", "name": "[memory]", "ts": 5, "args": {"Total Allocated": 10}},
    ]
    tl = profiling.timeline_from_trace(events)
    assert [(e["name"], e["depth"]) for e in tl] == [
        ("forward", 0),
        ("aten::mm", 1),
        ("backward", 0),
    ]
    assert profiling.memory_from_trace(events) == [{"time_us": 0, "allocated_bytes": 10}]
