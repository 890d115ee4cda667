"""The shipped reference runs load, and carry what the lessons read from them."""

import pytest

from course.facts.data import reference


def test_h100_run_ships_with_its_provenance():
    assert reference.H100 in reference.runs()
    readme = (reference.ROOT / reference.H100 / "README.md").read_text()
    assert "H100 80GB HBM3" in readme and "driver 580.159.04" in readme


def test_h100_decode_figures_match_the_run_readme():
    # README of the run: batch 1 decode 6.38 ms with CUDA graphs, 7.69 ms eager.
    decode = reference.load(reference.H100, "inference_7b")["decode"]
    batch1 = {r["cuda_graph"]: r["seconds_per_step"] for r in decode if r["batch"] == 1}
    assert batch1[True] == pytest.approx(6.38e-3, abs=0.01e-3)
    assert batch1[False] == pytest.approx(7.69e-3, abs=0.01e-3)


def test_unknown_run_or_file_is_a_clear_error():
    with pytest.raises(ValueError, match="run must be one of"):
        reference.load("a100-nowhere", "matmul")
    with pytest.raises(ValueError, match="name must be one of"):
        reference.load(reference.H100, "nope")


def test_load_returns_a_fresh_copy():
    a = reference.load(reference.H100, "power")
    a["limit_w"] = -1
    assert reference.load(reference.H100, "power")["limit_w"] != -1


def test_tidy_records_carry_the_run_label_and_measure_fields():
    rows = reference.records(reference.H100, "matmul", "alignment")
    assert {r["machine"] for r in rows} == {"H100 SXM, reference run 2026-11-22"}
    bf16 = {r["size"]: r["flop_per_s"] for r in rows if r["dtype"] == "bf16"}
    assert bf16[4096] > 4 * bf16[4095]  # the alignment finding of the README
    with pytest.raises(ValueError, match="part must be one of"):
        reference.records(reference.H100, "matmul", "nope")


def test_recorded_serving_sweep_carries_its_percentiles_and_provenance():
    data = reference.load(reference.CPU_SWEEP, "serving_sweep")
    readme = (reference.ROOT / reference.CPU_SWEEP / "README.md").read_text()
    assert data["recorded"].startswith("2026-11-29") and "2-core" in data["describe_machine"]
    assert "load average" in readme and max(data["load_average_1_5_15_min_after"][:1]) < 2
    assert all("ttft_p99_ci" in r for r in data["sweep"])  # each percentile with its interval
    rows = reference.records(reference.CPU_SWEEP, "serving_sweep", "sweep")
    assert {r["machine"] for r in rows} == {reference.label(reference.CPU_SWEEP)}
    assert min(r["measured"] for r in rows) >= 100  # every p99 rests on 100 requests or more
    assert len({r["repeat"] for r in rows}) == data["settings"]["repeats"] >= 3
