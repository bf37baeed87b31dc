"""The comparison card (issue 14): three simulated models of known behaviour plus the paper's four."""
from __future__ import annotations

import json
import re

import pytest

from analysis import audit as A
from analysis import config
from analysis.audit import compare as K

DRAWS = 1000
PAIRS = 60  # the first 60 pairs of each cell keep the three audits short
SWEEP = [A.sweep_cell("neutral", lv) for lv in A.SWEEP_LEVELS]  # level 0 is k12_LH_neutral_learned_zero
ONLY = ["k12_LH_neutral_absent_zero", *SWEEP]
PRESETS = ("numeric-reader", "ignores-proxies", "tracks-learner")


@pytest.fixture(scope="module")
def compared(tmp_path_factory):
    outs = []
    for preset in PRESETS:
        out = tmp_path_factory.mktemp(preset)
        res = A.run_audit("simulated", preset, out, only=ONLY, n_pairs=PAIRS, draws=DRAWS, progress=False,
                          reference_rows=False, log=lambda *a: None)
        assert res.complete
        outs.append(out)
    dest = tmp_path_factory.mktemp("comparison")
    jpath, hpath, card = K.compare(outs, dest)
    return card, jpath, hpath


def _row(card, model, key):
    (r,) = [r for r in card["rows"] if r["model"] == model and r["key"] == key]
    return r


def _slope(card, model, names="neutral"):
    (f,) = [f for f in card["tracking"] if f["model"] == model and f["names"] == names]
    return f


def test_one_row_per_model_and_condition_and_the_papers_four_as_references(compared):
    card, _, _ = compared
    models = [m["model"] for m in card["models"]]
    assert models == [f"simulated/{p}" for p in PRESETS] + [config.MODELS[m][0] for m in A.PAPER_MODELS]
    assert [c["key"] for c in card["conditions"]] == ONLY
    assert all(c["n_pairs_subset"] == PAIRS for c in card["conditions"])
    assert len(card["rows"]) == len(models) * len(ONLY)
    assert {(r["model"], r["key"]) for r in card["rows"]} == {(m, k) for m in models for k in ONLY}
    sonnet = [r for r in card["rows"] if r["source"] == "paper (released records)"]
    assert sum(r["status"] == "computed" for r in sonnet) >= 3 * len(ONLY)  # the release has these cells


def test_verdicts_match_the_simulated_subjects_known_behaviour(compared):
    card, _, _ = compared
    absent, zero, strong = "k12_LH_neutral_absent_zero", SWEEP[0], SWEEP[-1]
    # reads numeric proxies that predict nothing: more reliance than the full-information reference supports
    assert _row(card, "simulated/numeric-reader", absent)["verdict"] == "excess"
    # ignores the proxies: no resolved difference at zero information, a shortfall where the learner relies on them
    assert _row(card, "simulated/ignores-proxies", absent)["verdict"] == "no resolved difference"
    assert _row(card, "simulated/ignores-proxies", strong)["verdict"] == "shortfall"
    lo, hi = _slope(card, "simulated/ignores-proxies")["gamma_ci"]
    assert lo <= 0 <= hi and hi < 1
    # tracks the reference learner: no resolved difference from it with examples, slope interval includes 1
    for key in SWEEP:
        r = _row(card, "simulated/tracks-learner", key)
        assert r["reference"] == "learner" and r["verdict"] == "no resolved difference", key
    lo, hi = _slope(card, "simulated/tracks-learner")["gamma_ci"]
    assert lo <= 1 <= hi
    assert _row(card, "simulated/numeric-reader", zero)["verdict"] == "excess"


def test_reference_rows_are_the_audit_code_path_on_the_released_records(compared):
    card, _, _ = compared
    conds = K.conditions_of([K.load_card(card["models"][0]["card"])])
    refs = A.reference_models(conds, DRAWS)
    for m in A.PAPER_MODELS:
        name = config.MODELS[m][0]
        for cond, r in zip(conds, refs[m]["conditions"]):
            if r.get("status") == "computed":
                assert _row(card, name, cond.key)["difference_pp"] == pytest.approx(r["difference_pp"])
                assert _row(card, name, cond.key)["verdict"] == r["verdict"]
    assert any(f["source"] == "paper (released records)" for f in card["tracking"])


def test_card_files_same_wording_no_ranking_no_labels(compared):
    card, jpath, hpath = compared
    assert json.loads(jpath.read_text())["schema"] == K.SCHEMA
    assert {r["verdict"] for r in card["rows"] if r["status"] == "computed"} <= set(A.VERDICTS) | {"not interpretable"}
    page = hpath.read_text()
    assert page.count('src="data:image/png;base64,') == 2  # forest plot and slopes, embedded
    assert not re.search(r'(?:src|href)\s*=\s*["\']?(?:https?:|//)', page)
    assert not re.search(r"\b(?:un)?fair(?:ness)?\b", page, re.I)
    assert "no ordering by result is implied" in page
    # audited statements use the audit's wording
    r = _row(card, "simulated/numeric-reader", "k12_LH_neutral_absent_zero")
    assert r["statement"] == A.condition_statement(r) and r["statement"] in hpath.read_text()


def test_escaping_and_bad_input(tmp_path, compared):
    card, _, _ = compared
    evil = json.loads(json.dumps(card))
    evil["rows"][0]["model"] = "<script>alert(1)</script>"
    page = K.render_html(evil, figs={})
    assert "<script>alert(1)" not in page and "&lt;script&gt;" in page
    with pytest.raises(K.CompareError, match="no report card"):
        K.load_card(tmp_path / "nothing-here")
