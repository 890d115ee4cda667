"""Queueing calculators against closed forms, numpy and a seeded simulation of the queue itself."""

from __future__ import annotations

import heapq
import math
import random

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from course.calculators import queueing


def test_percentile_matches_numpy_default():
    rng = random.Random(1)
    xs = [rng.expovariate(2.0) for _ in range(501)]
    for q in (0, 10, 50, 90, 99, 100):
        assert queueing.percentile(xs, q) == pytest.approx(np.percentile(xs, q), rel=1e-12)
    s = queueing.latency_summary(xs)
    assert s.p99_seconds == pytest.approx(np.percentile(xs, 99))
    assert s.count == 501 and s.max_seconds == max(xs)


def test_percentile_hand_case():
    # 1..10: p50 lies halfway between 5 and 6; p90 at position 8.1 -> 9.1
    xs = list(range(1, 11))
    assert queueing.percentile(xs, 50) == 5.5
    assert queueing.percentile(xs, 90) == pytest.approx(9.1)


def test_percentile_refuses_bad_input():
    with pytest.raises(ValueError, match="values_seconds"):
        queueing.percentile([], 50)
    with pytest.raises(ValueError, match="q must be"):
        queueing.percentile([1.0], 101)


def test_littles_law_each_way():
    assert queueing.littles_law(arrivals_per_second=4, time_in_system_seconds=2.5).in_system == 10
    assert queueing.littles_law(arrivals_per_second=4, in_system=10).time_in_system_seconds == 2.5
    assert queueing.littles_law(time_in_system_seconds=2.5, in_system=10).arrivals_per_second == 4
    with pytest.raises(ValueError, match="exactly two"):
        queueing.littles_law(arrivals_per_second=1)


def test_mm1_closed_form():
    # M/M/1 (Kleinrock vol. 1, eq. 3.26): P(wait) = rho, Wq = rho S / (1 - rho)
    q = queueing.mmc(0.8, 1.0, 1)
    assert q.wait_probability == pytest.approx(0.8)
    assert q.mean_wait_seconds == pytest.approx(0.8 / 0.2)
    # P(W > t) = rho exp(-(mu - lambda) t): p99 = ln(0.8 / 0.01) / 0.2
    assert q.p99_wait_seconds == pytest.approx(math.log(80) / 0.2)
    assert q.mean_in_system == pytest.approx(0.8 / 0.2)  # L = rho / (1 - rho)


def test_erlang_c_hand_cases():
    # M/M/2: C = 2 rho^2 / (1 + rho); A = 1 Erlang on 2 servers -> rho = 0.5 -> 1/3
    assert queueing.erlang_c(2, 1.0) == pytest.approx(1 / 3)
    # Direct formula for c = 5, A = 3.5 (sum form), against the recurrence
    c, a = 5, 3.5
    top = a**c / math.factorial(c) * c / (c - a)
    direct = top / (sum(a**k / math.factorial(k) for k in range(c)) + top)
    assert queueing.erlang_c(c, a) == pytest.approx(direct, rel=1e-12)
    assert queueing.erlang_c(3, 3.0) == 1.0


def test_unstable_queue_is_infinite():
    q = queueing.mmc(2.0, 1.0, 1)
    assert q.utilisation == 2.0 and math.isinf(q.mean_wait_seconds)


def _simulate_mmc(lam, s, c, n, seed):
    rng = random.Random(seed)
    free = [0.0] * c
    heapq.heapify(free)
    t, waits = 0.0, []
    for _ in range(n):
        t += rng.expovariate(lam)
        start = max(t, heapq.heappop(free))
        waits.append(start - t)
        heapq.heappush(free, start + rng.expovariate(1 / s))
    return waits[n // 10 :]


@pytest.mark.parametrize("lam,s,c", [(0.7, 1.0, 1), (3.0, 1.0, 4), (12.0, 0.5, 8)])
def test_mmc_matches_a_simulated_queue(lam, s, c):
    waits = _simulate_mmc(lam, s, c, 200_000, seed=c)
    q = queueing.mmc(lam, s, c)
    assert np.mean(waits) == pytest.approx(q.mean_wait_seconds, rel=0.15)
    assert np.mean([w > 0 for w in waits]) == pytest.approx(q.wait_probability, abs=0.03)
    assert np.percentile(waits, 99) == pytest.approx(q.p99_wait_seconds, rel=0.15)


def test_servers_for_wait_is_the_fewest():
    c = queueing.servers_for_wait(10, 1.0, 0.1)
    assert queueing.mmc(10, 1.0, c).wait_quantile_seconds(0.99) <= 0.1
    assert queueing.mmc(10, 1.0, c - 1).wait_quantile_seconds(0.99) > 0.1


def test_ttft_quantile_is_the_wait_quantile_plus_the_prefill():
    # M/M/1 at rho = 0.5 (lambda 1/s, S = 0.5 s): P(W > t) = 0.5 exp(-(2 - 1) t), so the p99 wait
    # is ln(0.5 / 0.01) = ln 50 = 3.912 s; below P(wait) the quantile is 0 (p50 of 0.5: 0)
    t = queueing.ttft_quantile_seconds(1.0, service_seconds=0.5, servers=1, prefill_seconds=0.2)
    assert t == pytest.approx(math.log(50) + 0.2)
    assert queueing.ttft_quantile_seconds(
        1.0, service_seconds=0.5, servers=1, prefill_seconds=0.2, quantile=0.5
    ) == pytest.approx(0.2)
    assert math.isinf(
        queueing.ttft_quantile_seconds(3.0, service_seconds=0.5, servers=1, prefill_seconds=0.2)
    )


@settings(max_examples=40, deadline=None)
@given(st.floats(0.1, 50), st.floats(0.01, 2), st.integers(1, 64))
def test_wait_grows_with_load(lam, s, c):
    lo, hi = queueing.mmc(lam, s, c), queueing.mmc(lam * 1.1, s, c)
    assert hi.mean_wait_seconds >= lo.mean_wait_seconds
    assert 0 <= lo.wait_probability <= 1
    if lo.utilisation < 1:  # Little's law holds inside the model
        assert lo.mean_in_system == pytest.approx(lam * lo.mean_time_in_system_seconds)


def test_route_hand_case():
    # A long request (10 s) then three short ones (1 s each), 2 replicas of 1 slot.
    arrivals, services = [0, 0.5, 1.6, 2.7], [10, 1, 1, 1]
    rr = queueing.route(arrivals, services, replicas=2, policy="round-robin")
    lor = queueing.route(arrivals, services, replicas=2, policy="least-outstanding")
    # round-robin sends request 2 behind the 10 s one: it waits 10 - 1.6 = 8.4 s
    assert rr.mean_wait_seconds == pytest.approx(8.4 / 4)
    # least-outstanding sends both late short ones to the idle replica: no wait at all
    assert lor.mean_wait_seconds == 0


def test_route_equal_services_agree():
    arrivals = [i * 0.3 for i in range(50)]
    a = queueing.route(arrivals, [1.0] * 50, replicas=3, slots=2, policy="round-robin")
    b = queueing.route(arrivals, [1.0] * 50, replicas=3, slots=2, policy="least-outstanding")
    assert a.mean_wait_seconds == b.mean_wait_seconds == 0


def test_route_one_replica_is_the_mmc_simulation():
    rng = random.Random(3)
    t, arr, svc = 0.0, [], []
    for _ in range(20_000):
        t += rng.expovariate(3.0)
        arr.append(t)
        svc.append(rng.expovariate(1.0))
    r = queueing.route(arr, svc, replicas=1, slots=4, policy="round-robin")
    assert r.mean_wait_seconds == pytest.approx(
        queueing.mmc(3.0, 1.0, 4).mean_wait_seconds, rel=0.2
    )


def test_a_load_a_rounding_error_below_capacity_waits_forever_instead_of_dividing_by_zero():
    """Offered load equal to the measured capacity: rho rounds to 0.9999999999999999 while
    c/S - lambda rounds to 0 (lesson 13 hit this on a CI run)."""
    capacity, slots = 42.376670724727354, 14
    q = queueing.mmc(capacity, slots / capacity, slots)
    assert q.utilisation < 1
    assert q.p99_wait_seconds == math.inf and q.wait_quantile_seconds(0.5) == math.inf
