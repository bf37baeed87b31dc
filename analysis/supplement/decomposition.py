"""Audit-error decomposition (Table 18; Supplementary Note 9), summary-level.

Computed from the released condition summaries only (no per-call records are released). The paper
computed Table 18 from the summaries as printed to 2 decimals (spec R9): every input read from them
is rounded to ``config.TABLE18_SUMMARY_DECIMALS`` before the intervals are combined in quadrature,
which reproduces all 24 printed numbers. ``summary_decimals=None`` combines the unrounded values
(three importance-weighted bounds then differ from the paper by 0.01 pp).
"""
from __future__ import annotations

import functools
import math

import pandas as pd

from .. import config, data

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


@functools.lru_cache(maxsize=2)
def audit_decomposition(summary_decimals: int | None = config.TABLE18_SUMMARY_DECIMALS) -> pd.DataFrame:
    """Table 18 from the released condition summaries (summary-level; no per-call records).

    ``summary_decimals``: every value read from the summaries is first rounded to this many
    decimals (in pp), as the paper did (spec R9); ``None`` keeps them unrounded.
    """
    def r(x: float) -> float:
        return float(x) if summary_decimals is None else round(float(x), summary_decimals)

    cells = data.read_csv("data/summaries/acore/acore_LH_rule_absent_cells.csv").set_index("semantic")
    full = {s: (r(100 * cells.at[s, "PSE"]), r(100 * cells.at[s, "CI_lo"]), r(100 * cells.at[s, "CI_hi"]))
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
        g = gaps.loc[("reduced", names)]
        add("full_omission", names, (r(g["omission_gap_pp"]), r(g["gap_ci_lo"]), r(g["gap_ci_hi"])),
            (r(g["iw_residual_pp"]), r(g["iw_resid_ci_lo"]), r(g["iw_resid_ci_hi"])))
    # partial omission, neutral: audit arm PSE and its IW estimate (gap = audit - full)
    fn = r(pn["full_neutral_pp_ref"])
    add("partial_omission", "neutral",
        (r(pn["PSE_pp"]) - fn, r(pn["PSE_CI_lo_pp"]) - fn, r(pn["PSE_CI_hi_pp"]) - fn),
        (r(pn["IW_estimate_pp"]) - fn, r(pn["IW_CI_lo_pp"]) - fn, r(pn["IW_CI_hi_pp"]) - fn))
    g = gaps.loc[("partial_social", "social")]
    add("partial_omission", "social", (r(g["omission_gap_pp"]), r(g["gap_ci_lo"]), r(g["gap_ci_hi"])),
        (r(g["iw_residual_pp"]), r(g["iw_resid_ci_lo"]), r(g["iw_resid_ci_hi"])))
    # distribution shift: covariance identity with its pair-bootstrap interval (no full-panel term)
    t = _metric_table(f"{EXPB}/expb2_neutral_transport.csv").map(r)
    rows.append({"row": "distribution_shift", "names": "neutral", "gap_pp": -t["cov_Q_w_tau_pp"],
                 "gap_lo": -t["cov_ci_hi"], "gap_hi": -t["cov_ci_lo"], "iw_gap_pp": t["IW_residual_gap_pp"],
                 "iw_lo": t["IW_residual_ci_lo"], "iw_hi": t["IW_residual_ci_hi"],
                 "iw_excludes_zero": t["IW_residual_ci_lo"] > 0 or t["IW_residual_ci_hi"] < 0})
    rows.append({"row": "label_mismatch", "names": "neutral vs social",
                 "gap_pp": full["neutral"][0] - full["social"][0]})
    out = pd.DataFrame(rows)
    out.attrs["full_panel"] = full
    out.attrs["summary_decimals"] = summary_decimals
    return out
