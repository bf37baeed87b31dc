"""The calibration study: how often each verdict of the card is wrong, and how often it finds a true effect.

For every condition of a battery at its own ``--pairs`` and every true effect ``delta`` of
:data:`DELTAS` (``PSE - reference``, pp; :mod:`.simulate`), ``n_seeds`` simulated collections are
judged by each verdict function of :data:`VERDICT_FUNCTIONS`:

* ``paper`` — the paper's judgment (:func:`analysis.judgments.judge`: PSE interval shifted by the
  fitted reference);
* ``joint`` — the card's judgment beyond the paper (:func:`analysis.judgments.judge_joint`: joint
  pair bootstrap with the reference refitted on resampled examples, and the TOST).

A verdict function takes ``(pse, model, idx, K)`` — seeds x pairs per-pair PSE, the
:class:`.simulate.ConditionModel`, the shared pair resamples and their count matrix — and returns
``{"verdict": array of str, "lo": array, "hi": array}`` (the 95% interval of ``PSE - reference``, pp).
Other verdicts (the validity panel's) plug in the same way.

Measured per condition: **false-finding rate** (excess or shortfall where ``delta = 0``),
**power** (excess where ``delta`` = 5, 10, 20 pp), **false equivalence** (equivalent within the
margin where ``delta`` is 10 or 20 pp) and **coverage** (the interval holds ``delta``).
"""
from __future__ import annotations

from typing import Callable

import numpy as np
import pandas as pd
from tqdm.auto import tqdm

from .. import config, intervals
from ..audit.batteries import Condition, battery_conditions, first_pairs
from ..judgments import DRAW_DECIMALS, joint_draws, read_joint_rows
from ..judgments import verdict as paper_verdict
from .simulate import ConditionModel, boot_counts, condition_model, per_pair_pse

DELTAS = (0.0, 5.0, 10.0, 20.0)  # true PSE - reference (pp): none, and the 5 / 10 / 20 pp
GOAL_FALSE_FINDING = 0.05  # nominal rate of a 95% interval (issue 22)
GOAL_COVERAGE = 0.93  # issue 22


def paper_verdicts(pse: np.ndarray, m: ConditionModel, idx: np.ndarray, K: np.ndarray) -> dict:
    """The paper's judgment per seed: the PSE interval shifted by the fitted reference."""
    ref = 100 * float(m.ref_point.mean())
    lo, hi = np.percentile(np.round(100 * pse @ K, DRAW_DECIMALS), [2.5, 97.5], axis=1) - ref
    return {"verdict": np.array([paper_verdict(a, b) for a, b in zip(lo, hi)]), "lo": lo, "hi": hi}


def joint_verdicts(pse: np.ndarray, m: ConditionModel, idx: np.ndarray, K: np.ndarray) -> dict:
    """The card's joint judgment per seed (:func:`analysis.judgments.joint_draws` with its own seed and
    draw count, then :func:`analysis.judgments.read_joint`)."""
    d = joint_draws(pse, m.ref_draws, 100 * float(m.ref_point.mean()), idx.shape[0])
    read = read_joint_rows(d, pse.shape[1])
    return {"verdict": np.array([r[4] for r in read]), "lo": np.array([r[0] for r in read]),
            "hi": np.array([r[1] for r in read])}


VERDICT_FUNCTIONS: dict[str, Callable] = {"paper": paper_verdicts, "joint": joint_verdicts}


def calibrate(conditions: list[Condition], n_seeds: int = 200, draws: int = 2000, deltas=DELTAS,
              verdict_functions: dict[str, Callable] | None = None, progress: bool = True) -> pd.DataFrame:
    """One row per condition, true effect and verdict function: shares of each verdict and coverage."""
    fns = verdict_functions or VERDICT_FUNCTIONS
    eq = intervals.equivalent_label(config.EQUIVALENCE_MARGIN_PP)
    rows = []
    todo = [(c, d) for c in conditions for d in deltas]
    for cond, delta in tqdm(todo, desc="calibration", disable=not progress):
        m = condition_model(cond, draws)
        pse = per_pair_pse(m, delta, range(n_seeds))
        idx, K = boot_counts(pse.shape[1], draws)
        for name, fn in fns.items():
            out = fn(pse, m, idx, K)
            v = out["verdict"]
            rows.append({"condition": cond.key, "group": cond.group, "reference": m.reference,
                         "zero_information": m.zero_information, "n_pairs": int(pse.shape[1]),
                         "method": name, "true_difference_pp": float(delta), "n_seeds": int(n_seeds),
                         "share_excess": float(np.mean(v == "excess")),
                         "share_shortfall": float(np.mean(v == "shortfall")),
                         "share_equivalent": float(np.mean(v == eq)),
                         "share_undecided": float(np.mean(~np.isin(v, ["excess", "shortfall", eq]))),
                         "coverage": float(np.mean((out["lo"] - 1e-9 <= delta) & (delta <= out["hi"] + 1e-9)))})
    return pd.DataFrame(rows)


def summary(long: pd.DataFrame) -> pd.DataFrame:
    """verdict | truth | false-finding rate | power at 5 / 10 / 20 pp | coverage, per condition and method.

    ``false_finding_rate``: excess or shortfall at a true difference of 0; ``power_5/10/20``: excess
    at that true difference; ``equivalent_at_0``: "equivalent" at 0 (the TOST's power);
    ``false_equivalence_10/20``: "equivalent" at 10 / 20 pp; ``coverage``:
    the smallest coverage over the true differences; ``meets_goal``: false findings at most 5% and
    coverage at least 93%.
    """
    rows = []
    for (cond, method), g in long.groupby(["condition", "method"], sort=False):
        at = g.set_index("true_difference_pp")
        r = {"condition": cond, "method": method, "verdicts": ("excess / shortfall / equivalent / inconclusive"
                                                              if method == "joint" else
                                                              "excess / shortfall / no resolved difference"),
             "truth": "no difference (0 pp)", "n_pairs": int(g["n_pairs"].iloc[0]),
             "n_seeds": int(g["n_seeds"].iloc[0]), "zero_information": bool(g["zero_information"].iloc[0])}
        if 0.0 in at.index:
            r["false_finding_rate"] = float(at.loc[0.0, "share_excess"] + at.loc[0.0, "share_shortfall"])
            r["equivalent_at_0"] = float(at.loc[0.0, "share_equivalent"])
        for d in (5.0, 10.0, 20.0):
            if d in at.index:
                r[f"power_{d:g}"] = float(at.loc[d, "share_excess"])
        for d in (10.0, 20.0):
            if d in at.index:
                r[f"false_equivalence_{d:g}"] = float(at.loc[d, "share_equivalent"])
        r["coverage"] = float(g["coverage"].min())
        r["meets_goal"] = bool(r.get("false_finding_rate", 0.0) <= GOAL_FALSE_FINDING
                               and r["coverage"] >= GOAL_COVERAGE)
        rows.append(r)
    return pd.DataFrame(rows)


def battery_study(battery: str = "core", n_pairs: int | None = None, n_seeds: int = 200, draws: int = 2000,
                  deltas=DELTAS, progress: bool = True) -> tuple[pd.DataFrame, pd.DataFrame]:
    """``(long, summary)`` of a battery at ``--pairs`` (None: the battery's own), with ``battery`` and
    ``pairs`` columns (as :mod:`analysis.calibration.cited` reads them)."""
    conds = first_pairs(battery_conditions(battery), n_pairs)
    long = calibrate(conds, n_seeds, draws, deltas, progress=progress)
    summ = summary(long)
    label = "default" if n_pairs is None else str(int(n_pairs))
    for t in (long, summ):
        t.insert(0, "pairs", label)
        t.insert(0, "battery", battery)
    return long, summ
