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

import itertools

import numpy as np
import pandas as pd

from . import config
from .cells import Cell
from .population import truth
from .references import cell_references, indicator_learner_pse

PAIR_INDEX = ["i", "j"]


def valid(records: pd.DataFrame) -> pd.DataFrame:
    """Rows whose ``picked_i`` is present (missing answers are dropped, never substituted)."""
    return records[records["picked_i"].notna()]


def target_probability(records: pd.DataFrame) -> pd.Series:
    """Per answer, the probability that it picks the target: ``picked_i`` (0 or 1), or, where the answer
    carries log-probabilities (``--answer-format logprobs``), P(target) = ``p_first`` when the target is
    shown first (order 0), else 1 - ``p_first``."""
    p = records["picked_i"].astype(float)
    if "p_first" in records:
        pf = pd.to_numeric(records["p_first"], errors="coerce")
        from_logprobs = pd.Series(np.where(records["order"] == 0, pf, 1 - pf), index=records.index)
        p = from_logprobs.where(pf.notna(), p)
    return p


def prompt_probabilities(records: pd.DataFrame, by: list[str] | str = PAIR_INDEX) -> pd.Series:
    """Per-prompt choice probability of the target (Supplementary Note 12): the share of the prompt's
    answered samples that pick it (one answer: 0 or 1), or their mean P(target) where answers carry
    log-probabilities. Indexed by ``by`` (the pair: ``(i, j)`` or ``pair_id``), ``arm``, ``order``."""
    by = [by] if isinstance(by, str) else list(by)
    v = valid(records)
    return target_probability(v).groupby([v[c] for c in by + ["arm", "order"]]).mean()


def arm_means(records: pd.DataFrame, by: list[str] | str = PAIR_INDEX) -> pd.DataFrame:
    """Per pair (rows, sorted) and arm (columns): the mean over the arm's answered orders of the per-prompt
    choice probabilities (:func:`prompt_probabilities`). With one answer per prompt this is the mean
    ``picked_i`` over valid calls; with R samples each order weighs the same however many samples it lost."""
    by = [by] if isinstance(by, str) else list(by)
    return prompt_probabilities(records, by).groupby(level=by + ["arm"]).mean().unstack("arm").sort_index()


def pair_pse(records: pd.DataFrame, by: list[str] | str = PAIR_INDEX) -> pd.Series:
    """Per-pair PSE in [-1, 1] (``cf_a1`` minus ``cf_a0`` of :func:`arm_means`), pairs resolved in both arms,
    sorted by ``by``. The one rule of the audit (``--samples R``, ``--answer-format logprobs``) and of
    Supplementary Note 12's probability-based effect (``by="pair_id"``)."""
    m = arm_means(records, by)
    if "cf_a1" not in m or "cf_a0" not in m:
        return pd.Series(dtype=float, name="pse")
    return (m["cf_a1"] - m["cf_a0"]).dropna().rename("pse")


def pair_error(records: pd.DataFrame, truth: pd.Series | None = None) -> pd.Series:
    """Per-pair factual ranking error in [0, 1]: mean over answered orders of each prompt's error
    probability (:func:`expected_error` of its choice probability; one answer: [picked_i != truth]).

    ``truth`` (indexed by ``(i, j)``) is 1 where the target has the higher true risk in the
    factual population; by default 1 for every pair (true in every zero-information cell).
    """
    fact = records[records["arm"] == "factual"]
    if valid(fact).empty:
        return pd.Series(dtype=float, name="error")
    p = prompt_probabilities(fact).droplevel("arm")
    pairs = p.index.droplevel("order")
    t = pd.Series(1.0, index=pairs) if truth is None else truth.reindex(pairs).astype(float)
    err = pd.Series(expected_error(p.to_numpy(), t.to_numpy()), index=p.index)
    return err.groupby(level=PAIR_INDEX).mean().rename("error").astype(float).sort_index()


def within_prompt_agreement(records: pd.DataFrame, by: list[str] | str = PAIR_INDEX) -> dict:
    """How often a prompt's R answers agree (``--samples R``), over prompts with at least two answered samples.

    ``pairwise``: the chance that two different answered samples of a prompt name the same patient,
    averaged over prompts (k of n picking the target: (k(k-1) + (n-k)(n-k-1)) / (n(n-1)));
    ``unanimous``: the share of prompts whose answered samples all agree; ``prompts``: how many prompts
    count, and ``samples``: the most answers per prompt. NaN where no prompt has two answers.
    """
    by = [by] if isinstance(by, str) else list(by)
    v = valid(records)
    g = v.groupby([v[c] for c in by + ["arm", "order"]])["picked_i"]
    n, k = g.count(), g.sum()
    n, k = n[n >= 2], k[n >= 2]
    if n.empty:
        return {"prompts": 0, "samples": int(g.count().max()) if len(v) else 0, "pairwise": float("nan"),
                "unanimous": float("nan")}
    pairwise = (k * (k - 1) + (n - k) * (n - k - 1)) / (n * (n - 1))
    return {"prompts": int(len(n)), "samples": int(n.max()), "pairwise": float(pairwise.mean()),
            "unanimous": float(((k == 0) | (k == n)).mean())}


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
    if has_factual and len(keep):  # no pair resolved in every arm: NaN, as above, without numpy's empty-mean warning
        err = keep["error"].to_numpy()
        out["error_pct"] = 100 * float(err.mean())
        out["error_ci"] = [100 * x for x in boot_ci(err, error_seed, draws)]
    return out


# --- cell summary with references (the CLI ``estimate``) ----------------------------------

def cell_summary(records: pd.DataFrame, cell: Cell, display: str = "numeric", **kwargs) -> dict:
    """:func:`cell_estimates` of a cell's records plus both references, excess and regret.

    Adds ``fullinfo_pse_pp``, ``learner_pse_pp``, ``learner_error_pct`` (spec §8) and
    ``excess_fullinfo_pp`` = PSE - full-information PSE, ``excess_learner_pp`` = PSE - learner
    PSE, ``regret_pp`` = 100 (R_LLM - R_Ideal) (spec §9.1; NaN where no learner or no factual arm).
    Intervals of the excesses are the PSE interval shifted by the (fixed) reference. For the
    category displays (``ordered`` / ``arbitrary``) the learner is the category-indicator learner
    of the representation control (-5.05 pp in the headline cell), whose ranking error is not
    defined here (those records have no factual arm).
    """
    ref = dict(cell_references(cell))
    if display != "numeric" and ref.get("learner_pse_pp") is not None and not np.isnan(ref["learner_pse_pp"]):
        ref["learner_pse_pp"] = indicator_learner_pse(cell)
        ref["learner_error_pct"] = float("nan")
    est = cell_estimates(records, truth(cell), **kwargs)
    out = {**est}
    out["fullinfo_pse_pp"] = ref["fullinfo_pse_pp"]
    out["learner_pse_pp"] = ref["learner_pse_pp"]
    out["learner_error_pct"] = ref["learner_error_pct"]
    out["excess_fullinfo_pp"] = est["pse_pp"] - ref["fullinfo_pse_pp"]
    out["excess_fullinfo_ci"] = [x - ref["fullinfo_pse_pp"] for x in est["pse_ci"]]
    out["excess_learner_pp"] = est["pse_pp"] - ref["learner_pse_pp"]
    out["excess_learner_ci"] = [x - ref["learner_pse_pp"] for x in est["pse_ci"]]
    out["regret_pp"] = est["error_pct"] - ref["learner_error_pct"]
    return out


# --- tracking slope (spec §9.3-§9.5) --------------------------------------------------------

def resolved_at_all_levels(per_level: list[pd.Series]) -> pd.DataFrame:
    """Per-pair PSE (pp) of the pairs resolved at every level: rows = levels, columns = pairs (sorted)."""
    common = sorted(set.intersection(*[set(s.index) for s in per_level]))
    idx = pd.MultiIndex.from_tuples(common, names=PAIR_INDEX)
    return pd.DataFrame([100 * s.reindex(idx).to_numpy() for s in per_level], columns=idx)


def fit_line(x, y) -> tuple[float, float]:
    """``(alpha, gamma)`` of the least-squares line ``y = alpha + gamma x`` (``numpy.polyfit``).

    ``y`` may be 2-D (levels x fits); then both are arrays (one per column).

    >>> [round(v, 12) for v in fit_line([0, 1, 2, 3], [1, 3, 5, 7])]
    [1.0, 2.0]
    """
    gamma, alpha = np.polyfit(np.asarray(x, dtype=float), np.asarray(y, dtype=float), 1)
    if np.ndim(gamma) == 0:
        return float(alpha), float(gamma)
    return alpha, gamma


def tracking_fit(Y: np.ndarray, x, seed: int = config.SLOPE_SEED, draws: int = config.BOOTSTRAP_DRAWS,
                 level: float = 95.0) -> dict:
    """Tracking slope ``PSE_model = alpha + gamma PSE_learner`` of one fit with its pair bootstrap (§9.3).

    ``Y`` is levels x pairs (pp), ``x`` the learner PSE per level. Each draw takes one
    ``rng.integers(0, n, n)`` (seed 7), applies it to every level and refits.
    Returns ``alpha, gamma, alpha_ci, gamma_ci, n_pairs`` and the draws (``alpha_draws, gamma_draws``).
    """
    Y = np.asarray(Y, dtype=float)
    n = Y.shape[1]
    alpha, gamma = fit_line(x, Y.mean(axis=1))
    rng = np.random.default_rng(seed)
    idx = rng.integers(0, n, size=(draws, n))
    means = Y[:, idx].mean(axis=2)  # levels x draws
    a_d, g_d = fit_line(x, means)
    return {"alpha": alpha, "gamma": gamma, "alpha_ci": list(percentile_ci(a_d, level)),
            "gamma_ci": list(percentile_ci(g_d, level)), "n_pairs": int(n),
            "alpha_draws": a_d, "gamma_draws": g_d}


def pooled_tracking(fits: dict, x, seed: int = config.POOLED_SLOPE_SEED, draws: int = config.BOOTSTRAP_DRAWS,
                    pools: dict | None = None) -> dict:
    """Shared-pair bootstrap of several tracking fits, simultaneous and pooled bounds (spec §9.4).

    ``fits`` maps a fit name to its levels x pairs DataFrame (columns = pairs resolved at all
    levels). The universe U is the sorted union of pairs; each draw is ONE
    ``rng.integers(0, |U|, |U|)`` shared by every fit, which keeps the drawn pairs it resolves.
    ``pools`` maps a pooled name to the fit names it averages (unweighted).

    Returns ``{"fits": DataFrame(name, gamma, lo, hi, simultaneous_upper, n_pairs),
    "pooled": DataFrame(name, gamma, lo95, hi95, lo90, hi90), "draws": DataFrame}``.
    """
    names = list(fits)
    universe = sorted(set().union(*[set(f.columns) for f in fits.values()]))
    pos = {p: u for u, p in enumerate(universe)}
    rng = np.random.default_rng(seed)
    idx = rng.integers(0, len(universe), size=(draws, len(universe)))
    point, boot = {}, {}
    for name in names:
        Y = fits[name].to_numpy(dtype=float)
        colmap = np.full(len(universe), -1)
        colmap[[pos[p] for p in fits[name].columns]] = np.arange(Y.shape[1])
        _, point[name] = fit_line(x, Y.mean(axis=1))
        c = colmap[idx]  # draws x |U|, -1 where the fit lacks the pair
        keep = c >= 0
        sums = np.where(keep[None], Y[:, np.where(keep, c, 0)], 0.0).sum(axis=2)
        _, boot[name] = fit_line(x, sums / keep.sum(axis=1))
    D = pd.DataFrame(boot)
    pt = pd.Series(point)
    sd = D.std(ddof=1)
    T = ((D - pt) / sd).max(axis=1)
    q = float(np.percentile(T, 95))
    rows = []
    for name in names:
        lo, hi = percentile_ci(D[name].to_numpy())
        rows.append({"fit": name, "gamma": pt[name], "lo": lo, "hi": hi,
                     "simultaneous_upper": pt[name] + q * sd[name], "n_pairs": fits[name].shape[1]})
    pooled = []
    for pname, members in (pools or {}).items():
        d = D[list(members)].mean(axis=1).to_numpy()
        lo95, hi95 = percentile_ci(d, 95.0)
        lo90, hi90 = percentile_ci(d, 90.0)
        pooled.append({"fit": pname, "gamma": float(pt[list(members)].mean()),
                       "lo95": lo95, "hi95": hi95, "lo90": lo90, "hi90": hi90})
    return {"fits": pd.DataFrame(rows), "pooled": pd.DataFrame(pooled), "draws": D, "q": q}


def run_choice_curves(runs: list[np.ndarray], x) -> pd.DataFrame:
    """Slopes of every choice of one run per level (spec §9.5: 2^levels curves, no bootstrap).

    ``runs[r]`` is the vector of level means (pp) of run ``r``; returns one row per choice
    with the chosen run per level, ``alpha`` and ``gamma``.
    """
    R = np.asarray(runs, dtype=float)  # runs x levels
    rows = []
    for choice in itertools.product(range(R.shape[0]), repeat=R.shape[1]):
        y = R[list(choice), np.arange(R.shape[1])]
        a, g = fit_line(x, y)
        rows.append({"choice": "".join("ab"[c] if R.shape[0] == 2 else str(c) for c in choice),
                     "alpha": a, "gamma": g})
    return pd.DataFrame(rows)


# --- frozen-policy control (spec §9.6) ---------------------------------------------------------

def choice_probability(records: pd.DataFrame) -> pd.Series:
    """Factual-arm probability of picking the target per pair (mean over valid orders), sorted."""
    fact = valid(records[records["arm"] == "factual"])
    return fact.groupby(PAIR_INDEX)["picked_i"].mean().sort_index()


def expected_error(p, t):
    """Expected ranking error of choice probability ``p`` against truth ``t``: ``p(1-t) + (1-p)t``."""
    return p * (1 - t) + (1 - p) * t


def frozen_policy(p0: pd.Series, p60: pd.Series, truth0: pd.Series, truth60: pd.Series) -> pd.DataFrame:
    """Per-pair decomposition of the accuracy change between beta 0 and beta 0.60 (spec §9.6).

    ``observed = err(p0, t0) - err(p60, t60)``; ``mechanical = err(p0, t0) - err(p0, t60)`` (the gain
    with the weakest-level choices frozen); ``residual = err(p0, t60) - err(p60, t60)``; pairs in
    both cells, sorted. Shares, not pp.
    """
    idx = p0.index.intersection(p60.index).sort_values()
    a, b = p0.reindex(idx), p60.reindex(idx)
    t0, t60 = truth0.reindex(idx).astype(float), truth60.reindex(idx).astype(float)
    return pd.DataFrame({
        "observed": expected_error(a, t0) - expected_error(b, t60),
        "mechanical": expected_error(a, t0) - expected_error(a, t60),
        "residual": expected_error(a, t60) - expected_error(b, t60),
    })


def frozen_policy_intervals(residuals: list[np.ndarray], seed: int = config.FROZEN_POLICY_SEED,
                            draws: int = config.BOOTSTRAP_DRAWS) -> list[tuple[float, float]]:
    """Percentile intervals of each residual mean, ONE generator shared in the given order (§9.6)."""
    rng = np.random.default_rng(seed)
    out = []
    for res in residuals:
        res = np.asarray(res, dtype=float)
        idx = rng.integers(0, len(res), size=(draws, len(res)))
        out.append(percentile_ci(res[idx].mean(axis=1)))
    return out


# --- partial correlation of regret and PSE (spec §9.10) ------------------------------------

def partial_correlation(x, y, z) -> float:
    """First-order partial correlation of ``x`` and ``y`` controlling ``z`` (Pearson formula).

    >>> round(partial_correlation([1, 2, 3, 4], [1, 3, 2, 4], [1, 1, 2, 2]), 3)  # within z: perfectly aligned
    1.0
    """
    r = np.corrcoef(np.vstack([x, y, z]).astype(float))
    rxy, rxz, ryz = r[0, 1], r[0, 2], r[1, 2]
    return float((rxy - rxz * ryz) / np.sqrt((1 - rxz**2) * (1 - ryz**2)))
