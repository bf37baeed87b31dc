"""The reliability ceiling of per-pair shifts and disattenuated correlations (issue 22; beyond the paper).

A correlation of two cues' per-pair shifts can be no larger than the reliability of the shifts
themselves. With four calls a pair (two arms x two presentation orders), a per-pair PSE is mostly
noise: the ``cue-specific`` subject, whose true per-pair PSE is the same under ``numeric`` and
``narrative`` (true r = 1), shows r near 0.1, and the same cue measured twice shows about the same.
So every r is read against its ceiling (classical test theory, related paper 002's convergence):

* **split-half over presentation orders**: per pair, the PSE from order 0 alone and from order 1
  alone (``cf_a1`` minus ``cf_a0`` within one order); their correlation over pairs, stepped up to
  the full length by Spearman–Brown, ``2 r / (1 + r)``;
* **test–retest over repeated collections** (subject seeds, or two collections of one model): the
  correlation of the per-pair PSEs of the two collections, already at full length;
* the **ceiling** of a correlation between cues a and b is ``sqrt(rel_a rel_b)``; the
  **disattenuated** correlation is ``r / ceiling`` (undefined where a reliability is not positive).
"""
from __future__ import annotations

import math

import numpy as np
import pandas as pd

from .. import estimators

#: fewest pairs for a reliability (a correlation of fewer than this many points is not reported)
MIN_PAIRS_RELIABILITY = 10


def _corr(x: np.ndarray, y: np.ndarray) -> float:
    if len(x) < MIN_PAIRS_RELIABILITY or np.std(x) == 0 or np.std(y) == 0:
        return math.nan
    return float(np.corrcoef(x, y)[0, 1])


def order_halves(records: pd.DataFrame) -> pd.DataFrame:
    """Per-pair PSE within each presentation order: columns ``0`` and ``1``, pairs sorted by (i, j)."""
    v = estimators.valid(records[records["arm"].isin(["cf_a1", "cf_a0"])])
    m = v.pivot_table(index=["i", "j"], columns=["order", "arm"], values="picked_i", aggfunc="mean").sort_index()
    out = {}
    for o in (0, 1):
        if (o, "cf_a1") in m and (o, "cf_a0") in m:
            out[o] = m[(o, "cf_a1")] - m[(o, "cf_a0")]
    return pd.DataFrame(out).dropna()


def spearman_brown(r: float) -> float:
    """Reliability of the full-length score from a split-half correlation ``r``.

    >>> spearman_brown(0.5), spearman_brown(1.0)
    (0.6666666666666666, 1.0)
    """
    if math.isnan(r) or r <= -1:
        return math.nan
    return 2 * r / (1 + r)


def split_half(records: pd.DataFrame) -> dict:
    """Split-half reliability over presentation orders: ``r_half``, ``reliability``, ``n_pairs``."""
    h = order_halves(records)
    if 0 not in h or 1 not in h:
        return {"r_half": math.nan, "reliability": math.nan, "n_pairs": 0}
    r = _corr(h[0].to_numpy(float), h[1].to_numpy(float))
    return {"r_half": r, "reliability": spearman_brown(r), "n_pairs": int(len(h))}


def test_retest(a: pd.Series, b: pd.Series) -> dict:
    """Reliability from two collections of one cue: the correlation of their per-pair PSEs."""
    idx = a.index.intersection(b.index).sort_values()
    r = _corr(a.loc[idx].to_numpy(float), b.loc[idx].to_numpy(float))
    return {"reliability": r, "n_pairs": int(len(idx))}


def ceiling(rel_a: float, rel_b: float) -> float:
    """The largest correlation two measures of these reliabilities can show: ``sqrt(rel_a rel_b)``.

    >>> ceiling(0.25, 0.36), math.isnan(ceiling(-0.1, 0.5))
    (0.3, True)
    """
    if math.isnan(rel_a) or math.isnan(rel_b) or rel_a <= 0 or rel_b <= 0:
        return math.nan
    return math.sqrt(rel_a * rel_b)


def disattenuate(r: float, rel_a: float, rel_b: float) -> float:
    """``r / ceiling`` (Spearman's correction for attenuation); NaN where the ceiling is undefined.

    >>> round(disattenuate(0.1, 0.1, 0.1), 6)
    1.0
    """
    c = ceiling(rel_a, rel_b)
    return math.nan if math.isnan(c) or math.isnan(r) else r / c
