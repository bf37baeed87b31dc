"""Pair-clustered logistic model of the individual choices (Tables 8, 10; Supplementary Note 6).

Counterfactual-arm calls, ``logit P(pick target) = const + arm + order [+ arm x order] [+ social +
arm x social] [+ one intercept per extra draw]``, fitted with statsmodels GEE (Binomial, Independence
working correlation, the pair as the cluster, robust z-tests); spec PROTOCOL-statistics §9.8 and R1.
The average marginal effect (AME) of the arm has a pair-cluster bootstrap interval. Under an
independence working correlation the GEE point estimate is the ordinary logistic maximum-likelihood
estimate, and a bootstrap resample that draws a pair ``c`` times enters the fit as that pair's rows
with weight ``c``. Relabelling duplicated pairs changes only the clusters of the robust variance,
which the bootstrap does not use. So every resample is refitted at once by a batched Newton solver
(:func:`batch_logit`, checked against statsmodels in the tests).
"""
from __future__ import annotations

import functools

import numpy as np
import pandas as pd

from ..cells import parse_cell
from ..estimators import percentile_ci, valid
from ..records import load_records

GEE_DRAWS = 1000  # pair-cluster bootstrap resamples (Table 8 caption; spec §9.8)
GEE_SEED = 0  # spec §9.8 and R1: one generator per table row; per-order effects continue with it


def gee_frame(records: pd.DataFrame, social: int = 0, draw: int = 0, prefix: str = "") -> pd.DataFrame:
    """Counterfactual-arm calls with a valid answer, in the model's variables (spec §9.8).

    Columns ``y`` (picked the target), ``arm`` (1 for ``cf_a1``), ``order`` (1 when the target is
    shown second), ``social``, ``draw`` (generating-process draw) and ``pair`` (draw-prefixed
    ``"i_j"``). Rows keep the file order, which fixes the order of the pair clusters.
    """
    cf = valid(records[records["arm"].isin(["cf_a1", "cf_a0"])])
    return pd.DataFrame({
        "y": cf["picked_i"].to_numpy(float),
        "arm": (cf["arm"] == "cf_a1").to_numpy(float),
        "order": cf["order"].to_numpy(float),
        "social": float(social),
        "draw": int(draw),
        "pair": (prefix + cf["i"].astype(str) + "_" + cf["j"].astype(str)).to_numpy(),
    })


def design(frame: pd.DataFrame, interaction: str | None = None) -> pd.DataFrame:
    """Design matrix: ``const, arm, order [, social, arm_x_social] [, arm_x_order] [, draw_d ...]``.

    ``interaction`` is ``"social"`` (name contrast), ``"order"`` (replacement x order) or None.
    """
    X = pd.DataFrame({"const": 1.0, "arm": frame["arm"], "order": frame["order"]}, index=frame.index)
    if interaction == "social":
        X["social"] = frame["social"]
        X["arm_x_social"] = frame["arm"] * frame["social"]
    elif interaction == "order":
        X["arm_x_order"] = frame["arm"] * frame["order"]
    elif interaction is not None:
        raise ValueError(f"unknown interaction {interaction!r}; expected 'social', 'order' or None")
    for d in sorted(frame["draw"].unique())[1:]:
        X[f"draw_{d}"] = (frame["draw"] == d).astype(float)
    return X


def fit_gee(frame: pd.DataFrame, interaction: str | None = None):
    """statsmodels GEE: Binomial (logit), Independence, groups = factorised pair id; robust z-tests."""
    X = design(frame, interaction)
    groups = pd.factorize(frame["pair"])[0]
    import statsmodels.api as sm  # heavy, optional: 1 s to import; only the GEE fits need it

    model = sm.GEE(frame["y"], X, groups=groups, family=sm.families.Binomial(),
                   cov_struct=sm.cov_struct.Independence())
    return model.fit()


def batch_logit(X: np.ndarray, y: np.ndarray, W: np.ndarray, beta0: np.ndarray | None = None,
                max_iter: int = 50, tol: float = 1e-10) -> np.ndarray:
    """Weighted logistic MLE for many weight vectors at once (Newton-Raphson).

    ``X`` (n x p), ``y`` (n,), ``W`` (B x n) nonnegative weights; returns ``beta`` (B x p). With
    ``W`` = multiplicities of a cluster resample this is the fit on the resampled rows.
    """
    X = np.asarray(X, float)
    B, p = W.shape[0], X.shape[1]
    beta = np.zeros((B, p)) if beta0 is None else np.tile(np.asarray(beta0, float), (B, 1))
    for _ in range(max_iter):
        mu = 1.0 / (1.0 + np.exp(-(beta @ X.T)))
        grad = (W * (y - mu)) @ X
        hess = np.matmul(((W * mu * (1 - mu))[:, :, None] * X).transpose(0, 2, 1), X)
        step = np.linalg.solve(hess, grad[..., None])[..., 0]
        beta = beta + step
        if np.max(np.abs(step)) < tol:
            break
    return beta


def _ame(X: np.ndarray, beta: np.ndarray, W: np.ndarray, names: list[str], social: np.ndarray | None) -> np.ndarray:
    """AME of the arm (pp) per row of ``beta``; for a name contrast, social-row AME minus neutral-row AME."""
    X1, X0 = X.copy(), X.copy()
    a = names.index("arm")
    X1[:, a], X0[:, a] = 1.0, 0.0
    if "arm_x_social" in names:
        s = names.index("arm_x_social")
        X1[:, s], X0[:, s] = X[:, names.index("social")], 0.0
    if "arm_x_order" in names:
        o = names.index("arm_x_order")
        X1[:, o], X0[:, o] = X[:, names.index("order")], 0.0
    diff = 1 / (1 + np.exp(-(beta @ X1.T))) - 1 / (1 + np.exp(-(beta @ X0.T)))
    if social is None:
        return 100 * (diff * W).sum(1) / W.sum(1)
    on, off = social == 1, social == 0
    return 100 * ((diff[:, on] * W[:, on]).sum(1) / W[:, on].sum(1)
                  - (diff[:, off] * W[:, off]).sum(1) / W[:, off].sum(1))


def cluster_counts(frame: pd.DataFrame, rng: np.random.Generator, draws: int) -> np.ndarray:
    """Row weights (draws x rows) of a pair-cluster bootstrap that resamples pairs within each draw.

    Per resample, for each generating-process draw in order, ``rng.choice(pairs, n, replace=True)``
    over that draw's pairs in order of first appearance (spec §9.8).
    """
    codes, uniq = pd.factorize(frame["pair"])
    first_draw = frame.groupby(codes, sort=True)["draw"].first().to_numpy()
    groups = [np.flatnonzero(first_draw == d) for d in sorted(frame["draw"].unique())]
    counts = np.zeros((draws, len(uniq)))
    for b in range(draws):
        for g in groups:
            counts[b] += np.bincount(rng.choice(g, len(g), replace=True), minlength=len(uniq))
    return counts[:, codes]


def per_order_values(frame: pd.DataFrame, order: int, contrast: bool = False) -> pd.Series:
    """Per-pair effect within one display order (pairs sorted by their ``"i_j"`` label, in [-1, 1] or [-2, 2]).

    Replacement: target choice in ``cf_a1`` minus ``cf_a0``; contrast: that difference with social
    names minus with neutral names.
    """
    sub = frame[frame["order"] == order]
    out = []
    for s in ((0.0, 1.0) if contrast else (None,)):
        part = sub if s is None else sub[sub["social"] == s]
        t = part.pivot_table(index="pair", columns="arm", values="y", aggfunc="mean")
        out.append(t[1.0] - t[0.0])
    vals = out[1] - out[0] if contrast else out[0]
    return vals.reindex(sorted(frame["pair"].unique()))


def per_order_flips(frame: pd.DataFrame, order: int) -> tuple[pd.Series, pd.Series, pd.Series]:
    """Neutral flip, social flip and social minus neutral by pair within one display order (spec R1).

    Each series holds only the pairs it is defined on (the difference: pairs present in both), sorted
    by their ``"i_j"`` label.
    """
    sub = frame[frame["order"] == order]
    flips = []
    for s in (0.0, 1.0):
        t = sub[sub["social"] == s].pivot_table(index="pair", columns="arm", values="y", aggfunc="mean")
        flips.append((t[1.0] - t[0.0]).dropna().sort_index())
    neutral, social = flips
    both = neutral.index.intersection(social.index).sort_values()
    return neutral, social, social[both] - neutral[both]


def _per_order_contrast(frame: pd.DataFrame, order: int, rng: np.random.Generator, draws: int) -> tuple:
    """Social minus neutral within one display order, (effect, lo, hi) in pp (spec R1).

    Continues the generator of the cluster-bootstrap refits: the neutral flip, the social flip and
    their difference are bootstrapped in this order, ``draws`` times each, one
    ``rng.integers(0, n, n)`` per draw (a ``(draws, n)`` call consumes the stream identically); only
    the difference's interval is reported, the other two series only advance the generator.
    """
    ci = None
    for series in per_order_flips(frame, order):
        v = series.to_numpy(float)
        means = v[rng.integers(0, len(v), (draws, len(v)))].mean(axis=1)
        ci = percentile_ci(means)
    return (100 * float(v.mean()), 100 * ci[0], 100 * ci[1])


def logistic_effect(frames: list[pd.DataFrame], contrast: bool = False, draws: int = GEE_DRAWS,
                    seed: int = GEE_SEED, per_order: bool = True) -> dict:
    """One row of Table 8 (and Table 10 / the per-order contrasts of Supplementary Note 6).

    ``frames``: :func:`gee_frame` outputs to stack (neutral then social; one ``draw`` per
    generating-process draw). Returns ``effect_pp, lo, hi, p`` (replacement or interaction), ``order_coef,
    order_p``, ``per_order`` (effect, lo, hi per display order, same generator after the AME draws)
    and ``interaction_p`` (replacement x order, replacement rows only).
    """
    frame = pd.concat(frames, ignore_index=True)
    inter = "social" if contrast else None
    res = fit_gee(frame, inter)
    names = list(res.params.index)
    X = design(frame, inter).to_numpy(float)
    y = frame["y"].to_numpy(float)
    social = frame["social"].to_numpy() if contrast else None
    point = float(_ame(X, res.params.to_numpy()[None, :], np.ones((1, len(frame))), names, social)[0])
    rng = np.random.default_rng(seed)
    W = cluster_counts(frame, rng, draws)
    boots = _ame(X, batch_logit(X, y, W, res.params.to_numpy()), W, names, social)
    lo, hi = percentile_ci(boots)
    key = "arm_x_social" if contrast else "arm"
    out = {"effect_pp": point, "lo": lo, "hi": hi, "p": float(res.pvalues[key]),
           "order_coef": float(res.params["order"]), "order_p": float(res.pvalues["order"]),
           "n_calls": len(frame), "n_pairs": int(frame["pair"].nunique()), "per_order": {}}
    if per_order and frame["draw"].nunique() == 1:
        for o in (0, 1):
            if contrast:
                out["per_order"][o] = _per_order_contrast(frame, o, rng, draws)
                continue
            v = per_order_values(frame, o, contrast).to_numpy()
            # one (draws, n) call consumes the stream exactly as ``draws`` calls of rng.choice(n, n)
            means = np.nanmean(v[rng.integers(0, len(v), (draws, len(v)))], axis=1)
            out["per_order"][o] = (100 * float(np.nanmean(v)), *(100 * x for x in percentile_ci(means)))
    if not contrast:
        out["interaction_p"] = float(fit_gee(frame, "order").pvalues["arm_x_order"])
    return out


#: rows of Table 8: key -> (model, k, contrast, seeds)
TABLE8_ROWS = {
    "rep.sonnet12": ("sonnet", 12, False, (None,)),
    "rep.sonnet18": ("sonnet", 18, False, (None,)),
    "rep.deepseek": ("deepseek", 12, False, (None,)),
    "rep.qwen": ("qwen", 12, False, (None,)),
    "rep.gpt": ("gpt", 12, False, (None,)),
    "sup.sonnet18": ("sonnet", 18, True, (None,)),
    "sup.deepseek": ("deepseek", 12, True, (None,)),
    "sup.deepseek3": ("deepseek", 12, True, (None, 20001, 20002)),
    "sup.qwen": ("qwen", 12, True, (None,)),
    "sup.gpt": ("gpt", 12, True, (None,)),
    # the two additional DeepSeek draws alone (Supplementary Note 6 text)
    "sup.deepseek.s20001": ("deepseek", 12, True, (20001,)),
    "sup.deepseek.s20002": ("deepseek", 12, True, (20002,)),
}


def model_frames(model: str, k: int, contrast: bool, seeds=(None,)) -> list[pd.DataFrame]:
    """GEE frames of the zero-information no-example cells of one Table 8 row (neutral then social per draw)."""
    frames = []
    for d, seed in enumerate(seeds):
        suffix = "" if seed is None else f"_s{seed}"
        prefix = "" if seed is None else f"s{seed}:"
        for social, names in ((0, "neutral"), (1, "social")) if contrast else ((0, "neutral"),):
            rec = load_records(model, parse_cell(f"k{k}_LH_{names}_absent_zero{suffix}"))
            frames.append(gee_frame(rec, social, d, prefix))
    return frames


@functools.lru_cache(maxsize=4)
def logistic_table(draws: int = GEE_DRAWS) -> dict[str, dict]:
    """Every Table 8 row (with Table 10's per-order effects and interaction P): key -> :func:`logistic_effect`."""
    return {key: logistic_effect(model_frames(m, k, c, seeds), c, draws)
            for key, (m, k, c, seeds) in TABLE8_ROWS.items()}


def table8(draws: int = GEE_DRAWS) -> pd.DataFrame:
    """Table 8 as a tidy frame (pp; P values unrounded)."""
    rows = []
    for key, r in logistic_table(draws).items():
        m, k, c, seeds = TABLE8_ROWS[key]
        rows.append({"row": key, "quantity": "suppression" if c else "replacement", "model": m, "k": k,
                     "draws": len(seeds), "effect_pp": r["effect_pp"], "lo_pp": r["lo"], "hi_pp": r["hi"],
                     "p": r["p"], "order_log_odds": r["order_coef"], "order_p": r["order_p"],
                     "n_pairs": r["n_pairs"], "n_calls": r["n_calls"]})
    return pd.DataFrame(rows)


def table10(draws: int = GEE_DRAWS) -> pd.DataFrame:
    """Table 10 (replacement per display order) and the per-order label contrasts of Supplementary Note 6."""
    rows = []
    for key, r in logistic_table(draws).items():
        if not r["per_order"]:
            continue
        for o, (eff, lo, hi) in r["per_order"].items():
            rows.append({"row": key, "order": "target first" if o == 0 else "target second",
                         "effect_pp": eff, "lo_pp": lo, "hi_pp": hi, "interaction_p": r.get("interaction_p")})
    return pd.DataFrame(rows)
