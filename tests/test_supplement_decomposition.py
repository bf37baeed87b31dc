"""Tests of analysis.supplement.decomposition: the summary-level audit-error decomposition (Table 18)."""
from __future__ import annotations

import numpy as np
import pytest

from analysis import config, registry, supplement

#: Table 18's claim ids (row key, names) -> the decomposition's row
T18_ROWS = {("full", "neutral"): ("full_omission", "neutral"), ("full", "social"): ("full_omission", "social"),
            ("partial", "neutral"): ("partial_omission", "neutral"),
            ("partial", "social"): ("partial_omission", "social"),
            ("shift", "neutral"): ("distribution_shift", "neutral")}
T18_COLUMNS = {"gap": "gap_pp", "gap.lo": "gap_lo", "gap.hi": "gap_hi", "iw": "iw_gap_pp", "iw.lo": "iw_lo",
               "iw.hi": "iw_hi"}


def _t18_status(summary_decimals):
    """claim_id -> status of every Table 18 number computed with ``summary_decimals``."""
    t = supplement.audit_decomposition(summary_decimals).set_index(["row", "names"])
    reg = registry.registry().set_index("claim_id")
    out = {}
    for (key, names), row in T18_ROWS.items():
        for suffix, col in T18_COLUMNS.items():
            cid = f"T18.{key}.{names}.{suffix}"
            out[cid] = registry.status_of(reg.at[cid, "paper_value"], reg.at[cid, "tolerance"], t.loc[row, col])[0]
    label = t.loc[("label_mismatch", "neutral vs social"), "gap_pp"]
    out["T18.label.gap"] = registry.status_of(reg.at["T18.label.gap", "paper_value"],
                                              reg.at["T18.label.gap", "tolerance"], label)[0]
    return out

def test_combine_gap_in_quadrature():
    g, lo, hi = supplement.combine_gap(10.0, 7.0, 14.0, -10.0, -14.0, -6.0)
    assert (g, lo, hi) == (10.0, 5.0, 10.0 + np.hypot(4.0, 4.0))


def test_audit_decomposition_is_summary_level():
    t = supplement.audit_decomposition(None).set_index(["row", "names"])
    label = t.loc[("label_mismatch", "neutral vs social"), "gap_pp"]
    assert label == pytest.approx(100 * (0.138889 - 0.056397), abs=1e-9)
    assert t.loc[("full_omission", "neutral"), "gap_lo"] == pytest.approx(8.86, abs=0.005)


def test_the_papers_way_rounds_every_summary_input_to_two_decimals():
    """Spec R9: with every summary input rounded to 2 decimals first, all 31 registered Table 18 numbers match;
    with unrounded inputs three importance-weighted bounds are 0.01 pp off."""
    assert config.TABLE18_SUMMARY_DECIMALS == 2
    t = supplement.audit_decomposition().set_index(["row", "names"])
    assert t.attrs["summary_decimals"] == 2
    assert t.loc[("label_mismatch", "neutral vs social"), "gap_pp"] == pytest.approx(13.89 - 5.64, abs=1e-12)
    rounded = _t18_status(2)
    assert len(rounded) == 31 and set(rounded.values()) == {"match"}, rounded
    unrounded = _t18_status(None)
    off = sorted(cid for cid, s in unrounded.items() if s != "match")
    assert off == ["T18.full.neutral.iw.hi", "T18.full.neutral.iw.lo", "T18.partial.social.iw.lo"]
