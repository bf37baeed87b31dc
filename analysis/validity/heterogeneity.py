"""Heterogeneity of the excess across cues: one test in place of "cue-robust if 5 of 6 agree" (issue 22).

The count of agreeing verdicts rewards low power: with few pairs every cue reads "no resolved
difference", so they all agree (``cue-specific``, about 22 pp of excess under two cues and none under
the others, was called cue-robust in a third of the seeds at 10 pairs, and more often with fewer
pairs). Here the cues' excess draws come from one joint bootstrap (the same pair resamples and the
same example resamples for every cue, :mod:`analysis.validity.panel`), and every pairwise difference
in excess gets a *simultaneous* interval (max-t over all cue pairs: each difference centred on its
bootstrap median and scaled by its bootstrap SD; the 95th percentile of the largest standardised
deviation sets the width). The verdict:

* **cue-dependent** — some difference's simultaneous 95% interval excludes 0;
* **cue-robust within ±X pp** — every difference's simultaneous 90% interval lies inside ±X
  (X = ``config.EQUIVALENCE_MARGIN_PP``; two one-sided tests per difference, as seed 003);
* **inconclusive** — neither (no difference resolved, equivalence not shown);
* ``too few pairs to judge`` below ``config.MIN_PAIRS_TO_JUDGE`` pairs.

The largest pairwise difference (by its bootstrap median) is reported with its simultaneous interval.
"""
from __future__ import annotations

import itertools

import numpy as np

from .. import config, intervals

DEPENDENT = "cue-dependent"
INCONCLUSIVE = "inconclusive"


def robust_label(margin_pp: float = config.EQUIVALENCE_MARGIN_PP) -> str:
    """The verdict text of shown equivalence across cues.

    >>> robust_label(5.0)
    'cue-robust within ±5 pp'
    """
    return f"cue-robust within ±{margin_pp:g} pp"


def simultaneous(D: np.ndarray, level: float) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Centre, lower and upper simultaneous ``level`` % bounds of the rows of ``D`` (differences x draws)."""
    centre = np.median(D, axis=1)
    sd = D.std(axis=1, ddof=1)
    ok = sd > 0
    if ok.any():
        T = (np.abs(D[ok] - centre[ok, None]) / sd[ok, None]).max(axis=0)
        q = float(np.percentile(T, level))
    else:
        q = 0.0
    return centre, centre - q * sd, centre + q * sd


def heterogeneity(draws: dict[str, np.ndarray], n_pairs: int | None = None,
                  margin_pp: float = config.EQUIVALENCE_MARGIN_PP) -> dict:
    """Test of equal excess across cues from their joint bootstrap draws (pp), see the module docstring.

    Returns ``verdict, statement, largest {a, b, difference_pp, ci}, differences (every pair, same
    keys), n_cues, n_differences, margin_pp, level`` (``ci`` simultaneous 95%).
    """
    ids = [k for k, d in draws.items() if d is not None and np.isfinite(d).all()]
    out = {"verdict": "", "statement": "", "largest": None, "n_cues": len(ids), "n_differences": 0,
           "margin_pp": margin_pp, "level": 95.0}
    if len(ids) < 2:
        out["statement"] = "heterogeneity across cues not tested (fewer than two cues with joint draws)"
        return out
    if n_pairs is not None and not intervals.enough_pairs(n_pairs):
        out.update(verdict=intervals.TOO_FEW, statement=f"across cues: {intervals.TOO_FEW} ({n_pairs} pairs)")
        return out
    combos = list(itertools.combinations(range(len(ids)), 2))
    X = np.stack([np.asarray(draws[k], dtype=float) for k in ids])
    D = np.stack([X[a] - X[b] for a, b in combos])
    centre, lo95, hi95 = simultaneous(D, 95.0)
    _, lo90, hi90 = simultaneous(D, 90.0)
    k = int(np.argmax(np.abs(centre)))
    a, b = ids[combos[k][0]], ids[combos[k][1]]
    largest = {"a": a, "b": b, "difference_pp": float(centre[k]), "ci": [float(lo95[k]), float(hi95[k])]}
    resolved = (lo95 > 0) | (hi95 < 0)
    if resolved.any():
        verdict = DEPENDENT
        j = int(np.argmax(np.where(resolved, np.abs(centre), -1)))
        largest = {"a": ids[combos[j][0]], "b": ids[combos[j][1]], "difference_pp": float(centre[j]),
                   "ci": [float(lo95[j]), float(hi95[j])]}
    elif bool(((lo90 > -margin_pp) & (hi90 < margin_pp)).all()):
        verdict = robust_label(margin_pp)
    else:
        verdict = INCONCLUSIVE
    out["differences"] = [{"a": ids[a], "b": ids[b], "difference_pp": float(c), "ci": [float(lo), float(hi)]}
                          for (a, b), c, lo, hi in zip(combos, centre, lo95, hi95)]
    out.update(verdict=verdict, largest=largest, n_differences=len(combos),
               statement=statement(verdict, largest, len(ids), margin_pp))
    return out


def statement(verdict: str, largest: dict, n_cues: int, margin_pp: float) -> str:
    """The card's sentence for a heterogeneity verdict (what the evidence supports, never a label)."""
    d = (f"{largest['a']} − {largest['b']} {largest['difference_pp']:+.1f} pp "
         f"[{largest['ci'][0]:+.1f}, {largest['ci'][1]:+.1f}] (simultaneous 95%)")
    if verdict == DEPENDENT:
        return f"cue-dependent: the excess differs across the {n_cues} cues ({d}), so the verdict rests on the cue chosen"
    if verdict.startswith("cue-robust"):
        return (f"cue-robust: every pairwise difference in excess across the {n_cues} cues lies within "
                f"±{margin_pp:g} pp (largest {d})")
    return (f"inconclusive across the {n_cues} cues: no difference in excess is resolved and equivalence within "
            f"±{margin_pp:g} pp is not shown (largest {d})")


def is_robust(verdict: str) -> bool:
    """Whether a heterogeneity verdict is cue-robust.

    >>> is_robust("cue-robust within ±5 pp"), is_robust("inconclusive")
    (True, False)
    """
    return str(verdict).startswith("cue-robust")
