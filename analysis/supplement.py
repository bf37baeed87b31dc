"""Supplementary tables 7-15 and 18-20, Supplementary Notes 5-7 and 9-13, and Fig. 4A.

Sections (paper Supplement; spec PROTOCOL-statistics §9.7-§9.8, PROTOCOL-uci §12,
PROTOCOL-synthetic §5):

* **Pair-clustered logistic model** (Tables 8, 10; Supplementary Note 6). Counterfactual-arm calls,
  ``logit P(pick target) = const + arm + order [+ arm x order] [+ social + arm x social]
  [+ one intercept per extra draw]``, fitted with statsmodels GEE (Binomial, Independence working
  correlation, the pair as the cluster, robust z-tests). The average marginal effect (AME) of the
  arm has a pair-cluster bootstrap interval. Under an independence working correlation the GEE
  point estimate is the ordinary logistic maximum-likelihood estimate, and a bootstrap resample
  that draws a pair ``c`` times enters the fit as that pair's rows with weight ``c``. Relabelling
  duplicated pairs changes only the clusters of the robust variance, which the bootstrap does not
  use. So every resample is refitted at once by a batched Newton solver (:func:`batch_logit`, checked
  against statsmodels in the tests).
* **Order robustness** (Tables 9, 11-13, 20): display-position rates, the order-consistent
  subpopulation, the linear probability model with a position term and order-inconsistency rates.
* **Real-data anchors** (Tables 14-15; Supplementary Note 7): the structure statistic and
  ``R^2(A | X)`` on six UCI panels and the Diabetes 130-hospital panel, with frozen covariate lists.
* **Audit-error decomposition** (Table 18; Supplementary Note 9), computed from the released
  condition summaries only, so it is summary-level.
* **Regeneration schemes** (Table 19; Supplementary Notes 11-12).
* **Counterfactual scaling** (Supplementary Note 10) on our own synthetic population.
* **Suppression by difficulty stratum** (Table 7; Supplementary Note 5): the per-call records are
  not released, so these claims are ``NotReleased``.

Every claim of these tables is computed by :func:`claim_values`.
"""
from __future__ import annotations

import functools
import math

import numpy as np
import pandas as pd

from . import config, data
from .claims import NotReleased
from .estimators import boot_ci, pair_pse, percentile_ci, valid
from .records import load_records, normalise, released_cells

# --- constants (paper Supplement; spec sections cited) -----------------------------------------
GEE_DRAWS = 1000  # pair-cluster bootstrap resamples (Table 8 caption; spec §9.8)
GEE_SEED = 0  # spec §9.8: one generator per table row; per-order effects continue with it
#: UNRESOLVED in the spec (§9.7): seeds of the order-consistent intervals. Decision: one fresh
#: ``default_rng(0)`` per cell or fit and 2,000 resamples (the count printed for Table 13), for
#: Tables 11, 12 and 13 alike. Table 13 reproduces exactly with it; see the notebook for 11-12.
ORDER_CI_SEED = 0
ORDER_CI_DRAWS = 2000
POSITION_MIN_PSE_PP = 5.0  # Table 9 "sign changes": cells with |PSE| > 5 pp
MODELS = ("sonnet", "deepseek", "qwen", "gpt")
TABLE9_MODELS = ("deepseek", "qwen", "gpt", "sonnet")  # row order of Tables 9 and 20
DOSE_LEVELS = ("b030", "b045", "b060")  # Table 20 "dose-response cells": the informative sweep levels

# Real-data anchors (Supplementary Note 7; spec PROTOCOL-uci §12)
ANCHOR_SEED = 4242  # one generator shared across panels in panel order
ANCHOR_DRAWS = 200
ANCHOR_BAND = (0.114, 0.314)  # manipulated structure band; its ends are the low and high levels
PROXY_LEVELS = (0.068, 0.425)  # manipulated A_MC levels (paper §4.1)
ANCHOR_EXCLUDE_SUBSTRINGS = ("_id", "id_", "encounter", "patient_nbr", "index", "unnamed")  # spec §12.3

# Regeneration schemes (Supplementary Notes 11-12; spec PROTOCOL.md table map, row 19)
REGEN_DRAWS_PER_PAIR = 5
REGEN_SEED = 0
#: UNRESOLVED: resample count and draw order of the regeneration-scheme intervals. Decision: one
#: fresh ``default_rng(0)`` per quantity, 1,000 resamples, pairs sorted by (i, j).
REGEN_BOOT_DRAWS = 1000
REGEN_SLOPE_DIVISOR_PP = 23.2  # same-example reference at beta 0.60 (divisor 0.232 in proportions)
REGEN_CELLS = {"zero": "k12_LH_neutral_learned_zero", "b060": "k12_LH_neutral_learned_info_b060"}
REGEN_FOLDERS = {"sonnet": "data/raw_records/claude-sonnet-4-5/stochastic_regeneration",
                 "deepseek-v4.1": "data/raw_records/deepseek-flash"}


# =============================================================================================
# Pair-clustered logistic model (Tables 8, 10)
# =============================================================================================

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
    import statsmodels.api as sm

    X = design(frame, interaction)
    groups = pd.factorize(frame["pair"])[0]
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
            rec = load_records(model, f"k{k}_LH_{names}_absent_zero{suffix}")
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


# =============================================================================================
# Order robustness (Tables 9, 11-13, 20)
# =============================================================================================

def position_rates(records: pd.DataFrame) -> pd.Series:
    """P(pick the patient shown first) per arm over valid calls (spec §9.7)."""
    v = valid(records)
    first = np.where(v["order"] == 0, v["picked_i"], 1 - v["picked_i"])
    return pd.Series(first, index=v.index).groupby(v["arm"]).mean()


def _order_table(records: pd.DataFrame) -> pd.DataFrame:
    return valid(records).pivot_table(index=["i", "j"], columns=["arm", "order"], values="picked_i")


def consistent_pairs(records: pd.DataFrame, require_both_orders: bool = True) -> pd.MultiIndex:
    """Pairs whose two display orders agree within ``cf_a1`` and within ``cf_a0`` (sorted by (i, j)).

    The spec (§9.7) and Supplementary Note 6 require both orders present. ``require_both_orders=False``
    also counts a pair whose arm has one parsed order: the rule of the released
    ``order_robustness.csv`` of Sonnet, which Table 9's Sonnet row follows.
    """
    w = _order_table(records)
    ok = pd.Series(True, index=w.index)
    for arm in ("cf_a1", "cf_a0"):
        a0 = w.get((arm, 0), pd.Series(np.nan, index=w.index))
        a1 = w.get((arm, 1), pd.Series(np.nan, index=w.index))
        both = a0.notna() & a1.notna()
        if require_both_orders:
            ok &= both & (a0 == a1)
        else:
            ok &= (a0.notna() | a1.notna()) & (~both | (a0 == a1))
    return ok[ok].index.sort_values()


def lpm_arm_effect(records: pd.DataFrame) -> tuple[float, float]:
    """Linear probability model ``picked_i ~ 1 + arm + order`` on cf calls: (arm, order) coefficients in pp."""
    cf = valid(records[records["arm"].isin(["cf_a1", "cf_a0"])])
    X = np.column_stack([np.ones(len(cf)), (cf["arm"] == "cf_a1").astype(float), cf["order"].astype(float)])
    beta = np.linalg.lstsq(X, cf["picked_i"].to_numpy(float), rcond=None)[0]
    return 100 * float(beta[1]), 100 * float(beta[2])


def inconsistency_rates(records: pd.DataFrame) -> pd.Series:
    """Share of pairs (with both orders answered) whose two orders differ, per arm (Table 20)."""
    w = _order_table(records)
    out = {}
    for arm in config.ARMS:
        if (arm, 0) in w and (arm, 1) in w:
            both = w[(arm, 0)].notna() & w[(arm, 1)].notna()
            out[arm] = float((both & (w[(arm, 0)] != w[(arm, 1)])).sum() / both.sum())
    return pd.Series(out)


def order_robustness(records: pd.DataFrame) -> dict:
    """Per-cell order statistics: position rates, full and order-consistent PSE (pp), LPM, inconsistency."""
    pse = pair_pse(records)
    pos = position_rates(records)
    inc = inconsistency_rates(records)
    lpm, pos_coef = lpm_arm_effect(records)
    out = {"pos_first_factual": pos.get("factual", np.nan), "pos_first_cf_a1": pos.get("cf_a1", np.nan),
           "pos_first_cf_a0": pos.get("cf_a0", np.nan), "pse_full": 100 * pse.mean(), "n_pairs": len(pse),
           "pse_lpm": lpm, "position_coef_pp": pos_coef}
    for strict, tag in ((True, ""), (False, "_relaxed")):
        idx = consistent_pairs(records, strict)
        out["n_consistent" + tag] = len(idx)
        out["pse_consistent" + tag] = 100 * pse.reindex(idx).dropna().mean()
    for arm, v in inc.items():
        out[f"inconsistency_{arm}"] = v
    return out


def battery_cells(model: str) -> list[str]:
    """The model's released battery cells, without the seed replications ("all available cells" of Table 9)."""
    from .cells import parse_cell

    return [c for c in released_cells(model) if parse_cell(c).seed is None]


@functools.lru_cache(maxsize=1)
def order_cells() -> pd.DataFrame:
    """:func:`order_robustness` for every released battery cell of every model (tidy)."""
    rows = [{"model": m, "cell": c, **order_robustness(load_records(m, c))}
            for m in MODELS for c in battery_cells(m)]
    return pd.DataFrame(rows)


def table9(cells: pd.DataFrame | None = None, require_both_orders: bool = True) -> pd.DataFrame:
    """Table 9: median position rates, |consistent - full| (median, max), median n_cons,
    max |LPM - full| and sign changes, per model."""
    df = order_cells() if cells is None else cells
    tag = "" if require_both_orders else "_relaxed"
    d = df.assign(d_cons=(df["pse_consistent" + tag] - df["pse_full"]).abs(),
                  d_lpm=(df["pse_lpm"] - df["pse_full"]).abs(),
                  sign_change=(df["pse_full"].abs() > POSITION_MIN_PSE_PP)
                  & (df["pse_consistent" + tag] * df["pse_full"] <= 0))
    t = d.groupby("model").agg(pos_first_factual=("pos_first_factual", "median"),
                               pos_first_cf_a1=("pos_first_cf_a1", "median"),
                               pos_first_cf_a0=("pos_first_cf_a0", "median"),
                               d_consistent_median=("d_cons", "median"), d_consistent_max=("d_cons", "max"),
                               n_consistent_median=("n_consistent" + tag, "median"),
                               d_lpm_max=("d_lpm", "max"), sign_changes=("sign_change", "sum"),
                               n_cells=("cell", "size"))
    return t.reindex(TABLE9_MODELS)


def table20(cells: pd.DataFrame | None = None) -> pd.DataFrame:
    """Table 20: mean order-inconsistency rate (%) per arm over the dose-response cells and over all cells."""
    df = order_cells() if cells is None else cells
    cols = [f"inconsistency_{a}" for a in config.ARMS]
    dose = df[df["cell"].str.contains("|".join(f"_{lvl}" for lvl in DOSE_LEVELS))]
    out = pd.concat([100 * dose.groupby("model")[cols].mean().add_prefix("dose_"),
                     100 * df.groupby("model")[cols].mean().add_prefix("all_")], axis=1)
    return out.reindex(TABLE9_MODELS)


#: rows of Tables 11 and 12: key -> (model, k)
TABLE11_ROWS = {"sonnet12": ("sonnet", 12), "sonnet18": ("sonnet", 18), "deepseek": ("deepseek", 12),
                "qwen": ("qwen", 12), "gpt": ("gpt", 12)}
TABLE12_ROWS = {"sonnet18": ("sonnet", 18), "deepseek": ("deepseek", 12), "qwen": ("qwen", 12),
                "gpt": ("gpt", 12)}


def table11(draws: int = ORDER_CI_DRAWS, seed: int = ORDER_CI_SEED) -> pd.DataFrame:
    """Table 11: zero-information neutral no-example PSE, full and order-consistent (pp), LPM position-adjusted."""
    rows = []
    for key, (m, k) in TABLE11_ROWS.items():
        rec = load_records(m, f"k{k}_LH_neutral_absent_zero")
        pse = pair_pse(rec)
        vals = pse.reindex(consistent_pairs(rec)).dropna().to_numpy()
        lo, hi = boot_ci(vals, seed, draws)
        rows.append({"row": key, "model": m, "k": k, "full_pp": 100 * pse.mean(),
                     "consistent_pp": 100 * vals.mean(), "lo_pp": 100 * lo, "hi_pp": 100 * hi,
                     "n_consistent": len(vals), "n_pairs": len(pse), "position_adjusted_pp": lpm_arm_effect(rec)[0],
                     "grid_step_pp": 100 / len(vals)})
    return pd.DataFrame(rows)


def table12(draws: int = ORDER_CI_DRAWS, seed: int = ORDER_CI_SEED) -> pd.DataFrame:
    """Table 12: social minus neutral PSE (pp), full and on the pairs consistent in both cells."""
    rows = []
    for key, (m, k) in TABLE12_ROWS.items():
        neu = load_records(m, f"k{k}_LH_neutral_absent_zero")
        soc = load_records(m, f"k{k}_LH_social_absent_zero")
        pn, ps = pair_pse(neu), pair_pse(soc)
        joint = consistent_pairs(neu).intersection(consistent_pairs(soc)).sort_values()
        vals = (ps.reindex(joint) - pn.reindex(joint)).dropna().to_numpy()
        lo, hi = boot_ci(vals, seed, draws)
        rows.append({"row": key, "model": m, "k": k, "full_pp": 100 * (ps.mean() - pn.mean()),
                     "joint_pp": 100 * vals.mean(), "lo_pp": 100 * lo, "hi_pp": 100 * hi,
                     "n_joint": len(vals), "grid_step_pp": 100 / len(vals)})
    return pd.DataFrame(rows)


def sweep_x() -> np.ndarray:
    """Learner PSE (pp) at the four sweep levels, 2 decimals, from the released summary (spec §9.4 step 3)."""
    s = data.read_csv("data/summaries/beta_four_model_summary.csv")
    s = s[(s["model"] == "sonnet") & (s["semantic"] == "neutral")].sort_values("beta")
    return s["ideal_pp"].to_numpy(float)


def _slopes(x: np.ndarray, Y: np.ndarray) -> np.ndarray:
    """OLS slopes of ``Y`` (levels x draws) on ``x`` (same as ``numpy.polyfit(x, Y, 1)[0]``)."""
    xc = x - x.mean()
    return xc @ (Y - Y.mean(axis=0)) / (xc @ xc)


def sweep_cells(names: str) -> list[str]:
    """The four k=12 LH sweep cells of a name set (zero information, then beta 0.30, 0.45, 0.60)."""
    return [f"k12_LH_{names}_learned_zero"] + [f"k12_LH_{names}_learned_info_{lvl}" for lvl in DOSE_LEVELS]


def table13(draws: int = ORDER_CI_DRAWS, seed: int = ORDER_CI_SEED) -> pd.DataFrame:
    """Table 13: tracking slope, full (each level on its own pairs) and on the pairs consistent at all four levels."""
    x = sweep_x()
    rows = []
    for m in MODELS:
        for names in ("neutral", "social"):
            recs = [load_records(m, c) for c in sweep_cells(names)]
            pses = [pair_pse(r) for r in recs]
            full = float(np.polyfit(x, [100 * p.mean() for p in pses], 1)[0])
            joint = consistent_pairs(recs[0])
            for r in recs[1:]:
                joint = joint.intersection(consistent_pairs(r))
            joint = joint.sort_values()
            Y = 100 * np.array([p.reindex(joint).to_numpy() for p in pses])
            idx = np.random.default_rng(seed).integers(0, len(joint), (draws, len(joint)))
            boots = _slopes(x, Y[:, idx].mean(axis=2))
            lo, hi = percentile_ci(boots)
            xc = x - x.mean()
            rows.append({"model": m, "names": names, "full_slope": full,
                         "joint_slope": float(np.polyfit(x, Y.mean(axis=1), 1)[0]), "lo": lo, "hi": hi,
                         "n_joint": len(joint), "grid_step": float(np.max(np.abs(xc)) / (xc @ xc) * 100 / len(joint))})
    return pd.DataFrame(rows)


# =============================================================================================
# Real-data anchors (Tables 14-15; Supplementary Note 7; spec PROTOCOL-uci §12)
# =============================================================================================

DIABETES_UTILISATION = ("time_in_hospital", "num_lab_procedures", "num_procedures", "num_medications",
                        "number_outpatient", "number_emergency", "number_inpatient", "number_diagnoses")
#: UNRESOLVED in the spec (§12): the frozen covariate lists of v2. Decision: the released script's
#: automatic rule (numeric, >= 90% observed, >= 4 distinct values, no identifier names; spec
#: §12.3) applied to each file, minus the record identifier (WDBC ``ID``) and the outcome fields
#: Supplementary Note 7 names (heart ``num``, dermatology ``class``, liver ``drinks``; the WDBC
#: diagnosis is not numeric). Written out so the lists are frozen; a test re-derives them.
ANCHOR_COLUMNS = {
    "diabetes": DIABETES_UTILISATION,
    "heart": ("age", "cp", "trestbps", "chol", "thalach", "oldpeak", "ca"),
    "wdbc": tuple(f"{f}{s}" for s in (1, 2, 3) for f in (
        "radius", "texture", "perimeter", "area", "smoothness", "compactness", "concavity",
        "concave_points", "symmetry", "fractal_dimension")),
    "cervical": ("Age", "Number of sexual partners", "First sexual intercourse", "Num of pregnancies",
                 "Smokes (years)", "Smokes (packs/year)", "STDs: Number of diagnosis"),
    "dermatology": (
        "erythema", "scaling", "definite-borders", "itching", "koebner phenomenon", "polygonal papules",
        "follicular papules", "oral-mucosal involvement", "knee elbow involvement", "scalp involvement",
        "melanin incontinence", "pnl infiltrate", "fibrosis of the papillary dermis", "exocytosis",
        "acanthosis", "hyperkeratosis", "parakeratosis", "clubbing of the rete ridges",
        "elongation of the rete ridges", "thinning of the suprapapillary epidermis", "spongiform pustule",
        "munro microabcess", "focal hypergranulosis", "disappearance of the granular layer",
        "vacuolisation and damage of the basal layer", "spongiosis", "saw-tooth appearance of retes",
        "follicular horn plug", "perifollicular parakeratosis", "inflammatory monoluclear infiltrate",
        "band-like infiltrate", "age"),
    "hepatitis": ("Age", "Bilirubin", "Sgot"),
    "liver": ("mcv", "alkphos", "sgpt", "sgot", "gammagt"),
}
#: identifiers and outcome fields removed from the automatic selection (Supplementary Note 7)
ANCHOR_EXCLUDED = {"heart": ("num",), "wdbc": ("ID",), "dermatology": ("class",), "liver": ("drinks",)}
#: panel -> (registry name, Table 14 label, variable kind); in the spec's source order (UCI ids
#: 296, 45, 17, 383, 33, 46, 60), which is the order the shared bootstrap generator visits them
ANCHOR_PANELS = {
    "diabetes": ("uci/diabetes130/uci_diabetes_130hosp.csv", "Diabetes 130-hospital, utilization counts",
                 "administrative"),
    "heart": ("uci/anchors/uci_heart_disease.csv", "Heart disease (Cleveland), clinical and exercise test",
              "clinical"),
    "wdbc": ("uci/anchors/uci_breast_wdbc.csv", "Breast cancer WDBC, nuclear morphometry", "imaging"),
    "cervical": ("uci/anchors/uci_cervical_cancer.csv",
                 "Cervical cancer risk, sexual, reproductive and smoking history", "clinical"),
    "dermatology": ("uci/anchors/uci_dermatology.csv", "Dermatology, clinical and histopathology scores",
                    "clinical"),
    "hepatitis": ("uci/anchors/uci_hepatitis.csv", "Hepatitis, age and liver tests", "lab panel"),
    "liver": ("uci/anchors/uci_liver_disorders.csv", "Liver disorders, blood tests", "lab panel"),
}
TABLE14_ORDER = ("diabetes", "hepatitis", "cervical", "heart", "dermatology", "liver", "wdbc")


@functools.lru_cache(maxsize=8)
def anchor_source(panel: str) -> pd.DataFrame:
    """The raw UCI file of a panel (``?`` read as missing)."""
    name = ANCHOR_PANELS[panel][0]
    if panel == "diabetes":
        return data.read_csv(name, na_values=["?"], usecols=["race", "gender", *DIABETES_UTILISATION])
    return data.read_csv(name, na_values=["?"])


def auto_columns(df: pd.DataFrame, min_observed: float = 0.9, min_distinct: int = 4) -> list[str]:
    """The released script's automatic column rule (spec §12.3)."""
    num = df.select_dtypes("number")
    return [c for c in num.columns
            if num[c].notna().mean() >= min_observed and num[c].nunique() >= min_distinct
            and not any(s in c.lower() for s in ANCHOR_EXCLUDE_SUBSTRINGS)]


def anchor_panel(panel: str) -> pd.DataFrame:
    """The panel's frozen covariates with incomplete rows dropped."""
    cols = list(ANCHOR_COLUMNS[panel])
    return anchor_source(panel)[cols].apply(pd.to_numeric, errors="coerce").dropna()


def structure_statistic(X: np.ndarray) -> float:
    """``(lambda_max / tr C - 1/k) / (1 - 1/k)`` of the correlation matrix (``population.structure_statistic``)."""
    from .population import structure_statistic as stat

    return stat(X)


@functools.lru_cache(maxsize=4)
def structure_anchors(draws: int = ANCHOR_DRAWS, seed: int = ANCHOR_SEED) -> pd.DataFrame:
    """Table 14: the structure statistic per panel with a dataset-level bootstrap.

    One generator (``seed``) shared across panels in the order of :data:`ANCHOR_PANELS`; per panel
    ``draws`` resamples of row indices (``integers(0, n, n)``), percentiles 2.5 / 97.5.
    """
    rng = np.random.default_rng(seed)
    rows = []
    for panel, (_, label, kind) in ANCHOR_PANELS.items():
        X = anchor_panel(panel).to_numpy(float)
        n = len(X)
        boots = [structure_statistic(X[rng.integers(0, n, n)]) for _ in range(draws)]
        value = structure_statistic(X)
        lo, hi = percentile_ci(np.array(boots))
        low, high = ANCHOR_BAND
        rows.append({"panel": panel, "dataset": label, "variable_kind": kind, "k": X.shape[1], "n": n,
                     "c_norm": value, "lo": lo, "hi": hi, "inside_band": low <= value <= high,
                     "nearest_level": "low" if abs(value - low) <= abs(value - high) else "high"})
    return pd.DataFrame(rows).set_index("panel").loc[list(TABLE14_ORDER)].reset_index()


def r2_given(A: np.ndarray, X: np.ndarray) -> float:
    """``R^2(A | X)``: OLS with intercept, ``1 - var(residual) / var(A)``."""
    X1 = np.column_stack([np.ones(len(X)), X])
    beta = np.linalg.lstsq(X1, A, rcond=None)[0]
    return float(1 - np.var(A - X1 @ beta) / np.var(A))


@functools.lru_cache(maxsize=1)
def proxy_anchors() -> pd.DataFrame:
    """Table 15: linear predictability of a protected attribute from each panel's covariates."""
    rows = []
    diab = anchor_source("diabetes")
    d = diab[diab["race"].notna() & diab["gender"].notna()]
    Xd = d[list(DIABETES_UTILISATION)].to_numpy(float)
    rows.append(("diabetes.gender", "Diabetes 130-hosp, gender", Xd, (d["gender"] == "Female").to_numpy(float)))
    rows.append(("diabetes.race", "Diabetes 130-hosp, race (Black vs other)", Xd,
                 (d["race"] == "AfricanAmerican").to_numpy(float)))
    cols = list(ANCHOR_COLUMNS["heart"])
    h = anchor_source("heart")[cols + ["sex"]].apply(pd.to_numeric, errors="coerce").dropna()
    rows.append(("heart.sex", "Heart disease, sex", h[cols].to_numpy(float), h["sex"].to_numpy(float)))
    c = anchor_panel("cervical")
    cols = [x for x in ANCHOR_COLUMNS["cervical"] if x != "Age"]
    rows.append(("cervical.age", "Cervical cancer, age >= median", c[cols].to_numpy(float),
                 (c["Age"] >= c["Age"].median()).to_numpy(float)))
    out = []
    for key, label, X, A in rows:
        r2 = r2_given(A, X)
        out.append({"row": key, "dataset": label, "k": X.shape[1], "n": len(X), "r2": r2,
                    "inside_range": PROXY_LEVELS[0] <= r2 <= PROXY_LEVELS[1]})
    return pd.DataFrame(out)


# =============================================================================================
# Audit-error decomposition (Table 18; Supplementary Note 9) -- summary-level
# =============================================================================================

EXPB = "data/summaries/expB"


def _metric_table(name: str) -> pd.Series:
    """A released ``metric,value`` summary as a Series."""
    df = data.read_csv(name)
    return pd.to_numeric(df.set_index(df.columns[0])[df.columns[1]], errors="coerce")


def combine_gap(full: float, full_lo: float, full_hi: float, gap: float, gap_lo: float, gap_hi: float) -> tuple:
    """Magnitude of an audit gap with an interval that adds the full-panel effect's uncertainty.

    ``gap`` (signed: audit minus full panel, negative) and ``[gap_lo, gap_hi]`` are the released
    audit-side interval conditional on the full-panel effect; the full-panel interval is treated as
    independent and combined in quadrature on each side (Supplementary Note 9). Returns
    ``(magnitude, lo, hi)``.
    """
    g = -gap
    lo = g - math.hypot(full - full_lo, gap_hi - gap)
    hi = g + math.hypot(full_hi - full, gap - gap_lo)
    return g, lo, hi


@functools.lru_cache(maxsize=1)
def audit_decomposition() -> pd.DataFrame:
    """Table 18 from the released condition summaries (summary-level; no per-call records)."""
    cells = data.read_csv("data/summaries/acore/acore_LH_rule_absent_cells.csv").set_index("semantic")
    full = {s: (100 * cells.at[s, "PSE"], 100 * cells.at[s, "CI_lo"], 100 * cells.at[s, "CI_hi"])
            for s in ("neutral", "social")}
    gaps = data.read_csv(f"{EXPB}/expb_omission_gaps.csv").set_index(["arm", "target_full"])
    pn = data.read_csv(f"{EXPB}/expb_omission_neutral_cell.csv").iloc[0]
    rows = []

    def add(row, names, gap, iw):
        f = full[names]
        g = combine_gap(*f, *gap)
        w = combine_gap(*f, *iw)
        rows.append({"row": row, "names": names, "gap_pp": g[0], "gap_lo": g[1], "gap_hi": g[2],
                     "iw_gap_pp": w[0], "iw_lo": w[1], "iw_hi": w[2], "iw_excludes_zero": w[1] > 0 or w[2] < 0})

    for names in ("neutral", "social"):
        r = gaps.loc[("reduced", names)]
        add("full_omission", names, (r["omission_gap_pp"], r["gap_ci_lo"], r["gap_ci_hi"]),
            (r["iw_residual_pp"], r["iw_resid_ci_lo"], r["iw_resid_ci_hi"]))
    # partial omission, neutral: audit arm PSE and its IW estimate (gap = audit - full)
    fn = pn["full_neutral_pp_ref"]
    add("partial_omission", "neutral",
        (pn["PSE_pp"] - fn, pn["PSE_CI_lo_pp"] - fn, pn["PSE_CI_hi_pp"] - fn),
        (pn["IW_estimate_pp"] - fn, pn["IW_CI_lo_pp"] - fn, pn["IW_CI_hi_pp"] - fn))
    r = gaps.loc[("partial_social", "social")]
    add("partial_omission", "social", (r["omission_gap_pp"], r["gap_ci_lo"], r["gap_ci_hi"]),
        (r["iw_residual_pp"], r["iw_resid_ci_lo"], r["iw_resid_ci_hi"]))
    # distribution shift: covariance identity with its pair-bootstrap interval (no full-panel term)
    t = _metric_table(f"{EXPB}/expb2_neutral_transport.csv")
    rows.append({"row": "distribution_shift", "names": "neutral", "gap_pp": -t["cov_Q_w_tau_pp"],
                 "gap_lo": -t["cov_ci_hi"], "gap_hi": -t["cov_ci_lo"], "iw_gap_pp": t["IW_residual_gap_pp"],
                 "iw_lo": t["IW_residual_ci_lo"], "iw_hi": t["IW_residual_ci_hi"],
                 "iw_excludes_zero": t["IW_residual_ci_lo"] > 0 or t["IW_residual_ci_hi"] < 0})
    rows.append({"row": "label_mismatch", "names": "neutral vs social",
                 "gap_pp": full["neutral"][0] - full["social"][0]})
    out = pd.DataFrame(rows)
    out.attrs["full_panel"] = full
    return out


# =============================================================================================
# Regeneration schemes (Table 19; Supplementary Notes 11-12)
# =============================================================================================

def regeneration_records(model: str, level: str) -> tuple[pd.DataFrame, pd.DataFrame]:
    """(frozen baseline, stochastic regeneration) records of a regeneration check (released schema + ``draw``)."""
    folder, cell = REGEN_FOLDERS[model], REGEN_CELLS[level]
    frozen = normalise(data.read_csv(f"{folder}/{cell}_frozenbaseline_records.csv"))
    stoch = normalise(data.read_csv(f"{folder}/{cell}_stochregen_records.csv"))
    return frozen, stoch


def regeneration_pairs(frozen: pd.DataFrame, stoch: pd.DataFrame, n_draws: int = REGEN_DRAWS_PER_PAIR) -> pd.DataFrame:
    """Per-pair frozen and stochastic PSE (fractions), pairs resolved in the frozen arms and in all draws.

    The stochastic value of a pair is the mean over its draws of the draw's cf_a1 minus cf_a0
    choice (both orders averaged); a pair needs every draw resolved in both arms.
    """
    v = valid(stoch[stoch["arm"].isin(["cf_a1", "cf_a0"])])
    t = v.pivot_table(index=["i", "j", "draw"], columns="arm", values="picked_i", aggfunc="mean")
    per_draw = (t["cf_a1"] - t["cf_a0"]).dropna().unstack("draw")
    complete = per_draw[per_draw.notna().sum(axis=1) == n_draws]
    out = pd.DataFrame({"frozen": pair_pse(frozen), "stochastic": complete.mean(axis=1)}).dropna()
    return out.sort_index()


def regeneration_summary(model: str, draws: int = REGEN_BOOT_DRAWS, seed: int = REGEN_SEED) -> pd.DataFrame:
    """Frozen, stochastic and frozen-minus-stochastic PSE (pp) per cell with pair-bootstrap intervals."""
    rows = []
    for level in REGEN_CELLS:
        p = regeneration_pairs(*regeneration_records(model, level))
        for q, vals in (("frozen", p["frozen"]), ("stochastic", p["stochastic"]),
                        ("difference", p["frozen"] - p["stochastic"])):
            lo, hi = boot_ci(vals.to_numpy(), seed, draws)
            rows.append({"model": model, "cell": level, "quantity": q, "pse_pp": 100 * vals.mean(),
                         "lo_pp": 100 * lo, "hi_pp": 100 * hi, "n_pairs": len(vals)})
    return pd.DataFrame(rows)


def frozen_baseline_checks(model: str = "deepseek-v4.1") -> pd.DataFrame:
    """Per regeneration cell: frozen PSE (pp) and order-inconsistency (%) per arm of the frozen baseline."""
    rows = []
    for level in REGEN_CELLS:
        frozen, _ = regeneration_records(model, level)
        inc = inconsistency_rates(frozen)
        rows.append({"cell": level, "frozen_pse_pp": 100 * pair_pse(frozen).mean(),
                     **{f"inconsistency_{a}": 100 * v for a, v in inc.items()}})
    out = pd.DataFrame(rows).set_index("cell")
    rise = out.at["b060", "frozen_pse_pp"] - out.at["zero", "frozen_pse_pp"]
    out.attrs["two_point_slope"] = rise / REGEN_SLOPE_DIVISOR_PP
    return out


# =============================================================================================
# Counterfactual scaling (Supplementary Note 10)
# =============================================================================================

@functools.lru_cache(maxsize=4)
def comparator_moves(cell: str = "k12_LH_neutral_absent_zero") -> pd.MultiIndex:
    """Pairs whose comparator's rendered values differ between the two counterfactual arms.

    Each arm re-standardises the 5,000-patient sample after regenerating the target's proxies
    (spec PROTOCOL-synthetic §5.4), so the comparator ``j``'s displayed two-decimal values can move.
    """
    from . import population
    from .prompts import value_strings

    pop = population.population(cell)
    moved = []
    for p in population.pairs(cell).itertuples():
        shown = [value_strings(population.counterfactual(pop, p.i, a).X[[p.j]], cell)[0] for a in (1, 0)]
        if shown[0] != shown[1]:
            moved.append((p.i, p.j))
    return pd.MultiIndex.from_tuples(moved, names=["i", "j"])


def scaling_sensitivity(cell: str = "k12_LH_neutral_absent_zero") -> pd.DataFrame:
    """PSE (pp) per model with and without the pairs whose comparator moves."""
    moved = comparator_moves(cell)
    rows = []
    for m in MODELS:
        pse = pair_pse(load_records(m, cell))
        keep = pse.drop(index=moved.intersection(pse.index))
        rows.append({"model": m, "pse_pp": 100 * pse.mean(), "pse_excluding_pp": 100 * keep.mean(),
                     "n_pairs": len(pse), "n_excluded": len(pse) - len(keep)})
    return pd.DataFrame(rows)


# =============================================================================================
# Fig. 4A: naming effects without examples
# =============================================================================================

GATE1_SUMMARY = "data/summaries/gate_summaries/expK_gate1_summary.csv"


def sonnet_k12_naming_summary() -> float:
    """Sonnet's k=12 zero-information no-example social minus neutral PSE (pp), from the condition summary.

    The social cell is released only as a condition summary (Supplementary Note 15), so this value
    is summary-level and has no interval.
    """
    s = data.read_csv(GATE1_SUMMARY)
    s = s[(s["k"] == 12) & (~s["informative"].astype(bool))].set_index("semantic")
    return float(s.at["social", "PSE_pp"] - s.at["neutral", "PSE_pp"])


def naming_effects(draws: int = GEE_DRAWS) -> pd.DataFrame:
    """Fig. 4A data: social minus neutral PSE (pp) per model, zero information, no examples.

    Per-call models use the pair-clustered logistic AME and its interval (Table 8, suppression
    rows); Sonnet at k = 12 is summary-level (no interval).
    """
    t = logistic_table(draws)
    rows = [{"model": "sonnet", "label": "Sonnet 4.5, k=12", "effect_pp": sonnet_k12_naming_summary(),
             "lo_pp": np.nan, "hi_pp": np.nan, "source": "condition summary (expK_gate1_summary.csv)"}]
    for key, label in (("sup.sonnet18", "Sonnet 4.5, k=18"), ("sup.gpt", "GPT-5.6 Terra, k=12"),
                       ("sup.qwen", "Qwen3.7-max, k=12"), ("sup.deepseek", "DeepSeek-V4-Flash, k=12"),
                       ("sup.deepseek3", "DeepSeek-V4-Flash, 3 draws")):
        r = t[key]
        rows.append({"model": TABLE8_ROWS[key][0], "label": label, "effect_pp": r["effect_pp"],
                     "lo_pp": r["lo"], "hi_pp": r["hi"], "source": "per-call records, pair-clustered AME"})
    return pd.DataFrame(rows)


def fig4a_naming(df: pd.DataFrame):
    """Fig. 4A: social minus neutral PSE (pp) without examples, per model, with 95% intervals.

    ``df`` as from :func:`naming_effects`; rows without an interval are drawn hollow.
    """
    import matplotlib.pyplot as plt

    from .figures import MODEL_COLORS, apply_style

    apply_style()
    fig, ax = plt.subplots(figsize=(4.6, 2.8))
    y = np.arange(len(df))[::-1]
    for yy, r in zip(y, df.itertuples()):
        color = MODEL_COLORS.get(r.model, "#444444")
        if np.isfinite(r.lo_pp):
            ax.errorbar(r.effect_pp, yy, xerr=[[r.effect_pp - r.lo_pp], [r.hi_pp - r.effect_pp]], fmt="o",
                        color=color, capsize=3, ms=5)
        else:
            ax.plot(r.effect_pp, yy, "o", mfc="white", mec=color, ms=6)
            ax.annotate("summary only", (r.effect_pp, yy), xytext=(8, -3), textcoords="offset points",
                        fontsize=7, color="#555555")
    ax.axvline(0, color="#333333", lw=0.8)
    ax.set_yticks(y, df["label"])
    ax.set_xlabel("social minus neutral PSE (pp)")
    ax.set_title("A  Naming effect without examples", loc="left")
    fig.tight_layout()
    return fig


# =============================================================================================
# Claims
# =============================================================================================

def _printed_like(value: object, printed: str) -> str:
    """``value`` rounded one digit beyond the printed precision (stable text for notebook checks)."""
    if isinstance(value, NotReleased) or value is None:
        return ""
    s = str(printed).replace("\u2212", "-").replace(",", "").replace("%", "")
    if "10^" in s:
        return f"{float(value):.3g}"
    decimals = len(s.split(".")[1]) if "." in s else 0
    return f"{float(value):+.{decimals + 1}f}" if s.startswith(("+", "-")) else f"{float(value):.{decimals + 1}f}"


def compare_table(values: dict[str, object], prefixes: tuple[str, ...]) -> pd.DataFrame:
    """Paper value beside ours (one digit beyond the printed precision) and the status, for claim ids with a prefix."""
    from .claims import compare

    sub = {k: v for k, v in values.items() if k.startswith(prefixes)}
    c = compare(sub)
    c["ours"] = [_printed_like(sub[k], p) for k, p in zip(c["claim_id"], c["paper_value"])]
    return c[["claim_id", "row", "column", "paper_value", "ours", "status"]]


T7_MISSING = ("per-call records of the separate Sonnet k=6 difficulty-stratum sample (60 pairs, strata "
              "[0,0.3), [0.3,0.6), [0.6,1.0)) and any condition summary by stratum; data/summaries/acore/* "
              "hold a different 99-pair audit-input sample without strata")
T19_MISSING = ("Sonnet concurrent regeneration check: data/concurrent_checks/claude-sonnet-4-5-20250929/"
               "concurrent_regen_records.csv, regen_jobs_answers.jsonl and links/regen_links.csv are not in "
               "the release (NOT_INCLUDED.csv); the released stochastic_regeneration/ files are an earlier, "
               "non-concurrent run whose frozen baseline is the battery")
T1_MISSING = ("DeepSeek-V4.1-Flash temperature-1 resampling records "
              "data/raw_records/deepseek-flash/k12_LH_neutral_learned_{zero,info_b060}_t1resample_records.csv "
              "(NOT_INCLUDED.csv)")

_T8_COLS = {"effect": "effect_pp", "lo": "lo", "hi": "hi", "p": "p", "order": "order_coef", "order_p": "order_p"}
_T9_COLS = {"pos_fact": "pos_first_factual", "pos_a1": "pos_first_cf_a1", "pos_a0": "pos_first_cf_a0",
            "dcons_med": "d_consistent_median", "dcons_max": "d_consistent_max", "ncons": "n_consistent_median",
            "dlpm_max": "d_lpm_max", "sign_changes": "sign_changes"}
_T20_COLS = {"fact": "inconsistency_factual", "a1": "inconsistency_cf_a1", "a0": "inconsistency_cf_a0"}


def claim_values(draws: int = GEE_DRAWS) -> dict[str, object]:
    """Every registered claim of Tables 7-15, 18-20, Supplementary Notes 6-7 and 9-12 and the Fig. 4A text."""
    out: dict[str, object] = {}
    # Table 8 / 10 and Supplementary Note 6
    lt = logistic_table(draws)
    for key in list(TABLE8_ROWS)[:10]:
        for col, field in _T8_COLS.items():
            out[f"T8.{key}.{col}"] = lt[key][field]
    for tag in ("s20001", "s20002"):
        out[f"SN6.deepseek.{tag}.effect"] = lt[f"sup.deepseek.{tag}"]["effect_pp"]
        out[f"SN6.deepseek.{tag}.p"] = lt[f"sup.deepseek.{tag}"]["p"]
    for key in ("rep.sonnet12", "rep.sonnet18", "rep.deepseek", "rep.qwen", "rep.gpt"):
        row = key.split(".")[1]
        for o, name in ((0, "first"), (1, "second")):
            eff, lo, hi = lt[key]["per_order"][o]
            out[f"T10.{row}.{name}"], out[f"T10.{row}.{name}.lo"], out[f"T10.{row}.{name}.hi"] = eff, lo, hi
        out[f"T10.{row}.p"] = lt[key]["interaction_p"]
    for key in ("sup.sonnet18", "sup.gpt", "sup.qwen", "sup.deepseek"):
        for o, name in ((0, "first"), (1, "second")):
            out[f"SN6.contrast.{key.split('.')[1]}.{name}"] = lt[key]["per_order"][o][0]
    out["SN6.interaction.significant"] = sum(lt[k]["p"] < 0.05 for k in ("sup.sonnet18", "sup.deepseek", "sup.qwen",
                                                                         "sup.gpt"))
    replacement_rows = ("rep.sonnet12", "rep.sonnet18", "rep.deepseek", "rep.qwen", "rep.gpt")
    out["SN6.order_interaction.significant"] = sum(lt[k]["interaction_p"] < 0.05 for k in replacement_rows)
    out["SN6.contrast.reach_zero"] = sum(lt[key]["per_order"][o][2] >= 0 for o in (0, 1)
                                         for key in ("sup.sonnet18", "sup.gpt", "sup.qwen", "sup.deepseek"))
    # Table 9, Table 20
    t9 = table9()
    for m in TABLE9_MODELS:
        for col, field in _T9_COLS.items():
            out[f"T9.{m}.{col}"] = float(t9.at[m, field])
    t20 = table20()
    for m in TABLE9_MODELS:
        for scope in ("dose", "all"):
            if m == "sonnet" and scope == "all":
                continue
            for col, field in _T20_COLS.items():
                out[f"T20.{m}.{scope}.{col}"] = float(t20.at[m, f"{scope}_{field}"])
    # Tables 11-13
    for r in table11().itertuples():
        out.update({f"T11.{r.row}.full": r.full_pp, f"T11.{r.row}.cons": r.consistent_pp,
                    f"T11.{r.row}.cons.lo": r.lo_pp, f"T11.{r.row}.cons.hi": r.hi_pp,
                    f"T11.{r.row}.ncons": r.n_consistent, f"T11.{r.row}.lpm": r.position_adjusted_pp})
    for r in table12().itertuples():
        out.update({f"T12.{r.row}.full": r.full_pp, f"T12.{r.row}.joint": r.joint_pp,
                    f"T12.{r.row}.joint.lo": r.lo_pp, f"T12.{r.row}.joint.hi": r.hi_pp,
                    f"T12.{r.row}.njoint": r.n_joint})
    for r in table13().itertuples():
        p = f"T13.{r.model}.{r.names}"
        out.update({f"{p}.full": r.full_slope, f"{p}.joint": r.joint_slope, f"{p}.lo": r.lo, f"{p}.hi": r.hi,
                    f"{p}.njoint": r.n_joint})
    # Tables 14-15, Supplementary Note 7
    sa = structure_anchors()
    for r in sa.itertuples():
        out.update({f"T14.{r.panel}.k": r.k, f"T14.{r.panel}.n": r.n, f"T14.{r.panel}.c": r.c_norm,
                    f"T14.{r.panel}.lo": r.lo, f"T14.{r.panel}.hi": r.hi})
    out["SN7.inside"] = int(sa["inside_band"].sum())
    for r in proxy_anchors().itertuples():
        out.update({f"T15.{r.row}.k": r.k, f"T15.{r.row}.n": r.n, f"T15.{r.row}.r2": r.r2})
    # Table 18, Supplementary Note 9 (summary-level)
    decomposition = audit_decomposition()
    full = decomposition.attrs["full_panel"]
    ad = decomposition.set_index(["row", "names"])
    for (row, names), r in ad.iterrows():
        key = {"full_omission": "full", "partial_omission": "partial", "distribution_shift": "shift",
               "label_mismatch": "label"}[row]
        p = f"T18.{key}" if key == "label" else f"T18.{key}.{names}"
        out[f"{p}.gap"] = r["gap_pp"]
        if key != "label":
            out.update({f"{p}.gap.lo": r["gap_lo"], f"{p}.gap.hi": r["gap_hi"], f"{p}.iw": r["iw_gap_pp"],
                        f"{p}.iw.lo": r["iw_lo"], f"{p}.iw.hi": r["iw_hi"]})
    for names in ("neutral", "social"):
        out[f"SN9.full.{names}"], out[f"SN9.full.{names}.lo"], out[f"SN9.full.{names}.hi"] = full[names]
    shift = ad.loc[("distribution_shift", "neutral"), "gap_pp"]
    out["SN9.ratio.omission"] = ad.loc[("full_omission", "neutral"), "gap_pp"] / shift
    out["SN9.ratio.label"] = ad.loc[("label_mismatch", "neutral vs social"), "gap_pp"] / shift
    # Table 7 (not released)
    for s in ("s0", "s1", "s2", "overall"):
        for col in ("n", "social", "neutral", "contrast", "lo", "hi"):
            out[f"T7.{s}.{col}"] = NotReleased(T7_MISSING)
    # Table 19 (Sonnet concurrent check: not released), Supplementary Notes 11-12
    for row in ("zero", "b060"):
        for col in ("frozen", "frozen.lo", "frozen.hi", "stoch", "stoch.lo", "stoch.hi", "diff", "diff.lo",
                    "diff.hi"):
            out[f"T19.{row}.{col}"] = NotReleased(T19_MISSING)
    for col in ("diff", "diff.lo", "diff.hi", "diff.lo90", "diff.hi90", "slope.frozen", "slope.frozen.lo",
                "slope.frozen.hi", "slope.stoch", "slope.stoch.lo", "slope.stoch.hi"):
        out[f"T19.pooled.{col}"] = NotReleased(T19_MISSING)
    for level, cell in REGEN_CELLS.items():
        out[f"SN11.sonnet.battery.{level}"] = 100 * pair_pse(load_records("sonnet", cell)).mean()
        out[f"SN11.deepseek.battery.{level}"] = 100 * pair_pse(load_records("deepseek", cell)).mean()
    rs = regeneration_summary("deepseek-v4.1").set_index(["cell", "quantity"])
    for level in REGEN_CELLS:
        out[f"SN11.v41.{level}.frozen"] = rs.at[(level, "frozen"), "pse_pp"]
        out[f"SN11.v41.{level}.stoch"] = rs.at[(level, "stochastic"), "pse_pp"]
        for col, field in (("diff", "pse_pp"), ("diff.lo", "lo_pp"), ("diff.hi", "hi_pp")):
            out[f"SN11.v41.{level}.{col}"] = rs.at[(level, "difference"), field]
    fb = frozen_baseline_checks()
    for level in REGEN_CELLS:
        out[f"SN12.{level}.inc.factual"] = fb.at[level, "inconsistency_factual"]
        out[f"SN12.{level}.inc.a1"] = fb.at[level, "inconsistency_cf_a1"]
        out[f"SN12.{level}.inc.a0"] = fb.at[level, "inconsistency_cf_a0"]
    out["SN12.b060.single"] = fb.at["b060", "frozen_pse_pp"]
    out["SN12.slope.t0"] = fb.attrs["two_point_slope"]
    for key in ("calls", "unparseable", "outside.zero", "outside.b060", "corr.zero", "corr.b060", "prob.zero",
                "prob.zero.lo", "prob.zero.hi", "prob.b060", "prob.b060.lo", "prob.b060.hi", "diff.zero",
                "diff.zero.lo", "diff.zero.hi", "diff.b060", "diff.b060.lo", "diff.b060.hi", "slope.t1"):
        out[f"SN12.{key}"] = NotReleased(T1_MISSING)
    # Supplementary Note 10
    out["SN10.moved"] = len(comparator_moves())
    ss = scaling_sensitivity().set_index("model")
    for m in ("deepseek", "qwen", "gpt"):
        out[f"SN10.{m}.full"] = ss.at[m, "pse_pp"]
        out[f"SN10.{m}.excl"] = ss.at[m, "pse_excluding_pp"]
    # main text, Fig. 4A: reliance lowered by social names (neutral minus social, pp)
    out["Main.naming.sonnet"] = -sonnet_k12_naming_summary()
    for m in ("gpt", "qwen", "deepseek"):
        out[f"Main.naming.{m}"] = -lt[f"sup.{m}"]["effect_pp"]
    return {k: (v if isinstance(v, NotReleased) else float(v)) for k, v in out.items()}
