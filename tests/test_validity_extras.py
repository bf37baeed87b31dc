"""Blind baseline, discriminant validity, competence, confounders and the plan fingerprint (issue 22)."""
from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from analysis import config, cues
from analysis.cells import parse_cell
from analysis.validity import baseline as B
from analysis.validity import confounds as CF
from analysis.validity import run as VR

CELL = "k12_LH_neutral_learned_zero"
PARSED = parse_cell(CELL)  # the tests are the boundary: parsed once


def test_blind_table_shows_the_task_fields_only():
    t = cues.blind_table(PARSED)
    assert len(t) == 2 * 99 and set(t["arm"]) == {cues.BLIND_ARM} and t["prompt_sha256"].is_unique
    names = [n for v in cues.vocabularies("neutral").values() for n in v]
    assert not any(n in t["prompt"].iloc[0] for n in names) and cues.GROUP_FIELD + ":" not in t["prompt"].iloc[0]
    num = cues.job_table(PARSED, "numeric")
    a = num[(num["arm"] == "cf_a1") & (num["pair_id"] == 0) & (num["order"] == 0)]["prompt"].iloc[0]
    b = t[(t["pair_id"] == 0) & (t["order"] == 0)]["prompt"].iloc[0]
    task = [ln for ln in a.rpartition("NEW PATIENTS:")[2].splitlines() if ln.strip().split(":")[0] in config.TASK_NAMES]
    assert task == [ln for ln in b.rpartition("NEW PATIENTS:")[2].splitlines() if ln.strip()
                    and not ln.startswith("Patient")]


def _rec(arm, picks, n=20):
    return pd.DataFrame([{"arm": arm, "i": k, "j": k + 100, "pair_id": k, "order": o, "picked_i": picks(k, o)}
                         for k in range(n) for o in (0, 1)])


def test_deviations_and_discriminant_validity_on_known_records():
    rec = pd.concat([_rec("cf_a1", lambda k, o: 1.0), _rec("cf_a0", lambda k, o: 0.0)])
    blind = _rec("blind", lambda k, o: float(o))
    d = B.deviations(rec, blind, draws=500)
    np.testing.assert_allclose([d["deviation_a1_pp"], d["deviation_a0_pp"], d["group_difference_pp"]], [50, -50, 100])
    assert d["n_pairs"] == 20 and d["blind_choice_pp"] == 50


def test_competence_counts_calls_that_rank_by_true_risk():
    t = cues.job_table(PARSED, "numeric")
    from analysis.references import reference_pairs
    rp = reference_pairs(PARSED).set_index(["i", "j"])
    truth = {"cf_a1": rp["fullinfo_a1"], "cf_a0": rp["fullinfo_a0"], "factual": rp["truth"]}
    rec = t[["arm", "pair_id", "i", "j", "order"]].copy()
    rec["picked_i"] = [float(truth[a].loc[(i, j)]) for a, i, j in zip(rec["arm"], rec["i"], rec["j"])]
    c = B.competence(PARSED, rec)
    assert c["accuracy"] == 1.0 and c["n_calls"] == len(t) and c["accuracy_ci"][1] == 1.0 and c["judged"] == ""
    few = B.competence(PARSED, rec[rec["pair_id"] < 2])
    assert few["judged"] == "too few pairs to judge"


def test_outcome_model_recovers_a_known_coefficient():
    rng = np.random.default_rng(4)
    n_pairs, rows = 150, []
    for p in range(n_pairs):
        base = rng.uniform(0.2, 0.6)
        for cue, words in (("a", 100), ("b", 130)):
            for cued in (0, 1):
                inferred = rng.uniform()
                for _ in range(2):
                    rows.append({"picked_i": float(rng.uniform() < base + 0.3 * cued), "cued_group": cued,
                                 "inferred_group": inferred, "words": words, "pair": str(p), "cue": cue})
    m = CF.outcome_model(pd.DataFrame(rows))
    terms = {t["term"]: t for t in m["terms"]}
    assert terms["cued_group"]["ci_pp"][0] < 30 < terms["cued_group"]["ci_pp"][1]
    assert terms["inferred_group"]["ci_pp"][0] < 0 < terms["inferred_group"]["ci_pp"][1]
    assert m["n_pairs"] == n_pairs and "pair fixed effects" in m["formula"]


def test_readability_of_the_renderings_differs_by_cue():
    f = CF.rendering_features({c: cues.job_table(PARSED, c).iloc[:8] for c in ("numeric", "narrative", "ordered")})
    f = f.set_index("cue")
    assert f.loc["narrative", "fk_grade"] > f.loc["numeric", "fk_grade"]
    assert f.loc["ordered", "words"] > f.loc["numeric", "words"]  # "level N" is two words


def test_fingerprint_names_the_plan_and_changes_with_it():
    a = VR.fingerprint(VR.ValidityPlan(cells=(CELL,), n_pairs=3, seeds=()), served_model="simulated:x")
    b = VR.fingerprint(VR.ValidityPlan(cells=(CELL,), n_pairs=3, seeds=()), served_model="simulated:x")
    c = VR.fingerprint(VR.ValidityPlan(cells=(CELL,), n_pairs=4, seeds=()), served_model="simulated:x")
    assert a == b and a["sha256"] != c["sha256"]
    assert a["margins"]["equivalence_margin_pp"] == config.EQUIVALENCE_MARGIN_PP and a["served_model"] == "simulated:x"
    assert f"probe {CELL} numeric forced" in a["prompt_hashes"] and f"blind {CELL}" in a["prompt_hashes"]


def test_live_abstention_variant_records_an_answer_zero(tmp_path):
    """A live model can abstain: the tool accepts 0 and the answer is read back (was: forced choice only)."""
    import json

    from fake_servers import FakeOpenAI

    from analysis.validity import commands

    def answer(prompt: str) -> int:
        return 0 if cues.PROBE_ABSTAIN in prompt else 1

    args = ["--provider", "openai", "--model", "m", "--out", str(tmp_path), "--pairs", "3", "--cells", CELL,
            "--cues", "numeric", "--draws", "200"]
    with FakeOpenAI(answer) as srv:
        assert commands.main(args + ["--base-url", srv.url]) == 0
        bodies = [r["body"] for r in srv.requests]
    card = json.loads((tmp_path / commands.CARD_JSON).read_text())
    rows = {a["variant"]: a for a in card["association"]}
    assert rows["abstain"]["abstain_rate"] == 1.0 and rows["forced"]["abstain_rate"] == 0.0
    assert rows["abstain"]["abstain_ci"][0] > 0.5  # exact interval of 6 of 6 calls
    enums = {tuple(b["tools"][0]["function"]["parameters"]["properties"]["patient"]["enum"])
             for b in bodies if cues.PROBE_ABSTAIN in b["messages"][-1]["content"]}
    assert enums == {(0, 1, 2)}


def test_the_positive_control_sits_outside_every_bh_family():
    """A control with a tiny p must not enter the family: with it inside (3 tests), BH would reject the judged
    cue at p = 0.03 (rank 2: 0.03 <= 2/3 x 0.05); outside (2 tests) it is not (rank 1: 0.03 > 1/2 x 0.05), and
    the control keeps its raw p as its q. A control's p also never changes the judged cues' q values."""
    from analysis.validity.probe import bh, bh_outside_controls

    rows = [{"cue": "label", "control": True, "p_value": 1e-6}, {"cue": "ordered", "control": False, "p_value": 0.03},
            {"cue": "numeric", "control": False, "p_value": 0.9}]
    reject, q = bh_outside_controls(rows)
    inside_reject, _ = bh([r["p_value"] for r in rows])
    assert inside_reject[1] is True  # what a family holding the control would say
    assert reject == [True, False, False] and q[0] == 1e-6
    assert q[1:] == pytest.approx(bh([0.03, 0.9])[1])
    rows[0]["p_value"] = 0.5  # the control's own p moves nothing else
    assert bh_outside_controls(rows)[1][1:] == q[1:]


def _readability_reference(text: str) -> dict:
    """The uncached count, word by word (the form before the caches of issue 21)."""
    import math

    words = CF._WORD.findall(text)
    n_sent = max(1, len([s for s in CF._SENTENCE.split(text) if s.strip()]))
    syl = sum(CF.syllables(w) for w in words)
    fk = 0.39 * len(words) / n_sent + 11.8 * syl / len(words) - 15.59 if words else math.nan
    return {"words": len(words), "characters": len(text), "sentences": n_sent, "fk_grade": fk}


def test_cached_readability_equals_the_word_by_word_count_exactly():
    texts = [p for c in ("numeric", "narrative", "ordered") for p in cues.job_table(PARSED, c)["prompt"].iloc[:6]]
    texts += ["", "Score 0.86. Patient one: indicator_level 3!"]
    for t in texts:
        got = CF.readability(t)
        want = _readability_reference(t)
        assert list(got) == list(want)
        assert got == want or (t == "" and got["words"] == 0)  # "" has a NaN grade (NaN != NaN)
        assert CF._readability(t)[0] == ("words", len(CF._WORD.findall(t)))  # call_table's word count
    assert CF.readability(texts[0]) is not CF.readability(texts[0])  # a fresh dict per call


def _permutation_p_loop(x, y, method="pearson"):
    """The loop over every ordering (the form before issue 21's vectorisation)."""
    import itertools

    from scipy import stats

    f = (lambda a, b: np.corrcoef(a, b)[0, 1]) if method == "pearson" else (lambda a, b: stats.spearmanr(a, b)[0])
    r0 = abs(f(x, y))
    perms = [abs(f(x, y[list(p)])) for p in itertools.permutations(range(len(y)))]
    return float(np.mean(np.asarray(perms) >= r0 - 1e-12))


@pytest.mark.parametrize("n", [4, 5, 6, 7])
@pytest.mark.parametrize("method", ["pearson", "spearman"])
def test_vectorised_exact_permutation_p_equals_the_loop(n, method):
    """Every ordering at once gives the loop's p value exactly (ties in y and x included; a constant y
    gives the loop's 0)."""
    from analysis.validity import coupling as CP

    rng = np.random.default_rng(n)
    cases = [(rng.normal(size=n), rng.normal(size=n)), (rng.normal(size=n), np.round(rng.normal(size=n))),
             (np.arange(n, dtype=float), 3.0 * np.arange(n)), (np.round(rng.normal(size=n)), rng.normal(size=n))]
    for x, y in cases:
        assert CP.permutation_p(x, y, method) == _permutation_p_loop(x, y, method)
    with np.errstate(invalid="ignore", divide="ignore"):
        import warnings
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            x, y = rng.normal(size=n), np.ones(n)
            assert CP.permutation_p(x, y, method) == _permutation_p_loop(x, y, method)
