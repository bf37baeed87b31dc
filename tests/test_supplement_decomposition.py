"""Tests of analysis.supplement.decomposition: the summary-level audit-error decomposition (Table 18)."""
from __future__ import annotations

import numpy as np
import pytest

from analysis import supplement

def test_combine_gap_in_quadrature():
    g, lo, hi = supplement.combine_gap(10.0, 7.0, 14.0, -10.0, -14.0, -6.0)
    assert (g, lo, hi) == (10.0, 5.0, 10.0 + np.hypot(4.0, 4.0))


def test_audit_decomposition_is_summary_level():
    t = supplement.audit_decomposition().set_index(["row", "names"])
    label = t.loc[("label_mismatch", "neutral vs social"), "gap_pp"]
    assert label == pytest.approx(100 * (0.138889 - 0.056397), abs=1e-9)
    assert t.loc[("full_omission", "neutral"), "gap_lo"] == pytest.approx(8.86, abs=0.005)
