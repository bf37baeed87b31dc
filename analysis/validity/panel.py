"""The cue panel: one condition judged under several operationalisations of the proxies (beyond the paper).

For each cue of :mod:`analysis.cues` on the same pairs: the PSE with its 95% pair-bootstrap interval,
the cue's reference, PSE minus the reference and the verdict. Two judgments per cue (issue 22):

* the **paper's** (``paper_excess_ci``, ``paper_verdict``: :func:`analysis.judgments.judge`, the PSE
  interval shifted by the reference as if it were exact), kept for reproduction;
* the panel's own (``excess_ci``, ``verdict``): a **joint bootstrap** of PSE − reference, the pairs
  resampled (one set of indices shared by every cue of the panel) and the reference learner refitted
  on resampled examples (:mod:`analysis.validity.reference`), read with a TOST against
  ``config.EQUIVALENCE_MARGIN_PP`` (seed 003): *excess*, *shortfall*, *equivalent within ±X pp* or
  *inconclusive* (:func:`analysis.intervals.equivalence_verdict`; "too few pairs to judge" below
  ``config.MIN_PAIRS_TO_JUDGE``).

Across cues (related paper 002):

* ``pairwise_r`` — the correlation of the per-pair shifts of every two cues on their common pairs,
  with a 95% pair-bootstrap interval, **read against its reliability ceiling** (split-half over
  presentation orders, :mod:`analysis.validity.reliability`) and disattenuated;
* ``heterogeneity`` — the test of equal excess across cues from the joint bootstrap
  (:mod:`analysis.validity.heterogeneity`), which replaces the former "cue-robust if 5 of 6 agree";
* ``sign_agreement``, ``verdict_agreement``, ``excess_range`` — descriptive counts.

References per cue: numeric vocabularies and the narrative show the same values as the paper's numeric
display, so they share its reference learner; the ordered and arbitrary displays use the
category-indicator learner (-5.05 pp in the base cell); the explicit label uses the reference learner
with the group indicator as one more feature. The explicit label is the positive control: left out of
the convergence, the heterogeneity and every Benjamini–Hochberg family. Descriptive, not pre-specified
by the paper (the margin was declared before any run).
"""
from __future__ import annotations

import itertools
import math

import numpy as np
import pandas as pd

from .. import config, cues, estimators, intervals
from ..cells import Cell, expect_cell
from ..judgments import judge
from ..references import cell_references
from . import heterogeneity as H
from . import reference as RF
from . import reliability as REL

#: pair bootstrap of the panel: one set of pair indices shared by every cue of a panel
PANEL_SEED = 0
CORRELATION_DRAWS = 2000


# --- references ---------------------------------------------------------------------------------

def cue_reference(cell: Cell, cue) -> dict:
    """``reference`` (``learner`` / ``fullinfo``), ``reference_kind``, ``reference_pp``, ``fullinfo_pp``,
    ``learner_pp`` of a cue (the learner of the cue's kind on the examples as shown)."""
    c, q = expect_cell(cell), cues.parse_cue(cue)
    kind = RF.reference_kind(c, q)
    full = float(cell_references(c)["fullinfo_pse_pp"])
    learner = RF.reference_pse(c, kind) if c.has_examples else math.nan
    primary = "learner" if c.has_examples else "fullinfo"
    return {"reference": primary, "reference_kind": kind, "reference_pp": learner if primary == "learner" else full,
            "fullinfo_pp": full, "learner_pp": learner}


# --- one cue ------------------------------------------------------------------------------------

def interval(values, draws: int = config.BOOTSTRAP_DRAWS, seed: int = PANEL_SEED) -> tuple[float, float, float]:
    """Mean and 95% pair-bootstrap percentile interval (pp) of per-pair values."""
    v = np.asarray(values, dtype=float)
    if len(v) == 0:
        return math.nan, math.nan, math.nan
    lo, hi = estimators.boot_ci(v, seed, draws)
    return 100 * float(v.mean()), 100 * lo, 100 * hi


def pair_draws(n: int, draws: int, seed: int = PANEL_SEED) -> np.ndarray:
    """``draws x n`` pair indices of the joint bootstrap (one generator, one call)."""
    return np.random.default_rng(seed).integers(0, n, size=(draws, n))


def excess_draws(cell: Cell, cue, per_pair: pd.Series, universe: pd.MultiIndex, idx: np.ndarray) -> np.ndarray:
    """Joint bootstrap draws (pp) of PSE − reference: pairs ``idx`` over ``universe`` (the cue keeps the
    drawn pairs it resolves), the reference refitted on the matching example resample."""
    v = per_pair.reindex(universe).to_numpy(float)
    R = RF.shift_draws(cell, cue, len(idx))
    cols = RF.pair_index(cell).get_indexer(universe)
    if (cols < 0).any():
        raise ValueError("records hold pairs that are not pairs of the cell")
    V = v[idx]
    Rb = R[:, cols][np.arange(len(idx))[:, None], idx]
    M = ~np.isnan(V)
    with np.errstate(invalid="ignore", divide="ignore"):
        return 100 * (np.where(M, V, 0).sum(1) - np.where(M, Rb, 0).sum(1)) / M.sum(1)


def judge_draws(excess_pp: float, d: np.ndarray, n_pairs: int, margin_pp: float = config.EQUIVALENCE_MARGIN_PP) -> dict:
    """``excess_ci`` (95% percentile), ``p_tost``, ``p_value`` (two-sided) and the four-way ``verdict``."""
    d = d[np.isfinite(d)]
    if len(d) == 0:
        return {"excess_ci": [math.nan, math.nan], "p_tost": math.nan, "p_value": math.nan, "verdict": ""}
    lo, hi = estimators.percentile_ci(d)
    p_tost = intervals.tost(d, margin_pp)
    return {"excess_ci": [lo, hi], "p_tost": p_tost, "p_value": intervals.p_two_sided(d),
            "verdict": intervals.equivalence_verdict(lo, hi, p_tost, margin_pp, n_pairs=n_pairs)}


def cue_row(cell: Cell, cue, records: pd.DataFrame, draws: int = config.BOOTSTRAP_DRAWS, *, idx=None,
            universe: pd.MultiIndex | None = None, keep_draws: bool = False) -> dict:
    """PSE [95% CI], reference, the paper's judgment and the joint-bootstrap judgment of one cue's records."""
    q = cues.parse_cue(cue)
    per_pair = estimators.pair_pse(records)
    pse, lo, hi = interval(per_pair, draws)
    ref = cue_reference(cell, q)
    paper = judge(pse, (lo, hi), ref["reference_pp"], ref["reference"])
    universe = per_pair.index if universe is None else universe
    row = {"cue": q.id, "control": q.control, "display": q.display, "vocabulary": q.vocabulary, "style": q.style,
           "n_pairs": int(len(per_pair)), "pse_pp": pse, "pse_ci": [lo, hi], "reference": ref["reference"],
           "reference_kind": ref["reference_kind"], "reference_pp": ref["reference_pp"],
           "excess_pp": paper.difference_pp, "paper_excess_ci": list(paper.ci), "paper_verdict": paper.verdict,
           "margin_pp": config.EQUIVALENCE_MARGIN_PP}
    if len(per_pair) == 0 or math.isnan(ref["reference_pp"]):
        row.update(excess_ci=[math.nan, math.nan], p_tost=math.nan, p_value=math.nan, verdict="", reference_ci=None)
        return row
    idx = pair_draws(len(universe), draws) if idx is None else idx
    d = excess_draws(cell, q, per_pair, universe, idx)
    R = RF.shift_draws(cell, q, len(idx)).mean(axis=1) * 100
    row.update(judge_draws(row["excess_pp"], d, len(per_pair)), reference_ci=list(estimators.percentile_ci(R)))
    if keep_draws:
        row["_draws"] = d
    return row


# --- convergence --------------------------------------------------------------------------------

def _corr(a: np.ndarray, b: np.ndarray) -> float:
    if len(a) < 3 or np.std(a) == 0 or np.std(b) == 0:
        return math.nan
    return float(np.corrcoef(a, b)[0, 1])


def pair_correlation(a: pd.Series, b: pd.Series, draws: int = CORRELATION_DRAWS, seed: int = PANEL_SEED) -> dict:
    """Correlation of two cues' per-pair shifts on their common pairs, with a 95% pair-bootstrap interval."""
    idx = a.index.intersection(b.index).sort_values()
    x, y = a.loc[idx].to_numpy(float), b.loc[idx].to_numpy(float)
    r = _corr(x, y)
    if math.isnan(r):
        return {"r": math.nan, "ci": [math.nan, math.nan], "n_pairs": int(len(idx))}
    rng = np.random.default_rng(seed)
    ii = rng.integers(0, len(x), size=(draws, len(x)))
    xs, ys = x[ii], y[ii]
    xs, ys = xs - xs.mean(1, keepdims=True), ys - ys.mean(1, keepdims=True)
    den = np.sqrt((xs**2).sum(1) * (ys**2).sum(1))
    rs = np.where(den > 0, (xs * ys).sum(1) / np.where(den > 0, den, 1), np.nan)
    rs = rs[~np.isnan(rs)]
    lo, hi = np.percentile(rs, [2.5, 97.5]) if len(rs) else (math.nan, math.nan)
    return {"r": r, "ci": [float(lo), float(hi)], "n_pairs": int(len(idx))}


def convergence(rows: list[dict], per_pair: dict[str, pd.Series], draws: int = CORRELATION_DRAWS,
                excess: dict[str, np.ndarray] | None = None, reliability: dict[str, dict] | None = None) -> dict:
    """Convergence across the judged cues (the positive control left out); see the module docstring.

    ``excess`` maps cue id -> joint excess draws (absent: heterogeneity not tested); ``reliability``
    maps cue id -> :func:`analysis.validity.reliability.split_half` (absent: no ceiling).
    """
    judged = [r for r in rows if not r.get("control") and r.get("verdict")]
    ids = [r["cue"] for r in judged]
    rel = reliability or {}
    pairwise = []
    for a, b in itertools.combinations(ids, 2):
        if a not in per_pair or b not in per_pair:  # rows without per-pair shifts (the audit engine's rows)
            continue
        pc = pair_correlation(per_pair[a], per_pair[b], draws)
        ra, rb = (rel.get(x, {}).get("reliability", math.nan) for x in (a, b))
        pairwise.append({"a": a, "b": b, **pc, "ceiling": REL.ceiling(ra, rb),
                         "r_disattenuated": REL.disattenuate(pc["r"], ra, rb)})
    ex = np.array([r["excess_pp"] for r in judged], dtype=float)
    signs = np.sign(ex)
    n_pos, n_neg = int((signs > 0).sum()), int((signs < 0).sum())
    counts = pd.Series([r["verdict"] for r in judged], dtype=object).value_counts()
    modal, n_modal = (str(counts.index[0]), int(counts.iloc[0])) if len(counts) else ("", 0)
    n = len(judged)
    het = H.heterogeneity({k: (excess or {}).get(k) for k in ids},
                          n_pairs=min((r["n_pairs"] for r in judged), default=None))
    if n == 0:
        het["statement"] = "no cue could be judged"
    rs = [p["r"] for p in pairwise if not math.isnan(p["r"])]
    return {"cues": ids, "pairwise_r": pairwise, "median_r": float(np.median(rs)) if rs else math.nan,
            "reliability": {k: rel[k] for k in ids if k in rel},
            "sign_agreement": {"positive": n_pos, "negative": n_neg, "zero": n - n_pos - n_neg,
                               "agree": max(n_pos, n_neg), "of": n},
            "verdict_agreement": {"modal": modal, "agree": n_modal, "of": n,
                                  "counts": {str(k): int(v) for k, v in counts.items()}},
            "excess_range": [float(ex.min()), float(ex.max())] if n else [math.nan, math.nan],
            "heterogeneity": het, "robust": H.is_robust(het["verdict"]), "statement": het["statement"]}


def panel(cell: Cell, records: dict[str, pd.DataFrame], draws: int = config.BOOTSTRAP_DRAWS) -> dict:
    """The cue panel of one cell: ``rows`` (one per cue, in the order given), ``per_pair``, ``draws``
    (joint excess draws per cue), ``reliability`` and ``convergence``."""
    per_pair = {cues.parse_cue(k).id: estimators.pair_pse(rec) for k, rec in records.items()}
    universe = pd.MultiIndex.from_tuples(sorted(set().union(*[set(s.index) for s in per_pair.values()])),
                                         names=["i", "j"]) if per_pair else pd.MultiIndex.from_tuples([], names=["i", "j"])
    idx = pair_draws(len(universe), draws)
    c = expect_cell(cell)
    rows, excess, rel = [], {}, {}
    for cue_id, rec in records.items():
        row = cue_row(c, cue_id, rec, draws, idx=idx, universe=universe, keep_draws=True)
        d = row.pop("_draws", None)
        if d is not None:
            excess[row["cue"]] = d
        rel[row["cue"]] = REL.split_half(rec)
        row["reliability"] = rel[row["cue"]]["reliability"]
        rows.append(row)
    return {"cell": c.id, "rows": rows, "per_pair": per_pair, "draws": excess, "reliability": rel,
            "convergence": convergence(rows, per_pair, excess=excess, reliability=rel)}
