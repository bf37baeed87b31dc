"""Tests of analysis.supplement.regeneration: frozen against stochastic regeneration (Table 19; Supplementary Note 11)."""
from __future__ import annotations

import re

import numpy as np
import pandas as pd
import pytest
from numpy.testing import assert_allclose

from analysis import data, supplement

def _records(rows):
    """A records frame from ``(arm, i, j, order, picked_i)`` tuples."""
    df = pd.DataFrame(rows, columns=["arm", "i", "j", "order", "picked_i"])
    df["pair_id"] = df.groupby(["i", "j"]).ngroup()
    return df


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


def _authors_regen_output() -> dict[tuple[str, str], list[float]]:
    """The authors' printed Table 19 numbers (analyze_regen_output.txt): ``(cell, quantity) -> numbers``."""
    text = data.fetch("data/concurrent_checks/analysis/analyze_regen_output.txt").read_text()
    out = {}
    for line in text.splitlines():
        m = re.match(r"^(zero|b060|pooled)\s+(frozen - stochastic|frozen|stochastic)\s", line)
        if m:
            out[(m.group(1), m.group(2))] = [float(x) for x in re.findall(r"[+-]\d+\.\d+", line)]
        m = re.match(r"^two-point slope, (frozen|stochastic):", line)
        if m:
            out[("slope", m.group(1))] = [float(x) for x in re.findall(r"[+-]\d+\.\d+", line)]
    return out


def test_table19_reproduces_the_authors_analysis_output():
    """Every Table 19 number, to the authors' printed two (slopes: three) decimals."""
    printed = _authors_regen_output()
    t = supplement.table19().set_index(["cell", "quantity"])
    names = {"frozen": "frozen", "stochastic": "stochastic", "frozen - stochastic": "difference"}
    for cell in ("zero", "b060"):
        for label, q in names.items():
            r = t.loc[(cell, q)]
            assert_allclose([r["effect"], r["lo"], r["hi"], r["lo90"], r["hi90"]], printed[(cell, label)],
                            atol=0.005 + 1e-9)
    r = t.loc[("pooled", "difference")]
    assert_allclose([r["effect"], r["lo"], r["hi"], r["lo90"], r["hi90"]],
                    printed[("pooled", "frozen - stochastic")][:5], atol=0.005 + 1e-9)
    for scheme in ("frozen", "stochastic"):
        r = t.loc[("pooled", f"slope.{scheme}")]
        assert_allclose([r["effect"], r["lo"], r["hi"]], printed[("slope", scheme)], atol=0.0005 + 1e-12)
    assert (t["n_pairs"] == 99).all()


def test_concurrent_pairs_drop_a_pair_missing_a_draw_from_both_schemes():
    rec = supplement.concurrent_records()
    pairs = supplement.concurrent_pairs(rec)
    assert {k: len(v) for k, v in pairs.items()} == {"zero": 99, "b060": 99}
    lost = rec.copy()
    hit = (lost["cell"] == "zero") & (lost["scheme"] == "stochastic") & (lost["draw"] == 3) & (lost["pair_id"] == 7)
    lost.loc[hit & (lost["arm"] == "cf_a0"), "picked_i"] = np.nan  # draw 3 of pair 7 loses an arm
    pairs = supplement.concurrent_pairs(lost)
    assert len(pairs["zero"]) == 98 and 7 not in pairs["zero"].index and 7 in pairs["b060"].index


def test_v41_difference_interval_follows_spec_r3():
    """Spec R3: -5.96 / +4.65 at beta = 0.60 and +-4.65 at zero information."""
    b060, zero = supplement.v41_difference("b060"), supplement.v41_difference("zero")
    assert (round(b060["lo_pp"], 2), round(b060["hi_pp"], 2)) == (-5.96, 4.65)
    assert (round(zero["lo_pp"], 2), round(zero["hi_pp"], 2)) == (-4.65, 4.65)
    assert b060["n_pairs"] == zero["n_pairs"] == 99
