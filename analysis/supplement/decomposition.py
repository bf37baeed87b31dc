"""Audit-error decomposition (Table 18; Supplementary Note 9), summary-level.

Computed from the released condition summaries only (no per-call records are released).
"""
from __future__ import annotations

import functools
import math

import pandas as pd

from .. import data

EXPB = "data/summaries/expB"


def _metric_table(name: str) -> pd.Series:
    """A released ``metric,value`` summary as a Series."""
    df = data.read_csv(name)
    return pd.to_numeric(df.set_index(df.columns[0])[df.columns[1]], errors="coerce")


def combine_gap(full: float, full_lo: float, full_hi: float, gap: float, gap_lo: float, gap_hi: float) -> tuple:
    """Magnitude of an audit gap with an interval that adds the full-panel effect's uncertainty.

    ``gap`` (signed: audit minus full panel, negative) and ``[gap_lo, gap_hi]`` are the released
    audit-side interval conditional on the full-panel effect; the full-panel interval is treated as
    independent and combined in quadrature on each side (Supplementary Note 9). Returns
    ``(magnitude, lo, hi)``.
    """
    g = -gap
    lo = g - math.hypot(full - full_lo, gap_hi - gap)
    hi = g + math.hypot(full_hi - full, gap - gap_lo)
    return g, lo, hi


@functools.lru_cache(maxsize=1)
def audit_decomposition() -> pd.DataFrame:
    """Table 18 from the released condition summaries (summary-level; no per-call records)."""
    cells = data.read_csv("data/summaries/acore/acore_LH_rule_absent_cells.csv").set_index("semantic")
    full = {s: (100 * cells.at[s, "PSE"], 100 * cells.at[s, "CI_lo"], 100 * cells.at[s, "CI_hi"])
            for s in ("neutral", "social")}
    gaps = data.read_csv(f"{EXPB}/expb_omission_gaps.csv").set_index(["arm", "target_full"])
    pn = data.read_csv(f"{EXPB}/expb_omission_neutral_cell.csv").iloc[0]
    rows = []

    def add(row, names, gap, iw):
        f = full[names]
        g = combine_gap(*f, *gap)
        w = combine_gap(*f, *iw)
        rows.append({"row": row, "names": names, "gap_pp": g[0], "gap_lo": g[1], "gap_hi": g[2],
                     "iw_gap_pp": w[0], "iw_lo": w[1], "iw_hi": w[2], "iw_excludes_zero": w[1] > 0 or w[2] < 0})

    for names in ("neutral", "social"):
        r = gaps.loc[("reduced", names)]
        add("full_omission", names, (r["omission_gap_pp"], r["gap_ci_lo"], r["gap_ci_hi"]),
            (r["iw_residual_pp"], r["iw_resid_ci_lo"], r["iw_resid_ci_hi"]))
    # partial omission, neutral: audit arm PSE and its IW estimate (gap = audit - full)
    fn = pn["full_neutral_pp_ref"]
    add("partial_omission", "neutral",
        (pn["PSE_pp"] - fn, pn["PSE_CI_lo_pp"] - fn, pn["PSE_CI_hi_pp"] - fn),
        (pn["IW_estimate_pp"] - fn, pn["IW_CI_lo_pp"] - fn, pn["IW_CI_hi_pp"] - fn))
    r = gaps.loc[("partial_social", "social")]
    add("partial_omission", "social", (r["omission_gap_pp"], r["gap_ci_lo"], r["gap_ci_hi"]),
        (r["iw_residual_pp"], r["iw_resid_ci_lo"], r["iw_resid_ci_hi"]))
    # distribution shift: covariance identity with its pair-bootstrap interval (no full-panel term)
    t = _metric_table(f"{EXPB}/expb2_neutral_transport.csv")
    rows.append({"row": "distribution_shift", "names": "neutral", "gap_pp": -t["cov_Q_w_tau_pp"],
                 "gap_lo": -t["cov_ci_hi"], "gap_hi": -t["cov_ci_lo"], "iw_gap_pp": t["IW_residual_gap_pp"],
                 "iw_lo": t["IW_residual_ci_lo"], "iw_hi": t["IW_residual_ci_hi"],
                 "iw_excludes_zero": t["IW_residual_ci_lo"] > 0 or t["IW_residual_ci_hi"] < 0})
    rows.append({"row": "label_mismatch", "names": "neutral vs social",
                 "gap_pp": full["neutral"][0] - full["social"][0]})
    out = pd.DataFrame(rows)
    out.attrs["full_panel"] = full
    return out
