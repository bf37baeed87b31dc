"""Issue 22's review cases for the validity battery, each fixed by a test; its calibration over seeds."""
from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from analysis import config, cues, intervals
from analysis.cells import parse_cell
from analysis.validity import calibration as CA
from analysis.validity import heterogeneity as H
from analysis.validity import panel as P
from analysis.validity import reliability as REL
from analysis.validity import run as VR
from analysis.validity import subjects as S
from analysis.validity import truth as T

CELL = "k12_LH_neutral_learned_zero"
PARSED = parse_cell(CELL)  # the tests are the boundary: parsed once
IDS = [q.id for q in cues.panel_cues("neutral")]
N_SEEDS = 60  # the full study (>= 200 seeds) is notebook 09's


def _records(subject, cue, n_pairs=None):
    t = cues.job_table(PARSED, cue)
    if n_pairs is not None:
        t = t[t["pair_id"] < n_pairs].reset_index(drop=True)
    return VR.records_from_answers(t, [subject.choose(p, s) for p, s in zip(t["prompt"], t["prompt_sha256"])])


def test_deterministic_proxy_ignoring_subject_is_never_called_excess():
    """It got "excess +5.05 [5.05, 5.05]" under ordered and arbitrary: the learner's -5.05 pp taken as exact."""
    subj = CA.ignores_proxies(noise_scale=1e-3)
    recs = {c: _records(subj, c) for c in ("numeric", "ordered", "arbitrary")}
    pan = P.panel(PARSED, recs, draws=2000)
    for row in pan["rows"]:
        assert row["pse_pp"] == 0 and row["pse_ci"] == [0.0, 0.0]  # deterministic: PSE exactly 0 on every pair
        assert row["verdict"] not in ("excess", "shortfall"), row
        assert row["excess_ci"][0] < 0 < row["excess_ci"][1] or row["reference_kind"] == "learner"
    paper = {r["cue"]: r["paper_verdict"] for r in pan["rows"]}
    assert paper["ordered"] == paper["arbitrary"] == "excess"  # the paper's rule, kept and labelled as such
    assert pan["convergence"]["heterogeneity"]["verdict"] != H.DEPENDENT
    assert all(t["p_value"] > 0 for t in VR.Q.reliance_tests(pan["rows"]))  # never p = 0 on zero variance


def test_cue_specific_is_not_cue_robust_at_ten_pairs():
    """The 5-of-6 count called it cue-robust in 32.5 % of seeds at 10 pairs."""
    sim = T.simulate_panel("cue-specific", PARSED, IDS, n_seeds=N_SEEDS, draws=1000, variant="forced", n_pairs=10)
    shares = T.heterogeneity_shares(sim)
    assert shares["share_robust"] == 0.0
    plan = VR.ValidityPlan(cells=(CELL,), n_pairs=10, seeds=(), variants=("forced",))
    conv = VR.run(S.subject("cue-specific"), plan, draws=1000)["cells"][0]["convergence"]
    assert not conv["robust"] and not conv["statement"].startswith("cue-robust")


def test_two_pairs_are_too_few_to_judge():
    subj = S.subject("cue-specific")
    recs = {c: _records(subj, c, n_pairs=2) for c in ("numeric", "numeric:assay")}
    pan = P.panel(PARSED, recs, draws=500)
    assert all(r["verdict"] == intervals.TOO_FEW for r in pan["rows"])
    assert pan["convergence"]["heterogeneity"]["verdict"] in (intervals.TOO_FEW, "")


def test_reference_draws_refit_the_learner_on_resampled_examples():
    for cue in ("numeric", "ordered", "label"):
        ref = P.cue_reference(PARSED, cue)
        kind = ref["reference_kind"]
        np.testing.assert_allclose(100 * P.RF.pair_shifts(PARSED, kind).mean(), ref["reference_pp"], atol=1e-9)
        d = 100 * P.RF.shift_draws(PARSED, cue, 400).mean(axis=1)
        assert d.std() > 1.0  # a learner of 80 examples: its PSE varies by pp over example resamples
    np.testing.assert_allclose(P.cue_reference(PARSED, "ordered")["reference_pp"], -5.0505, atol=1e-3)
    assert P.RF.true_reference_pp(PARSED) == 0.0


def test_split_half_reliability_and_the_ceiling():
    rng = np.random.default_rng(5)
    n = 3000
    true = rng.normal(0, 1, n)
    k, o, a = (g.ravel() for g in np.meshgrid(np.arange(n), [0, 1], [1, -1], indexing="ij"))
    rec = pd.DataFrame({"i": k, "j": k + n, "order": o, "arm": np.where(a == 1, "cf_a1", "cf_a0"),
                        "picked_i": a * true[k] / 2 + rng.normal(size=len(k))})
    rel = REL.split_half(rec)
    # per-order PSE = true + N(0, 2): split-half r = 1/3, Spearman-Brown 0.5 (3,000 pairs: SE of r about 0.015)
    assert rel["n_pairs"] == n
    np.testing.assert_allclose([rel["r_half"], rel["reliability"]], [1 / 3, 0.5], atol=0.05)
    np.testing.assert_allclose(REL.disattenuate(0.3, 0.5, 0.5), 0.6)


def test_cue_specific_convergence_is_read_against_its_ceiling():
    """True r = 1 between numeric and narrative; the raw r is far lower, the ceiling says why."""
    subj = S.subject("cue-specific")
    pan = P.panel(PARSED, {c: _records(subj, c) for c in ("numeric", "narrative")}, draws=1000)
    pr = pan["convergence"]["pairwise_r"][0]
    assert pr["ceiling"] < 0.6 and pr["r"] < pr["ceiling"] + 0.2
    assert abs(pr["r_disattenuated"]) > abs(pr["r"])


@pytest.fixture(scope="module")
def calibration():
    res = CA.run(PARSED, IDS, n_seeds=N_SEEDS, draws=1000)
    return res, CA.table(res, IDS)


def test_calibration_meets_the_goals_where_the_rule_can(calibration):
    res, tab = calibration
    t = tab.set_index("verdict")
    panel = t.loc["excess or shortfall (panel: joint bootstrap, TOST)"]
    assert panel["false_finding_rate"] <= CA.FALSE_FINDING_GOAL and panel["coverage"] >= CA.COVERAGE_GOAL
    assert panel["power_20pp"] >= 0.9
    het = t.loc["cue-dependent (heterogeneity, simultaneous 95%)"]
    assert het["false_finding_rate"] <= CA.FALSE_FINDING_GOAL and het["power_20pp"] >= 0.9
    assert t.loc[f"cue-robust within ±{config.EQUIVALENCE_MARGIN_PP:g} pp", "false_finding_rate"] == 0
    assert t.loc["association-reliance r defined (AUCs vary beyond noise)", "false_finding_rate"] <= 0.05
    assert t.loc["abstention rate (exact 95% interval)", "coverage"] >= CA.COVERAGE_GOAL
    # the paper's rule (reference taken as exact) does not reach the goal: stated, not hidden
    paper = t.loc["excess or shortfall (the paper's rule: PSE interval shifted by a fixed reference)"]
    assert paper["false_finding_rate"] > CA.FALSE_FINDING_GOAL and not paper["false_finding_goal_met"]


def test_abstention_interval_covers_a_rate_near_zero(calibration):
    """A percentile interval covered a true abstention rate of 0.005 in 60 % of seeds."""
    res, _ = calibration
    cov = res["cue-specific"][1].set_index("cue")
    assert cov.loc["label", "true_abstain"] < 0.01 and cov.loc["label", "abstain_coverage"] >= 0.93


def test_tuned_subjects_have_the_stated_true_effect():
    for d in CA.EFFECTS_PP[:1]:
        s = CA.tuned_subject(d, PARSED, paper_only=True)
        t = T.known_truth(s, PARSED, ["numeric", "numeric:assay"]).set_index("cue")["true_excess_pp"]
        np.testing.assert_allclose(t["numeric"], d, atol=0.01)
        assert abs(t["numeric:assay"]) < 1e-9


@pytest.mark.parametrize("kind", ["learner", "indicator", "label"])
def test_refits_from_precomputed_features_equal_pair_shifts_exactly(kind):
    """The refitted references (issue 21 speed: features of the examples and pairs computed once) give
    pair_shifts's picks on every example resample, bit for bit."""
    from analysis.validity import reference as RF

    c = parse_cell(CELL)
    n = len(RF.examples(c).Y)
    idx = np.random.default_rng(RF.REFERENCE_SEED).integers(0, n, size=(60, n))
    slow = np.stack([RF.pair_shifts(c, kind, k) for k in idx]).astype(np.int8)
    assert np.array_equal(RF._shift_draws.__wrapped__(c, kind, 60, RF.REFERENCE_SEED), slow)
    F = RF._feature_design(c, kind)
    assert np.array_equal(RF._refit_shifts(F, np.arange(n)), RF.pair_shifts(c, kind))  # the examples as shown
