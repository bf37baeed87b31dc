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


def test_outside_support_tolerates_floating_point_zero():
    values = pd.Series([0.5, 1.4e-17, 0.3, -1.0, 0.45])
    assert supplement.outside_support(values) == 2
    assert supplement.outside_support(values, exact=True) == 3


def test_temperature_check_counts():
    t = supplement.temperature_table()
    assert (t["calls"] == 7920).all() and (t["unparseable"] == 2).all() and (t["n_pairs"] == 99).all()
    assert list(t["outside"]) == [93, 94] and list(t["outside_exact"]) == [93, 95]
    assert np.all(t["diff_pp"] > 0)  # single response above the probability-based effect in both cells
