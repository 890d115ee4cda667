"""Properties of the calculators: physics (monotonic where it must be) and robustness (any junk
input raises ValueError and nothing else). Plus: the calculator path never imports torch."""

from __future__ import annotations

import inspect
import math
import subprocess
import sys

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from junk_cases import VALID

from course.calculators import (
    cloud,
    cluster,
    communication,
    compute,
    context,
    energy,
    facility,
    finetune,
    fleet,
    gpu_systems,
    inference,
    memory,
    moe,
    offload,
    parallel,
    planner,
    queueing,
    reliability,
    serving,
    techniques,
)
from course.claims import (
    ai_infrastructure,
    computation_requirements,
    silicon_to_tensors,
)
from course.facts import dtypes, models
from course.facts.models import PRESETS

FAST = settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])

params_st = st.floats(min_value=1e6, max_value=1e13)
gpus_st = st.integers(min_value=1, max_value=100_000)


# ---------------------------------------------------------------------------------------------
# Physics
# ---------------------------------------------------------------------------------------------


@FAST
@given(a=params_st, b=params_st, dtype=st.sampled_from(list(dtypes.BYTES_PER_VALUE)))
def test_more_params_never_need_less_memory(a, b, dtype):
    small, big = sorted((a, b))
    assert memory.weights_bytes(small, dtype) <= memory.weights_bytes(big, dtype)
    assert memory.model_state_bytes(small).total_bytes <= memory.model_state_bytes(big).total_bytes
    assert (
        memory.training_memory(small, precision="fp32").total_bytes
        <= memory.training_memory(big, precision="fp32").total_bytes
    )


@FAST
@given(params=params_st, n=gpus_st, stage=st.sampled_from([0, 1, 2]))
def test_higher_zero_stage_never_means_more_memory_per_gpu(params, n, stage):
    lower = parallel.zero_model_state_bytes_per_gpu(params, n, stage).total_bytes
    higher = parallel.zero_model_state_bytes_per_gpu(params, n, stage + 1).total_bytes
    assert higher <= lower * (1 + 1e-12)


@FAST
@given(params=params_st, n=gpus_st, extra=st.integers(1, 1000), stage=st.sampled_from([0, 1, 2, 3]))
def test_more_gpus_never_mean_more_memory_per_gpu_under_zero(params, n, extra, stage):
    few = parallel.zero_model_state_bytes_per_gpu(params, n, stage).total_bytes
    many = parallel.zero_model_state_bytes_per_gpu(params, n + extra, stage).total_bytes
    assert many <= few * (1 + 1e-12)


@FAST
@given(p=st.integers(1, 64), m=st.integers(1, 512), more=st.integers(1, 512), v=st.integers(1, 8))
def test_more_microbatches_shrink_the_bubble(p, m, more, v):
    a = parallel.pipeline_bubble_fraction(p, m, virtual_stages=v)
    b = parallel.pipeline_bubble_fraction(p, m + more, virtual_stages=v)
    assert 0 <= b <= a < 1
    if p > 1:
        assert b < a
    assert parallel.pipeline_bubble_fraction(p, m, virtual_stages=v + 1) <= a


@FAST
@given(
    params=params_st,
    tokens=st.floats(1e9, 1e14),
    n=gpus_st,
    extra=st.integers(1, 10_000),
    mfu=st.floats(0.01, 1.0),
)
def test_more_gpus_never_lengthen_training_at_fixed_mfu(params, tokens, n, extra, mfu):
    slow = compute.training_seconds(params, tokens, n, 989.4e12, mfu=mfu)
    fast = compute.training_seconds(params, tokens, n + extra, 989.4e12, mfu=mfu)
    assert fast <= slow
    assert slow == pytest.approx(6 * params * tokens / (n * 989.4e12 * mfu))


@FAST
@given(
    seq=st.integers(1, 32768),
    batch=st.integers(1, 64),
    key=st.sampled_from(list(PRESETS)),
    t_index=st.integers(0, 3),
)
def test_recomputation_and_parallelism_never_add_activation_memory(seq, batch, key, t_index):
    cfg = PRESETS[key]
    divisors = [d for d in (1, 2, 4, 8) if cfg.heads % d == 0]  # gpt2-xl has 25 heads
    t = divisors[t_index % len(divisors)]
    args = (seq, batch, cfg.hidden, cfg.heads)
    none = memory.activation_bytes_per_layer(*args, tensor_parallel=t)
    selective = memory.activation_bytes_per_layer(*args, tensor_parallel=t, recompute="selective")
    full = memory.activation_bytes_per_layer(*args, tensor_parallel=t, recompute="full")
    with_sp = memory.activation_bytes_per_layer(*args, tensor_parallel=t, sequence_parallel=True)
    assert full <= selective <= none and with_sp <= none
    assert memory.activation_bytes_per_layer(seq, batch + 1, cfg.hidden, cfg.heads) > (
        memory.activation_bytes_per_layer(seq, batch, cfg.hidden, cfg.heads)
    )


@FAST
@given(
    size=st.floats(0, 1e12), n=st.integers(1, 4096), bw=st.floats(1e6, 1e13), lat=st.floats(0, 1e-3)
)
def test_allreduce_costs_twice_allgather_and_less_than_twice_the_message_over_bandwidth(
    size, n, bw, lat
):
    ar = communication.ring_allreduce_seconds(size, n, bw, latency_seconds=lat)
    ag = communication.ring_allgather_seconds(size, n, bw, latency_seconds=lat)
    assert ar == pytest.approx(2 * ag)
    assert ar <= 2 * size / bw + 2 * (n - 1) * lat + 1e-12


@FAST
@given(
    compute_seconds=st.floats(1e-3, 10),
    grad=st.floats(0, 1e12),
    n=st.integers(1, 1024),
    overlap=st.floats(0, 1),
)
def test_data_parallel_efficiency_is_a_fraction_and_overlap_only_helps(
    compute_seconds, grad, n, overlap
):
    none = parallel.data_parallel_step_seconds(compute_seconds, grad, n, 100e9)
    some = parallel.data_parallel_step_seconds(compute_seconds, grad, n, 100e9, overlap=overlap)
    assert 0 < none.scaling_efficiency <= some.scaling_efficiency <= 1
    assert some.step_seconds >= compute_seconds


@FAST
@given(
    flops=st.floats(0, 1e20),
    moved=st.floats(1, 1e15),
    peak=st.floats(1e9, 1e16),
    bw=st.floats(1e9, 1e13),
)
def test_roofline_time_is_at_least_both_bounds_and_bound_matches_the_ridge(flops, moved, peak, bw):
    r = compute.roofline_seconds(flops, moved, peak, bw)
    assert r.seconds >= flops / peak and r.seconds >= moved / bw
    assert r.attainable_flop_per_s <= peak * (1 + 1e-12)
    expected = "compute" if flops / moved >= peak / bw else "memory"
    if not math.isclose(flops / moved, peak / bw, rel_tol=1e-9):
        assert r.bound == expected


@FAST
@given(key=st.sampled_from(list(PRESETS)), s=st.integers(1, 8192), more=st.integers(1, 8192))
def test_longer_context_costs_more_flops_and_more_kv_cache(key, s, more):
    """Per sequence, always more. Per token, more for decoders; BERT's pooler (once per sequence)
    is spread over more tokens, so there per-token cost can fall (hypothesis found this)."""
    cfg = PRESETS[key]
    assert compute.forward_flops(cfg, s + more) > compute.forward_flops(cfg, s)
    if not cfg.pooler:
        per_token = compute.forward_flops_per_token
        assert per_token(cfg, s + more) > per_token(cfg, s)
    kv = memory.kv_cache_bytes
    assert kv(cfg.layers, cfg.kv_heads, cfg.head_dim, s + more) > kv(
        cfg.layers, cfg.kv_heads, cfg.head_dim, s
    )


@FAST
@given(
    purchase=st.floats(1, 1e7),
    rent=st.floats(0.01, 1e3),
    u=st.floats(0.01, 1),
    du=st.floats(0.01, 1),
)
def test_higher_utilisation_never_delays_breakeven(purchase, rent, u, du):
    low, high = sorted((u, du))
    assert cloud.breakeven_months(purchase, rent, utilisation=high) <= cloud.breakeven_months(
        purchase, rent, utilisation=low
    )


@FAST
@given(watts=st.floats(0, 1e7), price=st.floats(0, 10), pue=st.floats(1, 3), n=st.integers(1, 999))
def test_energy_cost_is_linear_in_systems_and_pue(watts, price, pue, n):
    one = energy.annual_electricity_usd(watts, price)
    assert energy.annual_electricity_usd(watts, price, systems=n, pue=pue) == pytest.approx(
        one * n * pue
    )


# ---------------------------------------------------------------------------------------------
# Robustness: junk in, ValueError out (never TypeError, ZeroDivisionError, OverflowError, ...)
# ---------------------------------------------------------------------------------------------

# One valid call per public function, by keyword (junk_cases/<module>.py). Every parameter
# gets junk in turn.

JUNK = st.one_of(
    st.none(),
    st.booleans(),
    st.text(max_size=4),
    st.sampled_from(
        [
            math.nan,
            math.inf,
            -math.inf,
            0,
            0.0,
            -1,
            -1e-9,
            1e308,
            -1e308,
            5e-324,
            10**400,
            -(10**400),
            2**63,
            1e20,
            3.5,
            [],
            {},
            (),
            object(),
            b"1",
        ]
    ),
    st.integers(),
    st.floats(allow_nan=True, allow_infinity=True),
)


def test_every_public_function_has_a_junk_input_case():
    public = {
        f"{mod.__name__.split('.')[-1]}.{name}"
        for mod in (
            models,
            memory,
            compute,
            parallel,
            communication,
            planner,
            facility,
            gpu_systems,
            cluster,
            cloud,
            inference,
            energy,
            serving,
            offload,
            finetune,
            techniques,
            ai_infrastructure,
            computation_requirements,
            silicon_to_tensors,
            reliability,
            moe,
            context,
            fleet,
            queueing,
        )
        for name in mod.__all__
        if inspect.isfunction(getattr(mod, name))
    }
    public.add("models.TransformerConfig")
    public.add("gpu_infrastructure.memory_requirements_as_written")
    public.add("gpu_infrastructure.multi_gpu_efficiency_as_written")
    public.add(
        "gpu_infrastructure.course_estimate"
    )  # the seed's own estimate_runtime takes its dataclasses
    assert public == set(VALID)


@pytest.mark.parametrize("name", list(VALID))
def test_valid_call_succeeds_and_prints(name):
    fn, kwargs = VALID[name]
    result = fn(**kwargs)
    assert str(result)


@pytest.mark.parametrize("name", list(VALID))
@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(data=st.data())
def test_junk_inputs_raise_only_value_error(name, data):
    """Any value in any parameter either works or raises ValueError naming that parameter's
    problem; never TypeError, ZeroDivisionError, OverflowError or a silent NaN result."""
    fn, kwargs = VALID[name]
    param = data.draw(st.sampled_from(sorted(kwargs)), label="parameter")
    junk = data.draw(JUNK, label="value")
    try:
        result = fn(**(kwargs | {param: junk}))
    except ValueError as err:
        assert str(err)
        return
    if isinstance(result, float):
        assert not math.isnan(result)
    str(result)  # a result that was accepted must also display


# ---------------------------------------------------------------------------------------------
# No torch on the calculator path
# ---------------------------------------------------------------------------------------------


def test_calculators_do_not_import_torch_and_import_fast():
    """The calculators import no torch (importing torch costs ~2 s per kernel). The import's CPU
    time (not the wall clock, which a busy machine stretches: 13 s at load 4 here) is printed for
    the record, not asserted beyond a generous bound."""
    code = (
        "import sys, time; t = time.process_time(); "
        "import course.calculators.memory, course.calculators.compute, course.calculators.parallel, course.calculators.facility, course.calculators.gpu_systems, course.calculators.cluster, course.calculators.cloud, "
        "course.calculators.inference, course.calculators.energy, course.claims.gpu_infrastructure, course.facts.data.published_runs, "
        "course.calculators.serving, course.calculators.offload, course.calculators.finetune, course.calculators.techniques, "
        "course.calculators.reliability, course.calculators.moe, course.calculators.context; "
        "dt = time.process_time() - t; "
        "assert 'torch' not in sys.modules, 'torch was imported'; "
        "assert 'numpy' not in sys.modules, 'numpy was imported'; print(f'{dt:.4f}')"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert out.returncode == 0, out.stderr
    seconds = float(out.stdout.strip())
    print(f"import of the calculator modules: {seconds * 1e3:.1f} ms of CPU time")
    assert seconds < 2.0
