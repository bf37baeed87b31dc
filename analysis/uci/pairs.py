"""Pair sets of the study (spec §11.7) and the sample-size planning (Supplementary Note 14)."""
from __future__ import annotations

import math

import numpy as np
import pandas as pd
from scipy import stats

from .design import (CONTROL_SEED, GAP_EDGES, MARGIN_PP, N_CONTROL, N_NEARTIE, N_PRIMARY, N_SENSITIVITY,
                     N_STRATIFIED, NEARTIE_GAP, NEARTIE_SEED, ORDERINGS, PAIR_SHUFFLE_SEED, PER_GAP_STRATUM,
                     PLAN_ALPHA, PLAN_POWER)
from .study import Study


def shuffled_pool(st: Study) -> np.ndarray:
    """The evaluation pool shuffled by ``default_rng(SEED + 3)``."""
    return np.random.default_rng(PAIR_SHUFFLE_SEED).permutation(st.pool)


def _orient(risk: np.ndarray, a: np.ndarray, b: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    hi = risk[a] >= risk[b]
    return np.where(hi, a, b), np.where(hi, b, a)


def _pairs_frame(i, j, risk, **extra) -> pd.DataFrame:
    i, j = np.asarray(i, int), np.asarray(j, int)
    df = pd.DataFrame({"pair_id": np.arange(len(i)), "i": i, "j": j, "gap": np.abs(risk[i] - risk[j])})
    for k, v in extra.items():
        df[k] = v
    return df


def primary_pairs(st: Study, n_pairs: int = N_PRIMARY) -> pd.DataFrame:
    """Primary pairs: consecutive shuffled patients, the higher-risk one (>=) is the target ``i``."""
    sh = shuffled_pool(st)[: 2 * n_pairs]
    i, j = _orient(st.risk, sh[0::2], sh[1::2])
    return _pairs_frame(i, j, st.risk)


def random_target_pairs(st: Study, n_pairs: int = N_SENSITIVITY) -> pd.DataFrame:
    """The same unordered pairs with the target in shuffle order (random orientation)."""
    sh = shuffled_pool(st)[: 2 * n_pairs]
    return _pairs_frame(sh[0::2], sh[1::2], st.risk)


def gap_bin(gap) -> np.ndarray:
    """Index of the risk-gap stratum ``[0,0.3) [0.3,0.6) [0.6,1) [1,1.5) [1.5,inf)``.

    >>> gap_bin([0.0, 0.3, 1.49, 7.0]).tolist()
    [0, 1, 3, 4]
    """
    return np.searchsorted(np.array(GAP_EDGES[1:-1]), np.asarray(gap, float), side="right")


def gap_stratified_pairs(st: Study, n_primary: int = N_PRIMARY) -> pd.DataFrame:
    """Independent 150-pair sample, 30 per risk-gap stratum, from patients after the primary pairs.

    Pairs are accepted first come per stratum and listed stratum by stratum (the released order).
    """
    rem = shuffled_pool(st)[2 * n_primary:]
    half = len(rem) // 2
    a, b = rem[:half], rem[half:2 * half]
    bins = gap_bin(np.abs(st.risk[a] - st.risk[b]))
    counts = np.zeros(len(GAP_EDGES) - 1, int)
    take = []
    for k, g in enumerate(bins):  # first-come acceptance is inherently sequential (<= half steps)
        if counts[g] < PER_GAP_STRATUM:
            counts[g] += 1
            take.append(k)
            if len(take) == N_STRATIFIED:
                break
    take = np.array(take, int)
    take = take[np.argsort(bins[take], kind="stable")]  # released order: by stratum, then acceptance
    i, j = _orient(st.risk, a[take], b[take])
    return _pairs_frame(i, j, st.risk, stratum=bins[take])


def neartie_pairs(st: Study, exclude: np.ndarray, n_pairs: int = N_NEARTIE,
                  seed: int = NEARTIE_SEED) -> pd.DataFrame:
    """Near-tie sample: seeded greedy pairing of unused study patients with gap < 0.3 (spec §11.7.6)."""
    pool = np.array(sorted(set(st.pool.tolist()) - set(np.asarray(exclude).tolist())))
    rng = np.random.default_rng(seed)
    order = rng.permutation(pool)
    r = st.risk[pool]
    where = {p: k for k, p in enumerate(pool)}
    free = np.ones(len(pool), bool)
    pi, pj = [], []
    for a in order:
        ka = where[a]
        if not free[ka]:
            continue
        free[ka] = False
        cand = np.flatnonzero(free & (np.abs(r - r[ka]) < NEARTIE_GAP))
        if len(cand) == 0:
            free[ka] = True
            continue
        kb = cand[rng.integers(0, len(cand))]
        free[kb] = False
        pi.append(a)
        pj.append(pool[kb])
        if len(pi) == n_pairs:
            break
    i, j = _orient(st.risk, np.array(pi), np.array(pj))
    return _pairs_frame(i, j, st.risk)


def control_pairs(primary: pd.DataFrame, n_pairs: int = N_CONTROL, seed: int = CONTROL_SEED) -> pd.DataFrame:
    """Concurrent wide-gap control: 300 primary pairs with gap >= 0.3 (sorted random choice)."""
    eligible = primary[primary["gap"] >= NEARTIE_GAP].reset_index(drop=True)
    pick = np.sort(np.random.default_rng(seed).choice(len(eligible), n_pairs, replace=False))
    out = eligible.iloc[pick].rename(columns={"pair_id": "primary_pair_id"}).reset_index(drop=True)
    out.insert(0, "pair_id", np.arange(len(out)))
    return out


def design_pairs(st: Study) -> dict[str, pd.DataFrame]:
    """Every pair set of the study: primary (1,200), random (300), stratified, near tie, control."""
    primary = primary_pairs(st, N_PRIMARY)
    strat = gap_stratified_pairs(st, N_PRIMARY)
    used = np.concatenate([primary[["i", "j"]].to_numpy().ravel(), strat[["i", "j"]].to_numpy().ravel()])
    return {"primary": primary, "random": random_target_pairs(st, N_SENSITIVITY), "stratified": strat,
            "neartie": neartie_pairs(st, used), "control": control_pairs(primary)}


def planning(change_fraction: float, margin_pp: float = MARGIN_PP, alpha: float = PLAN_ALPHA,
             power: float = PLAN_POWER, n_pairs: int = N_PRIMARY) -> dict[str, float]:
    """Normal-approximate planning with variance bound = change fraction (Supplementary Note 14).

    >>> round(planning(0.354)["pairs_needed"], 1)
    1111.4
    """
    d = margin_pp / 100
    za, zb = stats.norm.ppf(1 - alpha / 2), stats.norm.ppf(power)
    need = (za + zb) ** 2 * change_fraction / d ** 2
    achieved = float(stats.norm.cdf(d * math.sqrt(n_pairs / change_fraction) - za))
    return {"pairs_needed": float(need), "power": achieved}


def change_fractions(st: Study, primary: pd.DataFrame) -> dict[str, float]:
    """Share of primary targets whose category changes, per coupling order."""
    i = primary["i"].to_numpy()
    return {o: float(st.coupling[o].loc[i, "changed"].mean()) for o in ORDERINGS}
