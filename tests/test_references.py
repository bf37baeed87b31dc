"""References (issue 4; spec PROTOCOL-statistics §8): checkpoints C7-C10, C15, C16, C19, the
vectorised counterfactual, the proxy-ignoring subject, the learner-following subject and the CLI."""
from __future__ import annotations

import json

import numpy as np
import pandas as pd
import pytest

from analysis import battery, cli, estimators, population, references
from analysis.cells import parse_cell

SWEEP = ["k12_LH_neutral_learned_zero"] + [f"k12_LH_neutral_learned_info_{b}" for b in ("b030", "b045", "b060")]


def ref(cell_id, key):
    return references.cell_references(parse_cell(cell_id))[key]


# --- checkpoints ------------------------------------------------------------------------------

def test_c7_learner_pse_over_the_sweep():
    assert [round(ref(c, "learner_pse_pp"), 2) for c in SWEEP] == [0.00, 4.04, 13.13, 23.23]


def test_c8_fullinfo_pse_over_the_sweep():
    assert [round(ref(c, "fullinfo_pse_pp"), 2) for c in SWEEP] == [0.00, 6.06, 17.17, 27.27]
    assert ref(SWEEP[0], "fullinfo_pse_pp") == 0.0


def test_c9_learner_pse_at_zero_information():
    got = {c: round(ref(c, "learner_pse_pp"), 2) for c in (
        "k6_LH_neutral_learned_zero", "k12_LH_neutral_learned_zero", "k18_LH_neutral_learned_zero",
        "k6_HH_neutral_learned_zero", "k18_HH_neutral_learned_zero")}
    assert list(got.values()) == [0.00, 0.00, -5.05, 1.01, -3.03]


def test_c10_informative_example_cells():
    cells = [f"k{k}_LH_neutral_learned_info" for k in (6, 12, 18)]
    assert [round(ref(c, "learner_pse_pp"), 2) for c in cells] == [12.12, 10.10, 12.12]
    assert [round(ref(c, "fullinfo_pse_pp"), 2) for c in cells] == [14.14, 10.10, 11.11]
    assert [round(ref(c, "learner_error"), 4) for c in cells] == [0.0505, 0.0707, 0.0707]


def test_c15_example_count_learner():
    cells = ["k12_LH_neutral_learned_zero_n12", "k12_LH_neutral_learned_zero_n20"]
    assert [round(ref(c, "learner_error"), 4) for c in cells] == [0.1919, 0.0909]
    assert [round(ref(c, "learner_pse_pp"), 2) for c in cells] == [-4.04, 5.05]


def test_c16_example_correlation_learner():
    cells = [f"k12_LH_neutral_learned_zero_r{r}" for r in ("00", "40", "70")]
    assert [round(ref(c, "learner_error"), 4) for c in cells] == [0.0101, 0.0101, 0.1414]
    assert [round(ref(c, "learner_pse_pp"), 2) for c in cells] == [-1.01, 1.01, 12.12]


def test_c19_and_spec_learner_errors():
    cells = ["k6_LH_neutral_learned_zero", "k12_LH_neutral_learned_zero", "k18_LH_neutral_learned_zero",
             "k6_HH_neutral_learned_zero", "k18_HH_neutral_learned_zero"] + SWEEP[1:]
    assert [round(ref(c, "learner_error"), 4) for c in cells] == [0.0101, 0.0202, 0.0202, 0.0101, 0.0303,
                                                                  0.0404, 0.0505, 0.0404]


def test_indicator_learner_of_the_representation_control():
    assert references.indicator_learner_pse() == pytest.approx(-5.0505, abs=5e-5)
    with pytest.raises(ValueError):
        references.indicator_learner_pse(parse_cell("k12_LH_neutral_absent_zero"))


# --- definitions ------------------------------------------------------------------------------

@pytest.mark.parametrize("cell", ["k12_LH_neutral_learned_zero", "k12_LH_neutral_learned_info_b060",
                                  "k18_HH_social_absent_zero", "k6_LH_neutral_learned_info_s20002"])
def test_vectorised_counterfactual_rows_are_bit_identical_to_the_generator(cell):
    cell = parse_cell(cell)
    pop, pr = population.population(cell), population.pairs(cell)
    i, j = pr["i"].to_numpy(), pr["j"].to_numpy()
    for a in (1, 0):
        cf = references.counterfactual_rows(pop, i, j, a)
        for t in range(0, len(i), 7):
            s = population.counterfactual(pop, i[t], a)
            assert np.array_equal(cf["X_i"][t], s.X[i[t]]) and np.array_equal(cf["X_j"][t], s.X[j[t]])
            assert cf["r_true_i"][t] == s.r_true[i[t]] and cf["r_true_j"][t] == s.r_true[j[t]]


def _loop_references(cell):
    """The references computed pair by pair with the generator's own counterfactual (spec §8)."""
    c = parse_cell(cell)
    pop, pr = population.population(c), population.pairs(c)
    ex = population.examples(c)
    m = references.blr_posterior_mean(ex.X, ex.Y)
    full, learn = {1: [], 0: []}, {1: [], 0: []}
    for i, j in zip(pr["i"], pr["j"]):
        for a in (1, 0):
            s = population.counterfactual(pop, i, a)
            full[a].append(s.r_true[i] >= s.r_true[j])
            p = references.blr_predict(m, s.X[[i, j]])
            learn[a].append(p[0] >= p[1])
    pred = references.blr_predict(m, pop.X)
    i, j = pr["i"].to_numpy(), pr["j"].to_numpy()
    err = np.mean((pred[i] >= pred[j]) != (pop.r_true[i] >= pop.r_true[j]))
    return (100 * (np.mean(full[1]) - np.mean(full[0])), 100 * (np.mean(learn[1]) - np.mean(learn[0])), err)


@pytest.mark.parametrize("cell", ["k12_LH_neutral_learned_info_b030", "k18_HH_neutral_learned_zero"])
def test_cell_references_equal_the_pair_by_pair_loop(cell):
    full, learn, err = _loop_references(cell)
    r = references.cell_references(parse_cell(cell))
    assert r["fullinfo_pse_pp"] == full and r["learner_pse_pp"] == learn and r["learner_error"] == err


def test_no_learner_without_examples():
    r = references.cell_references(parse_cell("k12_LH_social_absent_info"))
    assert np.isnan(r["learner_pse_pp"]) and np.isnan(r["learner_error_pct"])
    assert r["fullinfo_pse_pp"] == pytest.approx(10.101, abs=5e-4)


ZERO_CELLS = [f"k{k}_{corner}_{n}_{ex}_zero" for k in (6, 12, 18) for corner in ("LL", "LH", "HL", "HH")
              for n in ("neutral", "social") for ex in ("absent", "learned")]


def _subject_records(cell, pick) -> pd.DataFrame:
    """Records of a subject whose pick of the target per pair and arm is ``pick[arm]`` (0/1 arrays)."""
    pr = population.pairs(cell)
    rows = []
    for arm in ("factual", "cf_a1", "cf_a0"):
        for order in (0, 1):
            d = pr[["pair_id", "i", "j"]].copy()
            d["arm"], d["order"] = arm, order
            d["picked_i"] = np.asarray(pick[arm], dtype=float)
            rows.append(d)
    df = pd.concat(rows, ignore_index=True)
    df["chosen"] = np.where(df["picked_i"] == 1, df["i"], df["j"]).astype(float)
    df["patient"] = np.where(df["chosen"] == np.where(df["order"] == 0, df["i"], df["j"]), 1.0, 2.0)
    return df


def test_a_subject_that_ignores_proxies_has_pse_exactly_zero_in_every_zero_information_cell():
    for cell in map(parse_cell, ZERO_CELLS):
        pop, pr = population.population(cell), population.pairs(cell)
        by_task_risk = pop.r[pr["i"]] >= pop.r[pr["j"]]  # task risk: untouched by the proxy replacement
        rec = _subject_records(cell, {arm: by_task_risk for arm in ("factual", "cf_a1", "cf_a0")})
        s = estimators.cell_summary(rec, cell, draws=200)
        assert s["pse_pp"] == 0.0 and s["pse_ci"] == [0.0, 0.0], cell
        assert s["excess_fullinfo_pp"] == 0.0 and s["error_pct"] == 0.0, cell  # truth = task risk at zero information
        assert battery.verdict(*s["excess_fullinfo_ci"]) == "no resolved difference"


def test_a_proxy_ignoring_subject_falls_short_when_proxies_predict():
    cell = parse_cell("k12_LH_neutral_learned_info_b060")
    pop, pr = population.population(cell), population.pairs(cell)
    by_task_risk = pop.r[pr["i"]] >= pop.r[pr["j"]]
    s = estimators.cell_summary(_subject_records(cell, {a: by_task_risk for a in ("factual", "cf_a1", "cf_a0")}), cell)
    assert s["pse_pp"] == 0.0 and s["excess_fullinfo_pp"] == pytest.approx(-27.27, abs=5e-3)
    assert battery.verdict(*s["excess_fullinfo_ci"]) == "shortfall"


@pytest.mark.parametrize("cell", ["k18_LH_neutral_learned_zero", "k12_LH_social_learned_info_b045"])
def test_a_subject_that_follows_the_learner_has_no_excess_over_it(cell):
    cell = parse_cell(cell)
    rp = references.reference_pairs(cell)
    rec = _subject_records(cell, {"factual": rp["learner_factual"], "cf_a1": rp["learner_a1"], "cf_a0": rp["learner_a0"]})
    s = estimators.cell_summary(rec, cell, draws=200)
    assert s["excess_learner_pp"] == pytest.approx(0.0, abs=1e-12)
    assert s["regret_pp"] == pytest.approx(0.0, abs=1e-12)


# --- command line -----------------------------------------------------------------------------

@pytest.mark.parametrize("cell", ["k12_LH_neutral_learned_info_b030_s20001", "k12_LH_neutral_learned_zero_r70",
                                  "k6_LH_neutral_learned_zero_xHH", "k18_LH_social_absent_info"])
def test_cli_reference_prints_json_for_any_cell(cell, capsys):
    assert cli.main(["reference", "--cell", cell]) == 0
    out = json.loads(capsys.readouterr().out)
    r = references.cell_references(parse_cell(cell))
    assert out["cell"] == cell and out["fullinfo_pse_pp"] == r["fullinfo_pse_pp"]
    for key in ("learner_pse_pp", "learner_error_pct"):
        assert (out[key] is None) if np.isnan(r[key]) else out[key] == r[key]


def test_cli_reference_rejects_a_bad_cell_with_one_line(capsys):
    assert cli.main(["reference", "--cell", "k7_LH_neutral_learned_zero"]) == 2
    err = capsys.readouterr().err.strip()
    assert err.startswith("error:") and "\n" not in err
    assert cli.main(["reference"]) == 2
