"""Matplotlib helpers and the course's one plot style.

Every lesson calls ``use_style()`` once in its setup cell and draws through the functions here, so
all figures look alike: readable sizes, a colour-blind-safe palette, light grids, units on axes.
Layer 4: takes tidy records (lists of dicts or dataclasses), never measures or calculates.
"""

from __future__ import annotations

import matplotlib as mpl

#: Okabe-Ito colour-blind-safe palette.
PALETTE = ["#0072B2", "#E69F00", "#009E73", "#D55E00", "#CC79A7", "#56B4E9", "#F0E442", "#000000"]

STYLE = {
    "figure.figsize": (7.0, 4.0),
    "figure.dpi": 100,
    "savefig.dpi": 100,
    "axes.prop_cycle": mpl.cycler(color=PALETTE),
    "axes.grid": True,
    "axes.spines.top": False,
    "axes.spines.right": False,
    "axes.titlesize": 12,
    "axes.titleweight": "bold",
    "axes.labelsize": 11,
    "grid.alpha": 0.3,
    "legend.frameon": False,
    "font.size": 10,
}


def use_style() -> None:
    """Apply the course style to every figure drawn after this call."""
    mpl.rcParams.update(STYLE)
