"""Warp divergence: how many lanes of a warp do useful work under a branch, and what it costs.

A warp's 32 lanes (threads) share one instruction stream (SIMT). At an ``if`` whose condition
differs between lanes, the warp runs the *then* path with the other lanes masked off, then the
*else* path with the first ones masked off: the two paths are serialised, so the warp pays for both
(CUDA C++ Programming Guide, "SIMT Architecture": "If threads of a warp diverge via a data-dependent
conditional branch, the warp executes each branch path taken, disabling threads that are not on
that path"). A branch that is uniform within each warp (``tid // 32 % 2``) costs nothing extra.

:func:`branch` takes one boolean per lane (the condition) and the cost of each path in
instructions (or cycles) and returns the serialised cost and the SIMT efficiency = useful lane-
instructions / (32 x instructions issued). :func:`lane_mask` builds the masks of the lesson's
patterns (``tid < K``, ``tid % K == 0`` for any whole ``K``). Used by lesson 11.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass

from course.facts import cuda_limits, validate
from course.facts.report import Report

WARP_SIZE = cuda_limits.WARP_SIZE
PATTERNS = ("tid % K == 0", "tid < K", "tid // 32 % 2 == 0", "all", "none")  # K: a whole number
_FORMS = {
    re.compile(r"tid\s*%\s*(\d+)\s*==\s*0"): lambda k: (lambda t: t % k == 0) if k else None,
    re.compile(r"tid\s*<\s*(\d+)"): lambda k: lambda t: t < k,
    re.compile(r"tid\s*//\s*32\s*%\s*2\s*==\s*0"): lambda _: lambda t: t // WARP_SIZE % 2 == 0,
    re.compile(r"all"): lambda _: lambda t: True,
    re.compile(r"none"): lambda _: lambda t: False,
}


def lane_mask(pattern: str, *, warp: int = 0) -> tuple[bool, ...]:
    """The condition of each of the 32 lanes of warp ``warp`` (thread ids ``32*warp ...``).

    ``pattern`` is one of :data:`PATTERNS` with ``K`` a whole number: ``"tid % 2 == 0"`` (even
    lanes), ``"tid < 16"`` or ``"tid < 8"`` (the first lanes of warp 0 only), ``"tid // 32 % 2 ==
    0"`` (whole even warps: no divergence), ``"all"``, ``"none"``.
    """
    w = validate.positive_int("warp index", warp, minimum=0, maximum=2**20)
    text = pattern.strip() if isinstance(pattern, str) else ""
    for form, rule in _FORMS.items():
        if found := form.fullmatch(text):
            cond = rule(int(found.group(1)) if found.groups() else 0)
            if cond is None:  # tid % 0 is undefined
                break
            return tuple(cond(t) for t in range(WARP_SIZE * w, WARP_SIZE * (w + 1)))
    shown = ", ".join(repr(p) for p in PATTERNS)
    raise ValueError(f"branch pattern must be one of {shown} (K a whole number); got {pattern!r}")


@dataclass(frozen=True)
class Branch(Report):
    """One warp through ``if cond: then (then_cost) else: else (else_cost)``."""

    _title = "One warp through a branch"

    lanes_then: int
    lanes_else: int
    diverged: bool
    issued_cost: int  # instructions the warp issues: both paths when it diverges
    uniform_cost: int  # what the slower path alone would cost (no divergence)
    slowdown: float  # issued_cost / uniform_cost
    efficiency: float  # useful lane-instructions / (32 x issued)


def branch(condition: Sequence[bool], then_cost: int = 1, else_cost: int = 1) -> Branch:
    """Serialised cost of one warp through a two-way branch.

    ``condition``: one bool per lane (32). ``then_cost``/``else_cost``: instructions (>= 0) on
    each path. The warp issues ``then_cost`` if any lane takes *then*, plus ``else_cost`` if any
    lane takes *else*. ``slowdown`` = issued / max(then_cost, else_cost) (1 when uniform: a warp
    all on one path pays at most the longer path). Source: CUDA C++ Programming Guide, SIMT
    Architecture.
    """
    lanes = list(condition)
    if len(lanes) != WARP_SIZE or not all(isinstance(c, bool) for c in lanes):
        raise ValueError(
            f"condition must be {WARP_SIZE} booleans (one per lane); got {len(lanes)} values"
        )
    t_cost = validate.positive_int("then cost (instructions)", then_cost, minimum=0, maximum=10**9)
    e_cost = validate.positive_int("else cost (instructions)", else_cost, minimum=0, maximum=10**9)
    n_then = sum(lanes)
    n_else = WARP_SIZE - n_then
    issued = (t_cost if n_then else 0) + (e_cost if n_else else 0)
    useful = n_then * t_cost + n_else * e_cost
    longest = max(t_cost, e_cost)
    return Branch(
        lanes_then=n_then,
        lanes_else=n_else,
        diverged=bool(n_then and n_else),
        issued_cost=issued,
        uniform_cost=longest,
        slowdown=issued / longest if longest else 1.0,
        efficiency=useful / (WARP_SIZE * issued) if issued else 1.0,
    )


def data_dependent_divergence(probability: float) -> float:
    """Chance that a warp diverges when each lane's condition is true independently with
    ``probability``: 1 - p^32 - (1-p)^32 (on random data almost every warp diverges)."""
    p = validate.fraction("probability", probability, allow_zero=True)
    return 1.0 - p**WARP_SIZE - (1.0 - p) ** WARP_SIZE


__all__ = ["PATTERNS", "WARP_SIZE", "Branch", "branch", "data_dependent_divergence", "lane_mask"]
