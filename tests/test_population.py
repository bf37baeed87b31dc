"""The synthetic population, pairs and examples (analysis.population; spec C1-C4, C12-C14)."""
from __future__ import annotations

import numpy as np
import pytest

from analysis import cells, population, prompts

CELL = cells.parse_cell("k12_LH_neutral_learned_zero")  # the tests are a boundary: ids parsed here




def test_c1_c2_pairs_checkpoints():
    p12 = population.pairs(CELL)
    assert list(map(tuple, p12.loc[[0, 1, 2, 33, 66], ["i", "j"]].to_numpy())) == [
        (4929, 454), (2554, 3265), (2963, 4244), (2525, 3767), (1050, 696)]
    assert list(map(tuple, population.pairs(cells.parse_cell("k6_LH_neutral_absent_zero")).loc[:2, ["i", "j"]].to_numpy())) == [
        (3929, 1806), (706, 504), (1727, 3834)]
    assert list(map(tuple, population.pairs(cells.parse_cell("k18_LH_neutral_absent_zero")).loc[:2, ["i", "j"]].to_numpy())) == [
        (3929, 1806), (1335, 4290), (4210, 406)]
    assert tuple(population.pairs(cells.parse_cell("k6_HH_neutral_absent_zero")).loc[0, ["i", "j"]]) == (1221, 1677)
    assert tuple(population.pairs(cells.parse_cell("k18_HH_neutral_absent_zero")).loc[0, ["i", "j"]]) == (84, 4107)
    assert (p12.groupby("stratum").size() == 33).all() and len(p12) == 99


def test_c3_population_checkpoint():
    s = population.population(CELL)
    np.testing.assert_allclose(s.w, [0.456792, 0.424164, 0.391536, 0.358908, 0.32628, 0.293652, 0.261024,
                                     0.228396], atol=5e-7)
    assert s.A[:10].tolist() == [0, 1, 0, 1, 1, 0, 0, 0, 0, 0]
    np.testing.assert_allclose(s.X[0], [1.143678, 1.908396, -1.048668, 1.53829, -1.058131, 0.086651, -0.295053,
                                        0.793105, -0.865802, -0.078931, -0.152763, -1.1299], atol=5e-7)
    for k, expected in ((6, 0.22627417), (12, 0.12199886), (18, 0.08363334)):
        np.testing.assert_allclose(population.population(cells.parse_cell(f"k{k}_LH_neutral_absent_info")).w_P, expected,
                                   atol=5e-9)


def test_c4_example_row_and_sweep_labels():
    ex = population.examples(CELL)
    row = prompts.value_strings(ex.X[0], CELL)[0]
    assert ",".join(row) + " -> " + prompts.fmt(ex.Y[0]) == \
        "0.86,-0.52,0.27,0.14,0.78,-2.43,1.78,-0.06,1.93,2.36,1.34,2.41 -> 0.19"
    for tag, y0 in (("b030", 0.911907), ("b045", 1.251092), ("b060", 1.580804)):
        assert population.examples(cells.parse_cell(f"k12_LH_neutral_learned_info_{tag}")).Y[0] == pytest.approx(y0, abs=5e-7)
    k6 = population.examples(cells.parse_cell("k6_LH_neutral_learned_zero"))
    np.testing.assert_allclose(k6.X[0], [0.759304, -0.515633, 0.151372, 0.3291, 1.91953, 1.788632], atol=5e-7)
    assert k6.Y[0] == pytest.approx(1.457148, abs=5e-7)


@pytest.mark.slow
def test_c12_manipulation_checks():
    mc = population.manipulation_checks().set_index(["k", "corner"])
    assert round(mc.loc[(6, "LL"), "a_mc"], 4) == 0.0682 and round(mc.loc[(6, "LH"), "a_mc"], 4) == 0.4245
    assert round(mc.loc[(12, "LH"), "a_mc"], 4) == 0.4264 and round(mc.loc[(18, "LL"), "a_mc"], 4) == 0.0694
    assert [round(mc.loc[(k, "HH"), "structure"], 3) for k in (6, 12, 18)] == [0.294, 0.311, 0.315]
    assert [round(mc.loc[(k, "LH"), "structure"], 3) for k in (6, 12, 18)] == [0.113, 0.154, 0.166]


def test_c13_true_risk_variance_over_sweep():
    got = [np.var(population.population(cells.parse_cell(f"k12_LH_neutral_learned_{t}")).r_true)
           for t in ("zero", "info_b030", "info_b045", "info_b060")]
    np.testing.assert_allclose(got, [1.0219, 1.0916, 1.0882, 1.0857], atol=5e-5)


def _mean_proxy_outcome_corr(cell_id):
    ex = population.examples(cells.parse_cell(cell_id))
    return np.mean([np.corrcoef(ex.X[:, c], ex.Y)[0, 1] for c in range(ex.L, ex.L + ex.M)])


def test_c14_example_proxy_outcome_correlation():
    got = [_mean_proxy_outcome_corr(f"k12_LH_neutral_learned_{t}") for t in ("zero", "info_b030", "info_b045",
                                                                             "info_b060")]
    np.testing.assert_allclose(got, [0.121, 0.314, 0.403, 0.488], atol=5e-4)
    assert round(_mean_proxy_outcome_corr("k12_LH_neutral_learned_zero_n12"), 3) == -0.334
    assert round(_mean_proxy_outcome_corr("k12_LH_neutral_learned_zero_n20"), 3) == 0.136
    for rho in (0.0, 0.4, 0.7):  # the correlation manipulation sets every proxy's sample correlation
        ex = population.examples(cells.parse_cell(f"k12_LH_neutral_learned_zero_r{round(rho * 100):02d}"))
        for c in range(ex.L, ex.L + ex.M):
            assert np.corrcoef(ex.X[:, c], ex.Y)[0, 1] == pytest.approx(rho, abs=1e-12)


def test_counterfactual_changes_only_the_target_and_sweep_keeps_pairs():
    pop = population.population(CELL)
    i = 4929
    cf = population.counterfactual(pop, i, 1 - pop.A[i])
    changed = np.flatnonzero((cf.P != pop.P).any(axis=1))
    assert changed.tolist() == [i]
    assert np.array_equal(cf.r, pop.r) and np.array_equal(cf.Xleg, pop.Xleg)
    frozen = population.counterfactual(pop, i, 1 - pop.A[i], freeze_scaler=True)
    assert np.array_equal(np.delete(frozen.X, i, axis=0), np.delete(pop.X, i, axis=0))
    same = population.counterfactual(pop, i, pop.A[i])
    assert np.array_equal(same.X, pop.X)
    for tag in ("info", "info_b030", "info_b060"):
        assert population.pairs(cells.parse_cell(f"k12_LH_neutral_learned_{tag}")).equals(population.pairs(CELL))
    assert np.array_equal(population.population(cells.parse_cell("k12_LH_neutral_learned_info_b060")).X, pop.X)


def test_seed_replication_redraws_everything():
    c = cells.parse_cell("k12_LH_neutral_learned_zero_s20001")
    assert (c.population_seed, c.pair_seed, c.example_seed) == (20001, 40001, 60001)
    assert not population.pairs(c).equals(population.pairs(CELL))


@pytest.mark.parametrize("cell", [CELL, "k12_LH_neutral_absent_zero", "k6_HH_social_learned_info"])
def test_cached_pair_counterfactuals_equal_counterfactual_rows_exactly(cell):
    """The per-cell cache (issue 21 speed) holds counterfactual_rows at the cell's pairs, bit for bit,
    and hands out copies."""
    c = cells.parse_cell(cell)
    pop, pr = population.population(c), population.pairs(c)
    for a in (1, 0):
        want = population.counterfactual_rows(pop, pr["i"].to_numpy(), pr["j"].to_numpy(), a)
        got = population.pair_counterfactuals(c, a)
        assert list(got) == list(want)
        for k in want:
            assert np.array_equal(got[k], want[k]) and got[k].dtype == want[k].dtype
        got["X_i"][:] = 0.0
        assert np.array_equal(population.pair_counterfactuals(c, a)["X_i"], want["X_i"])
