"""The cue panel: one condition judged under several operationalisations of the proxies (beyond the paper).

For each cue of :mod:`analysis.cues` on the same pairs: the PSE with its 95% pair-bootstrap
interval, the cue's reference, PSE minus the reference and the verdict (:func:`analysis.judgments.judge`).
Across cues, the convergence (related paper 002, convergent validity):

* ``pairwise_r`` — the correlation of the per-pair shifts (per-pair PSE) of every two cues on their
  common pairs, with a 95% pair-bootstrap interval;
* ``sign_agreement`` — how many cues' excess (PSE minus reference) has the majority sign;
* ``verdict_agreement`` — how many cues give the modal verdict; the verdict is *cue-robust* when
  all cues but at most :data:`ROBUST_ALLOWANCE` give it (e.g. "excess under 5 of 6 cues"), else
  *cue-dependent*; a panel of fewer than six cues must agree fully (:func:`is_robust`);
* ``excess_range`` — the smallest and largest excess.

References per cue: numeric vocabularies and the narrative show the same values as the paper's
numeric display, so they share its references (the reference learner of the examples; the
full-information reference without examples); the ordered and arbitrary displays use the
category-indicator learner (-5.05 pp in the base cell); the explicit label uses the reference
learner fitted with the group indicator as one more feature, since the examples show the group.
The explicit label is the positive control and is left out of the convergence. The panel was not
pre-specified by the paper: it is descriptive.
"""
from __future__ import annotations

import functools
import itertools
import math

import numpy as np
import pandas as pd

from .. import config, cues, estimators
from ..cells import Cell, parse_cell
from ..judgments import judge
from ..learners import ReferenceLearner
from ..population import arm_sample, examples, pairs
from ..references import cell_references, indicator_learner_pse

#: pair bootstrap of the panel: generator seeded afresh per quantity (as PROTOCOL-representation §10.5.2)
PANEL_SEED = 0
#: cue-robust when all cues but at most this many per six give the modal verdict ("5 of 6")
ROBUST_ALLOWANCE = 1
CORRELATION_DRAWS = 2000


# --- references ---------------------------------------------------------------------------------

@functools.lru_cache(maxsize=16)
def _label_learner_pse(c: Cell) -> float:
    ex = examples(c)
    learner = ReferenceLearner().fit(np.column_stack([ex.X, ex.A]), ex.Y)
    picks = {1: [], 0: []}
    for pr in pairs(c).itertuples(index=False):
        for a, arm in ((1, "cf_a1"), (0, "cf_a0")):
            s = arm_sample(c, pr.i, arm)
            X = np.column_stack([s.X[[pr.i, pr.j]], s.A[[pr.i, pr.j]]])
            pred = learner.predict(X)
            picks[a].append(float(pred[0] >= pred[1]))
    return 100 * (float(np.mean(picks[1])) - float(np.mean(picks[0])))


def cue_reference(cell, cue) -> dict:
    """``reference`` (``learner`` / ``fullinfo``), ``reference_pp``, ``fullinfo_pp``, ``learner_pp`` of a cue."""
    c, q = parse_cell(cell), cues.parse_cue(cue)
    ref = cell_references(c)
    learner = float(ref["learner_pse_pp"]) if c.has_examples else math.nan
    if c.has_examples and q.label:
        learner = _label_learner_pse(c)
    elif c.has_examples and q.display != "numeric":
        learner = float(indicator_learner_pse(c))
    primary = "learner" if c.has_examples else "fullinfo"
    full = float(ref["fullinfo_pse_pp"])
    return {"reference": primary, "reference_pp": learner if primary == "learner" else full,
            "fullinfo_pp": full, "learner_pp": learner}


# --- one cue ------------------------------------------------------------------------------------

def interval(values, draws: int = config.BOOTSTRAP_DRAWS, seed: int = PANEL_SEED) -> tuple[float, float, float]:
    """Mean and 95% pair-bootstrap percentile interval (pp) of per-pair values."""
    v = np.asarray(values, dtype=float)
    if len(v) == 0:
        return math.nan, math.nan, math.nan
    lo, hi = estimators.boot_ci(v, seed, draws)
    return 100 * float(v.mean()), 100 * lo, 100 * hi


def cue_row(cell, cue, records: pd.DataFrame, draws: int = config.BOOTSTRAP_DRAWS) -> dict:
    """PSE [95% CI], reference, excess [CI] and verdict of one cue's records (release schema)."""
    q = cues.parse_cue(cue)
    per_pair = estimators.pair_pse(records)
    pse, lo, hi = interval(per_pair, draws)
    ref = cue_reference(cell, q)
    j = judge(pse, (lo, hi), ref["reference_pp"], ref["reference"])
    return {"cue": q.id, "control": q.control, "display": q.display, "vocabulary": q.vocabulary, "style": q.style,
            "n_pairs": int(len(per_pair)), "pse_pp": pse, "pse_ci": [lo, hi], "reference": ref["reference"],
            "reference_pp": ref["reference_pp"], "excess_pp": j.difference_pp, "excess_ci": list(j.ci),
            "verdict": j.verdict}


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


def convergence(rows: list[dict], per_pair: dict[str, pd.Series], draws: int = CORRELATION_DRAWS) -> dict:
    """Convergence across the judged cues (the positive control left out); see the module docstring."""
    judged = [r for r in rows if not r.get("control") and r.get("verdict")]
    ids = [r["cue"] for r in judged]
    pairwise = []
    for a, b in itertools.combinations(ids, 2):
        if a not in per_pair or b not in per_pair:  # rows without per-pair shifts (the audit engine's rows)
            continue
        pairwise.append({"a": a, "b": b, **pair_correlation(per_pair[a], per_pair[b], draws)})
    ex = np.array([r["excess_pp"] for r in judged], dtype=float)
    signs = np.sign(ex)
    n_pos, n_neg = int((signs > 0).sum()), int((signs < 0).sum())
    verdicts = pd.Series([r["verdict"] for r in judged], dtype=object)
    counts = verdicts.value_counts()
    modal, n_modal = (str(counts.index[0]), int(counts.iloc[0])) if len(counts) else ("", 0)
    n = len(judged)
    robust = is_robust(n_modal, n)
    rs = [p["r"] for p in pairwise if not math.isnan(p["r"])]
    return {"cues": ids, "pairwise_r": pairwise, "median_r": float(np.median(rs)) if rs else math.nan,
            "sign_agreement": {"positive": n_pos, "negative": n_neg, "zero": n - n_pos - n_neg,
                               "agree": max(n_pos, n_neg), "of": n},
            "verdict_agreement": {"modal": modal, "agree": n_modal, "of": n,
                                  "counts": {str(k): int(v) for k, v in counts.items()}},
            "excess_range": [float(ex.min()), float(ex.max())] if n else [math.nan, math.nan],
            "robust": bool(robust), "statement": robustness_statement(modal, n_modal, n, robust)}


def is_robust(agree: int, n: int) -> bool:
    """Cue-robust: at least three cues, and all but ``ROBUST_ALLOWANCE`` per six of them agree.

    >>> is_robust(5, 6), is_robust(4, 6), is_robust(2, 3), is_robust(3, 3)
    (True, False, False, True)
    """
    return n >= 3 and agree >= n - ROBUST_ALLOWANCE * (n // 6)


def robustness_statement(modal: str, agree: int, n: int, robust: bool) -> str:
    """``cue-robust: excess under 5 of 6 cues`` or ``cue-dependent: ...`` (descriptive wording)."""
    if n == 0:
        return "no cue could be judged"
    if robust:
        return f"cue-robust: {modal} under {agree} of {n} cues"
    return (f"cue-dependent: the most common verdict ({modal}) holds under only {agree} of {n} cues, so the "
            "condition's verdict rests on the cue chosen")


def panel(cell, records: dict[str, pd.DataFrame], draws: int = config.BOOTSTRAP_DRAWS) -> dict:
    """The cue panel of one cell: ``rows`` (one per cue, in the order given), ``per_pair``, ``convergence``."""
    rows, per_pair = [], {}
    for cue_id, rec in records.items():
        rows.append(cue_row(cell, cue_id, rec, draws))
        per_pair[cues.parse_cue(cue_id).id] = estimators.pair_pse(rec)
    return {"cell": parse_cell(cell).id, "rows": rows, "per_pair": per_pair,
            "convergence": convergence(rows, per_pair)}
