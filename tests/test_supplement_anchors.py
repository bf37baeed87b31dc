"""Tests of analysis.supplement.anchors: real-data anchors (Tables 14-15; Supplementary Note 7)."""
from __future__ import annotations

import numpy as np
import pytest

from analysis import supplement

def test_structure_statistic_known_answers():
    rng = np.random.default_rng(0)
    z = rng.standard_normal(20000)
    same = np.column_stack([z, 2 * z, -z + 1])
    assert supplement.structure_statistic(same) == pytest.approx(1.0)
    assert supplement.structure_statistic(rng.standard_normal((20000, 4))) < 0.01


def test_r2_given_known_answers():
    rng = np.random.default_rng(1)
    X = rng.standard_normal((500, 3))
    assert supplement.r2_given(X @ [1.0, -2.0, 0.5] + 3, X) == pytest.approx(1.0)
    assert supplement.r2_given(rng.standard_normal(500), X) < 0.05


@pytest.mark.parametrize("panel", ["heart", "wdbc", "cervical", "dermatology", "hepatitis", "liver"])
def test_frozen_columns_are_the_rule_minus_identifiers_and_outcomes(panel):
    auto = supplement.auto_columns(supplement.anchor_source(panel))
    excluded = supplement.ANCHOR_EXCLUDED.get(panel, ())
    assert [c for c in auto if c not in excluded] == list(supplement.ANCHOR_COLUMNS[panel])


def test_anchor_panels_shape():
    k_n = {p: supplement.anchor_panel(p).shape[::-1] for p in supplement.TABLE14_ORDER if p != "diabetes"}
    assert k_n == {"hepatitis": (3, 148), "cervical": (7, 761), "heart": (7, 299), "dermatology": (32, 358),
                   "liver": (5, 345), "wdbc": (30, 569)}
