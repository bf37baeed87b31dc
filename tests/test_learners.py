"""The reference learner and the category-indicator learner (analysis.learners): scikit-learn
shape, and bit-for-bit equality with the first layout's closed form on real cells."""
from __future__ import annotations

import hashlib

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
    ex, pop = population.examples(cell), population.population(cell)
    old = _old_posterior_mean(ex.X, ex.Y)
    est = learners.ReferenceLearner().fit(ex.X, ex.Y)
    assert np.array_equal(est.posterior_mean_, old)
    assert est.intercept_ == old[0] and np.array_equal(est.coef_, old[1:])
    assert np.array_equal(est.predict(pop.X), _old_predict(old, pop.X))
    assert np.array_equal(references.blr_posterior_mean(ex.X, ex.Y), old)


def test_recorded_numbers_of_the_first_layout():
    """Hashes and exact floats recorded with the first layout's code before the move."""
    ex = population.examples("k12_LH_neutral_learned_info_b060")
    est = learners.ReferenceLearner().fit(ex.X, ex.Y)
    assert hashlib.sha256(est.posterior_mean_.tobytes()).hexdigest()[:16] == "4151813a752ca69b"
    pred = est.predict(population.population("k12_LH_neutral_learned_info_b060").X)
    assert hashlib.sha256(pred.tobytes()).hexdigest()[:16] == "ed25a8e04776b5da"
    ex = population.examples("k18_LH_social_learned_info")
    m = learners.ReferenceLearner().fit(ex.X, ex.Y).posterior_mean_
    assert hashlib.sha256(m.tobytes()).hexdigest()[:16] == "eb0778c1fc02f95c"
    recorded = {  # cell -> (learner_pse_pp, learner_error, fullinfo_pse_pp) as float.hex
        "k12_LH_neutral_learned_info_b060": ("0x1.73b79890cede4p+4", "0x1.4afd6a052bf5bp-5", "0x1.b45d1745d1748p+4"),
        "k6_HH_neutral_learned_zero": ("0x1.0295fad40a59cp+0", "0x1.4afd6a052bf5bp-7", "0x0.0p+0"),
        "k18_LH_social_learned_info": ("0x1.83e0f83e0f83ep+3", "0x1.219dbcc48676fp-4", "0x1.638e38e38e38bp+3"),
        "k12_LH_neutral_learned_zero": ("0x0.0p+0", "0x1.4afd6a052bf5bp-6", "0x0.0p+0"),
        "k12_LH_social_learned_info_b030_s20001": ("0x1.433b79890cedep+3", "0x1.4afd6a052bf5bp-5",
                                                   "0x1.83e0f83e0f838p+2"),
    }
    for cell, (pse, err, full) in recorded.items():
        r = references.cell_references(cell)
        assert (r["learner_pse_pp"], r["learner_error"], r["fullinfo_pse_pp"]) == tuple(
            float.fromhex(x) for x in (pse, err, full)), cell
    assert references.indicator_learner_pse() == float.fromhex("-0x1.433b79890cedep+2")  # -5.05 pp


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
