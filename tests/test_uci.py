"""Tests of the real-record study (analysis.uci; paper §4.7, Supplementary Note 14, Tables 21-22).

Offline: inputs come from the verified cache/mirror; no model is called.
"""
from __future__ import annotations

import gzip
import hashlib

import numpy as np
import pandas as pd
import pytest

from analysis import claims, data, paths, uci
from analysis.learners import ReferenceLearner
from analysis.uci import references

PANEL_SHA = "f792c388d9b470aac4fbf21c39b176534d55a116e7626881c30bbe7ab0341422"
MAPPING_SHA = "f1bb82b471cb34649352597572c9b1fb00bd27f77b9f5a22a03dc3eb1039749e"


@pytest.fixture(scope="module")
def res() -> uci.Results:
    return uci.default_results()


@pytest.fixture(scope="module")
def study(res) -> uci.Study:
    return res.study


# --- inputs: hashes and clear errors ----------------------------------------------------------

def test_registry_pins_the_paper_hashes():
    reg = data.registry()
    assert reg.loc[uci.PANEL_NAME, "sha256"] == PANEL_SHA
    assert reg.loc[uci.PANEL_NAME, "compression"] == "gzip"
    assert reg.loc[uci.MAPPING_NAME, "sha256"] == MAPPING_SHA


def test_fetched_panel_and_mapping_match_the_paper_hashes():
    assert data.sha256_of(data.fetch(uci.PANEL_NAME)) == PANEL_SHA
    assert data.sha256_of(data.fetch(uci.MAPPING_NAME)) == MAPPING_SHA


@pytest.fixture
def tmp_inputs(tmp_path, monkeypatch):
    """A temporary registry, mirror and cache (the real cache is never touched)."""
    mirror, cache = tmp_path / "mirror", tmp_path / "cache"
    (mirror / "data/uci/diabetes130").mkdir(parents=True)
    monkeypatch.setenv("PROXY_AUDIT_MIRROR", str(mirror))
    monkeypatch.setenv("PROXY_AUDIT_CACHE", str(cache))
    monkeypatch.setenv("PROXY_AUDIT_OFFLINE", "1")

    def make(payload: bytes, expected: str):
        with gzip.open(mirror / "data/uci/diabetes130/uci_diabetes_130hosp.csv.gz", "wb") as fh:
            fh.write(payload)
        reg = tmp_path / "registry.csv"
        pd.DataFrame([{"name": uci.PANEL_NAME, "sha256": expected,
                       "url": "https://archive.ics.uci.edu/static/public/296/data.csv",
                       "mirror": "data/uci/diabetes130/uci_diabetes_130hosp.csv.gz", "compression": "gzip",
                       "source": "test"}]).to_csv(reg, index=False)
        monkeypatch.setattr(paths, "INPUT_REGISTRY", reg)
        data.registry.cache_clear()
        return cache / uci.PANEL_NAME

    yield make
    data.registry.cache_clear()


def test_gzip_mirror_is_decompressed_and_verified(tmp_inputs):
    payload = b"encounter_id,patient_nbr\r\n1,2\r\n"
    target = tmp_inputs(payload, hashlib.sha256(payload).hexdigest())
    got = data.fetch(uci.PANEL_NAME)
    assert got == target and got.read_bytes() == payload


def test_wrong_panel_hash_stops_with_one_line_error(tmp_inputs):
    target = tmp_inputs(b"not the UCI panel\n", PANEL_SHA)
    with pytest.raises(data.InputError) as err:
        data.fetch(uci.PANEL_NAME)
    msg = str(err.value)
    assert "\n" not in msg
    assert uci.PANEL_NAME in msg and PANEL_SHA in msg
    assert hashlib.sha256(b"not the UCI panel\n").hexdigest() in msg
    assert not target.exists() and not list(target.parent.glob("*.part"))


# --- panel ---------------------------------------------------------------------------------------

def test_mapping_gate_passes_and_fails_on_a_wrong_label():
    mapping = uci.read_id_mapping()
    uci.check_mapping(mapping)
    assert mapping["admission_source_id"][7].lower() == "emergency room"
    bad = {k: v.copy() for k, v in mapping.items()}
    bad["admission_source_id"][7] = "Court/Law Enforcement"
    with pytest.raises(ValueError, match="admission_source_id 7"):
        uci.check_mapping(bad)


def test_cohort_flow_reaches_43355(res):
    flow = res.flow.set_index("step")
    assert flow["encounters"].iloc[0] == 101_766
    assert flow["encounters"].iloc[-1] == flow["patients"].iloc[-1] == 43_355


def test_panel_columns_and_category_counts(study):
    p = study.panel
    assert len(p) == 43_355 and p["patient_nbr"].is_unique
    assert set(p["payer"]) == set(uci.PAYERS) and set(p["source"]) == set(uci.SOURCES)
    assert int(p["A"].sum()) == int((p["A"] == 1).sum()) and 0 < p["A"].mean() < 0.5
    assert p["age_band"].str.fullmatch(r"\d+-\d+").all()
    assert ((p["age_mid"] - 5).astype(str) + "-" + (p["age_mid"] + 4).astype(str)).equals(p["age_band"])
    # missing payer codes are null in the hashed panel and become "Not recorded"
    raw = uci.read_raw_panel()
    assert (raw["payer_code"] == "?").sum() == 0
    assert (p["payer"] == "Not recorded").sum() > 10_000


def test_splits_are_disjoint_and_cover(study):
    s = study.splits
    allidx = np.concatenate([s[k] for k in uci.SPLIT_NAMES])
    assert len(allidx) == len(study.panel) == len(np.unique(allidx))
    assert [len(s[k]) for k in uci.SPLIT_NAMES] == [15174, 4335, 15175, 4335, 4336]


# --- coupling ------------------------------------------------------------------------------------

def test_coupling_own_group_is_identity_on_random_distributions():
    rng = np.random.default_rng(1)
    n, K = 5000, 7
    p_own = rng.dirichlet(np.ones(K) * 0.3, n)
    recorded = np.array([rng.choice(K, p=row) for row in p_own])
    u = rng.random(n)
    other = rng.dirichlet(np.ones(K), n)
    out = uci.couple(p_own, {0: p_own, 1: other}, recorded, u)
    np.testing.assert_array_equal(out[0], recorded)
    assert (out[1] != recorded).any()


def test_coupling_known_answer():
    p_own = np.array([[0.2, 0.5, 0.3]])
    p_other = np.array([[0.6, 0.3, 0.1]])
    # recorded category 1 -> interval [0.2, 0.7); u = 0.5 -> U = 0.45 -> other group's category 0
    out = uci.couple(p_own, {0: p_own, 1: p_other}, np.array([1]), np.array([0.5]))
    assert out[0][0] == 1 and out[1][0] == 0


def test_coupling_identity_on_the_study(study):
    for ordering, c in study.coupling.items():
        np.testing.assert_array_equal(c["own_index"], c["recorded_index"], err_msg=ordering)
        own = np.where(c["A"] == 1, c["under_1"], c["under_0"])
        assert (own == c["recorded"]).all()


# --- pairs and prompts -------------------------------------------------------------------------

def test_pair_sets(res):
    p = res.pairs
    assert tuple(p["primary"].loc[0, ["i", "j"]]) == (1570, 26318)
    assert (res.study.risk[p["primary"]["i"]] >= res.study.risk[p["primary"]["j"]]).all()
    assert p["stratified"]["stratum"].value_counts().tolist() == [30] * 5
    assert (p["neartie"]["gap"] < 0.3).all() and len(p["neartie"]) == 600
    assert (p["control"]["gap"] >= 0.3).all() and len(p["control"]) == 300
    used = set(p["primary"][["i", "j"]].to_numpy().ravel()) | set(p["stratified"][["i", "j"]].to_numpy().ravel())
    nt = set(p["neartie"][["i", "j"]].to_numpy().ravel())
    assert not nt & used and len(nt) == 1200
    assert not nt & set(res.study.examples)


def test_every_released_job_id_is_reproduced(res):
    """Job ids embed the SHA-256 of the prompt: our renderer reproduces every released id.

    13,800 records: the five Table 21 runs, the first-300 baseline again, near ties and control.
    """
    hc = res.hash_check
    assert hc["records"].sum() == 4800 + 4 * 1200 + 600 + 2400 + 1200
    assert (hc["job_ids_matched"] == hc["records"]).all(), hc
    assert (hc["pairs_matched"] == hc["records"]).all()
    assert (hc["changed_matched"] == hc["records"]).all()


def test_prompt_exact_form(study, res):
    pair = res.pairs["primary"].iloc[0]
    text = uci.render_prompt(study, pair["i"], pair["j"], study.coupling["fixed"].loc[pair["i"], "under_1"], 0)
    assert hashlib.sha256(text.encode()).hexdigest() == \
        "5daa6e10041014e6bdc2fbd487383d42da6df4982fbbb01ed262c3a63de5c7fd"
    assert not text.endswith("\n") and text.startswith(uci.PROMPT_INTRO)
    assert text.count("\n  Payer: ") == 2 and len(text.split("NEW PATIENTS:")[0].splitlines()) == 3 + 80 + 1


def test_unique_prompts(res):
    assert res.unique_prompts == 5992


# --- references and estimators ------------------------------------------------------------------

def _first_layout_blr(X, y, sigma=0.5, tau=1.0):
    """The first layout's private uci.blr_posterior_mean, verbatim (the oracle for bit-identity)."""
    Xa = np.hstack([np.ones((len(X), 1)), X])
    S = np.linalg.inv(np.eye(Xa.shape[1]) / tau ** 2 + Xa.T @ Xa / sigma ** 2)
    return S @ Xa.T @ y / sigma ** 2


def test_learner_is_the_shared_reference_learner_bit_for_bit(study, res):
    """The study's learner is analysis.learners.ReferenceLearner; its picks equal the first layout's."""
    assert references.ReferenceLearner is ReferenceLearner
    assert not hasattr(uci, "blr_posterior_mean")
    ex, cat = study.examples, study.panel["category"].to_numpy()
    X = uci.indicator_design(study, ex, cat[ex])
    w = _first_layout_blr(X, study.label[ex])
    m = ReferenceLearner().fit(X, study.label[ex])
    assert np.array_equal(m.posterior_mean_, w)
    pairs = res.pairs["primary"]
    i, j = pairs["i"].to_numpy(), pairs["j"].to_numpy()
    c = study.coupling["fixed"].loc[i]
    pred_j = w[0] + uci.indicator_design(study, j, cat[j]) @ w[1:]
    pick = {g: (w[0] + uci.indicator_design(study, i, c[f"under_{g}"].to_numpy()) @ w[1:] >= pred_j) for g in (0, 1)}
    expected = pick[1].astype(float) - pick[0].astype(float)
    np.testing.assert_array_equal(uci.learner_pair_effects(study, pairs).to_numpy(), expected)


def test_positive_control_indicator_choice(study, res):
    """Only the Medicaid-or-Self-pay indicator reproduces 1,158, 10.42 and 11.25 (UNRESOLVED in the spec)."""
    v = uci.positive_control_variants(study, res.pairs["primary"])
    both = v[v["indicator"] == "medicaid_or_selfpay"]
    assert (both["full-information pp"] == 10.42).all() and (both["learner pp"] == 11.25).all()
    assert (both["same indicator (of 1,200)"] == 1158).all()
    assert (v.loc[v["indicator"] == "medicaid", "full-information pp"] != 10.42).all()


def test_neartie_difference_bootstrap_equals_loop():
    """The vectorised two-group bootstrap consumes the generator exactly as the per-draw loop."""
    a, b = np.random.default_rng(5).normal(size=37), np.random.default_rng(6).normal(size=23)
    rng = np.random.default_rng(2)
    loop = [rng.choice(a, len(a)).mean() - rng.choice(b, len(b)).mean() for _ in range(200)]
    rng = np.random.default_rng(2)
    highs = np.r_[np.full(len(a), len(a)), np.full(len(b), len(b))]
    idx = rng.integers(0, highs, size=(200, len(highs)))
    vec = a[idx[:, :len(a)]].mean(1) - b[idx[:, len(a):]].mean(1)
    np.testing.assert_allclose(vec, loop, rtol=0, atol=1e-15)


def test_planning():
    plan = uci.planning(0.354)
    assert round(plan["pairs_needed"]) == 1111 and round(100 * plan["power"]) == 83


# --- claims ----------------------------------------------------------------------------------------

def test_sn14_propensity_support_follows_spec_r2(res, study):
    """Spec R2: task fields + one-hot payer + one-hot source on proxy-train, evaluated with the
    substituted category: 1 of 1,200 outside [0.02, 0.98]; low support stays 2.5 %."""
    sup = res.support
    assert (sup["n"], sup["propensity_outside"]) == (1200, 1)
    assert sup["propensity_outside_pct"] == pytest.approx(100 / 1200)
    assert sup["substituted_below_pct"] == pytest.approx(2.5)
    targets = res.pairs["primary"]["i"].to_numpy()
    # the substituted category matters: evaluated on the recorded one, nobody is flagged
    assert uci.support_checks(study, targets, evaluate="recorded")["propensity_outside"] == 0
    with pytest.raises(ValueError, match="features"):
        uci.group_propensity(study, targets[:3], features="race")


KNOWN_MISMATCHES: set[str] = set()  # every Table 21-22 / SN 14 / Main.uci claim matches or is not released


def test_claims_tables_21_22_sn14_main_match(res):
    values = uci.claim_values(res)
    reg = claims.registry().set_index("claim_id")
    mine = reg[reg.index.str.match(r"^(T21|T22|SN14|Main\.uci)\.")]
    assert set(mine.index) == set(values), "registry rows and claim_values disagree"
    status = {cid: claims.status_of(row["paper_value"], row["tolerance"], values[cid])[0]
              for cid, row in mine.iterrows()}
    bad = {c: s for c, s in status.items() if s == "mismatch"}
    assert set(bad) == KNOWN_MISMATCHES, bad
    assert status["SN14.support.propensity"] == "match"
    not_rel = {c for c, s in status.items() if s == "not_released"}
    assert not_rel and all(c.startswith(("SN14.pc.", "Main.uci.pc_")) for c in not_rel)
    assert not {c for c, s in status.items() if s == "not_computed"}
    for cid in KNOWN_MISMATCHES:
        assert "UNRESOLVED" in mine.loc[cid, "note"]


def test_subject_folder_and_pair_counts(tmp_path, study):
    """A records folder (a new collection) is read like the release; pair counts truncate the analysis.

    With 300 primary pairs the primary row must equal the authors' derived first-300 baseline.
    """
    for key in ("primary", "random", "reverse", "seeded", "stratified"):
        stem = uci.CONDITIONS[key][1]
        data.read_csv(f"{uci.MODEL_DIR}/{stem}_records.csv").to_csv(tmp_path / f"{stem}_records.csv", index=False)
    data.read_csv(uci.NEARTIE_RECORDS).to_csv(tmp_path / "neartie_records.csv", index=False)
    r = uci.run_pipeline(str(tmp_path), n_primary=300, n_neartie=100, n_control=50, study=study)
    row = r.table21.loc["Primary fixed order"]
    assert (row["pairs"], row["changed"]) == (300, 89)
    assert [round(row[c], 2) for c in ("pse_pp", "lo_pp", "hi_pp")] == [-0.33, -1.83, 1.17]
    assert r.neartie.loc[("neartie", "all"), "n"] == 100 and r.neartie.loc[("wide", "all"), "n"] == 50


def test_a_study_is_built_once_per_panel_content_and_each_caller_gets_an_equal_copy():
    """issue 21 speed: notebook 06 builds the study, then the missing-payer comparison asks for the
    default one; the content-keyed cache hands out a copy equal to a fresh build, bit for bit."""
    from analysis.uci import study as S

    raw = uci.read_raw_panel()
    fresh = S._build_study(raw, "null")
    a, b = S.build_study(raw), S.build_study(uci.read_raw_panel())
    assert a is not b and a.panel is not b.panel
    for st in (a, b):
        pd.testing.assert_frame_equal(st.panel, fresh.panel, check_exact=True)
        assert np.array_equal(st.Lz, fresh.Lz) and np.array_equal(st.risk, fresh.risk)
        assert np.array_equal(st.proxy.coef_, fresh.proxy.coef_)
        for o in fresh.coupling:
            pd.testing.assert_frame_equal(st.coupling[o], fresh.coupling[o], check_exact=True)
    a.panel.loc[0, "payer"] = "edited"
    assert S.build_study(raw).panel.loc[0, "payer"] != "edited"
    changed = raw.copy()
    changed.loc[0, "race"] = "Other"
    assert S.panel_key(changed) != S.panel_key(raw)
