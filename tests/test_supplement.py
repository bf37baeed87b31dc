"""Tests of analysis.supplement: known answers on tiny fixtures, then pinned released numbers."""
from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from numpy.testing import assert_allclose

from analysis import claims, supplement
from analysis.claims import NotReleased
from analysis.records import load_records


def _records(rows):
    """A records frame from ``(arm, i, j, order, picked_i)`` tuples."""
    df = pd.DataFrame(rows, columns=["arm", "i", "j", "order", "picked_i"])
    df["pair_id"] = df.groupby(["i", "j"]).ngroup()
    return df


# --- pair-clustered logistic model -----------------------------------------------------------

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
    pse = supplement.pair_pse(load_records("sonnet", "k12_LH_neutral_absent_zero")).mean() * 100
    assert_allclose(row["effect_pp"], pse, atol=1e-6)
    assert row["p"] == pytest.approx(7.7e-9, rel=0.01)
    assert row["order_coef"] == pytest.approx(-0.697, abs=5e-4)
    assert row["per_order"][0][0] == pytest.approx(19.19, abs=0.01)
    assert 0.62 < row["interaction_p"] < 0.64


# --- order robustness ------------------------------------------------------------------------

@pytest.fixture()
def tiny_records():
    # pair (1,2): consistent (both arms agree across orders); pair (3,4): cf_a0 orders differ;
    # pair (5,6): cf_a1 has one parsed order only
    return _records([
        ("cf_a1", 1, 2, 0, 1.0), ("cf_a1", 1, 2, 1, 1.0), ("cf_a0", 1, 2, 0, 0.0), ("cf_a0", 1, 2, 1, 0.0),
        ("cf_a1", 3, 4, 0, 1.0), ("cf_a1", 3, 4, 1, 1.0), ("cf_a0", 3, 4, 0, 1.0), ("cf_a0", 3, 4, 1, 0.0),
        ("cf_a1", 5, 6, 0, 1.0), ("cf_a1", 5, 6, 1, np.nan), ("cf_a0", 5, 6, 0, 0.0), ("cf_a0", 5, 6, 1, 0.0),
        ("factual", 1, 2, 0, 1.0), ("factual", 1, 2, 1, 0.0),
    ])


def test_consistent_pairs_strict_and_relaxed(tiny_records):
    assert list(supplement.consistent_pairs(tiny_records)) == [(1, 2)]
    assert list(supplement.consistent_pairs(tiny_records, require_both_orders=False)) == [(1, 2), (5, 6)]


def test_inconsistency_and_position_rates(tiny_records):
    inc = supplement.inconsistency_rates(tiny_records)
    assert inc["cf_a1"] == 0.0  # pair (5,6) lacks an order and is not counted
    assert inc["cf_a0"] == pytest.approx(1 / 3)  # (3,4) differs among three answered pairs
    assert inc["factual"] == 1.0
    pos = supplement.position_rates(tiny_records)
    # cf_a0: picked first = [0, 1, 1, 1, 0, 1] (order 1 flips picked_i)
    assert pos["cf_a0"] == pytest.approx(4 / 6)


def test_lpm_arm_coefficient_equals_difference_in_means_when_balanced():
    rows = [(arm, p, p + 1, o, y) for p, (arm, o, y) in enumerate(
        [("cf_a1", 0, 1.0), ("cf_a1", 1, 1.0), ("cf_a0", 0, 1.0), ("cf_a0", 1, 0.0)] * 5)]
    arm, order = supplement.lpm_arm_effect(_records(rows))
    assert arm == pytest.approx(50.0)
    assert order == pytest.approx(-50.0)


def test_table13_joint_slopes_are_flat_when_pairs_never_change():
    t13 = supplement.table13(draws=200).set_index(["model", "names"])
    assert (t13.loc[("deepseek", "neutral"), ["joint_slope", "lo", "hi"]].abs() < 1e-12).all()
    assert t13.loc[("sonnet", "neutral"), "n_joint"] == 27


# --- real-data anchors ------------------------------------------------------------------------

def test_structure_statistic_known_answers():
    rng = np.random.default_rng(0)
    z = rng.standard_normal(20000)
    same = np.column_stack([z, 2 * z, -z + 1])
    assert supplement.structure_statistic(same) == pytest.approx(1.0)
    assert supplement.structure_statistic(rng.standard_normal((20000, 4))) < 0.01


def test_r2_given_known_answers():
    rng = np.random.default_rng(1)
    X = rng.standard_normal((500, 3))
    assert supplement.r2_given(X @ [1.0, -2.0, 0.5] + 3, X) == pytest.approx(1.0)
    assert supplement.r2_given(rng.standard_normal(500), X) < 0.05


@pytest.mark.parametrize("panel", ["heart", "wdbc", "cervical", "dermatology", "hepatitis", "liver"])
def test_frozen_columns_are_the_rule_minus_identifiers_and_outcomes(panel):
    auto = supplement.auto_columns(supplement.anchor_source(panel))
    excluded = supplement.ANCHOR_EXCLUDED.get(panel, ())
    assert [c for c in auto if c not in excluded] == list(supplement.ANCHOR_COLUMNS[panel])


def test_anchor_panels_shape():
    k_n = {p: supplement.anchor_panel(p).shape[::-1] for p in supplement.TABLE14_ORDER if p != "diabetes"}
    assert k_n == {"hepatitis": (3, 148), "cervical": (7, 761), "heart": (7, 299), "dermatology": (32, 358),
                   "liver": (5, 345), "wdbc": (30, 569)}


# --- summary-level and not-released tables ----------------------------------------------------

def test_combine_gap_in_quadrature():
    g, lo, hi = supplement.combine_gap(10.0, 7.0, 14.0, -10.0, -14.0, -6.0)
    assert (g, lo, hi) == (10.0, 5.0, 10.0 + np.hypot(4.0, 4.0))


def test_audit_decomposition_is_summary_level():
    t = supplement.audit_decomposition().set_index(["row", "names"])
    label = t.loc[("label_mismatch", "neutral vs social"), "gap_pp"]
    assert label == pytest.approx(100 * (0.138889 - 0.056397), abs=1e-9)
    assert t.loc[("full_omission", "neutral"), "gap_lo"] == pytest.approx(8.86, abs=0.005)


def test_regeneration_pairs_need_every_draw():
    frozen = _records([("cf_a1", 1, 2, 0, 1.0), ("cf_a0", 1, 2, 0, 0.0),
                       ("cf_a1", 3, 4, 0, 1.0), ("cf_a0", 3, 4, 0, 1.0)])
    stoch = pd.concat([_records([("cf_a1", 1, 2, 0, 1.0), ("cf_a0", 1, 2, 0, d % 2),
                                 ("cf_a1", 3, 4, 0, 1.0)]).assign(draw=d) for d in range(5)]
                      + [_records([("cf_a0", 3, 4, 0, 0.0)]).assign(draw=0)])
    p = supplement.regeneration_pairs(frozen, stoch)
    assert list(p.index) == [(1, 2)]  # pair (3,4) lacks cf_a0 in draws 1-4
    assert p.loc[(1, 2), "stochastic"] == pytest.approx(1 - 2 / 5)


def test_deepseek_v41_frozen_baseline():
    b = supplement.frozen_baseline_checks()
    assert_allclose(b["inconsistency_cf_a0"].to_numpy(), [43 / 99 * 100, 44 / 99 * 100], atol=0.01)
    assert b.attrs["two_point_slope"] == pytest.approx(-0.0218, abs=1e-4)


def test_not_released_claims_name_what_is_missing():
    assert "60 pairs" in supplement.T7_MISSING and "concurrent_regen_records.csv" in supplement.T19_MISSING
    assert "t1resample" in supplement.T1_MISSING


def test_fig4a_returns_figure():
    df = pd.DataFrame({"model": ["sonnet", "gpt"], "label": ["a", "b"], "effect_pp": [-20.0, -15.0],
                       "lo_pp": [np.nan, -22.0], "hi_pp": [np.nan, -8.0], "source": ["s", "r"]})
    fig = supplement.fig4a_naming(df)
    ax = fig.axes[0]
    ticks = dict(zip([t.get_text() for t in ax.get_yticklabels()], ax.get_yticks()))
    assert ticks["a"] > ticks["b"]  # first row on top
    assert ax.get_xlabel().startswith("social minus neutral")


# --- the registry -----------------------------------------------------------------------------

@pytest.fixture(scope="module")
def values():
    return supplement.claim_values(draws=200)


def test_every_registered_claim_is_computed(values):
    reg = claims.registry()
    mine = set(reg["claim_id"][reg["claim_id"].str.startswith(
        ("T7.", "T8.", "T9.", "T10.", "T11.", "T12.", "T13.", "T14.", "T15.", "T18.", "T19.", "T20.", "SN6.", "SN7.",
         "SN9.", "SN10.", "SN11.", "SN12.", "Main.naming"))])
    assert mine == set(values)


def test_claims_match_or_are_explained(values):
    """Point estimates match; any mismatch (interval bounds vary with 200 draws) carries a note."""
    c = claims.compare(values).set_index("claim_id")
    notes = claims.registry().set_index("claim_id")["note"]
    assert (c["status"] != "not_computed").all()
    released = c[c["status"] != "not_released"]
    points = released[~released.index.str.contains(r"\.(?:lo|hi|lo90|hi90)$")]
    unexplained = [k for k in points.index[points["status"] == "mismatch"] if not notes[k]]
    assert not unexplained
    not_rel = [k for k, v in values.items() if isinstance(v, NotReleased)]
    assert all(k.startswith(("T7.", "T19.", "SN12.")) for k in not_rel)
