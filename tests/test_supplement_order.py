"""Tests of analysis.supplement.order: order robustness (Tables 9, 11-13, 20)."""
from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from analysis import supplement

def _records(rows):
    """A records frame from ``(arm, i, j, order, picked_i)`` tuples."""
    df = pd.DataFrame(rows, columns=["arm", "i", "j", "order", "picked_i"])
    df["pair_id"] = df.groupby(["i", "j"]).ngroup()
    return df


@pytest.fixture()
def tiny_records():
    # pair (1,2): consistent (both arms agree across orders); pair (3,4): cf_a0 orders differ;
    # pair (5,6): cf_a1 has one parsed order only
    return _records([
        ("cf_a1", 1, 2, 0, 1.0), ("cf_a1", 1, 2, 1, 1.0), ("cf_a0", 1, 2, 0, 0.0), ("cf_a0", 1, 2, 1, 0.0),
        ("cf_a1", 3, 4, 0, 1.0), ("cf_a1", 3, 4, 1, 1.0), ("cf_a0", 3, 4, 0, 1.0), ("cf_a0", 3, 4, 1, 0.0),
        ("cf_a1", 5, 6, 0, 1.0), ("cf_a1", 5, 6, 1, np.nan), ("cf_a0", 5, 6, 0, 0.0), ("cf_a0", 5, 6, 1, 0.0),
        ("factual", 1, 2, 0, 1.0), ("factual", 1, 2, 1, 0.0),
    ])


def test_consistent_pairs_strict_and_relaxed(tiny_records):
    assert list(supplement.consistent_pairs(tiny_records)) == [(1, 2)]
    assert list(supplement.consistent_pairs(tiny_records, require_both_orders=False)) == [(1, 2), (5, 6)]


def test_inconsistency_and_position_rates(tiny_records):
    inc = supplement.inconsistency_rates(tiny_records)
    assert inc["cf_a1"] == 0.0  # pair (5,6) lacks an order and is not counted
    assert inc["cf_a0"] == pytest.approx(1 / 3)  # (3,4) differs among three answered pairs
    assert inc["factual"] == 1.0
    pos = supplement.position_rates(tiny_records)
    # cf_a0: picked first = [0, 1, 1, 1, 0, 1] (order 1 flips picked_i)
    assert pos["cf_a0"] == pytest.approx(4 / 6)


def test_lpm_arm_coefficient_equals_difference_in_means_when_balanced():
    rows = [(arm, p, p + 1, o, y) for p, (arm, o, y) in enumerate(
        [("cf_a1", 0, 1.0), ("cf_a1", 1, 1.0), ("cf_a0", 0, 1.0), ("cf_a0", 1, 0.0)] * 5)]
    arm, order = supplement.lpm_arm_effect(_records(rows))
    assert arm == pytest.approx(50.0)
    assert order == pytest.approx(-50.0)


def test_table13_joint_slopes_are_flat_when_pairs_never_change():
    t13 = supplement.table13(draws=200).set_index(["model", "names"])
    assert (t13.loc[("deepseek", "neutral"), ["joint_slope", "lo", "hi"]].abs() < 1e-12).all()
    assert t13.loc[("sonnet", "neutral"), "n_joint"] == 27
