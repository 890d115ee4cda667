"""Lesson 12's demos equal their single-process versions: resharded checkpoints to the byte, a
restarted elastic run to an uninterrupted one, expert parallelism and ring attention to the
single-process layers; and none leaves a process or a listening port behind."""

from __future__ import annotations

import functools
import os
import subprocess
import sys

import psutil
import pytest
import torch
import torch.distributed.checkpoint as dcp

from course.calculators import context
from course.calculators import moe as moe_calc
from course.distributed import checkpoint, elastic, expert_parallel, ring_attention
from course.distributed.launch import launch


def _children() -> set[int]:
    return {
        p.pid
        for p in psutil.Process().children(recursive=True)
        if p.is_running()
        and p.status() != psutil.STATUS_ZOMBIE
        and "resource_tracker" not in " ".join(p.cmdline())
    }


def _listening() -> set:
    pids = _children() | {os.getpid()}
    return {
        c.laddr
        for c in psutil.net_connections("tcp")
        if c.pid in pids and c.status == psutil.CONN_LISTEN
    }


#: The demos this file checks on several ranks, and the world sizes each runs at: one launch per
#: size (every launch pays for importing torch in each rank), whose results the tests read.
DEMOS = {
    "moe_demo": expert_parallel.moe_demo,
    "ring_demo": ring_attention.ring_demo,
    "ring_causal": functools.partial(ring_attention.ring_demo, causal=True),
    "moe_grad": expert_parallel.moe_grad_demo,
    "ring_grad_causal": functools.partial(ring_attention.ring_grad_demo, causal=True),
    "ring_grad": functools.partial(ring_attention.ring_grad_demo, causal=False),
    "zigzag": ring_attention.zigzag_demo,
    "zigzag_autograd": functools.partial(ring_attention.zigzag_demo, recompute=False),
    "contiguous": functools.partial(ring_attention.zigzag_demo, layout="contiguous"),
}
AT = {
    2: ("moe_demo", "ring_demo", "moe_grad", "ring_grad_causal", "ring_grad", "zigzag"),
    3: ("ring_causal", "moe_demo", "ring_grad_causal"),
    4: ("moe_grad", "zigzag", "zigzag_autograd", "contiguous"),
}


@pytest.fixture(scope="module")
def launched():
    """``launched(ranks)``: each rank's results by demo name, launched on first use."""
    done = {}

    def at(ranks: int) -> list[dict]:
        if ranks not in done:
            before, names = _children(), AT[ranks]
            out = launch([DEMOS[n] for n in names], ranks, timeout_seconds=240)
            assert _children() <= before  # every rank has ended
            done[ranks] = [dict(zip(names, results, strict=True)) for results in out]
        return done[ranks]

    return at


@pytest.fixture(scope="module")
def runs(launched):
    return launched(2)


def test_ring_attention_equals_full_attention(runs):
    full = ring_attention.full_attention(*ring_attention.qkv())
    got = torch.cat([r["ring_demo"]["out"] for r in runs], dim=-2)
    torch.testing.assert_close(got, full, atol=1e-5, rtol=1e-5)
    assert all(r["ring_demo"]["steps"] == 2 for r in runs)


def test_ring_attention_causal_and_moe_on_three_ranks(launched):
    """The defaults scale with the world size (32 tokens and 2 experts per rank)."""
    ring = [r["ring_causal"] for r in launched(3)]
    experts = [r["moe_demo"] for r in launched(3)]
    q, k, v = ring_attention.qkv(seq_len=96)
    full = ring_attention.full_attention(q, k, v, causal=True)
    got = torch.cat([r["out"] for r in ring], dim=-2)
    torch.testing.assert_close(got, full, atol=1e-5, rtol=1e-5)
    assert [r["steps"] for r in ring] == [1, 2, 3]  # rank r attends blocks 0..r only
    ref = expert_parallel.moe_reference(
        expert_parallel.tokens(96), expert_parallel.moe_weights(experts=6)
    )
    got = torch.cat([r["out"] for r in experts])
    torch.testing.assert_close(got, ref, atol=1e-5, rtol=1e-5)


def test_ring_attention_memory_matches_the_calculator(runs):
    """The demo's largest set of tensors held at once is what the calculator counts (fp32)."""
    r = runs[0]["ring_demo"]
    est = context.ring_attention_bytes(
        64, 2, heads=4, head_dim=16, bytes_per_value=4, materialize_scores=True
    )
    assert r["peak_block_bytes"] == est.total_bytes
    assert r["sent_bytes"] == est.kv_in_flight_bytes  # one K/V block sent per step, 1 step


def test_moe_equals_the_single_process_layer(runs):
    w = expert_parallel.moe_weights()
    ref = expert_parallel.moe_reference(expert_parallel.tokens(), w)
    got = torch.cat([r["moe_demo"]["out"] for r in runs])
    torch.testing.assert_close(got, ref, atol=1e-5, rtol=1e-5)


def test_moe_counts_tokens_and_bytes(runs):
    r0 = runs[0]["moe_demo"]
    assert sum(r0["tokens_per_expert"]) == 64 * 2  # every token to k = 2 experts
    assert (
        sum(r["moe_demo"]["send_counts"][r["moe_demo"]["rank"]] for r in runs)
        + sum(r["moe_demo"]["dispatch_bytes"] for r in runs) / (32 * 4)
        == 128
    )
    # what one rank sends off-rank is what the other receives back: dispatch bytes = combine bytes
    assert runs[0]["moe_demo"]["dispatch_bytes"] == runs[1]["moe_demo"]["combine_bytes"]
    uniform = moe_calc.all_to_all_bytes(32, 32, experts_per_token=2, ranks=2, bytes_per_value=4)
    measured = sum(r["moe_demo"]["dispatch_bytes"] for r in runs) / 2
    assert 0.5 * uniform.dispatch_bytes < measured < 1.5 * uniform.dispatch_bytes


def _save(root):
    return checkpoint.save_both(root)


def _load(path):
    return checkpoint.load_sharded(path)


def test_checkpoint_reshards_2_to_1_to_2_equal_to_the_byte(tmp_path):
    saved = launch(_save, 2, args=(str(tmp_path),), timeout_seconds=180)
    files = saved[0]["dcp_files"]
    assert ".metadata" in files and sum(f.endswith(".distcp") for f in files) == 2
    full = torch.load(tmp_path / "full.pt", weights_only=False)
    one = checkpoint.load_on_one(str(tmp_path / "dcp"))  # 2 ranks -> 1 process
    assert checkpoint.states_equal(one, full) == []
    checkpoint.save_on_one(one, str(tmp_path / "from_one"))  # 1 process -> 2 ranks
    back = launch(_load, 2, args=(str(tmp_path / "from_one"),), timeout_seconds=180)
    for state in back:
        assert checkpoint.states_equal(state, full) == []
    assert (
        checkpoint.states_equal(
            one,
            checkpoint.load_on_one(
                str(tmp_path / "dcp"),
            ),
        )
        == []
    )


def test_states_equal_sees_one_changed_byte():
    a = {"model": {"w": torch.ones(3)}, "optim": {"state": {"w": {"step": torch.tensor(2.0)}}}}
    b = {"model": {"w": torch.ones(3)}, "optim": {"state": {"w": {"step": torch.tensor(2.0)}}}}
    assert checkpoint.states_equal(a, b) == []
    b["model"]["w"][1] = torch.nextafter(torch.tensor(1.0), torch.tensor(2.0))
    assert checkpoint.states_equal(a, b) == ["state.model.w"]


def test_async_save_writes_a_staged_copy_on_a_background_thread(tmp_path):
    """dcp.async_save returns before the files are written: they are written on another thread,
    from a copy staged at the call, so training that changes the weights meanwhile does not leak
    into the checkpoint. A blocking save would write on this thread."""
    import threading

    from torch.distributed.checkpoint import FileSystemWriter

    writers: list[str] = []

    class Recording(FileSystemWriter):
        def write_data(self, plan, planner):
            writers.append(threading.current_thread().name)
            return super().write_data(plan, planner)

    path = str(tmp_path / "async")
    state = {"model": {"w": torch.ones(64, 64)}}
    future = checkpoint.save_in_background(state, path, storage_writer=Recording(path))
    state["model"]["w"] += 1  # a training step after the call returned
    future.result()
    assert writers and threading.current_thread().name not in writers
    loaded = {"model": {"w": torch.zeros(64, 64)}}
    with checkpoint.single_process():
        dcp.load(loaded, checkpoint_id=path)
    assert torch.equal(loaded["model"]["w"], torch.ones(64, 64))  # the staged copy


def test_elastic_restart_ends_where_an_uninterrupted_run_ends(tmp_path, monkeypatch):
    before, ports = _children(), _listening()
    scratch = _own_temp_dir(tmp_path, monkeypatch)
    clean = elastic.run_torchrun(tmp_path / "clean", steps=6, every=2, timeout_seconds=240)
    failed = elastic.run_torchrun(
        tmp_path / "failed", steps=6, every=2, fail_step=3, timeout_seconds=240
    )
    assert clean["returncode"] == 0, clean["output"]
    assert failed["returncode"] == 0, failed["output"]
    a = torch.load(clean["final"], weights_only=False)  # every rank's whole state
    b = torch.load(failed["final"], weights_only=False)
    assert [s["rank"] for s in b] == [0, 1]
    assert checkpoint.states_equal({"ranks": a}, {"ranks": b}) == []  # model ... generators
    assert checkpoint.states_equal({"rng": a[0]["rng"]}, {"rng": a[1]["rng"]}) != []  # apart
    tl = elastic.timeline(failed["events"])
    assert [s[1] for s in tl["starts"]] and len(tl["starts"]) == 2  # the agent restarted once
    assert tl["failures"][0][0] == 3 and tl["resumes"][0][0] == 2  # resumed from step 2's ckpt
    assert tl["lost_steps"] == [2]  # step 2 ran before the failure and again after
    assert elastic.timeline(clean["events"])["failures"] == []
    assert any("failed (exitcode" in line for line in failed["agent_log"])  # the agent saw it
    # every rank's loss curve, resumed, is bitwise the uninterrupted one (floats compared exactly)
    clean_loss = {e["step"]: e["losses"] for e in clean["events"] if e["event"] == "step"}
    steps = [e for e in failed["events"] if e["event"] == "step"]
    assert len(steps) == 7 and all(e["losses"] == clean_loss[e["step"]] for e in steps)
    assert len({loss for losses in clean_loss.values() for loss in losses}) == 12  # they move
    assert _children() <= before and _listening() <= ports
    assert _left_in(scratch) == []  # torchrun's logs went to the run's folder, not /tmp


def test_timeline_rejects_an_empty_log():
    with pytest.raises(ValueError, match="events"):
        elastic.timeline([])


def _own_temp_dir(tmp_path, monkeypatch):
    """An empty temporary directory for this test and every process it starts (``TMPDIR``): what
    is left in it afterwards was left by the code under test, not by a neighbour on the machine."""
    import tempfile

    scratch = tmp_path / "tmp"
    scratch.mkdir()
    monkeypatch.setenv("TMPDIR", str(scratch))
    monkeypatch.setattr(tempfile, "tempdir", str(scratch))
    return scratch


def _left_in(scratch) -> list:
    # torch's compiled-kernel cache (torchinductor_<user>) is one shared folder, reused by every run
    return [p.name for p in scratch.iterdir() if not p.name.startswith("torchinductor_")]


@pytest.mark.parametrize("demo", ["expert_parallel", "ring_attention", "checkpoint"])
def test_each_demo_runs_as_a_torchrun_script(demo, tmp_path, monkeypatch):
    before, scratch = _children(), _own_temp_dir(tmp_path, monkeypatch)
    cmd = [
        sys.executable,
        "-m",
        "torch.distributed.run",
        "--nproc-per-node",
        "2",
        "--rdzv-backend=c10d",
        "--rdzv-endpoint=127.0.0.1:0",
        f"--log-dir={tmp_path / 'logs'}",
        "-m",
        f"course.distributed.{demo}",
    ]
    done = subprocess.run(
        cmd,
        capture_output=True,
        text=True,
        timeout=180,
        cwd=tmp_path,
        env={**os.environ, "OMP_NUM_THREADS": "1"},
    )
    assert done.returncode == 0, done.stderr[-3000:]
    assert "== " in done.stdout
    assert _children() <= before
    assert _left_in(scratch) == []  # no temporary file or folder left behind
    if demo == "checkpoint":  # one folder for both ranks, where the learner ran it
        dcp_files = {f.name for f in (tmp_path / "course-checkpoints" / "dcp").iterdir()}
        assert {"__0_0.distcp", "__1_0.distcp", ".metadata"} <= dcp_files, dcp_files


def test_agent_lines_keep_the_agents_own_log_whatever_the_path():
    out = (
        "W1128 04:06:42.573000 16531 .venv/lib/python3.11/site-packages/torch/distributed/"
        "elastic/multiprocessing/api.py:1028] Sending process 16565 closing signal SIGTERM\n"
        "[rank0]: RuntimeError: Connection closed by peer\n"
        "E1128 04:06:42.687000 16531 torch/distributed/elastic/multiprocessing/api.py:1002] "
        "failed (exitcode: -9) local_rank: 1"
    )
    assert elastic.agent_lines(out) == [
        "W elastic/multiprocessing/api.py: Sending process 16565 closing signal SIGTERM",
        "E elastic/multiprocessing/api.py: failed (exitcode: -9) local_rank: 1",
    ]


@pytest.mark.parametrize("ranks", [2, 4])
def test_expert_parallel_gradients_match_one_process(ranks, launched):
    """Each rank holds only E/p experts; the gradients of its experts, of the router (summed over
    ranks) and of its tokens equal the single-process layer's backward."""
    for g in (r["moe_grad"] for r in launched(ranks)):
        assert g["experts_held"] == g["experts"] // ranks
        tol = 1e-5 * g["grad_scale"]
        assert g["expert_grad_error"] <= tol and g["token_grad_error"] <= tol
        assert g["router_grad_error"] <= tol


@pytest.mark.parametrize(("ranks", "causal"), [(2, True), (3, True), (2, False)])
def test_ring_attention_gradients_match_sdpa_on_one_process(ranks, causal, launched):
    """Autograd through the ring (RingShift sends each K/V gradient back where the block came
    from): Q, K and V gradients equal scaled_dot_product_attention's on the whole sequence."""
    name = "ring_grad_causal" if causal else "ring_grad"
    for g in (r[name] for r in launched(ranks)):
        tol = 1e-5 * g["grad_scale"]
        assert g["out_error"] <= tol
        assert max(g["grad_q_error"], g["grad_k_error"], g["grad_v_error"]) <= tol


def _balanced(pairs, within: float = 0.10) -> bool:
    """The slowest rank does at most ``within`` more than the mean."""
    return max(pairs) <= (1 + within) * sum(pairs) / len(pairs)


@pytest.mark.parametrize(
    ("ranks", "name"), [(2, "zigzag"), (4, "zigzag"), (4, "zigzag_autograd"), (4, "contiguous")]
)
def test_zigzag_ring_gradients_match_sdpa(ranks, name, launched):
    """Causal ring attention over two chunks per rank, with the recomputing backward (zigzag,
    contiguous) and with plain autograd (zigzag_autograd): output and Q, K, V gradients equal
    scaled_dot_product_attention's on the whole sequence, on each rank's rows."""
    for g in (r[name] for r in launched(ranks)):
        tol = 1e-5 * g["grad_scale"]
        assert g["out_error"] <= tol
        assert max(g["grad_q_error"], g["grad_k_error"], g["grad_v_error"]) <= tol


def test_zigzag_balances_the_measured_work_on_4_ranks_and_contiguous_does_not(launched):
    """The (query, key) pairs each rank computed are the calculator's, and the scores it computed
    (masked ones included) are balanced within 10 % with the zig-zag chunks only: with the
    contiguous split the last rank does 1.74 x the mean."""
    runs = launched(4)
    for layout, zigzag in (("zigzag", True), ("contiguous", False)):
        pairs = [r[layout]["pairs"] for r in runs]
        assert tuple(pairs) == context.causal_balance(32 * 4, 4, zigzag=zigzag).pairs_per_rank
        scores = [r[layout]["scores"] for r in runs]
        assert _balanced(pairs) is _balanced(scores) is zigzag, (layout, pairs, scores)


def test_recomputing_backward_saves_the_same_bytes_on_2_and_4_ranks(launched):
    """Saved for backward: with recomputation this rank's Q, K, V, output (fp32) and log-sum-exp,
    whatever the rank count; with plain autograd every step's K/V block and probabilities too,
    more the more steps a rank attends."""
    local = 4 * (1 * 4 * 32 * 16) * 4 + (1 * 4 * 32) * 4  # q, k, v, out + lse, 32 tokens a rank
    saved = [r["zigzag"]["saved_bytes"] for p in (2, 4) for r in launched(p)]
    assert set(saved) == {local}
    plain = [r["zigzag_autograd"]["saved_bytes"] for r in launched(4)]
    assert min(plain) > 4 * local
