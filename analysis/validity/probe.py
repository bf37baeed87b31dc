"""The association probe and its relation to reliance across cues (beyond the paper's protocol).

Each probe job shows a pair's target twice, with A = 1 and with A = 0 (:func:`analysis.cues.probe_table`),
and asks which of the two belongs to group A, the group defined by labelled in-context examples.
Per pair, the score is the mean over the two presentation orders of [the A = 1 version named] plus
half of [abstained] (an abstention counts as chance); its mean over pairs is the two-alternative
forced-choice AUC of the cue's group signal as the subject reads it (0.5 = no association).
Reported per cue with a 95% pair-bootstrap interval, the abstention rate, and a one-sided test of
AUC > 0.5 (one-sample t-test on the per-pair scores), Benjamini–Hochberg across the conditions.

Association against reliance, across the judged cues (related paper 003): the correlation of the
cues' AUC with their excess (PSE minus reference), its 95% interval from a pair bootstrap that
redraws the same pairs for every cue, and an equivalence test (TOST) of the correlation against
the margin :data:`MARGIN`, declared here before any run: equivalence to no relation is concluded
when the 90% bootstrap interval lies inside (-MARGIN, +MARGIN). Per-cue reliance tests (excess = 0,
one-sample t-test on per-pair PSE minus the reference) are also BH-adjusted.
"""
from __future__ import annotations

import math

import numpy as np
import pandas as pd
from scipy import stats
from statsmodels.stats.multitest import multipletests

from .. import config, cues, estimators
from .panel import PANEL_SEED

#: the TOST margin on the association-reliance correlation, declared before any run (written in the card)
MARGIN = 0.5
#: the false-discovery rate of the Benjamini–Hochberg adjustment
FDR = 0.05
TOST_LEVEL = 90.0  # a two one-sided tests at 5% each = a 90% interval inside the margin


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


def _p_greater(x: np.ndarray, null: float) -> float:
    if len(x) < 2:
        return math.nan
    if np.std(x) == 0:
        return 0.0 if x.mean() > null else 1.0
    return float(stats.ttest_1samp(x, null, alternative="greater").pvalue)


def _p_two_sided(x: np.ndarray) -> float:
    if len(x) < 2:
        return math.nan
    if np.std(x) == 0:
        return 0.0 if x.mean() != 0 else 1.0
    return float(stats.ttest_1samp(x, 0.0).pvalue)


def association(rec: pd.DataFrame, draws: int = config.BOOTSTRAP_DRAWS) -> dict:
    """``association_auc``, ``auc_ci`` (95% pair bootstrap), ``abstain_rate``, ``n_pairs``, ``p_value``."""
    s = pair_scores(rec)
    if s.empty:
        return {"association_auc": math.nan, "auc_ci": [math.nan, math.nan], "abstain_rate": math.nan,
                "n_pairs": 0, "p_value": math.nan}
    x = s["score"].to_numpy(float)
    lo, hi = estimators.boot_ci(x, PANEL_SEED, draws)
    answered = rec["answer"].notna()
    return {"association_auc": float(x.mean()), "auc_ci": [lo, hi],
            "abstain_rate": float((rec.loc[answered, "answer"] == cues.ABSTAIN_ANSWER).mean()),
            "n_pairs": int(len(s)), "p_value": _p_greater(x, 0.5)}


def bh(pvalues, alpha: float = FDR) -> tuple[list[bool], list[float]]:
    """Benjamini–Hochberg (``statsmodels multipletests``, ``fdr_bh``); NaN p-values are left out (q NaN)."""
    p = np.asarray(pvalues, dtype=float)
    ok = ~np.isnan(p)
    reject, q = np.zeros(len(p), bool), np.full(len(p), np.nan)
    if ok.any():
        r, qq, _, _ = multipletests(p[ok], alpha=alpha, method="fdr_bh")
        reject[ok], q[ok] = r, qq
    return [bool(v) for v in reject], [float(v) for v in q]


def association_rows(probe_records: dict[str, pd.DataFrame], draws: int = config.BOOTSTRAP_DRAWS) -> list[dict]:
    """One row per (cue, variant): association and abstention, with BH q-values over all rows."""
    rows = []
    for key, rec in probe_records.items():
        variant = str(rec["variant"].iloc[0]) if len(rec) else ""
        cue = str(rec["cue"].iloc[0]) if len(rec) else key
        rows.append({"cue": cue, "variant": variant, "control": cues.parse_cue(cue).control,
                     **association(rec, draws)})
    reject, q = bh([r["p_value"] for r in rows])
    for r, rj, qq in zip(rows, reject, q):
        r.update(q_value=qq, associated=rj)
    return rows


def reliance_tests(panel_rows: list[dict], per_pair: dict[str, pd.Series]) -> list[dict]:
    """Per cue: two-sided test of excess = 0 on per-pair PSE minus the reference, BH-adjusted."""
    out = []
    for r in panel_rows:
        x = per_pair[r["cue"]].to_numpy(float) - r["reference_pp"] / 100
        out.append({"cue": r["cue"], "p_value": _p_two_sided(x)})
    reject, q = bh([o["p_value"] for o in out])
    for o, rj, qq in zip(out, reject, q):
        o.update(q_value=qq, resolved=rj)
    return out


def association_vs_reliance(panel_rows: list[dict], per_pair: dict[str, pd.Series],
                            scores: dict[str, pd.Series], draws: int = config.BOOTSTRAP_DRAWS,
                            margin: float = MARGIN, seed: int = PANEL_SEED) -> dict:
    """Correlation across the judged cues of association (AUC) and reliance (excess), with intervals and TOST.

    ``scores`` maps cue id -> per-pair probe score (one variant). Pairs common to every cue are
    redrawn together. Returns ``r, ci, tost {margin, lo, hi, equivalent}, n_cues, n_pairs``.
    """
    judged = [r for r in panel_rows if not r.get("control") and r["cue"] in scores]
    out = {"r": math.nan, "ci": [math.nan, math.nan], "n_cues": len(judged), "n_pairs": 0,
           "tost": {"margin": margin, "level": TOST_LEVEL, "lo": math.nan, "hi": math.nan, "equivalent": False},
           "margin_declared": "analysis.validity.probe.MARGIN, fixed before any run"}
    if len(judged) < 3:
        return out
    idx = None
    for r in judged:
        both = per_pair[r["cue"]].index.intersection(scores[r["cue"]].index)
        idx = both if idx is None else idx.intersection(both)
    idx = idx.sort_values()
    n = len(idx)
    if n < 3:
        return out
    P = np.column_stack([per_pair[r["cue"]].loc[idx].to_numpy(float) for r in judged])  # pairs x cues
    S = np.column_stack([scores[r["cue"]].loc[idx].to_numpy(float) for r in judged])
    ref = np.array([r["reference_pp"] for r in judged]) / 100

    def corr(x, y):
        x, y = x - x.mean(-1, keepdims=True), y - y.mean(-1, keepdims=True)
        den = np.sqrt((x**2).sum(-1) * (y**2).sum(-1))
        return np.where(den > 0, (x * y).sum(-1) / np.where(den > 0, den, 1), np.nan)

    r0 = float(corr(S.mean(0), P.mean(0) - ref))
    rng = np.random.default_rng(seed)
    ii = rng.integers(0, n, size=(draws, n))
    rs = corr(S[ii].mean(1), P[ii].mean(1) - ref)
    rs = rs[~np.isnan(rs)]
    if len(rs):
        lo95, hi95 = np.percentile(rs, [2.5, 97.5])
        lo90, hi90 = np.percentile(rs, [(100 - TOST_LEVEL) / 2, 100 - (100 - TOST_LEVEL) / 2])
        out["ci"] = [float(lo95), float(hi95)]
        out["tost"].update(lo=float(lo90), hi=float(hi90), equivalent=bool(-margin < lo90 and hi90 < margin))
    out.update(r=r0, n_pairs=int(n))
    return out


def relation_statement(rel: dict) -> str:
    """What the association-reliance evidence supports (never a label of the model)."""
    if math.isnan(rel["r"]):
        return "association and reliance could not be related (fewer than three judged cues or pairs)"
    t = rel["tost"]
    s = (f"across {rel['n_cues']} cues, association and excess correlate r = {rel['r']:+.2f} "
         f"[{rel['ci'][0]:+.2f}, {rel['ci'][1]:+.2f}]")
    if t["equivalent"]:
        return s + f"; the 90% interval lies within the declared margin ±{t['margin']:.2f}: no relation of that size"
    return s + f"; equivalence within the declared margin ±{t['margin']:.2f} is not shown"
