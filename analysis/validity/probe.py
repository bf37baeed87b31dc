"""The association probe and its relation to reliance across cues (beyond the paper's protocol).

Each probe job shows a pair's target twice, with A = 1 and with A = 0 (:func:`analysis.cues.probe_table`),
and asks which of the two belongs to group A, the group defined by labelled in-context examples.
Per pair, the score is the mean over the two presentation orders of [the A = 1 version named] plus
half of [abstained] (an abstention counts as chance); its mean over pairs is the two-alternative
forced-choice AUC of the cue's group signal as the subject reads it (0.5 = no association).
Reported per cue with a 95% pair-bootstrap interval, the abstention rate with an exact
(Clopper–Pearson) interval over answered calls, and a one-sided bootstrap p-value of AUC > 0.5
(:func:`analysis.intervals.p_greater`: never 0), Benjamini–Hochberg across the judged cues; the
explicit label (positive control) sits outside every BH family (issue 22, seed 003).

Per-cue reliance tests (excess = 0, the two-sided p-value of the joint excess draws of
:mod:`analysis.validity.panel`) are BH-adjusted over the judged cues too. Association against
reliance across cues: :mod:`analysis.validity.coupling`.
"""
from __future__ import annotations

import math

import numpy as np
import pandas as pd
from statsmodels.stats.multitest import multipletests

from .. import config, cues, estimators, intervals
from .coupling import MARGIN, coupling  # noqa: F401  (re-exported)
from .panel import PANEL_SEED

#: the false-discovery rate of the Benjamini–Hochberg adjustment
FDR = 0.05


def records(table: pd.DataFrame, answers) -> pd.DataFrame:
    """Probe records: the table's keys with ``answer`` (1, 2, 0 = abstain, NaN = invalid) and
    ``named_a`` (1 if the A = 1 version was named, 0 if the other, NaN if abstained or invalid)."""
    out = table[["pair_id", "i", "j", "order", "variant", "cue", "group_a_patient"]].copy()
    a = pd.to_numeric(pd.Series(list(answers), index=out.index), errors="coerce").astype(float)
    out["answer"] = a
    out["named_a"] = np.where(a.isin([1, 2]), (a == out["group_a_patient"]).astype(float), np.nan)
    return out


def pair_scores(rec: pd.DataFrame) -> pd.DataFrame:
    """Per pair ``score`` (AUC contribution) and ``abstain`` share, over answered calls, sorted by (i, j)."""
    r = rec[rec["answer"].notna()].copy()
    r["abstained"] = (r["answer"] == cues.ABSTAIN_ANSWER).astype(float)
    r["s"] = np.where(r["abstained"] == 1, 0.5, r["named_a"])
    g = r.groupby(["i", "j"])
    return pd.DataFrame({"score": g["s"].mean(), "abstain": g["abstained"].mean()}).sort_index()


def association(rec: pd.DataFrame, draws: int = config.BOOTSTRAP_DRAWS) -> dict:
    """``association_auc``, ``auc_ci`` (95% pair bootstrap), ``abstain_rate``, ``n_pairs``, ``p_value``."""
    s = pair_scores(rec)
    if s.empty:
        return {"association_auc": math.nan, "auc_ci": [math.nan, math.nan], "abstain_rate": math.nan,
                "abstain_ci": [math.nan, math.nan], "n_calls": 0, "n_pairs": 0, "p_value": math.nan}
    x = s["score"].to_numpy(float)
    means = estimators.bootstrap_means(x, PANEL_SEED, draws)
    lo, hi = estimators.percentile_ci(means)
    answered = rec["answer"].notna()
    k, n = int((rec.loc[answered, "answer"] == cues.ABSTAIN_ANSWER).sum()), int(answered.sum())
    return {"association_auc": float(x.mean()), "auc_ci": [lo, hi], "abstain_rate": k / n if n else math.nan,
            "abstain_ci": list(intervals.exact_binomial(k, n)), "n_calls": n, "n_pairs": int(len(s)),
            "p_value": intervals.p_greater(means, 0.5) if len(x) >= 2 else math.nan}


def bh(pvalues, alpha: float = FDR) -> tuple[list[bool], list[float]]:
    """Benjamini–Hochberg (``statsmodels multipletests``, ``fdr_bh``); NaN p-values are left out (q NaN)."""
    p = np.asarray(pvalues, dtype=float)
    ok = ~np.isnan(p)
    reject, q = np.zeros(len(p), bool), np.full(len(p), np.nan)
    if ok.any():
        r, qq, _, _ = multipletests(p[ok], alpha=alpha, method="fdr_bh")
        reject[ok], q[ok] = r, qq
    return [bool(v) for v in reject], [float(v) for v in q]


def bh_outside_controls(rows: list[dict], alpha: float = FDR) -> tuple[list[bool], list[float]]:
    """BH over the rows that are not the positive control; a control keeps its raw p as q (its own family)."""
    judged = [k for k, r in enumerate(rows) if not r.get("control")]
    reject, q = bh([rows[k]["p_value"] for k in judged], alpha)
    out_r = [bool(r["p_value"] < alpha) if r.get("control") else False for r in rows]
    out_q = [float(r["p_value"]) if r.get("control") else math.nan for r in rows]
    for k, rj, qq in zip(judged, reject, q):
        out_r[k], out_q[k] = rj, qq
    return out_r, out_q


def association_rows(probe_records: dict[str, pd.DataFrame], draws: int = config.BOOTSTRAP_DRAWS) -> list[dict]:
    """One row per (cue, variant): association and abstention; BH q-values within each variant over the
    judged cues (the positive control outside the family)."""
    rows = []
    for key, rec in probe_records.items():
        variant = str(rec["variant"].iloc[0]) if len(rec) else ""
        cue = str(rec["cue"].iloc[0]) if len(rec) else key
        rows.append({"cue": cue, "variant": variant, "control": cues.parse_cue(cue).control,
                     **association(rec, draws)})
    for v in {r["variant"] for r in rows}:
        fam = [r for r in rows if r["variant"] == v]
        for r, rj, qq in zip(fam, *bh_outside_controls(fam)):
            r.update(q_value=qq, associated=rj, bh_family="positive control (outside BH)" if r["control"]
                     else f"association, {v}")
    return rows


def reliance_tests(panel_rows: list[dict]) -> list[dict]:
    """Per cue: two-sided p-value of excess = 0 from the joint excess draws, BH over the judged cues."""
    out = [{"cue": r["cue"], "control": bool(r.get("control")), "p_value": r.get("p_value", math.nan)}
           for r in panel_rows]
    for o, rj, qq in zip(out, *bh_outside_controls(out)):
        o.update(q_value=qq, resolved=rj)
    return out
