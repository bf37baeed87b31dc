"""Association–reliance coupling (related paper 003; issue 22; beyond the paper's protocol).

Does a cue whose group signal the subject reads more strongly (probe AUC) also carry more reliance
(excess)? The former analysis treated the six cues as fixed and bootstrapped pairs only, so its
interval under-covered (84 % at 99 pairs), and it printed r = +0.86 for a subject whose AUCs are all
0.5, where the quantity does not exist. Here:

* **cues are the sampling unit**: Pearson r with a Fisher-z interval (``atanh r ± z / sqrt(n - 3)``)
  and Spearman ρ beside it, each with an exact permutation p-value over all ``n!`` orderings of the
  cues; the power of the test at this many cues is stated (Fisher z, two-sided 5 %, true r = 0.5 and
  0.8), and whether equivalence within ±:data:`MARGIN` could be shown at all at this n;
* **undefined** when the AUCs do not vary beyond noise: the cues' AUC differences, from one joint
  pair bootstrap, get simultaneous 95 % intervals (:func:`analysis.validity.heterogeneity.simultaneous`);
  if none excludes 0 there is no association gradient to relate, and r is not printed;
* **pair-level coupling**: within each cue, Spearman ρ of the per-pair probe score with the per-pair
  PSE, combined over cues by Fisher z (weights ``n - 3``) with its interval.
"""
from __future__ import annotations

import itertools
import math

import numpy as np
import pandas as pd
from scipy import stats

from . import heterogeneity as H

#: TOST margin on the correlation, declared before any run (written in the card)
MARGIN = 0.5
#: true correlations at which the power of the cue-level test is stated
POWER_AT = (0.5, 0.8)
ALPHA = 0.05
UNDEFINED = "undefined: the AUCs do not vary beyond noise across cues, so there is no association gradient to relate"


def fisher_interval(r: float, n: int, level: float = 0.95) -> list[float]:
    """Fisher-z interval of a correlation of ``n`` units (NaN below 4 units or at |r| = 1).

    >>> [round(x, 3) for x in fisher_interval(0.5, 6)]
    [-0.524, 0.933]
    """
    if n < 4 or math.isnan(r) or abs(r) >= 1:
        return [math.nan, math.nan]
    z, h = math.atanh(r), stats.norm.ppf(0.5 + level / 2) / math.sqrt(n - 3)
    return [math.tanh(z - h), math.tanh(z + h)]


def power(rho: float, n: int, alpha: float = ALPHA) -> float:
    """Power of the two-sided Fisher-z test of r = 0 at true correlation ``rho`` with ``n`` units.

    >>> round(power(0.5, 6), 2), round(power(0.8, 6), 2)
    (0.16, 0.48)
    """
    if n < 4:
        return math.nan
    z, c = math.atanh(rho) * math.sqrt(n - 3), stats.norm.ppf(1 - alpha / 2)
    return float(stats.norm.cdf(z - c) + stats.norm.cdf(-z - c))


def equivalence_possible(n: int, margin: float = MARGIN, alpha: float = ALPHA) -> bool:
    """Whether a Fisher-z TOST at ``n`` units could show |r| < margin even at r = 0.

    >>> equivalence_possible(6), equivalence_possible(60)
    (False, True)
    """
    return bool(n >= 4 and stats.norm.ppf(1 - alpha) / math.sqrt(n - 3) < math.atanh(margin))


def permutation_p(x: np.ndarray, y: np.ndarray, method: str = "pearson") -> float:
    """Exact two-sided permutation p-value of a correlation over all orderings of ``y`` (n ≤ 8).

    Every ordering's correlation is computed at once (:func:`permuted_correlations`; Spearman's ρ is
    Pearson's r of the ranks, and the ranks of a reordered ``y`` are its ranks reordered); they differ
    from a loop of ``np.corrcoef`` / ``spearmanr`` only in the last bits, far inside the 1e-12 tie
    tolerance, and the correlations take a few discrete values, so the count is the loop's.
    """
    f = (lambda a, b: np.corrcoef(a, b)[0, 1]) if method == "pearson" else (lambda a, b: stats.spearmanr(a, b)[0])
    r0 = abs(f(x, y))
    a, b = (x, y) if method == "pearson" else (stats.rankdata(x), stats.rankdata(y))
    perms = np.abs(permuted_correlations(a, b))
    return float(np.mean(perms >= r0 - 1e-12))


def permuted_correlations(x: np.ndarray, y: np.ndarray) -> np.ndarray:
    """Pearson r of ``x`` with ``y`` in each of its orderings (``itertools.permutations`` order);
    NaN where a variance is 0 (as ``np.corrcoef``)."""
    xc = np.asarray(x, dtype=float) - np.mean(x)
    Y = np.asarray(y, dtype=float)[np.array(list(itertools.permutations(range(len(y)))))]
    Yc = Y - Y.mean(axis=1, keepdims=True)
    with np.errstate(invalid="ignore", divide="ignore"):
        return (Yc @ xc) / np.sqrt((xc @ xc) * np.einsum("ij,ij->i", Yc, Yc))


def auc_gradient(scores: dict[str, pd.Series], draws: int, seed: int = 0) -> dict:
    """Whether the AUCs of the cues differ beyond noise (simultaneous 95 % intervals of their differences)."""
    ids = list(scores)
    idx = sorted(set.intersection(*[set(s.index) for s in scores.values()])) if ids else []
    if len(ids) < 2 or len(idx) < 2:
        return {"varies": False, "n_pairs": len(idx)}
    S = np.column_stack([scores[k].loc[idx].to_numpy(float) for k in ids])  # pairs x cues
    ii = np.random.default_rng(seed).integers(0, len(idx), size=(draws, len(idx)))
    A = S[ii].mean(axis=1).T  # cues x draws
    D = np.stack([A[a] - A[b] for a, b in itertools.combinations(range(len(ids)), 2)])
    _, lo, hi = H.simultaneous(D, 95.0)
    return {"varies": bool(((lo > 0) | (hi < 0)).any()), "n_pairs": len(idx)}


def pair_level(per_pair: dict[str, pd.Series], scores: dict[str, pd.Series]) -> dict:
    """Within-cue Spearman ρ of per-pair probe score and per-pair PSE, Fisher-z combined over cues."""
    zs, ws, rows = [], [], []
    for k in scores:
        if k not in per_pair:
            continue
        idx = per_pair[k].index.intersection(scores[k].index)
        x, y = scores[k].loc[idx].to_numpy(float), per_pair[k].loc[idx].to_numpy(float)
        if len(idx) < 4 or np.std(x) == 0 or np.std(y) == 0:
            continue
        rho = float(stats.spearmanr(x, y)[0])
        rows.append({"cue": k, "rho": rho, "n_pairs": int(len(idx))})
        zs.append(math.atanh(max(min(rho, 0.999999), -0.999999)))
        ws.append(len(idx) - 3)
    if not ws:
        return {"rho": math.nan, "ci": [math.nan, math.nan], "by_cue": rows}
    z = float(np.average(zs, weights=ws))
    h = stats.norm.ppf(0.975) / math.sqrt(sum(ws))
    return {"rho": math.tanh(z), "ci": [math.tanh(z - h), math.tanh(z + h)], "by_cue": rows}


def coupling(panel_rows: list[dict], per_pair: dict[str, pd.Series], scores: dict[str, pd.Series],
             draws: int = 2000, margin: float = MARGIN) -> dict:
    """Association–reliance coupling across the judged cues (the positive control left out)."""
    judged = [r for r in panel_rows if not r.get("control") and r["cue"] in scores
              and not math.isnan(float(r.get("excess_pp", math.nan)))]
    n = len(judged)
    out = {"n_cues": n, "r": math.nan, "ci": [math.nan, math.nan], "p_permutation": math.nan,
           "spearman": math.nan, "spearman_p_permutation": math.nan, "defined": False, "statement": "",
           "power": {f"r={p:g}": power(p, n) for p in POWER_AT}, "margin": margin,
           "equivalence_possible": equivalence_possible(n, margin),
           "margin_declared": "analysis.validity.coupling.MARGIN, fixed before any run",
           "pair_level": pair_level(per_pair, {r["cue"]: scores[r["cue"]] for r in judged})}
    if n < 4:
        out["statement"] = "association and reliance could not be related (fewer than four judged cues)"
        return out
    grad = auc_gradient({r["cue"]: scores[r["cue"]] for r in judged}, draws)
    x = np.array([scores[r["cue"]].mean() for r in judged])
    y = np.array([r["excess_pp"] for r in judged], dtype=float)
    if not grad["varies"] or np.std(x) == 0 or np.std(y) == 0:
        out["statement"] = UNDEFINED
        return out
    r = float(np.corrcoef(x, y)[0, 1])
    out.update(defined=True, r=r, ci=fisher_interval(r, n), p_permutation=permutation_p(x, y),
               spearman=float(stats.spearmanr(x, y)[0]), spearman_p_permutation=permutation_p(x, y, "spearman"))
    out["statement"] = statement(out)
    return out


def statement(c: dict) -> str:
    """What the coupling evidence supports (never a label of the model)."""
    if not c["defined"]:
        return c["statement"]
    pw = ", ".join(f"{v:.0%} at {k}" for k, v in c["power"].items())
    s = (f"across {c['n_cues']} cues (the unit), association (AUC) and excess correlate Pearson r = {c['r']:+.2f} "
         f"[{c['ci'][0]:+.2f}, {c['ci'][1]:+.2f}] (permutation p = {c['p_permutation']:.2f}), Spearman ρ = "
         f"{c['spearman']:+.2f} (p = {c['spearman_p_permutation']:.2f}); power at {c['n_cues']} cues: {pw}")
    if not c["equivalence_possible"]:
        s += f"; equivalence within ±{c['margin']:.2f} cannot be shown with {c['n_cues']} cues"
    pl = c["pair_level"]
    if not math.isnan(pl["rho"]):
        s += f"; pair-level coupling ρ = {pl['rho']:+.2f} [{pl['ci'][0]:+.2f}, {pl['ci'][1]:+.2f}]"
    return s
