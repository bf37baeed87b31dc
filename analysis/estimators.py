"""Estimators on per-call records (paper §4.4; spec PROTOCOL-statistics §9).

The proxy-specific effect (PSE) of a pair is the mean choice of the target in the ``cf_a1`` arm
minus its mean choice in the ``cf_a0`` arm, each averaged over the presentation orders that
returned a valid answer (a pair needs at least one valid call in both arms)::

    PSE = 1/n sum_p [ (Z_p10 + Z_p11)/2 - (Z_p00 + Z_p01)/2 ]

Per-pair values are kept in a Series indexed by the pair ``(i, j)`` and sorted by it: the order
of the value vector fixes which pairs a bootstrap draw picks, so it matters for bit-identical
intervals.
"""
from __future__ import annotations

import numpy as np
import pandas as pd

from . import config

PAIR_INDEX = ["i", "j"]


def valid(records: pd.DataFrame) -> pd.DataFrame:
    """Rows whose ``picked_i`` is present (missing answers are dropped, never substituted)."""
    return records[records["picked_i"].notna()]


def arm_means(records: pd.DataFrame) -> pd.DataFrame:
    """Mean ``picked_i`` per pair (rows, sorted by ``(i, j)``) and arm (columns) over valid calls."""
    v = valid(records)
    return v.pivot_table(index=PAIR_INDEX, columns="arm", values="picked_i", aggfunc="mean").sort_index()


def pair_pse(records: pd.DataFrame) -> pd.Series:
    """Per-pair PSE in [-1, 1] (``cf_a1`` minus ``cf_a0``), pairs resolved in both arms, sorted by (i, j)."""
    m = arm_means(records)
    if "cf_a1" not in m or "cf_a0" not in m:
        return pd.Series(dtype=float, name="pse")
    return (m["cf_a1"] - m["cf_a0"]).dropna().rename("pse")


def pair_error(records: pd.DataFrame, truth: pd.Series | None = None) -> pd.Series:
    """Per-pair factual ranking error in [0, 1]: mean over valid orders of [picked_i != truth].

    ``truth`` (indexed by ``(i, j)``) is 1 where the target has the higher true risk in the
    factual population; by default 1 for every pair (true in every zero-information cell).
    """
    fact = valid(records[records["arm"] == "factual"])
    if fact.empty:
        return pd.Series(dtype=float, name="error")
    picked = fact.groupby(PAIR_INDEX)["picked_i"].apply(list)
    t = pd.Series(1.0, index=picked.index) if truth is None else truth.reindex(picked.index).astype(float)
    err = [np.mean([p != tt for p in ps]) for ps, tt in zip(picked, t)]
    return pd.Series(err, index=picked.index, name="error", dtype=float).sort_index()


def pair_effects(records: pd.DataFrame, truth: pd.Series | None = None) -> pd.DataFrame:
    """Per-pair ``pse`` and ``error`` (NaN where undefined), indexed by ``(i, j)``, sorted."""
    return pd.concat([pair_pse(records), pair_error(records, truth)], axis=1).sort_index()


def bootstrap_means(values: np.ndarray, seed: int, draws: int = config.BOOTSTRAP_DRAWS) -> np.ndarray:
    """Means of ``draws`` pair-bootstrap resamples, vectorised.

    Bit-identical to the loop ``rng = default_rng(seed); [rng.choice(values, n).mean() for _ in
    range(draws)]`` (and to ``values[rng.integers(0, n, n)]`` per draw): one
    ``integers(0, n, (draws, n))`` call consumes the generator's stream exactly as ``draws``
    successive calls do.
    """
    values = np.asarray(values, dtype=float)
    n = len(values)
    rng = np.random.default_rng(seed)
    idx = rng.integers(0, n, size=(draws, n))
    return values[idx].mean(axis=1)


def bootstrap_means_loop(values: np.ndarray, seed: int, draws: int = config.BOOTSTRAP_DRAWS) -> np.ndarray:
    """The loop form of :func:`bootstrap_means` (reference implementation for tests and benchmarks)."""
    values = np.asarray(values, dtype=float)
    rng = np.random.default_rng(seed)
    return np.array([rng.choice(values, len(values), replace=True).mean() for _ in range(draws)])


def percentile_ci(draws: np.ndarray, level: float = 95.0) -> tuple[float, float]:
    """Central percentile interval (``numpy.percentile``, linear interpolation)."""
    lo, hi = np.percentile(draws, [(100 - level) / 2, 100 - (100 - level) / 2])
    return float(lo), float(hi)


def boot_ci(values, seed: int, draws: int = config.BOOTSTRAP_DRAWS, level: float = 95.0) -> tuple[float, float]:
    """Pair-bootstrap percentile interval of the mean of ``values`` (spec §9.2)."""
    return percentile_ci(bootstrap_means(values, seed, draws), level)


def cell_estimates(records: pd.DataFrame, truth: pd.Series | None = None,
                   pse_seed: int = config.CELL_PSE_SEED, error_seed: int = config.CELL_ERROR_SEED,
                   draws: int = config.BOOTSTRAP_DRAWS) -> dict:
    """Cell analysis of spec §9.1-9.2: PSE and factual error on the pairs resolved in both.

    When the cell has no factual arm (representation control, real records), PSE uses every
    pair resolved in both counterfactual arms and the error is NaN.
    Returns ``pse_pp, pse_ci, error_pct, error_ci, n_pairs, n_calls, missing_rate``.
    """
    eff = pair_effects(records, truth)
    has_factual = eff["error"].notna().any()
    keep = eff.dropna() if has_factual else eff[eff["pse"].notna()]
    pse = keep["pse"].to_numpy()
    out = {
        "n_pairs": int(len(keep)),
        "n_calls": int(len(records)),
        "missing_rate": float(records["picked_i"].isna().mean()) if len(records) else float("nan"),
        "pse_pp": 100 * float(pse.mean()) if len(pse) else float("nan"),
        "pse_ci": [100 * x for x in boot_ci(pse, pse_seed, draws)] if len(pse) else [float("nan")] * 2,
        "error_pct": float("nan"), "error_ci": [float("nan")] * 2,
    }
    if has_factual:
        err = keep["error"].to_numpy()
        out["error_pct"] = 100 * float(err.mean())
        out["error_ci"] = [100 * x for x in boot_ci(err, error_seed, draws)]
    return out
