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
from course.facts.units import fmt_seconds


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
    assert q.wait_probability == 1.0 and math.isinf(q.p99_wait_seconds)
    assert math.isinf(q.p50_wait_seconds) and math.isinf(q.mean_in_system)


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


def test_percentile_interval_reproduces_the_textbook_median_interval():
    """Conover, Practical Nonparametric Statistics (3rd ed., sec. 3.2): for n = 10 the 95 %
    interval of the median is [x_(2), x_(9)], of exact confidence 1 - 2 x 11/1024 = 97.85 %."""
    r = queueing.percentile_interval([float(x) for x in range(1, 11)], 50)
    assert (r.low_rank, r.high_rank) == (2, 9) and (r.low_seconds, r.high_seconds) == (2.0, 9.0)
    assert r.coverage == pytest.approx(1 - 2 * 11 / 1024, abs=1e-12) and r.bounded


def test_samples_for_a_bound_follow_wilks():
    """Wilks' (1941) formula n >= ln(1 - confidence) / ln(q): the "59 runs" of a 95 %/95 % upper
    tolerance limit, 299 for the 99th percentile; a two-sided 95 % interval's upper end needs
    (q/100)**n <= 2.5 %: 368 values for the p99 (n = 367 gives none)."""
    assert queueing.samples_for_bound(95, 0.95, sided="upper") == 59
    assert queueing.samples_for_bound(99, 0.95, sided="upper") == 299
    assert queueing.samples_for_bound(99, 0.95) == 368
    assert queueing.samples_for_bound(90) == 36 and queueing.samples_for_bound(50) == 6
    xs = [float(i) for i in range(400)]
    assert queueing.percentile_interval(xs[:367], 99).high_seconds is None
    assert queueing.percentile_interval(xs[:368], 99).high_rank == 368
    with pytest.raises(ValueError, match="sided"):
        queueing.samples_for_bound(99, sided="lower")


def _exact_tail(n: int, p: float, below: int) -> float:
    """P(B <= below) for B ~ Binomial(n, p), by math.comb (independent of the calculator's logs)."""
    return sum(math.comb(n, k) * p**k * (1 - p) ** (n - k) for k in range(below + 1))


@pytest.mark.parametrize(("n", "q"), [(20, 50), (50, 90), (120, 99), (400, 99), (1000, 90)])
def test_interval_ranks_are_the_extreme_ones_with_each_tail_within_alpha_over_2(n, q):
    xs = [float(i) for i in range(n)]
    r = queueing.percentile_interval(xs, q)
    p = q / 100
    if r.low_rank is not None:
        assert _exact_tail(n, p, r.low_rank - 1) <= 0.025
        assert r.low_rank == n or _exact_tail(n, p, r.low_rank) > 0.025  # the largest such rank
    if r.high_rank is not None:
        assert 1 - _exact_tail(n, p, r.high_rank - 1) <= 0.025
        assert r.high_rank == 1 or 1 - _exact_tail(n, p, r.high_rank - 2) > 0.025
        assert r.coverage >= 0.95
    assert (r.high_rank is None) == (n < queueing.samples_for_bound(q))


def test_interval_covers_the_true_percentile_at_least_95_percent_of_the_time():
    """Exponential latencies (true p90 = ln 10 / rate): 2,000 samples of 60, the interval holds the
    true value in >= 95 % of them (binomial noise of 2,000 draws: +- 1 %)."""
    rng = random.Random(7)
    truth = math.log(10)
    hits = 0
    for _ in range(2000):
        r = queueing.percentile_interval([rng.expovariate(1.0) for _ in range(60)], 90)
        hits += r.low_seconds <= truth <= r.high_seconds
    assert hits / 2000 >= 0.94


def test_latency_summary_marks_what_a_small_sample_cannot_bound():
    s = queueing.latency_summary([0.12, 0.15, 0.11, 0.14, 0.13, 0.95, 0.12, 0.16, 0.13, 0.14])
    assert "[" in s.p50 and "n too small" in s.p90 and "n >= 368" in s.p99
    assert s.intervals[2].value_seconds == s.p99_seconds and not s.intervals[2].bounded
    with pytest.raises(ValueError, match="q must be > 0 and < 100"):
        queueing.percentile_interval([1.0], 100)


def test_a_routing_replay_prints_each_percentile_with_its_interval():
    """Issue 44: the replay's p50/p99 wait and p99 time in system print with their 95 %
    distribution-free intervals (a Report prints a ``*_ci`` field beside its percentile, not as a
    row of its own); 12 requests are too few to bound a p99."""
    arrivals = [0.01 * i for i in range(400)]
    services = [0.3 if i % 5 == 0 else 0.01 for i in range(400)]
    r = queueing.route(arrivals, services, replicas=2, slots=1, policy="round-robin")
    rows = dict(r.rows())
    assert rows["p99 wait"].startswith(fmt_seconds(r.p99_wait_seconds) + " [")
    assert rows["p50 wait"].endswith("]") and "p99 wait ci" not in rows
    assert "[" in str(r).split("p99 time in system")[1]
    few = queueing.route(arrivals[:12], services[:12], replicas=2, policy="round-robin")
    assert "(n too small: an upper bound needs n >= 368" in dict(few.rows())["p99 wait"]
