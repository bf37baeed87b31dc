"""Tests of analysis.supplement.logistic: the pair-clustered logistic model (Tables 8, 10; Supplementary Note 6)."""
from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from numpy.testing import assert_allclose

from analysis import supplement
from analysis.cells import parse_cell
from analysis.estimators import pair_pse
from analysis.records import load_records

@pytest.fixture(scope="module")
def simulated_frame():
    """Logistic choices with known coefficients (const 0.2, arm 1.0, order -0.7), 400 pairs x 4 calls."""
    rng = np.random.default_rng(11)
    n_pairs = 400
    pair = np.repeat(np.arange(n_pairs), 4)
    arm = np.tile([1.0, 1.0, 0.0, 0.0], n_pairs)
    order = np.tile([0.0, 1.0, 0.0, 1.0], n_pairs)
    p = 1 / (1 + np.exp(-(0.2 + 1.0 * arm - 0.7 * order)))
    return pd.DataFrame({"y": (rng.random(len(p)) < p).astype(float), "arm": arm, "order": order,
                         "social": 0.0, "draw": 0, "pair": [f"{q}_{q + 1}" for q in pair]})


def test_batch_logit_equals_gee_and_recovers_truth(simulated_frame):
    res = supplement.fit_gee(simulated_frame)
    X = supplement.design(simulated_frame).to_numpy(float)
    beta = supplement.batch_logit(X, simulated_frame["y"].to_numpy(), np.ones((1, len(X))))[0]
    assert_allclose(beta, res.params.to_numpy(), rtol=1e-8, atol=1e-10)
    # 1,600 calls: the estimates sit within a few standard errors of the generating values
    assert np.all(np.abs(beta - [0.2, 1.0, -0.7]) < 4 * res.bse.to_numpy())


def test_batch_logit_weights_equal_duplicated_rows(simulated_frame):
    """A pair drawn twice (weight 2) gives the same fit as its rows duplicated."""
    rng = np.random.default_rng(3)
    W = supplement.cluster_counts(simulated_frame, rng, 2)
    X = supplement.design(simulated_frame).to_numpy(float)
    beta = supplement.batch_logit(X, simulated_frame["y"].to_numpy(), W)
    for b in range(2):
        rows = np.repeat(np.arange(len(X)), W[b].astype(int))
        dup = simulated_frame.iloc[rows].reset_index(drop=True)
        assert_allclose(beta[b], supplement.fit_gee(dup).params.to_numpy(), rtol=1e-7, atol=1e-9)


def test_cluster_counts_resample_within_each_draw():
    frame = pd.DataFrame({"pair": ["a", "a", "b", "b", "c", "s:a", "s:b"], "draw": [0, 0, 0, 0, 0, 1, 1],
                          "y": 0.0, "arm": 0.0, "order": 0.0, "social": 0.0})
    W = supplement.cluster_counts(frame, np.random.default_rng(0), 50)
    per_pair = pd.DataFrame(W.T).groupby(frame["pair"].to_numpy()).first().T
    assert_allclose(per_pair[["a", "b", "c"]].sum(axis=1), 3)  # three pairs in draw 0
    assert_allclose(per_pair[["s:a", "s:b"]].sum(axis=1), 2)  # two pairs in draw 1
    # same stream as the spec's loop of rng.choice(pairs, n) per draw and group
    first = np.random.default_rng(0).choice(np.array([0, 1, 2]), 3, replace=True)
    assert_allclose(per_pair.iloc[0][["a", "b", "c"]], np.bincount(first, minlength=3))


def test_replacement_ame_reproduces_paired_estimate_sonnet_k12():
    """Table 8 row 1 (point, P values) and the paper's statement that the AME equals the paired PSE."""
    row = supplement.logistic_effect(supplement.model_frames("sonnet", 12, False), draws=40)
    pse = pair_pse(load_records("sonnet", parse_cell("k12_LH_neutral_absent_zero"))).mean() * 100
    assert_allclose(row["effect_pp"], pse, atol=1e-6)
    assert row["p"] == pytest.approx(7.7e-9, rel=0.01)
    assert row["order_coef"] == pytest.approx(-0.697, abs=5e-4)
    assert row["per_order"][0][0] == pytest.approx(19.19, abs=0.01)
    assert 0.62 < row["interaction_p"] < 0.64


def _contrast_frame(n_pairs: int = 30, seed: int = 5) -> pd.DataFrame:
    """Neutral and social counterfactual calls of ``n_pairs`` pairs, both orders (random choices)."""
    rng = np.random.default_rng(seed)
    rows = [(f"{p}_{p + 1}", arm, order, social, float(rng.random() < 0.5))
            for p in range(n_pairs) for social in (0.0, 1.0) for arm in (1.0, 0.0) for order in (0.0, 1.0)]
    return pd.DataFrame(rows, columns=["pair", "arm", "order", "social", "y"]).assign(draw=0)


def test_per_order_contrast_bootstraps_neutral_social_then_difference():
    """Spec R1: per order, the neutral flip, the social flip and their difference, ``draws`` resamples each."""
    frame = _contrast_frame()
    draws = 50
    rng = np.random.default_rng(0)
    got = supplement.logistic._per_order_contrast(frame, 0, rng, draws)
    neutral, social, diff = supplement.per_order_flips(frame, 0)
    assert list(diff.index) == sorted(diff.index)
    ref = np.random.default_rng(0)
    for series in (neutral, social):  # only advance the generator
        [ref.integers(0, len(series), len(series)) for _ in range(draws)]
    v = diff.to_numpy()
    means = np.array([v[ref.integers(0, len(v), len(v))].mean() for _ in range(draws)])
    assert got[0] == pytest.approx(100 * v.mean())
    assert got[1:] == pytest.approx(tuple(100 * np.percentile(means, [2.5, 97.5])))
    assert rng.integers(0, 10**9) == ref.integers(0, 10**9)  # same stream position afterwards


def test_per_order_contrasts_reach_zero_twice():
    """Supplementary Note 6: two of the eight per-order contrast intervals reach or cross zero (spec R1)."""
    table = supplement.logistic_table(1000)
    upper = {(key, o): table[key]["per_order"][o][2] for key in ("sup.sonnet18", "sup.gpt", "sup.qwen", "sup.deepseek")
             for o in (0, 1)}
    assert sorted(k for k, hi in upper.items() if hi >= 0) == [("sup.deepseek", 0), ("sup.qwen", 0)]
