"""Queueing: latency percentiles, Little's law and the M/M/c (Erlang C) queue.

Why a server's latency explodes near saturation. Requests arrive at rate ``lambda`` (per second)
and each holds one of ``c`` identical servers for a service time of mean ``S`` seconds; the
*utilisation* is ``rho = lambda S / c``.

- :func:`latency_summary`: p50/p90/p99 of a sample, linear interpolation between order statistics
  (numpy's default ``percentile`` method, the one vLLM's ``benchmark_serving`` reports), each with
  its confidence interval.
- :func:`percentile_interval`: a distribution-free confidence interval for a percentile: two
  order statistics of the sample chosen from the binomial distribution of how many values fall
  below the true percentile (Conover, *Practical Nonparametric Statistics*, 3rd ed., sec. 3.2;
  Hahn and Meeker, *Statistical Intervals*, ch. 5). Nothing is assumed about the latencies'
  distribution; the price is that a high percentile of a small sample has no upper bound at all:
  :func:`samples_for_bound` (for the p99 at 95 %: 368 values for a two-sided interval, 299 for a
  one-sided upper bound, the order-statistic form of Wilks' 1941 tolerance limit).
- :func:`littles_law`: ``L = lambda W`` (Little 1961, "A proof for the queuing formula L = lambda
  W", Operations Research 9(3)): the mean number in a stable system equals the arrival rate times
  the mean time each spends in it, whatever the distributions.
- :func:`mmc`: Poisson arrivals, exponential service, ``c`` servers. The probability that an
  arrival waits is Erlang's C formula; the wait, given that it waits, is exponential with rate
  ``c/S - lambda``, so ``P(W > t) = C exp(-(c/S - lambda) t)`` and every percentile of the wait
  has a closed form (Kleinrock 1975, *Queueing Systems* vol. 1, sec. 3.5; Gross & Harris,
  *Fundamentals of Queueing Theory*, sec. 2.3). As ``rho -> 1`` the mean wait grows like
  ``1 / (1 - rho)``: the knee of every load curve.
- :func:`servers_for_wait`: the fewest servers whose wait percentile meets a target;
  :func:`ttft_quantile_seconds`: a percentile of time to first token (the wait plus the prefill).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, field
from types import MappingProxyType

from course.facts import validate
from course.facts.report import Report
from course.facts.units import fmt_seconds as _fmt_seconds

#: Most servers an M/M/c model accepts (a fleet of 100,000 GPU slots).
MAX_SERVERS = 100_000
#: Longest sample :func:`latency_summary` accepts.
MAX_SAMPLES = 10**7


def _sample(name: str, values: object) -> list[float]:
    if not isinstance(values, Sequence) or isinstance(values, str | bytes) or not values:
        raise ValueError(f"{name} must be a non-empty sequence of numbers, got {values!r}")
    if len(values) > MAX_SAMPLES:
        raise ValueError(f"{name} must hold at most {MAX_SAMPLES:,} values, got {len(values):,}")
    return [validate.number(name, v, minimum=0) for v in values]


def _percentile(values: list[float], q: float) -> float:
    """Linear-interpolation percentile (numpy's default), ``q`` in [0, 100]."""
    xs = sorted(values)
    pos = (len(xs) - 1) * q / 100
    lo, hi = math.floor(pos), math.ceil(pos)
    return xs[lo] + (xs[hi] - xs[lo]) * (pos - lo)


def percentile(values_seconds: Sequence[float], q: float) -> float:
    """The ``q``-th percentile (0-100) of a sample, numpy's default linear interpolation between
    order statistics (what vLLM's benchmark reports); MLPerf's LoadGen reports an order statistic
    itself, not interpolated, so on the same sample its p99 can differ."""
    xs = _sample("values_seconds", values_seconds)
    return _percentile(xs, validate.number("q", q, minimum=0, maximum=100))


def _binomial_cdf(n: int, p: float) -> list[float]:
    """``[P(B <= k) for k in 0..n]`` for ``B ~ Binomial(n, p)``, 0 < p < 1 (terms in logs, so a
    large ``n`` does not underflow)."""
    log_p, log_q = math.log(p), math.log1p(-p)
    lg_n = math.lgamma(n + 1)
    total, out = 0.0, []
    for k in range(n + 1):
        total += math.exp(
            lg_n - math.lgamma(k + 1) - math.lgamma(n - k + 1) + k * log_p + (n - k) * log_q
        )
        out.append(min(total, 1.0))
    return out


@dataclass(frozen=True)
class PercentileInterval(Report):
    """A percentile of a sample and its distribution-free confidence interval: the order
    statistics ``low_rank`` and ``high_rank`` (1-based, of the sorted sample) hold the true
    percentile with probability at least ``confidence`` (``coverage`` exactly, from the binomial).
    A bound is None where the sample is too small to give one (``note`` says how many it needs)."""

    _title = "A percentile with its confidence interval"
    _formats = MappingProxyType({"confidence": "percent", "coverage": "percent"})

    percentile: float
    count: int
    value_seconds: float
    low_seconds: float | None
    high_seconds: float | None
    confidence: float
    coverage: float | None
    low_rank: int | None
    high_rank: int | None
    note: str

    @property
    def bounded(self) -> bool:
        """True when both ends of the interval exist."""
        return self.low_seconds is not None and self.high_seconds is not None

    def bracket(self) -> str:
        """``"[11.0 ms, 14.2 ms]"``, or ``"(n too small: ...)"`` for a missing end."""
        if self.bounded:
            return f"[{_fmt_seconds(self.low_seconds)}, {_fmt_seconds(self.high_seconds)}]"
        return f"(n too small: {self.note})"

    def text(self) -> str:
        """``"12.3 ms [11.0 ms, 14.2 ms]"``, or the value and "n too small" for a missing end."""
        return f"{_fmt_seconds(self.value_seconds)} {self.bracket()}"


def _open(name: str, value: object, low: float, high: float) -> float:
    """A number strictly between ``low`` and ``high``."""
    x = validate.number(name, value, minimum=low, maximum=high, strict_min=True)
    if x >= high:
        raise ValueError(f"{name} must be > {low:g} and < {high:g}, got {value!r}")
    return x


def samples_for_bound(q: float, confidence: float = 0.95, *, sided: str = "two") -> int:
    """The fewest values for which the ``q``-th percentile has an upper confidence bound (the
    sample's maximum being the last candidate): ``(q/100)**n <= alpha`` for a one-sided bound
    (``sided="upper"``), ``<= alpha / 2`` for a two-sided interval's upper end. For q = 99 at
    95 %: 299 (Wilks 1941's 95 %/99 % tolerance limit) and 368; for q = 95 one-sided: 59, the
    "59 runs" of nuclear safety analyses (Wilks' formula)."""
    p = _open("q", q, 0, 100) / 100
    conf = _open("confidence", confidence, 0, 1)
    tails = {"two": (1 - conf) / 2, "upper": 1 - conf}
    tail = tails.get(sided) if isinstance(sided, str) else None
    if tail is None:
        raise ValueError(f"sided must be 'two' or 'upper', got {sided!r}")
    n = max(1, math.ceil(math.log(tail) / math.log(p)))
    while n > 1 and p ** (n - 1) <= tail:  # the float log can round one too high or too low
        n -= 1
    while p**n > tail:
        n += 1
    return n


def percentile_interval(
    values_seconds: Sequence[float], q: float, confidence: float = 0.95
) -> PercentileInterval:
    """The ``q``-th percentile (0 < q < 100) of a sample with its equal-tailed, distribution-free
    ``confidence`` interval ``[x_(l), x_(u)]``: with ``B ~ Binomial(n, q/100)`` (how many of n
    values fall below the true percentile), ``l`` is the largest rank with ``P(B <= l-1) <=
    alpha/2`` and ``u`` the smallest with ``P(B >= u) <= alpha/2`` (Conover 1999, sec. 3.2,
    method A). Each tail holds at most ``alpha/2``, so the coverage is at least ``confidence``.
    Where no rank qualifies the end is None and the note says how many values it needs."""
    xs = sorted(_sample("values_seconds", values_seconds))
    pct = _open("q", q, 0, 100)
    conf = _open("confidence", confidence, 0.5, 1)
    n, p, tail = len(xs), pct / 100, (1 - conf) / 2
    cdf = _binomial_cdf(n, p)
    lows = [rank for rank in range(1, n + 1) if cdf[rank - 1] <= tail]
    highs = [rank for rank in range(1, n + 1) if cdf[rank - 1] >= 1 - tail]
    low, high = (lows[-1] if lows else None), (highs[0] if highs else None)
    notes = []
    if high is None:
        notes.append(f"an upper bound needs n >= {samples_for_bound(pct, conf)}")
    if low is None:
        lower_n = samples_for_bound(100 - pct, conf)  # the mirror image
        notes.append(f"a lower bound needs n >= {lower_n}")
    return PercentileInterval(
        percentile=pct,
        count=n,
        value_seconds=_percentile(xs, pct),
        low_seconds=xs[low - 1] if low else None,
        high_seconds=xs[high - 1] if high else None,
        confidence=conf,
        coverage=cdf[high - 1] - cdf[low - 1] if low and high else None,
        low_rank=low,
        high_rank=high,
        note="; ".join(notes),
    )


@dataclass(frozen=True)
class LatencySummary(Report):
    """Count, mean and percentiles of a latency sample, each percentile with its 95 % interval
    (:func:`percentile_interval`; "n too small" where the sample cannot bound it)."""

    _title = "Latency percentiles (95 % distribution-free intervals)"

    count: int
    mean_seconds: float
    p50: str
    p90: str
    p99: str
    max_seconds: float
    intervals: tuple[PercentileInterval, ...] = field(repr=False, default=())

    @property
    def p50_seconds(self) -> float:
        return self.intervals[0].value_seconds

    @property
    def p90_seconds(self) -> float:
        return self.intervals[1].value_seconds

    @property
    def p99_seconds(self) -> float:
        return self.intervals[2].value_seconds


def latency_summary(values_seconds: Sequence[float]) -> LatencySummary:
    """Mean, p50, p90, p99 (each with its 95 % interval) and max of a latency sample (seconds)."""
    xs = _sample("values_seconds", values_seconds)
    intervals = tuple(percentile_interval(xs, q) for q in (50, 90, 99))
    return LatencySummary(
        count=len(xs),
        mean_seconds=sum(xs) / len(xs),
        p50=intervals[0].text(),
        p90=intervals[1].text(),
        p99=intervals[2].text(),
        max_seconds=max(xs),
        intervals=intervals,
    )


@dataclass(frozen=True)
class LittlesLaw(Report):
    """``in_system = arrivals_per_second x time_in_system_seconds``, solved for the missing one."""

    _title = "Little's law"

    arrivals_per_second: float
    time_in_system_seconds: float
    in_system: float  # mean number of requests inside (queued + being served)


def littles_law(
    *,
    arrivals_per_second: float | None = None,
    time_in_system_seconds: float | None = None,
    in_system: float | None = None,
) -> LittlesLaw:
    """Give exactly two of the three; the third is ``L = lambda W`` solved for it.

    Example: a server that completes 4 requests/s, each inside for 2.5 s on average, holds 10
    requests at once on average, so it needs 10 batch slots (or a queue) to keep up.
    """
    given = {
        k: v
        for k, v in (
            ("arrivals_per_second", arrivals_per_second),
            ("time_in_system_seconds", time_in_system_seconds),
            ("in_system", in_system),
        )
        if v is not None
    }
    if len(given) != 2:
        raise ValueError(
            "littles_law needs exactly two of arrivals_per_second, "
            f"time_in_system_seconds, in_system; got {sorted(given) or 'none'}"
        )
    vals = {k: validate.number(k, v, minimum=0, maximum=1e12) for k, v in given.items()}
    lam = vals.get("arrivals_per_second")
    w = vals.get("time_in_system_seconds")
    n = vals.get("in_system")
    if n is None:
        n = lam * w
    elif w is None:
        if lam == 0:
            raise ValueError("arrivals_per_second must be > 0 to solve for time_in_system_seconds")
        w = n / lam
    else:
        if w == 0:
            raise ValueError("time_in_system_seconds must be > 0 to solve for arrivals_per_second")
        lam = n / w
    return LittlesLaw(arrivals_per_second=lam, time_in_system_seconds=w, in_system=n)


def erlang_c(servers: int, offered_erlangs: float) -> float:
    """Probability that an arrival must wait in an M/M/c queue (Erlang's C formula).

    ``offered_erlangs`` = arrival rate x mean service time (``A = lambda S``). Computed through
    the Erlang B recurrence ``B(0) = 1, B(k) = A B(k-1) / (k + A B(k-1))`` and
    ``C = c B / (c - A (1 - B))``, which stays finite for thousands of servers. 1 when ``A >= c``
    (the queue grows without bound).
    """
    c = validate.positive_int("servers", servers, maximum=MAX_SERVERS)
    a = validate.number("offered_erlangs", offered_erlangs, minimum=0, maximum=1e9)
    if a >= c:
        return 1.0
    b = 1.0
    for k in range(1, c + 1):
        b = a * b / (k + a * b)
    return c * b / (c - a * (1 - b))


@dataclass(frozen=True)
class MMc(Report):
    """An M/M/c queue at one load: utilisation, chance of waiting, wait and time in system."""

    _title = "M/M/c queue"
    _formats = MappingProxyType({"utilisation": "percent", "wait_probability": "percent"})

    servers: int
    arrivals_per_second: float
    service_seconds: float  # mean time a request holds a server
    utilisation: float  # lambda S / c; >= 1 means the queue grows without bound
    wait_probability: float  # Erlang C
    mean_wait_seconds: float  # in the queue, before service (inf when unstable)
    p50_wait_seconds: float
    p99_wait_seconds: float
    mean_time_in_system_seconds: float  # wait + service
    mean_in_system: float  # Little's law: lambda x time in system

    def wait_quantile_seconds(self, q: float) -> float:
        """The ``q``-quantile (0 < q < 1) of the wait: ``ln(C / (1 - q)) / (c/S - lambda)``, 0 if
        fewer than a fraction ``1 - q`` of arrivals wait at all."""
        p = validate.number("q", q, minimum=0, maximum=1, strict_min=True)
        if p >= 1 or self.utilisation >= 1:
            return math.inf
        if self.wait_probability <= 1 - p:
            return 0.0
        drain = self.servers / self.service_seconds - self.arrivals_per_second
        if drain <= 0:  # utilisation a rounding error below 1: the queue does not drain
            return math.inf
        return math.log(self.wait_probability / (1 - p)) / drain


def mmc(arrivals_per_second: float, service_seconds: float, servers: int = 1) -> MMc:
    """The M/M/c queue with Poisson arrivals at ``arrivals_per_second``, exponential service of
    mean ``service_seconds`` and ``servers`` servers.

    Mean wait ``Wq = C S / (c (1 - rho))``; for one server (M/M/1) this is ``rho S / (1 - rho)``
    and ``C = rho``. Waits are ``inf`` when ``rho >= 1``.
    """
    lam = validate.number("arrivals_per_second", arrivals_per_second, minimum=0, maximum=1e9)
    s = validate.number("service_seconds", service_seconds, minimum=0, maximum=1e6, strict_min=True)
    c = validate.positive_int("servers", servers, maximum=MAX_SERVERS)
    rho = lam * s / c
    pw = erlang_c(c, lam * s)  # 1 when unstable
    wq = math.inf if rho >= 1 else pw * s / (c * (1 - rho))
    draft = MMc(
        servers=c,
        arrivals_per_second=lam,
        service_seconds=s,
        utilisation=rho,
        wait_probability=pw,
        mean_wait_seconds=wq,
        p50_wait_seconds=0.0,
        p99_wait_seconds=0.0,
        mean_time_in_system_seconds=wq + s,
        mean_in_system=lam * (wq + s),
    )
    return MMc(
        **{
            **draft.__dict__,
            "p50_wait_seconds": draft.wait_quantile_seconds(0.5),
            "p99_wait_seconds": draft.wait_quantile_seconds(0.99),
        }
    )


def ttft_quantile_seconds(
    arrivals_per_second: float,
    *,
    service_seconds: float,
    servers: int,
    prefill_seconds: float,
    quantile: float = 0.99,
) -> float:
    """The ``quantile`` of time to first token of a server modelled as M/M/c: the wait for one of
    ``servers`` batch slots, each held ``service_seconds``, plus the prefill (``inf`` when the
    queue is unstable). Used to size fleets and to predict a measured load curve."""
    pre = validate.number("prefill_seconds", prefill_seconds, minimum=0, maximum=1e6)
    q = validate.number("quantile", quantile, minimum=0, maximum=1, strict_min=True)
    return mmc(arrivals_per_second, service_seconds, servers).wait_quantile_seconds(q) + pre


def servers_for_wait(
    arrivals_per_second: float,
    service_seconds: float,
    wait_slo_seconds: float,
    *,
    quantile: float = 0.99,
) -> int:
    """The fewest servers ``c`` whose ``quantile`` of the M/M/c wait is at most
    ``wait_slo_seconds``."""
    lam = validate.number("arrivals_per_second", arrivals_per_second, minimum=0, maximum=1e9)
    s = validate.number("service_seconds", service_seconds, minimum=0, maximum=1e6, strict_min=True)
    slo = validate.number("wait_slo_seconds", wait_slo_seconds, minimum=0, maximum=1e6)
    q = validate.number("quantile", quantile, minimum=0, maximum=1, strict_min=True)
    if q >= 1:
        raise ValueError(
            f"quantile must be < 1 (a 100 % percentile of an exponential wait is "
            f"infinite), got {quantile!r}"
        )
    c = max(1, math.floor(lam * s) + 1)  # the fewest that are stable
    while c <= MAX_SERVERS:
        if mmc(lam, s, c).wait_quantile_seconds(q) <= slo:
            return c
        c += 1
    raise ValueError(f"arrivals_per_second: {lam:g}/s needs more than {MAX_SERVERS:,} servers")


ROUTING = ("round-robin", "least-outstanding")


@dataclass(frozen=True)
class Routing(Report):
    """Waits of requests spread over replicas by one routing policy (a replayed simulation)."""

    _title = "Load balancing"

    policy: str
    replicas: int
    requests: int
    mean_wait_seconds: float
    p50_wait_seconds: float
    p99_wait_seconds: float
    p99_time_in_system_seconds: float
    # 95 % distribution-free intervals of the three percentiles (a table prints each beside it)
    p50_wait_ci: str = ""
    p99_wait_ci: str = ""
    p99_time_in_system_ci: str = ""


def route(
    arrival_seconds: Sequence[float],
    service_seconds: Sequence[float],
    *,
    replicas: int = 2,
    slots: int = 1,
    policy: str = "least-outstanding",
) -> Routing:
    """Replay arrivals (their times and each one's service time) on ``replicas`` replicas of
    ``slots`` first-come-first-served servers each, routed by ``policy``:

    - ``"round-robin"``: request ``i`` goes to replica ``i mod replicas``, blind to load;
    - ``"least-outstanding"``: to the replica with the fewest requests in it (queued or
      in service) at that moment, ties to the lowest index.

    With equal service times the two agree; with long and short requests mixed (LLM answers),
    round-robin keeps sending to a replica stuck behind long ones.
    """
    arrivals = _sample("arrival_seconds", arrival_seconds)
    services = _sample("service_seconds", service_seconds)
    if len(arrivals) != len(services):
        raise ValueError(
            f"service_seconds must have one value per arrival ({len(arrivals)}), got "
            f"{len(services)}"
        )
    n_rep = validate.positive_int("replicas", replicas, maximum=1000)
    k = validate.positive_int("slots", slots, maximum=10_000)
    mode = validate.choice("policy", policy, ROUTING)
    free = [[0.0] * k for _ in range(n_rep)]  # when each slot of each replica is next free
    ends: list[list[float]] = [[] for _ in range(n_rep)]  # completion times sent to each replica
    waits, totals = [], []
    order = sorted(range(len(arrivals)), key=lambda i: (arrivals[i], i))
    for j, i in enumerate(order):
        t = arrivals[i]
        if mode == "round-robin":
            r = j % n_rep
        else:
            r = min(range(n_rep), key=lambda x: (sum(1 for e in ends[x] if e > t), x))
        slot = min(range(k), key=lambda x: free[r][x])
        start = max(t, free[r][slot])
        free[r][slot] = start + services[i]
        ends[r] = [e for e in ends[r] if e > t] + [start + services[i]]
        waits.append(start - t)
        totals.append(start - t + services[i])
    return Routing(
        policy=mode,
        replicas=n_rep,
        requests=len(waits),
        mean_wait_seconds=sum(waits) / len(waits),
        p50_wait_seconds=_percentile(waits, 50),
        p99_wait_seconds=_percentile(waits, 99),
        p99_time_in_system_seconds=_percentile(totals, 99),
        p50_wait_ci=percentile_interval(waits, 50).bracket(),
        p99_wait_ci=percentile_interval(waits, 99).bracket(),
        p99_time_in_system_ci=percentile_interval(totals, 99).bracket(),
    )


__all__ = [
    "LatencySummary",
    "PercentileInterval",
    "ROUTING",
    "Routing",
    "route",
    "LittlesLaw",
    "MMc",
    "erlang_c",
    "latency_summary",
    "littles_law",
    "mmc",
    "percentile",
    "percentile_interval",
    "samples_for_bound",
    "servers_for_wait",
    "ttft_quantile_seconds",
]
