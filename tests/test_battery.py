"""Tests of analysis.battery: the shared judgment of the cell tables and the §2.5 reversal (spec R6)."""
from __future__ import annotations

import pytest

from analysis import battery, judgments, registry
from analysis.cells import parse_cell


def test_cell_excesses_are_the_shared_judgment():
    """The cell tables and the audit judge with :func:`analysis.judgments.judge` (one judgment)."""
    r = battery.cell_result("deepseek", parse_cell("k12_LH_neutral_learned_zero"))
    j = judgments.judge(r["pse_pp"], (r["pse_lo"], r["pse_hi"]), r["learner_pse_pp"], "learner")
    assert r["excess_learner_pp"] == j.difference_pp
    rows = battery.excess_judgments().set_index(["panel", "row", "names", "proxies"])
    row = rows.loc[("80 examples, vs reference learner", "DeepSeek-V4-Flash", "neutral", "zero")]
    assert (row["lo"], row["hi"], row["verdict"]) == (j.ci[0], j.ci[1], j.verdict)
    assert set(rows["verdict"]) <= set(judgments.VERDICTS)


def test_battery_reexports_the_one_verdict():
    assert battery.verdict is judgments.verdict and battery.VERDICTS is judgments.VERDICTS


@pytest.fixture(scope="module")
def reversal():
    return battery.dimension_interaction()


def test_pooled_reversal_equals_the_authors_script(reversal):
    """Spec R6: the authors' pooled_interaction.py prints -15.15 [-22.56, -7.91]."""
    assert (round(reversal["pooled"], 2), round(reversal["lo"], 2), round(reversal["hi"], 2)) == (-15.15, -22.56, -7.91)


def test_reversal_bounds_are_honest_mismatches_not_widened_matches(reversal):
    """Spec R6: estimate and lower bound differ from the print (paper side), the upper bound matches."""
    values = {"Main.s25.reversal": reversal["pooled"], "Main.s25.reversal_lo": reversal["lo"],
              "Main.s25.reversal_hi": reversal["hi"]}
    view = registry.paper_vs_ours(values).set_index("claim_id")
    assert view["status"].to_dict() == {"Main.s25.reversal": "mismatch", "Main.s25.reversal_lo": "mismatch",
                                        "Main.s25.reversal_hi": "match"}
    for cid, r in view.iterrows():
        assert float(r["tolerance"]) == registry.half_unit(r["paper"])  # no widened tolerance
        assert "R6" in r["note"]


@pytest.fixture(scope="module")
def example_count():
    return battery.example_count_table().set_index("n_examples")


def test_the_released_example_count_summary_describes_our_cells(example_count):
    """The summary the paper's Table 27 intervals come from (spec R10) has our cells' point values:
    the model's and the learner's error and the PSE, from the per-call records and our population."""
    s = battery.example_count_summary()
    assert list(s.index) == [12, 20, 80] and (s["n_pairs"] == 99).all()
    for n, r in example_count.iterrows():
        assert s.at[n, "PSE_pp"] == pytest.approx(r["pse_pp"], abs=1e-9), n
        assert 100 * s.at[n, "R_LLM"] == pytest.approx(r["error_pct"], abs=1e-9), n
        assert 100 * s.at[n, "R_Ideal"] == pytest.approx(r["learner_error_pct"], abs=0.005), n  # printed 4 decimals


def test_table27_bounds_are_read_from_the_summary_not_widened(example_count):
    """Spec R10: n = 12's upper bound +13.6 is the released summary's; our seed 2 lies more than half a
    printed unit away, so reading the summary is what makes it match, with no widened tolerance."""
    reg = registry.registry().set_index("claim_id")
    ids = [f"T27.n{n}.pse_{side}" for n in (12, 20, 80) for side in ("lo", "hi")] + \
          ["SN18.n12_excess_lo", "SN18.n12_excess_hi"]
    for cid in ids:
        assert float(reg.at[cid, "tolerance"]) == registry.half_unit(reg.at[cid, "paper_value"]), cid
    values = battery.claim_values()
    view = registry.paper_vs_ours({cid: values[cid] for cid in ids}).set_index("claim_id")
    assert set(view["status"]) == {"match"}, view[["paper", "ours", "status"]]
    n12 = example_count.loc[12]
    assert values["T27.n12.pse_hi"] == n12["summary_pse_hi"]
    ours_seed2 = registry.status_of(reg.at["T27.n12.pse_hi", "paper_value"], reg.at["T27.n12.pse_hi", "tolerance"],
                                    n12["pse_hi"])[0]
    assert ours_seed2 == "mismatch"  # the cell script's seed 2 gives 14.14, not 13.6


def test_vectorised_permutation_correlations_give_the_loops_p_values_exactly():
    """SN 8's pair-level permutation test (issue 21 speed): the vectorised correlations take the same
    permutations as the loop of np.corrcoef, differ from it only in the last bits, and give the same
    permutation p values, bit for bit, on released cells."""
    import numpy as np

    from analysis import estimators as E
    from analysis.battery import reliance
    from analysis.population import truth
    from analysis.records import load_records

    for k, corner in ((12, "LH"), (6, "HH")):
        cell = parse_cell(reliance.structure_cell(k, corner))  # the test is a boundary
        eff = E.pair_effects(load_records("sonnet", cell), truth(cell)).dropna()
        err, apse = eff["error"].to_numpy(), np.abs(eff["pse"].to_numpy())
        r = float(np.corrcoef(err, apse)[0, 1])
        rng = np.random.default_rng(reliance.PAIR_PERMUTATION_SEED)
        loop = np.array([np.corrcoef(err, apse[rng.permutation(len(apse))])[0, 1] for _ in range(2000)])
        fast = reliance.permuted_r(err, apse, np.random.default_rng(reliance.PAIR_PERMUTATION_SEED), 2000)
        np.testing.assert_allclose(fast, loop, rtol=1e-12, atol=1e-15)  # last bits only
        assert reliance.permutation_p(r, fast) == reliance.permutation_p(r, loop)
