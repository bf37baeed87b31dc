"""Statistical primitives of issue 22 (analysis.intervals)."""
from __future__ import annotations

import numpy as np
import pytest
from numpy.testing import assert_allclose

from analysis import config, intervals


def test_exact_interval_of_two_of_two_is_wide():
    # the SmolLM2 case: 2 of 2 pairs "by position" is not [100 %, 100 %]
    lo, hi = intervals.exact_binomial(2, 2)
    assert_allclose([lo, hi], [0.025 ** 0.5, 1.0], atol=1e-9)


@pytest.mark.parametrize("k,n", [(0, 10), (3, 10), (10, 10), (1, 200), (57, 99)])
def test_intervals_contain_share_and_stay_in_unit(k, n):
    for f in (intervals.exact_binomial, intervals.wilson):
        lo, hi = f(k, n)
        assert 0.0 <= lo <= k / n <= hi <= 1.0


def test_exact_binomial_coverage_at_least_nominal():
    from scipy import stats
    n, p = 40, 0.005
    ks = np.arange(n + 1)
    covered = [intervals.exact_binomial(k, n)[0] <= p <= intervals.exact_binomial(k, n)[1] for k in ks]
    assert float((stats.binom.pmf(ks, n, p) * covered).sum()) >= 0.95


def test_min_pairs_reason_holds():
    m = config.MIN_PAIRS_TO_JUDGE
    assert intervals.exact_binomial(m - 1, m - 1)[0] < 0.5 < intervals.exact_binomial(m, m)[0]
    assert not intervals.enough_pairs(2) and intervals.enough_pairs(m)


def test_bad_counts_refused():
    with pytest.raises(ValueError):
        intervals.exact_binomial(3, 2)
    assert np.isnan(intervals.wilson(0, 0)[0])


def test_p_values_never_zero_and_defined_on_zero_variance():
    B = 999
    for d in (np.full(B, 5.05), np.full(B, -3.0), np.full(B, 0.0)):
        for p in (intervals.p_greater(d), intervals.p_less(d), intervals.p_two_sided(d)):
            assert 0.0 < p <= 1.0
    assert_allclose(intervals.p_greater(np.full(B, 5.05)), 1 / (B + 1))
    assert intervals.p_two_sided(np.full(B, 0.0)) == 1.0
    assert np.isnan(intervals.p_two_sided([]))


def test_p_two_sided_rejects_near_nominal_under_null():
    rng = np.random.default_rng(11)
    ps = []
    for _ in range(400):
        x = rng.normal(0.0, 1.0, 40)
        ps.append(intervals.p_two_sided(x[rng.integers(0, 40, (999, 40))].mean(axis=1)))
    assert 0.02 <= float(np.mean(np.array(ps) < 0.05)) <= 0.10


def test_tost_matches_ninety_percent_interval_rule():
    rng = np.random.default_rng(3)
    for centre in (-6.0, -3.0, 0.0, 2.0, 4.5, 7.0):
        d = rng.normal(centre, 1.5, 4000)
        lo, hi = np.percentile(d, [5, 95])
        inside = (lo > -5) and (hi < 5)
        assert (intervals.tost(d, 5.0) < 0.05) == inside


def test_equivalence_verdict_reads_four_ways():
    lab = intervals.equivalent_label(config.EQUIVALENCE_MARGIN_PP)
    assert intervals.equivalence_verdict(0.5, 8.0, 0.5) == "excess"
    assert intervals.equivalence_verdict(-8.0, -0.5, 0.5) == "shortfall"
    assert intervals.equivalence_verdict(-1.0, 1.0, 0.001) == lab
    assert intervals.equivalence_verdict(-1.0, 9.0, 0.3) == intervals.INCONCLUSIVE
    assert intervals.equivalence_verdict(0.5, 8.0, 0.5, n_pairs=2) == intervals.TOO_FEW
    assert intervals.equivalence_verdict(float("nan"), 1.0, 0.5) == ""


@pytest.mark.parametrize("k,n,level,method", [(0, 198, 0.95, "exact"), (57, 198, 0.95, "exact"), (2, 2, 0.9, "wilson"),
                                              (0, 0, 0.95, "exact")])
def test_cached_binomial_interval_equals_scipy_exactly(k, n, level, method):
    """The cache (issue 21 speed) returns scipy's interval bit for bit, whatever type the counts come in."""
    from scipy import stats

    intervals._binomial_ci_of.cache_clear()
    first = intervals._binomial_ci(np.int64(k), n, level, method)
    again = intervals._binomial_ci(k, np.int32(n), np.float64(level), method)  # a cache hit
    assert intervals._binomial_ci_of.cache_info().hits >= 1
    if n == 0:
        assert np.isnan(first).all() and np.isnan(again).all()
        return
    ci = stats.binomtest(k, n).proportion_ci(confidence_level=level, method=method)
    assert first == again == (float(ci.low), float(ci.high))


@pytest.mark.parametrize("n", [1, 24, 99])
def test_cached_expanded_percentiles_equal_the_formula_exactly(n):
    import math

    from scipy import stats

    intervals._expanded_percentiles_of.cache_clear()
    got = [intervals.expanded_percentiles(n) for _ in range(2)]
    if n < 2:
        want = (100 * (1 - 0.95) / 2, 100 * (1 + 0.95) / 2)
    else:
        z = math.sqrt(n / (n - 1)) * float(stats.t.ppf(0.975, n - 1))
        want = (100 * float(stats.norm.cdf(-z)), 100 - 100 * float(stats.norm.cdf(-z)))
    assert got[0] == got[1] == want
    assert intervals._expanded_percentiles_of.cache_info().hits == 1
