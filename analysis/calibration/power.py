"""The minimum detectable excess of a condition before any money is spent (issue 22; the dry run prints it).

``MDE = (z_{1 - alpha/2} + z_{power}) * sqrt(se_model^2 + sd_reference^2)`` (pp), with

* ``se_model = 50 / sqrt(n_pairs)`` pp: the largest standard error of a mean per-pair PSE, reached
  when every answer is a fair coin (each arm averages two orders, variance 1/8; their difference
  1/4 per pair), so the MDE is an upper bound for any model;
* ``sd_reference``: the spread of the condition's reference over refits on resampled examples
  (:func:`analysis.judgments.reference_pair_draws` on the first ``n_pairs`` pairs; 0 for the exact
  full-information reference of a cell without examples).

The calibration study (:mod:`.study`) measures the power itself by simulation; this is the
closed-form bound for any ``--pairs`` before a run.
"""
from __future__ import annotations

import math

import numpy as np
from scipy import stats

from ..cells import Cell, parse_cell
from ..judgments import reference_pair_draws

WORST_PAIR_SD_PP = 50.0  # per-pair PSE SD (pp) of a model answering every call by a fair coin
MDE_POWER = 0.80  # conventional power of a minimum detectable effect
MDE_ALPHA = 0.05  # two-sided, the card's 95% interval
MDE_DRAWS = 1000  # refits for the reference's spread


def reference_sd_pp(cell: Cell, display: str = "numeric", n_pairs: int | None = None) -> float:
    """SD (pp) over refits of the condition's reference PSE on its first ``n_pairs`` pairs."""
    R = reference_pair_draws(cell, display, MDE_DRAWS)
    R = R if n_pairs is None else R[:, :n_pairs]
    return float(np.std(100 * R.mean(axis=1), ddof=1))


def mde_pp(cell: Cell, display: str = "numeric", n_pairs: int = 99, power: float = MDE_POWER,
           alpha: float = MDE_ALPHA) -> float:
    """Minimum detectable excess (pp) of PSE - reference at ``n_pairs`` pairs (upper bound, see the module).

    >>> round(mde_pp(parse_cell("k12_LH_neutral_absent_zero"), n_pairs=99), 1)  # exact reference: 2.80 * 50 / sqrt(99)
    14.1
    """
    if n_pairs < 1:
        return math.nan
    z = stats.norm.ppf(1 - alpha / 2) + stats.norm.ppf(power)
    se = WORST_PAIR_SD_PP / math.sqrt(n_pairs)
    return float(z * math.sqrt(se**2 + reference_sd_pp(cell, display, n_pairs) ** 2))
