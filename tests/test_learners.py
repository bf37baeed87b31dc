"""The reference learner and the category-indicator learner (analysis.learners): scikit-learn
shape, bit-for-bit equality with the first layout's closed form on real cells (the same kernel, in
one process), and the numbers recorded before the move: floats within a stated tolerance, counts
exactly (issue 21: the last bits of a BLAS result depend on the CPU's kernel)."""
from __future__ import annotations

import numpy as np
import pytest

from analysis import config, encoding, learners, population, references
from analysis.cells import parse_cell

CELLS = ["k12_LH_neutral_learned_info_b060", "k6_HH_neutral_learned_zero", "k18_LH_social_learned_info",
         "k12_LH_neutral_learned_zero", "k12_LH_social_learned_info_b030_s20001"]


def _old_posterior_mean(X, y, sigma=config.LEARNER_SIGMA, tau=config.LEARNER_TAU):
    """The first layout's references.blr_posterior_mean, verbatim (the oracle)."""
    X_aug = np.column_stack([np.ones(len(X)), np.asarray(X, dtype=float)])
    precision = np.eye(X_aug.shape[1]) / tau**2 + X_aug.T @ X_aug / sigma**2
    S = np.linalg.inv(precision)
    return S @ X_aug.T @ np.asarray(y, dtype=float) / sigma**2


def _old_predict(m, X):
    X = np.atleast_2d(np.asarray(X, dtype=float))
    return m[0] + X @ m[1:]


def test_sklearn_shape():
    X = np.array([[0.0, 1.0], [1.0, 0.5], [2.0, -1.0]])
    est = learners.ReferenceLearner(sigma=0.5, tau=1.0)
    assert est.fit(X, [0.0, 1.0, 2.0]) is est
    assert est.coef_.shape == (2,) and np.isscalar(est.intercept_)
    assert (est.sigma, est.tau) == (0.5, 1.0)
    assert learners.ReferenceLearner().sigma == config.LEARNER_SIGMA
    assert learners.ReferenceLearner().tau == config.LEARNER_TAU


@pytest.mark.parametrize("cell", CELLS)
def test_bit_identical_to_the_first_layout(cell):
    cell = parse_cell(cell)
    ex, pop = population.examples(cell), population.population(cell)
    old = _old_posterior_mean(ex.X, ex.Y)
    est = learners.ReferenceLearner().fit(ex.X, ex.Y)
    assert np.array_equal(est.posterior_mean_, old)
    assert est.intercept_ == old[0] and np.array_equal(est.coef_, old[1:])
    assert np.array_equal(est.predict(pop.X), _old_predict(old, pop.X))
    assert np.array_equal(references.blr_posterior_mean(ex.X, ex.Y), old)


#: posterior means recorded with the first layout's code before the move, at 12 significant digits
RECORDED_POSTERIOR_MEAN = {
    "k12_LH_neutral_learned_info_b060": [
        0.0115182224998, 0.424531890953, 0.405594847271, 0.302365380036, 0.344354722655, 0.310914590438,
        0.178159910878, 0.262527675342, 0.325516617949, 0.135978991717, 0.12803574635, 0.192500135779,
        0.254956311587],
    "k18_LH_social_learned_info": [
        -0.0373413724631, 0.363860957076, 0.311995057317, 0.297608317413, 0.406392156511, 0.401374991716,
        0.282193985498, 0.24070858257, 0.185514206521, 0.27602795584, 0.197565963385, 0.15909574678,
        0.111198139155, -0.0850636020191, 0.0792218258599, 0.156360232955, 0.0645447006216, 0.171496642735,
        0.020461372236],
}
#: the recorded digits are 12 significant ones; a BLAS kernel or thread count moves the last bits
#: (relative ~1e-16 to 1e-13), so the comparison allows 1e-10 relative: far below any change that
#: moves a pick, far above any kernel's noise
RTOL = 1e-10
#: cell -> counts out of 99 pairs behind (learner PSE, learner errors, full-information PSE): the
#: reported values are these counts scaled (100 * count / 99 pp, count / 99), so counts are compared exactly
RECORDED_COUNTS = {
    "k12_LH_neutral_learned_info_b060": (23, 4, 27),
    "k6_HH_neutral_learned_zero": (1, 1, 0),
    "k18_LH_social_learned_info": (12, 7, 11),
    "k12_LH_neutral_learned_zero": (0, 2, 0),
    "k12_LH_social_learned_info_b030_s20001": (10, 4, 6),
}


def _count(value: float, scale: float) -> int:
    """The integer count behind a reported ratio ``value = scale * count``; fails if it is not one."""
    count = value / scale
    assert abs(count - round(count)) < 1e-9, (value, scale)
    return round(count)


def test_recorded_numbers_of_the_first_layout():
    """Numbers recorded with the first layout's code before the move: floats within ``RTOL`` (never
    hashes of raw bytes, which differ between BLAS kernels), counts exactly."""
    for cell, recorded in RECORDED_POSTERIOR_MEAN.items():
        ex = population.examples(parse_cell(cell))
        est = learners.ReferenceLearner().fit(ex.X, ex.Y)
        np.testing.assert_allclose(est.posterior_mean_, recorded, rtol=RTOL, atol=0)
    cell = parse_cell("k12_LH_neutral_learned_info_b060")
    pred = learners.ReferenceLearner().fit(population.examples(cell).X, population.examples(cell).Y).predict(
        population.population(cell).X)
    assert pred.shape == (5000,)
    np.testing.assert_allclose(pred[:3], [0.905557777969, 0.69876231641, -1.58805765677], rtol=RTOL, atol=0)
    np.testing.assert_allclose([pred.mean(), pred.std()], [0.0115182224998, 1.1046958631], rtol=RTOL, atol=0)
    for cell, (pse, err, full) in RECORDED_COUNTS.items():
        r = references.cell_references(parse_cell(cell))
        assert r["n_pairs"] == 99, cell
        got = (_count(r["learner_pse_pp"], 100 / 99), _count(r["learner_error"], 1 / 99),
               _count(r["fullinfo_pse_pp"], 100 / 99))
        assert got == (pse, err, full), cell
    assert _count(references.indicator_learner_pse(), 100 / 99) == -5  # -5.05 pp


def test_indicator_learner_equals_the_first_layout():
    c = parse_cell("k12_LH_neutral_learned_zero")
    ex, pop = population.examples(c), population.population(c)
    edges = encoding.quartile_edges(c)
    feats = encoding.indicator_features(ex.X, c.L, edges)
    assert feats.shape == (80, 8 + 4 * 3)
    old = _old_posterior_mean(feats, ex.Y)
    est = learners.IndicatorLearner(c.L, edges).fit(ex.X, ex.Y)
    assert np.array_equal(est.posterior_mean_, old)
    assert np.array_equal(est.predict(pop.X), _old_predict(old, encoding.indicator_features(pop.X, c.L, edges)))
