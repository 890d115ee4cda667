"""The distributed demos are equivalent to one process, and their memory matches the calculator.

One launch of 2 gloo ranks runs every demo (one torch import per rank); each test checks one part.
Launches of 3 and 4 ranks run each demo again: batches and stages scale with the world size.
"""

from __future__ import annotations

import subprocess
import sys

import psutil
import pytest
import torch

from course.calculators import communication, parallel
from course.distributed import collectives, ddp, fsdp, pipeline, tensor_parallel
from course.distributed.common import SCALE_CONFIG, TINY_CONFIG, lm_loss, seeded_model, token_batch
from course.distributed.launch import launch_named

DEMOS = [
    ddp.ddp_gradients,
    fsdp.all_stages,
    fsdp.fsdp_output,
    tensor_parallel.tp_block,
    pipeline.pipeline_output,
    collectives.show_collectives,
]


#: What the launches at 3 and 4 ranks run (the timed demos are left to the 2-rank launch).
SCALED = [
    ddp.ddp_gradients,
    fsdp.sharded_states,
    fsdp.fsdp_output,
    tensor_parallel.tp_block,
    pipeline.pipeline_output,
    collectives.show_collectives,
]


@pytest.fixture(scope="module")
def runs():
    return launch_named(DEMOS, 2, timeout_seconds=240)


@pytest.fixture(scope="module", params=[3, 4], ids=["3 ranks", "4 ranks"])
def scaled(request):
    return request.param, launch_named(SCALED, request.param, timeout_seconds=300)


def _pipeline_reference(n: int):
    cfg = pipeline.pipeline_config(n)
    model = seeded_model(cfg)
    x, y = token_batch(cfg, 2 * n, 16)
    logits = model(x)
    loss = lm_loss(logits, y)
    loss.backward()
    grads = {name: p.grad for name, p in model.named_parameters()}
    return logits.detach(), loss.item(), grads


def _check_tp(tp: dict) -> None:
    ref = tensor_parallel.reference_block_gradients()
    torch.testing.assert_close(
        tp["output"], tensor_parallel.reference_block_output(), atol=1e-5, rtol=1e-5
    )
    torch.testing.assert_close(tp["input_grad"], ref["input_grad"], atol=1e-5, rtol=1e-5)
    assert tp["grads"].keys() == ref["grads"].keys()
    for name, g in ref["grads"].items():
        torch.testing.assert_close(tp["grads"][name], g, atol=1e-5, rtol=1e-5)
    # Megatron (Shoeybi et al. 2019, fig. 3): f and g, one all-reduce each way per sub-layer
    assert tp["forward_collectives"] == {"all_reduce": 2}
    assert tp["backward_collectives"] == {"all_reduce": 2}
    assert tp["local_params"] < tp["params"]


def _check_pipeline(results: list[dict], n: int) -> None:
    logits, loss, grads = _pipeline_reference(n)
    assert all(r["logits"] is None for r in results[:-1])  # only the last stage has the output
    torch.testing.assert_close(results[-1]["logits"], logits, atol=1e-5, rtol=1e-5)
    assert results[-1]["loss"] == pytest.approx(loss, rel=1e-5)
    seen = [name for r in results for name in r["grads"]]
    assert sorted(seen) == sorted(grads)  # every parameter on exactly one rank
    for r in results:
        for name, g in r["grads"].items():
            torch.testing.assert_close(g, grads[name], atol=1e-6, rtol=1e-4)


def test_every_demo_runs_at_3_and_4_ranks_and_equals_one_process(scaled):
    n, results = scaled
    ref = ddp.reference_gradients(batch=2 * n)
    for r in results:
        for name, g in ref.items():
            torch.testing.assert_close(r["ddp_gradients"][name], g, atol=1e-6, rtol=0)
        state = r["sharded_states"]
        est = parallel.zero_model_state_bytes_per_gpu(
            state["params"], n, 3, precision="fp32", optimizer="adam"
        )
        assert state["total_bytes"] == pytest.approx(est.total_bytes, rel=0.10)
        _check_tp(r["tp_block"])
        x, _ = token_batch(TINY_CONFIG, 4, 16)
        with torch.no_grad():
            torch.testing.assert_close(
                r["fsdp_output"], seeded_model(TINY_CONFIG)(x), atol=1e-5, rtol=1e-5
            )
        shown = r["show_collectives"]
        assert shown["all_reduce (sum)"] == [n * (n + 1) / 2] * 4
        assert shown["all_gather"] == [float(k + 1) for k in range(n) for _ in range(4)]
        assert shown["all_to_all"] == [10.0 * k + r["show_collectives"]["rank"] for k in range(n)]
    _check_pipeline([r["pipeline_output"] for r in results], n)


def test_a_layout_that_cannot_split_says_why():
    from types import SimpleNamespace

    block = seeded_model(SCALE_CONFIG).blocks[0]
    with pytest.raises(ValueError, match=r"attention heads \(24\) cannot be split evenly over 5"):
        tensor_parallel.split_block(block, SimpleNamespace(size=lambda: 5))
    with pytest.raises(ValueError, match="a stage holds one layer at least"):
        pipeline.Stage(seeded_model(TINY_CONFIG), 0, 3)
    with pytest.raises(ValueError, match="batch .* cannot be split evenly over 3 ranks"):
        from course.distributed.common import shard_of

        shard_of(torch.zeros(4, 2), 0, 3)
    assert pipeline.pipeline_config(8).layers == 16 and pipeline.pipeline_config(1).layers == 4


def test_ddp_gradients_equal_one_process_on_the_full_batch(runs):
    ref = ddp.reference_gradients()
    for r in runs:
        grads = r["ddp_gradients"]
        assert grads.keys() == ref.keys()
        for name, g in ref.items():
            torch.testing.assert_close(grads[name], g, atol=1e-6, rtol=0)


def test_fsdp2_model_states_per_rank_match_the_zero_calculator(runs):
    """fp32 + Adam: 4 + 4 + 8 bytes/param, divided per ZeRO stage (Rajbhandari et al. 2019)."""
    for r in runs:
        for measured in r["all_stages"]:
            est = parallel.zero_model_state_bytes_per_gpu(
                measured["params"], 2, measured["stage"], precision="fp32", optimizer="adam"
            )
            assert measured["total_bytes"] == pytest.approx(est.total_bytes, rel=0.10)
            assert measured["optimizer_states_bytes"] == pytest.approx(
                est.optimizer_states_bytes, rel=0.10
            )
        stage3 = r["all_stages"][-1]
        assert stage3["stage"] == 3 and stage3["peak_bytes"] > stage3["total_bytes"]
        # each category's own maximum over the step (not the breakdown at the global peak,
        # where a reduce-scatter buffer may or may not be alive)
        assert stage3["peak"]["All Gather"] > 0 and stage3["peak"]["Reduce Scatter"] > 0
        assert max(v for k, v in stage3["peak"].items() if k != "Total") <= stage3["peak_bytes"]


def test_compare_with_zero_lists_stages_0_to_3_and_marks_stage_2_as_estimate_only(runs):
    rows = fsdp.compare_with_zero(runs[0]["all_stages"], 2)
    assert [r["stage"] for r in rows] == [0, 1, 2, 3]
    assert (
        rows[2]["measured_bytes"] is None and rows[2]["estimate_bytes"] > rows[3]["estimate_bytes"]
    )
    assert all(abs(r["ratio"] - 1) < 0.1 for r in rows if r["ratio"] is not None)


def test_collective_fits_and_pipeline_summary_from_synthetic_records():
    recs = [
        {
            "collective": "all_reduce",
            "bytes": b,
            "ranks": 2,
            "seconds": communication.ring_allreduce_seconds(b, 2, 1e9, latency_seconds=1e-4),
        }
        for b in (1e3, 1e5, 1e7)
    ] + [
        {"collective": "all_gather", "bytes": b, "ranks": 2, "seconds": s}
        for b, s in ((1e3, 2e-3), (1e5, 1e-3))
    ]
    fits = collectives.fit_records(recs)
    assert fits["all_gather"] is None
    assert fits["all_reduce"].bandwidth_bytes_per_s == pytest.approx(1e9)
    curves = collectives.fit_curves(fits)
    assert list(curves) == ["all_reduce"] and curves["all_reduce"](1e7) == pytest.approx(
        recs[2]["seconds"]
    )
    ev = [
        {"rank": r, "stage": r, "kind": "F", "microbatch": 0, "start": r, "end": r + 1}
        for r in range(2)
    ]
    (row,) = pipeline.bubble_summary({"GPipe": ev}, microbatches=1)
    assert row["bubble_fraction"] == pytest.approx(0.5) and row["formula"] == pytest.approx(0.5)


def test_fsdp2_output_equals_the_unsharded_model(runs):
    x, _ = token_batch(TINY_CONFIG, 4, 16)
    with torch.no_grad():
        ref = seeded_model(TINY_CONFIG)(x)
    for r in runs:
        torch.testing.assert_close(r["fsdp_output"], ref, atol=1e-5, rtol=1e-5)


def test_tensor_parallel_block_equals_the_unsplit_block_forward_and_backward(runs):
    for r in runs:
        _check_tp(r["tp_block"])


def test_pipeline_output_and_gradients_equal_the_unsplit_model(runs):
    _check_pipeline([r["pipeline_output"] for r in runs], 2)


def test_collectives_hold_what_their_names_say(runs):
    a, b = (r["show_collectives"] for r in runs)
    assert a["all_reduce (sum)"] == b["all_reduce (sum)"] == [3.0] * 4
    assert a["broadcast from 0"] == b["broadcast from 0"] == [1.0] * 4
    assert a["all_gather"] == b["all_gather"] == [1.0] * 4 + [2.0] * 4
    assert a["reduce_scatter (sum of my quarter)"] == [10.0, 12.0, 14.0, 16.0]
    assert b["reduce_scatter (sum of my quarter)"] == [18.0, 20.0, 22.0, 24.0]
    assert a["all_to_all"] == [0.0, 10.0] and b["all_to_all"] == [1.0, 11.0]


def test_bubble_and_in_flight_from_synthetic_events():
    # 2 stages, 2 micro-batches, GPipe, F = 1, B = 2: span 8, busy 12 of 16 -> bubble 1/4
    ev = [
        {"rank": 0, "stage": 0, "kind": "F", "microbatch": 0, "start": 0, "end": 1},
        {"rank": 0, "stage": 0, "kind": "F", "microbatch": 1, "start": 1, "end": 2},
        {"rank": 1, "stage": 1, "kind": "F", "microbatch": 0, "start": 1, "end": 2},
        {"rank": 1, "stage": 1, "kind": "F", "microbatch": 1, "start": 2, "end": 3},
        {"rank": 1, "stage": 1, "kind": "B", "microbatch": 0, "start": 3, "end": 5},
        {"rank": 1, "stage": 1, "kind": "B", "microbatch": 1, "start": 5, "end": 7},
        {"rank": 0, "stage": 0, "kind": "B", "microbatch": 0, "start": 5, "end": 7},
        {"rank": 0, "stage": 0, "kind": "B", "microbatch": 1, "start": 7, "end": 9},
    ]
    bubble = pipeline.bubble_from_events(ev)
    assert bubble["span_seconds"] == 9 and bubble["busy_seconds"] == 12
    assert bubble["bubble_fraction"] == pytest.approx(1 - 12 / 18)
    assert parallel.pipeline_bubble_fraction(2, 2) == pytest.approx(1 / 3)
    assert pipeline.in_flight_from_events(ev) == {0: 2, 1: 2}
    with pytest.raises(ValueError, match="events"):
        pipeline.bubble_from_events([])


def test_pipeline_and_sharding_reject_bad_arguments():
    with pytest.raises(ValueError, match="schedule"):
        pipeline._build("Nope", pipeline.PIPE_CONFIG, 2, [], None)
    with pytest.raises(ValueError, match="stages"):
        pipeline.Stage(seeded_model(TINY_CONFIG), 0, 3)
    with pytest.raises(ValueError, match="stage"):
        fsdp.sharded_states(2)


# training.py's script runs the same workers as tests/distributed/test_distributed_training.py's
# launch; it is left out here to keep the suite's time down (each torchrun start imports torch
# twice)
@pytest.mark.parametrize("demo", ["collectives", "ddp", "fsdp", "tensor_parallel", "pipeline"])
def test_each_demo_runs_as_a_torchrun_script(demo, tmp_path):
    before = {p.pid for p in psutil.Process().children(recursive=True)}
    cmd = [
        sys.executable,
        "-m",
        "torch.distributed.run",
        "--standalone",
        "--nproc-per-node",
        "2",
        f"--log-dir={tmp_path}",  # torchrun's default leaves a torchelastic_* folder in /tmp
        "-m",
        f"course.distributed.{demo}",
    ]
    done = subprocess.run(
        cmd,
        capture_output=True,
        text=True,
        timeout=180,
        env={**__import__("os").environ, "OMP_NUM_THREADS": "1"},
    )
    assert done.returncode == 0, done.stderr[-3000:]
    assert "== " in done.stdout
    assert {p.pid for p in psutil.Process().children(recursive=True)} <= before
