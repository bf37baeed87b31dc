"""Temperature-1 resampling check of the elicitation (Supplementary Note 12).

DeepSeek-V4.1-Flash, the two cells of Supplementary Note 11: every counterfactual prompt sampled
twenty times at temperature 1 (``*_t1resample_records.csv``, 7,920 calls per cell). Each prompt's
choice probability is the share of its answered samples that pick the target; a pair's
probability-based value is cf_a1 minus cf_a0, each arm the mean of its orders' probabilities. The
single-response value is the same contrast on the temperature-0 frozen baseline of the same release.

UNRESOLVED in the spec: the estimator's exact form and the bootstrap of the Supplementary Note 12
intervals. Decision: per-prompt probabilities as above (averaging the arm's answered samples over
both orders at once differs only where an order lost a sample, and misses the printed +13.0 bound
of beta = 0.60 by 0.001), and the scheme of spec R3 for the same model and cells: a fresh
``default_rng(0)`` per quantity, 5,000 draws of ``integers(0, n, n)`` over the pairs sorted by
``pair_id``. It reproduces every printed bound. A value counts as outside the single-response
support unless it equals a support value up to floating-point error (:func:`outside_support`).
"""
from __future__ import annotations

import numpy as np
import pandas as pd

from .. import data
from ..estimators import valid
from ..records import normalise
from .regeneration import (REGEN_BOOT_DRAWS, REGEN_CELLS, REGEN_FOLDERS, REGEN_SEED, REGEN_SLOPE_DIVISOR_PP,
                           arm_contrast_by_pair, interval, regeneration_records)

#: the values one response per prompt permits: a mean of two orders of a {-1, 0, 1} contrast
SINGLE_RESPONSE_SUPPORT = (-1.0, -0.5, 0.0, 0.5, 1.0)


def t1_records(level: str) -> pd.DataFrame:
    """Temperature-1 resampling records of one cell (released schema + ``sample_id``)."""
    folder, cell = REGEN_FOLDERS["deepseek-v4.1"], REGEN_CELLS[level]
    return normalise(data.read_csv(f"{folder}/{cell}_t1resample_records.csv"))


def probability_contrast_by_pair(records: pd.DataFrame) -> pd.Series:
    """cf_a1 minus cf_a0 per ``pair_id`` of per-prompt choice probabilities, each arm averaged over its orders."""
    v = valid(records[records["arm"].isin(["cf_a1", "cf_a0"])])
    prompt = v.groupby(["pair_id", "arm", "order"])["picked_i"].mean()
    arm = prompt.groupby(["pair_id", "arm"]).mean().unstack("arm")
    return (arm["cf_a1"] - arm["cf_a0"]).dropna().sort_index()


def outside_support(values: pd.Series, support: tuple[float, ...] = SINGLE_RESPONSE_SUPPORT,
                    exact: bool = False) -> int:
    """Number of per-pair values that one response per prompt could not produce.

    By default a value inside the support up to floating-point error (``numpy.isclose``) is inside;
    ``exact=True`` compares with ``==``, so a zero computed as ``1.4e-17`` counts as outside.
    """
    v = values.to_numpy(float)[:, None]
    hit = (v == np.array(support)[None, :]) if exact else np.isclose(v, np.array(support)[None, :])
    return int((~hit.any(axis=1)).sum())


def temperature_check(level: str, seed: int = REGEN_SEED, draws: int = REGEN_BOOT_DRAWS) -> dict:
    """Every Supplementary Note 12 quantity of one cell (PSE in pp)."""
    t1 = t1_records(level)
    frozen, _ = regeneration_records("deepseek-v4.1", level)
    prob, single = probability_contrast_by_pair(t1), arm_contrast_by_pair(frozen)
    common = prob.index.intersection(single.index).sort_values()
    p, s = prob[common].to_numpy(), single[common].to_numpy()
    pse, lo, hi = interval(p, seed, draws)
    diff, dlo, dhi = interval(s - p, seed, draws)
    return {"calls": len(t1), "unparseable": int(t1["picked_i"].isna().sum()), "outside": outside_support(prob),
            "outside_exact": outside_support(prob, exact=True),
            "corr": float(np.corrcoef(p, s)[0, 1]), "prob_pp": pse, "prob_lo": lo, "prob_hi": hi,
            "single_pp": 100 * float(s.mean()), "diff_pp": diff, "diff_lo": dlo, "diff_hi": dhi,
            "n_pairs": len(common)}


def temperature_table(seed: int = REGEN_SEED, draws: int = REGEN_BOOT_DRAWS) -> pd.DataFrame:
    """:func:`temperature_check` for both cells; ``attrs['slope_t1']``: two-point slope of the probabilities."""
    out = pd.DataFrame({level: temperature_check(level, seed, draws) for level in REGEN_CELLS}).T
    out.attrs["slope_t1"] = (out.at["b060", "prob_pp"] - out.at["zero", "prob_pp"]) / REGEN_SLOPE_DIVISOR_PP
    return out
