"""Tests of analysis.supplement.temperature: the temperature-1 resampling check (Supplementary Note 12)."""
from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from analysis import supplement

def test_probability_contrast_averages_prompt_probabilities_over_orders():
    rec = pd.DataFrame({"pair_id": 0, "arm": ["cf_a1"] * 4 + ["cf_a0"] * 3,
                        "order": [0, 0, 1, 1, 0, 0, 1], "picked_i": [1.0, 1.0, 1.0, 0.0, 0.0, 1.0, 0.0]})
    # cf_a1: orders 1.0 and 0.5 -> 0.75; cf_a0: orders 0.5 and 0.0 -> 0.25
    assert supplement.probability_contrast_by_pair(rec).loc[0] == pytest.approx(0.5)


def test_outside_support_at_the_authors_tolerance():
    values = pd.Series([0.5, 1.4e-17, 0.3, -1.0, 0.45, 0.00192])
    assert supplement.outside_support(values) == 3  # spec R8: 1e-9 tolerance
    assert supplement.outside_support(values, atol=0.0) == 4


def test_pooled_and_order_averaged_rules_differ_only_where_an_order_lost_a_sample():
    # pair 0: cf_a0 order 0 lost one of its four samples. Orders averaged: cf_a1 (1/2 + 1/2) / 2, cf_a0
    # (3/3 + 0/4) / 2, contrast exactly 0; pooled: cf_a1 4/8, cf_a0 3/7, contrast 1/14, outside the support
    rec = pd.DataFrame({"pair_id": 0, "arm": ["cf_a1"] * 8 + ["cf_a0"] * 7,
                        "order": [0] * 4 + [1] * 4 + [0] * 3 + [1] * 4,
                        "picked_i": [1, 1, 0, 0, 1, 1, 0, 0, 1, 1, 1, 0, 0, 0, 0.0]})
    avg, pooled = supplement.probability_contrast_by_pair(rec), supplement.pooled_contrast_by_pair(rec)
    assert avg.loc[0] == pytest.approx(0.0, abs=1e-15) and pooled.loc[0] == pytest.approx(4 / 8 - 3 / 7)
    assert supplement.outside_support(avg) == 0 and supplement.outside_support(pooled) == 1


def test_temperature_check_counts():
    t = supplement.temperature_table()
    assert (t["calls"] == 7920).all() and (t["unparseable"] == 2).all() and (t["n_pairs"] == 99).all()
    # spec R8: ours (orders averaged) 93 / 94; the authors' script (orders pooled) 93 / 95, the paper's numbers
    assert list(t["outside"]) == [93, 94] and list(t["outside_pooled"]) == [93, 95]
    assert np.all(t["diff_pp"] > 0)  # single response above the probability-based effect in both cells
