"""The blind baseline, deviations per group, discriminant validity and competence per cue (issue 22).

Beyond the paper's protocol (related papers 002 and 003):

* the **blind arm** (:func:`analysis.cues.blind_table`): the same pairs with the proxies removed; its
  choice of the target is the no-cue baseline;
* **deviations per group**: per pair, the mean choice of the target with the cue showing group A
  (``cf_a1``) minus the blind choice, and the same with group B (``cf_a0``); their means with 95%
  pair-bootstrap intervals (one set of pair indices for both);
* **discriminant validity** (A = 1 vs A = 0 within a cue): their difference (the PSE) and the
  correlation over pairs of the two deviation vectors (related paper 002: a correlation near 1 means
  the cue moves both groups alike, i.e. weak discrimination);
* **competence** per cue: ranking accuracy, the share of valid calls that pick the patient with the
  higher true risk in the arm shown (full-information truth per arm), with a Wilson interval over
  calls, and ``too few pairs to judge`` below ``config.MIN_PAIRS_TO_JUDGE`` pairs. Calls of one pair
  share the pair, so the interval over calls is narrower than one over pairs would be.
"""
from __future__ import annotations

import math

import numpy as np
import pandas as pd

from .. import cues, estimators, intervals
from ..cells import Cell
from ..references import reference_pairs
from .panel import PANEL_SEED, pair_draws


def arm_choices(records: pd.DataFrame) -> pd.DataFrame:
    """Mean choice of the target per pair and arm (valid calls), pairs sorted by (i, j)."""
    return estimators.arm_means(records)


def deviations(records: pd.DataFrame, blind: pd.DataFrame, draws: int = 2000) -> dict:
    """Deviations of each group's arm from the blind baseline, and discriminant validity, of one cue."""
    m = arm_choices(pd.concat([records, blind], ignore_index=True))
    need = {"cf_a1", "cf_a0", cues.BLIND_ARM}
    if not need <= set(m.columns):
        return {"n_pairs": 0}
    m = m[list(need)].dropna()
    d1 = (m["cf_a1"] - m[cues.BLIND_ARM]).to_numpy(float)
    d0 = (m["cf_a0"] - m[cues.BLIND_ARM]).to_numpy(float)
    n = len(d1)
    out = {"n_pairs": int(n), "blind_choice_pp": 100 * float(m[cues.BLIND_ARM].mean())}
    if n == 0:
        return out
    idx = pair_draws(n, draws, PANEL_SEED)
    for name, d in (("deviation_a1", d1), ("deviation_a0", d0), ("group_difference", d1 - d0)):
        out[f"{name}_pp"] = 100 * float(d.mean())
        out[f"{name}_ci"] = [100 * x for x in estimators.percentile_ci(d[idx].mean(axis=1))]
    ok = n >= 3 and np.std(d1) > 0 and np.std(d0) > 0
    out["cross_group_r"] = float(np.corrcoef(d1, d0)[0, 1]) if ok else math.nan
    return out


def competence(cell: Cell, records: pd.DataFrame) -> dict:
    """Ranking accuracy of one cue's calls against the full-information truth of each arm shown."""
    rp = reference_pairs(cell).set_index(["i", "j"])
    truth = {"cf_a1": rp["fullinfo_a1"], "cf_a0": rp["fullinfo_a0"], "factual": rp["truth"],
             cues.BLIND_ARM: rp["truth"]}
    v = estimators.valid(records)
    correct = []
    for arm, t in truth.items():
        r = v[v["arm"] == arm]
        if len(r):
            tt = t.reindex(pd.MultiIndex.from_frame(r[["i", "j"]])).to_numpy(float)
            correct.append(r["picked_i"].to_numpy(float) == tt)
    c = np.concatenate(correct) if correct else np.array([], bool)
    k, n = int(c.sum()), int(len(c))
    n_pairs = int(v[["i", "j"]].drop_duplicates().shape[0])
    out = {"accuracy": k / n if n else math.nan, "accuracy_ci": list(intervals.wilson(k, n)) if n else [math.nan] * 2,
           "n_calls": n, "n_pairs": n_pairs}
    out["judged"] = intervals.TOO_FEW if not intervals.enough_pairs(n_pairs) else ""
    return out


def baseline_rows(cell: Cell, records: dict[str, pd.DataFrame], blind: pd.DataFrame | None,
                  draws: int = 2000) -> list[dict]:
    """One row per cue: deviations from the blind arm, discriminant validity, competence."""
    out = []
    for cue_id, rec in records.items():
        row = {"cue": cues.parse_cue(cue_id).id, "control": cues.parse_cue(cue_id).control,
               **{f"competence_{k}": v for k, v in competence(cell, rec).items()}}
        if blind is not None and len(blind):
            row.update(deviations(rec, blind, draws))
        out.append(row)
    if blind is not None and len(blind):
        out.append({"cue": cues.BLIND, "control": False,
                    **{f"competence_{k}": v for k, v in competence(cell, blind).items()}})
    return out
