"""Temperature-1 resampling check of the elicitation (Supplementary Note 12).

DeepSeek-V4.1-Flash, the two cells of Supplementary Note 11: every counterfactual prompt sampled
twenty times at temperature 1 (``*_t1resample_records.csv``, 7,920 calls per cell). Each prompt's
choice probability is the share of its answered samples that pick the target; a pair's
probability-based value is cf_a1 minus cf_a0, each arm the mean of its orders' probabilities
(:func:`analysis.estimators.pair_pse`, the rule the audit's ``--samples R`` uses too). The
single-response value is the same contrast on the temperature-0 frozen baseline of the same release.

UNRESOLVED in the spec: the estimator's exact form and the bootstrap of the Supplementary Note 12
intervals. Decision: per-prompt probabilities as above, and the scheme of spec R3 for the same model
and cells: a fresh ``default_rng(0)`` per quantity, 5,000 draws of ``integers(0, n, n)`` over the
pairs sorted by ``pair_id``. It reproduces every printed bound.

Pairs outside the single-response support (spec R8): the authors' ``temperature_resampling.py
--analyze`` pools each arm's answered samples over both orders (:func:`pooled_contrast_by_pair`) and
compares with the support at a 1e-9 tolerance: 93 and 95. Our rule (orders averaged) gives 93 and 94;
the two differ only where an order lost a sample, here pair 6 at beta = 0.60 (one cf_a0 order-0 sample
missing: pooled +0.00192, outside; averaged exactly 0, inside). Pooling would also move the printed
+13.0 bound of beta = 0.60 by 0.001, so we keep our rule and report both counts.
"""
from __future__ import annotations

import numpy as np
import pandas as pd

from .. import data
from ..estimators import pair_pse
from ..records import normalise
from .regeneration import (REGEN_BOOT_DRAWS, REGEN_CELLS, REGEN_FOLDERS, REGEN_SEED, REGEN_SLOPE_DIVISOR_PP,
                           arm_contrast_by_pair, interval, regeneration_records)

#: the values one response per prompt permits: a mean of two orders of a {-1, 0, 1} contrast
SINGLE_RESPONSE_SUPPORT = (-1.0, -0.5, 0.0, 0.5, 1.0)
#: a per-pair value within this distance of a support value is inside (spec R8: the authors' script's tolerance)
SUPPORT_TOLERANCE = 1e-9


def t1_records(level: str) -> pd.DataFrame:
    """Temperature-1 resampling records of one cell (released schema + ``sample_id``)."""
    folder, cell = REGEN_FOLDERS["deepseek-v4.1"], REGEN_CELLS[level]
    return normalise(data.read_csv(f"{folder}/{cell}_t1resample_records.csv"))


def probability_contrast_by_pair(records: pd.DataFrame) -> pd.Series:
    """cf_a1 minus cf_a0 per ``pair_id`` of per-prompt choice probabilities, each arm averaged over its orders
    (:func:`analysis.estimators.pair_pse` by ``pair_id``: one function for this note and the audit)."""
    return pair_pse(records, by="pair_id").rename(None)


def pooled_contrast_by_pair(records: pd.DataFrame) -> pd.Series:
    """The authors' script's rule (spec R8): each arm's answered samples pooled over both orders."""
    return arm_contrast_by_pair(records)


def outside_support(values: pd.Series, support: tuple[float, ...] = SINGLE_RESPONSE_SUPPORT,
                    atol: float = SUPPORT_TOLERANCE) -> int:
    """Number of per-pair values farther than ``atol`` from every value one response per prompt can produce."""
    v = values.to_numpy(float)[:, None]
    hit = np.abs(v - np.array(support)[None, :]) <= atol
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
            "outside_pooled": outside_support(pooled_contrast_by_pair(t1)),
            "corr": float(np.corrcoef(p, s)[0, 1]), "prob_pp": pse, "prob_lo": lo, "prob_hi": hi,
            "single_pp": 100 * float(s.mean()), "diff_pp": diff, "diff_lo": dlo, "diff_hi": dhi,
            "n_pairs": len(common)}


def temperature_table(seed: int = REGEN_SEED, draws: int = REGEN_BOOT_DRAWS) -> pd.DataFrame:
    """:func:`temperature_check` for both cells; ``attrs['slope_t1']``: two-point slope of the probabilities."""
    out = pd.DataFrame({level: temperature_check(level, seed, draws) for level in REGEN_CELLS}).T
    out.attrs["slope_t1"] = (out.at["b060", "prob_pp"] - out.at["zero", "prob_pp"]) / REGEN_SLOPE_DIVISOR_PP
    return out
