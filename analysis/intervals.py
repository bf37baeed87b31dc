"""Statistical primitives for judgments beyond the paper (issue 22): proportion intervals, bootstrap
p-values, the equivalence test, and the four-way verdict.

References layer: imports only numpy, scipy and :mod:`analysis.config`.

- :func:`exact_binomial` (Clopper-Pearson) and :func:`wilson`: intervals of a share ``k / n`` that
  stay inside [0, 1] and keep their coverage near the bounds, where a percentile bootstrap of 0/1
  values collapses (2 pairs both "by position" give ``[100 %, 100 %]``; the exact interval is
  ``[15.8 %, 100 %]``).
- :func:`p_greater`, :func:`p_less`, :func:`p_two_sided`: p-values read off bootstrap draws of a
  quantity, ``(count + 1) / (B + 1)``, so a finite bootstrap never gives 0 and a zero-variance
  sample (every draw equal) is defined.
- :func:`tost`: two one-sided tests of a difference against ``±margin`` on its bootstrap draws
  (seed 003's equivalence test); ``p < alpha`` means *equivalent within ±margin*.
- :func:`equivalence_verdict`: excess, shortfall, equivalent within ±X pp, or inconclusive.
"""
from __future__ import annotations

import functools
import math

import numpy as np
from scipy import stats

from . import config

#: the verdict when a condition or share has fewer than ``config.MIN_PAIRS_TO_JUDGE`` pairs
TOO_FEW = "too few pairs to judge"
INCONCLUSIVE = "inconclusive"


def equivalent_label(margin_pp: float = config.EQUIVALENCE_MARGIN_PP) -> str:
    """The verdict text of a shown equivalence.

    >>> equivalent_label(5.0)
    'equivalent within ±5 pp'
    """
    return f"equivalent within ±{margin_pp:g} pp"


# --- proportions ----------------------------------------------------------------------------------

def _check_counts(k, n) -> tuple[int, int]:
    k, n = int(k), int(n)
    if n < 0 or k < 0 or k > n:
        raise ValueError(f"need 0 <= k <= n, got k={k}, n={n}")
    return k, n


def exact_binomial(k: int, n: int, level: float = 0.95) -> tuple[float, float]:
    """Clopper-Pearson (exact) interval of the share ``k / n`` (``scipy.stats.binomtest``).

    NaN for ``n = 0``.

    >>> [round(x, 4) for x in exact_binomial(2, 2)]
    [0.1581, 1.0]
    """
    return _binomial_ci(k, n, level, "exact")


def wilson(k: int, n: int, level: float = 0.95) -> tuple[float, float]:
    """Wilson score interval of the share ``k / n`` (``scipy.stats.binomtest``); NaN for ``n = 0``.

    >>> [round(x, 4) for x in wilson(2, 2)]
    [0.3424, 1.0]
    """
    return _binomial_ci(k, n, level, "wilson")


def _binomial_ci(k, n, level: float, method: str) -> tuple[float, float]:
    """``scipy.stats.binomtest``'s interval of ``k / n`` by ``method``; NaN for ``n = 0``."""
    k, n = _check_counts(k, n)
    return _binomial_ci_of(k, n, float(level), method)


@functools.lru_cache(maxsize=config.INTERVAL_CACHE_SIZE)
def _binomial_ci_of(k: int, n: int, level: float, method: str) -> tuple[float, float]:
    """:func:`_binomial_ci` of checked counts, cached (a pure function of its arguments; the
    calibrations ask for the same few hundred ``(k, n)`` thousands of times, at milliseconds each)."""
    if n == 0:
        return (math.nan, math.nan)
    ci = stats.binomtest(k, n).proportion_ci(confidence_level=level, method=method)
    return float(ci.low), float(ci.high)


def wilson_share(share: float, n: int, level: float = 0.95) -> tuple[float, float]:
    """Wilson score interval of a share that is a mean of ``n`` per-pair values in [0, 1] (not
    necessarily ``k / n`` with integer ``k``: e.g. accuracy averaged over two orders per pair).

    >>> [round(x, 4) for x in wilson_share(1.0, 2)] == [round(x, 4) for x in wilson(2, 2)]
    True
    """
    n = int(n)
    if n <= 0 or math.isnan(share):
        return (math.nan, math.nan)
    z = float(stats.norm.ppf(0.5 + level / 2))
    centre = (share + z**2 / (2 * n)) / (1 + z**2 / n)
    half = z / (1 + z**2 / n) * math.sqrt(share * (1 - share) / n + z**2 / (4 * n**2))
    return max(0.0, centre - half), min(1.0, centre + half)


def enough_pairs(n: int, minimum: int = config.MIN_PAIRS_TO_JUDGE) -> bool:
    """Whether ``n`` pairs are enough to print a judgment (else the card says :data:`TOO_FEW`)."""
    return int(n) >= int(minimum)


def expanded_percentiles(n: int, level: float = 0.95) -> tuple[float, float]:
    """Percentiles (in %) of the *expanded* percentile bootstrap interval from ``n`` resampled units.

    A percentile bootstrap interval of a mean is too narrow in small samples (its variance is the
    plug-in ``(n - 1) / n`` of the unbiased one, and it uses normal rather than t quantiles); the
    expanded interval (Hesterberg 2015, *What teachers should know about the bootstrap*) reads the
    draws at ``Phi(± sqrt(n / (n - 1)) t_{n-1})``. At 24 pairs the 95% interval reads the 1.73rd and
    98.27th percentiles; at 99 pairs the 2.31st and 97.69th. ``n < 2`` gives the plain percentiles.

    >>> [round(x, 2) for x in expanded_percentiles(24)]
    [1.73, 98.27]
    """
    return _expanded_percentiles_of(int(n), float(level))


@functools.lru_cache(maxsize=config.INTERVAL_CACHE_SIZE)
def _expanded_percentiles_of(n: int, level: float) -> tuple[float, float]:
    """:func:`expanded_percentiles`, cached (a pure function of ``n`` and ``level``)."""
    if n < 2:
        return (100 * (1 - level) / 2, 100 * (1 + level) / 2)
    z = math.sqrt(n / (n - 1)) * float(stats.t.ppf(0.5 + level / 2, n - 1))
    lo = 100 * float(stats.norm.cdf(-z))
    return (lo, 100 - lo)


# --- p-values from bootstrap draws ----------------------------------------------------------------

def _draws(draws) -> np.ndarray:
    d = np.asarray(draws, dtype=float).ravel()
    d = d[~np.isnan(d)]
    return d


def p_greater(draws, null: float = 0.0) -> float:
    """One-sided p-value of ``quantity > null`` from its bootstrap draws: ``(#{d <= null} + 1) / (B + 1)``.

    Never 0 from finite draws; NaN without draws. Every draw equal to ``null`` gives 1.

    >>> p_greater([1.0] * 99), p_greater([0.0] * 99)
    (0.01, 1.0)
    """
    d = _draws(draws)
    if d.size == 0:
        return math.nan
    return float((np.count_nonzero(d <= null) + 1) / (d.size + 1))


def p_less(draws, null: float = 0.0) -> float:
    """One-sided p-value of ``quantity < null``: ``(#{d >= null} + 1) / (B + 1)``.

    >>> p_less([-1.0] * 99)
    0.01
    """
    d = _draws(draws)
    if d.size == 0:
        return math.nan
    return float((np.count_nonzero(d >= null) + 1) / (d.size + 1))


def p_two_sided(draws, null: float = 0.0) -> float:
    """Two-sided p-value of ``quantity != null``: twice the smaller one-sided p-value, at most 1.

    >>> p_two_sided([3.0] * 99), p_two_sided([0.0] * 99)
    (0.02, 1.0)
    """
    d = _draws(draws)
    if d.size == 0:
        return math.nan
    return float(min(1.0, 2 * min(p_greater(d, null), p_less(d, null))))


def tost(draws, margin_pp: float = config.EQUIVALENCE_MARGIN_PP, alpha: float = config.TOST_ALPHA) -> float:
    """p-value of the two one-sided tests (TOST) that a difference lies within ``±margin_pp``.

    ``draws`` are bootstrap draws of the difference (pp). ``p = max(p(diff > -margin), p(diff < +margin))``;
    ``p < alpha`` shows equivalence (the same as the ``1 - 2 alpha`` percentile interval lying
    inside the margins, up to the ``+1`` correction). ``alpha`` is kept for the signature; the
    p-value does not depend on it.

    >>> tost([0.5, -0.5, 1.0, -1.0] * 25, 5.0) < 0.05, tost([4.0, 6.0] * 50, 5.0) < 0.05
    (True, False)
    """
    del alpha
    d = _draws(draws)
    if d.size == 0:
        return math.nan
    return float(max(p_greater(d, -margin_pp), p_less(d, margin_pp)))


# --- the four-way verdict -------------------------------------------------------------------------

def equivalence_verdict(lo: float, hi: float, p_tost: float, margin_pp: float = config.EQUIVALENCE_MARGIN_PP,
                        alpha: float = config.TOST_ALPHA, n_pairs: int | None = None) -> str:
    """Verdict of a difference from its 95% interval ``(lo, hi)`` and its TOST p-value.

    *excess* when the interval lies above 0, *shortfall* below 0, *equivalent within ±X pp* when
    ``p_tost < alpha``, else *inconclusive*; :data:`TOO_FEW` when ``n_pairs`` is given and below
    ``config.MIN_PAIRS_TO_JUDGE``; ``""`` when the interval is NaN (nothing to judge).

    >>> equivalence_verdict(1.0, 9.0, 0.9), equivalence_verdict(-2.0, 2.0, 0.01)
    ('excess', 'equivalent within ±5 pp')
    >>> equivalence_verdict(-2.0, 12.0, 0.4), equivalence_verdict(-2.0, 2.0, 0.01, n_pairs=2)
    ('inconclusive', 'too few pairs to judge')
    """
    if n_pairs is not None and not enough_pairs(n_pairs):
        return TOO_FEW
    if any(isinstance(x, float) and math.isnan(x) for x in (float(lo), float(hi))):
        return ""
    if lo > 0:
        return "excess"
    if hi < 0:
        return "shortfall"
    if not math.isnan(p_tost) and p_tost < alpha:
        return equivalent_label(margin_pp)
    return INCONCLUSIVE
