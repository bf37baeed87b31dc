"""Construct validity: known truth of the simulated subjects, panel, probe, replication, card (issue 15)."""
from __future__ import annotations

import json

import numpy as np
import pandas as pd
import pytest

from analysis import collection as C
from analysis import cues, estimators
from analysis.cells import parse_cell
from analysis.judgments import judge
from analysis.validity import card as VC
from analysis.validity import coupling as CP
from analysis.validity import panel as P
from analysis.validity import probe as Q
from analysis.validity import replication as R
from analysis.validity import run as VR
from analysis.validity import subjects as S
from analysis.validity import truth as T

CELL = "k12_LH_neutral_learned_zero"
PARSED = parse_cell(CELL)  # the tests are the boundary: parsed once
IDS = [q.id for q in cues.panel_cues("neutral")]
N_SEEDS = 100


@pytest.fixture(scope="module")
def sims():
    return {name: T.simulate_panel(name, PARSED, IDS, n_seeds=N_SEEDS, draws=1000, variant="abstain")
            for name in S.SUBJECTS}


@pytest.fixture(scope="module")
def coverage(sims):
    return {name: T.coverage(name, PARSED, IDS, n_seeds=N_SEEDS, draws=1000, variant="abstain", sim=sims[name])
            for name in S.SUBJECTS}


# --- known truth first ------------------------------------------------------------------------------

@pytest.mark.parametrize("name", S.SUBJECTS)
def test_intervals_cover_the_known_truth(coverage, name):
    cov = coverage[name]
    assert (cov["n_seeds"] >= 100).all()
    # goal of issue 22: coverage >= 93 %; per cue at least 90 % (100 seeds: one SE of a 95 % rate is 2.2 pp)
    assert cov["excess_coverage"].mean() >= 0.93 and cov["excess_coverage"].min() >= 0.90
    assert cov["auc_coverage"].mean() >= 0.90 and cov["auc_coverage"].min() >= 0.85
    assert cov["abstain_coverage"].mean() >= 0.93


def test_associates_not_acts_is_recovered(coverage):
    cov = coverage["associates-not-acts"].set_index("cue")
    numeric = ["numeric", "numeric:assay", "numeric:opaque", "narrative"]
    assert (cov.loc[numeric, "true_pse_pp"].abs() < 1e-9).all()
    assert ((cov.loc[numeric, "share_excess"] + cov.loc[numeric, "share_shortfall"]) <= 0.05).all()
    assert (cov.loc[numeric + ["ordered", "label"], "share_auc_above_half"] >= 0.9).all()
    assert cov.loc["arbitrary", "share_auc_above_half"] <= 0.1  # codes carry no rank to read


def test_acts_not_associates_is_recovered(coverage):
    cov = coverage["acts-not-associates"].set_index("cue")
    assert cov.loc["ordered", "true_excess_pp"] > 15 and cov.loc["ordered", "share_excess"] >= 0.9
    assert (cov["true_auc"] == 0.5).all() and (cov["share_auc_above_half"] <= 0.1).all()
    none = ["numeric", "numeric:assay", "numeric:opaque", "arbitrary"]
    assert ((cov.loc[none, "share_excess"] + cov.loc[none, "share_shortfall"]) <= 0.05).all()


def test_cue_specific_is_recovered(coverage, sims):
    by = coverage["cue-specific"].set_index("cue")
    assert by.loc["numeric", "share_excess"] >= 0.9 and by.loc["narrative", "share_excess"] >= 0.9
    assert by.loc["numeric:assay", "share_excess"] + by.loc["numeric:assay", "share_shortfall"] <= 0.05
    assert by.loc["numeric:opaque", "share_excess"] + by.loc["numeric:opaque", "share_shortfall"] <= 0.05
    assert T.heterogeneity_shares(sims["cue-specific"])["share_dependent"] >= 0.9


def test_known_truth_matches_the_subjects_own_draws():
    """The vectorised design gives the per-pair PSE the panel computes from the subject's records."""
    subj = S.subject("cue-specific", seed=3)
    table = cues.job_table(PARSED, "numeric")
    rec = VR.records_from_answers(table, [subj.choose(p, s) for p, s in zip(table["prompt"], table["prompt_sha256"])])
    W, pairs = T.decision_design(table)
    np.testing.assert_allclose(rec["picked_i"].to_numpy() @ W, estimators.pair_pse(rec).reindex(pairs).to_numpy())
    p = T.decision_probabilities(subj, table)
    assert np.all((p > 0) & (p < 1))
    # the exact expectation lies inside the seed's interval (a check of scale, not of coverage)
    truth = T.known_truth("cue-specific", PARSED, ["numeric"]).iloc[0]
    row = P.cue_row(PARSED, "numeric", rec, draws=2000)
    assert row["pse_ci"][0] <= truth["true_pse_pp"] <= row["pse_ci"][1]


def test_subjects_extend_the_collection_subject():
    subj = S.subject("associates-not-acts")
    assert isinstance(subj, C.SimulatedSubject) and isinstance(subj.params, C.SimulatedParams)
    plain = C.SimulatedSubject(C.SimulatedParams(proxy_weight=0.5, level_weight=0.3))
    mine = S.CueSubject(S.CueParams(proxy_weight=0.5, level_weight=0.3))
    for display in ("numeric", "ordered"):
        t = cues.job_table(PARSED, display)
        for prompt in t["prompt"].iloc[:20]:
            assert mine.probability_first(prompt) == pytest.approx(plain.probability_first(prompt))
    with pytest.raises(C.CollectionError, match="unknown validity subject"):
        S.subject("oracle")


def test_probe_answers_of_the_simulated_subject():
    subj = S.subject("acts-not-associates")
    t = cues.probe_table(PARSED, "numeric", "abstain")
    answers = [subj.probe_answer(p, s) for p, s in zip(t["prompt"], t["prompt_sha256"])]
    assert set(answers) <= {0, 1, 2} and 0.45 < np.mean([a == 0 for a in answers]) < 0.75
    forced = cues.probe_table(PARSED, "numeric", "forced")
    assert all(subj.probe_probabilities(p)[1] == 0 for p in forced["prompt"].iloc[:10])


# --- panel ------------------------------------------------------------------------------------------

def _rows(verdicts, excess):
    return [{"cue": f"c{k}", "control": False, "verdict": v, "excess_pp": e} for k, (v, e) in
            enumerate(zip(verdicts, excess))]


def test_convergence_reads_the_heterogeneity_test_not_a_count():
    rng = np.random.default_rng(0)
    idx = pd.MultiIndex.from_arrays([np.arange(30), np.arange(30) + 100], names=["i", "j"])
    pp = {f"c{k}": pd.Series(rng.normal(size=30), index=idx) for k in range(6)}
    rows = [{"cue": f"c{k}", "control": False, "verdict": v, "excess_pp": e, "n_pairs": 30} for k, (v, e) in
            enumerate(zip(["excess"] * 5 + ["inconclusive"], [9, 8, 7, 6, 5, -1]))]
    same = {f"c{k}": rng.normal(0.0, 1.0, 2000) for k in range(6)}
    robust = P.convergence(rows, pp, excess=same)
    assert robust["robust"] and robust["heterogeneity"]["verdict"] == "cue-robust within ±5 pp"
    assert robust["sign_agreement"] == {"positive": 5, "negative": 1, "zero": 0, "agree": 5, "of": 6}
    assert robust["excess_range"] == [-1.0, 9.0] and len(robust["pairwise_r"]) == 15
    apart = {**same, "c0": rng.normal(20.0, 1.0, 2000)}
    dep = P.convergence(rows, pp, excess=apart)
    assert not dep["robust"] and dep["statement"].startswith("cue-dependent")
    assert dep["heterogeneity"]["largest"]["a"] == "c0"
    wide = {k: rng.normal(0.0, 8.0, 2000) for k in same}
    assert P.convergence(rows, pp, excess=wide)["heterogeneity"]["verdict"] == "inconclusive"
    untested = P.convergence(rows, pp)  # no joint draws (the audit engine's rows): not tested, never robust
    assert not untested["robust"] and "not tested" in untested["statement"]


def test_pair_correlation_recovers_a_known_correlation():
    rng = np.random.default_rng(1)
    x = rng.normal(size=400)
    y = 0.6 * x + 0.8 * rng.normal(size=400)
    idx = pd.MultiIndex.from_arrays([np.arange(400), np.arange(400)], names=["i", "j"])
    out = P.pair_correlation(pd.Series(x, idx), pd.Series(y, idx), draws=1000)
    assert out["ci"][0] < 0.6 < out["ci"][1] and out["n_pairs"] == 400


def test_cue_rows_use_the_judgment_and_the_cue_references():
    assert P.cue_reference(PARSED, "numeric")["reference_pp"] == pytest.approx(0.0)
    assert P.cue_reference(PARSED, "ordered")["reference_pp"] == pytest.approx(-5.05, abs=0.005)
    assert P.cue_reference(PARSED, "numeric:assay") == P.cue_reference(PARSED, "narrative")
    assert P.cue_reference(parse_cell("k12_LH_neutral_absent_zero"), "ordered")["reference"] == "fullinfo"
    subj = S.subject("acts-not-associates")
    t = cues.job_table(PARSED, "ordered")
    rec = VR.records_from_answers(t, [subj.choose(p, s) for p, s in zip(t["prompt"], t["prompt_sha256"])])
    row = P.cue_row(PARSED, "ordered", rec, draws=1000)
    j = judge(row["pse_pp"], row["pse_ci"], row["reference_pp"])
    assert row["paper_verdict"] == j.verdict == "excess" and row["paper_excess_ci"] == list(j.ci)
    assert row["verdict"] == "excess" and row["reference_kind"] == "indicator"
    # the joint interval is wider than the paper's: the reference's own variability enters it
    assert row["excess_ci"][1] - row["excess_ci"][0] > row["paper_excess_ci"][1] - row["paper_excess_ci"][0]


# --- probe statistics ---------------------------------------------------------------------------------

def test_association_auc_and_abstention_on_known_records():
    t = cues.probe_table(PARSED, "numeric", "abstain").iloc[:40]
    perfect = Q.association(Q.records(t, t["group_a_patient"]), draws=500)
    assert perfect["association_auc"] == 1.0 and perfect["abstain_rate"] == 0
    assert 0 < perfect["p_value"] <= 1 / 500  # zero variance: never p = 0 (issue 22)
    assert perfect["abstain_ci"][0] == 0 and perfect["abstain_ci"][1] == pytest.approx(0.0881, abs=1e-3)
    none = Q.association(Q.records(t, [0] * len(t)), draws=500)
    assert none["association_auc"] == 0.5 and none["abstain_rate"] == 1 and none["p_value"] == 1
    wrong = Q.association(Q.records(t, 3 - t["group_a_patient"]), draws=500)
    assert wrong["association_auc"] == 0.0 and wrong["n_pairs"] == 20


def test_bh_matches_statsmodels_and_skips_missing():
    reject, q = Q.bh([0.01, 0.04, float("nan"), 0.03, 0.5])
    assert reject == [True, False, False, False, False]
    assert q[0] == pytest.approx(0.04) and np.isnan(q[2]) and q[1] == pytest.approx(0.0533, abs=1e-3)


def test_association_vs_reliance_uses_cues_as_the_unit():
    rng = np.random.default_rng(2)
    idx = pd.MultiIndex.from_arrays([np.arange(80), np.arange(80)], names=["i", "j"])
    rows = [{"cue": f"c{k}", "control": False, "reference_pp": 0.0, "excess_pp": 5.0 * k} for k in range(6)]
    pse = {f"c{k}": pd.Series(rng.normal(0.05 * k, 0.3, 80), idx) for k in range(6)}
    linked = {f"c{k}": pd.Series(np.clip(rng.normal(0.5 + 0.08 * k, 0.2, 80), 0, 1), idx) for k in range(6)}
    rel = Q.coupling(rows, pse, linked, draws=1000)
    assert rel["defined"] and rel["r"] > 0.5 and rel["n_cues"] == 6
    lo, hi = rel["ci"]
    np.testing.assert_allclose([lo, hi], CP.fisher_interval(rel["r"], 6))
    assert not rel["equivalence_possible"] and rel["power"]["r=0.5"] < 0.2  # stated, at n = 6
    assert 0 < rel["p_permutation"] <= 1 and not np.isnan(rel["spearman"])
    assert "pair-level" in rel["statement"] and "cannot be shown with 6 cues" in rel["statement"]
    few = Q.coupling(rows[:2], pse, linked)
    assert np.isnan(few["r"]) and "could not" in few["statement"]


def test_coupling_is_undefined_for_acts_not_associates():
    """acts-not-associates (every AUC 0.5) printed r = +0.86; there is no association gradient to relate."""
    plan = VR.ValidityPlan(cells=(CELL,), seeds=(), variants=("forced",),
                           cue_ids=tuple(c for c in IDS if c != "label"))
    res = VR.run(S.subject("acts-not-associates"), plan, draws=1000)
    rel = res["cells"][0]["association_vs_reliance"]["forced"]
    assert not rel["defined"] and np.isnan(rel["r"]) and rel["statement"] == CP.UNDEFINED
    assert "undefined" in " ".join(VC.section(res)["validity_statements"])


# --- replication and the card -------------------------------------------------------------------------

def test_replication_verdicts():
    rows = {"a": [{"cue": "numeric", "verdict": "excess", "pse_pp": 20.0, "excess_pp": 20.0, "excess_ci": [1, 2]}],
            "b": [{"cue": "numeric", "verdict": "no resolved difference", "pse_pp": 2.0, "excess_pp": 2.0,
                   "excess_ci": [-1, 5]}]}
    out = R.replication_rows(rows)
    assert out[0]["replication"] == R.DEPENDENT and out[0]["replicates"] == ["a", "b"]
    assert R.replication_verdict(["excess", "excess", "excess"]) == R.STABLE
    assert [c.id for c in R.replicate_cells(parse_cell("k12_LH_neutral_learned_zero_s5"))] == [
        "k12_LH_neutral_learned_zero_s20001", "k12_LH_neutral_learned_zero_s20002"]


@pytest.fixture(scope="module")
def small_card():
    plan = VR.ValidityPlan(cells=(CELL,), n_pairs=12, seeds=(20001,),
                           cue_ids=("numeric", "numeric:assay", "ordered", "label"))
    res = VR.run(S.subject("cue-specific"), plan, draws=300)
    return plan, VC.section(res)


def test_card_section_has_the_agreed_keys(small_card):
    plan, card = small_card
    json.dumps(card, allow_nan=False)
    for row in card["cue_panel"]:
        assert {"cue", "pse_pp", "pse_ci", "reference_pp", "excess_ci", "verdict"} <= set(row)
    assert {"pairwise_r", "sign_agreement", "verdict_agreement"} <= set(card["convergence"])
    for a in card["association"]:
        assert {"cue", "association_auc", "auc_ci", "abstain_rate"} <= set(a)
    rel = card["association_vs_reliance"]
    assert {"r", "ci", "spearman", "p_permutation", "power", "pair_level", "defined", "margin"} <= set(rel)
    assert len(card["convergence"]["pairwise_r"]) == 3  # the label is the positive control, left out
    assert card["replication"][0]["replicates"] == [CELL, "k12_LH_neutral_learned_zero_s20001"]


def test_card_marks_the_cheap_pass_and_never_labels_the_model(small_card):
    plan, card = small_card
    assert "cheaper pass on the first 12 pairs" in card["validity_cheap_pass"]
    assert "cheaper pass" in VR.describe_plan(plan) and "cheaper pass" in card["validity_statements"][0].lower()
    html = VC.html_section(card)
    text = " ".join(card["validity_statements"]) + html + card["validity_scope"]
    assert "beyond the paper" in text
    for word in ("fair", "unfair", "biased"):
        assert word not in text.lower()
    assert VC.html_section({}) == ""


def test_plan_counts_the_calls():
    t = VR.plan_table(VR.ValidityPlan())
    assert t.loc[t["part"] == "panel", "calls"].sum() == 2 * (5 * 594 + 2 * 396)
    assert t.loc[t["part"] == "probe", "calls"].sum() == 2 * 7 * 2 * 198
    assert t.loc[t["part"] == "blind", "calls"].sum() == 2 * 2 * 99
    assert "15,840 calls" in VR.describe_plan()


# --- interface: the audit's battery and the ledgered command ---------------------------------------------

def test_audit_battery_validity_runs_and_the_card_shows_the_panel(tmp_path):
    from analysis.audit import batteries
    from analysis.audit.run import run_audit

    assert "validity" in batteries.BATTERY_NAMES
    keys = [c.key for c in batteries.battery_conditions("validity")]
    assert keys[:3] == [CELL, CELL + ":ordered", CELL + ":arbitrary"] and CELL + "_s20001" in keys
    only = [CELL, CELL + ":ordered", CELL + ":arbitrary", CELL + "_s20001"]
    res = run_audit("simulated", "over-reads-ordered", tmp_path, battery="validity", n_pairs=8, draws=200,
                    reference_rows=False, progress=False, only=only, log=lambda *a: None)
    card = res.card
    assert card["notice"].startswith("Smoke test on a subset")  # the cheaper pass is marked
    assert [r["cue"] for r in card["cue_panel"]] == ["numeric", "ordered", "arbitrary"]
    assert card["convergence"]["verdict_agreement"]["of"] == 3 and card["convergence"]["pairwise_r"] == []
    assert card["replication"][0]["replicates"] == [CELL, CELL + "_s20001"]
    assert card["replication"][0]["replication"] in (R.STABLE, R.DEPENDENT)
    assert "<section id='validity'>" in res.html_path.read_text()


def test_validity_command_plans_collects_resumes(tmp_path, capsys):
    from analysis.validity import commands

    args = ["--provider", "simulated", "--model", "cue-specific", "--out", str(tmp_path), "--pairs", "4",
            "--cells", CELL, "--cues", "numeric", "label", "--draws", "200"]
    assert commands.main(args + ["--dry-run"]) == 0
    out = capsys.readouterr().out
    assert "total: 136 calls" in out  # 48 panel + 32 probe + 8 blind + 48 replication
    assert "cheaper pass on the first 4 pairs" in out and "plan fingerprint: " in out
    assert not (tmp_path / commands.CARD_JSON).exists()
    assert commands.main(args) == 0
    card = json.loads((tmp_path / commands.CARD_JSON).read_text())
    assert [r["cue"] for r in card["cue_panel"]] == ["numeric", "label"]
    assert {(a["cue"], a["variant"]) for a in card["association"]} == {
        ("numeric", "forced"), ("numeric", "abstain"), ("label", "forced"), ("label", "abstain")}
    assert (tmp_path / "validity" / "probe_forced_numeric").is_dir()  # one ledgered folder per cue
    plan = json.loads((tmp_path / commands.PLAN_JSON).read_text())  # written before the first call
    assert card["validity_plan"]["sha256"] == plan["sha256"] and plan["served_model"] == "simulated:cue-specific"
    assert set(plan["prompt_hashes"]) >= {f"panel {CELL} numeric", f"blind {CELL}"}
    assert {b["cue"] for b in card["baseline"]} == {"numeric", "label", "blind"}
    assert commands.main(args) == 0  # resumes from the ledgers: same card
    assert json.loads((tmp_path / commands.CARD_JSON).read_text())["cue_panel"] == card["cue_panel"]
