"""Order robustness (Tables 9, 11-13, 20; Supplementary Notes 6 and 13; spec PROTOCOL-statistics §9.7).

Display-position rates, the order-consistent subpopulation, the linear probability model with a
position term and order-inconsistency rates.
"""
from __future__ import annotations

import functools

import numpy as np
import pandas as pd

from .. import config, data
from ..cells import parse_cell
from ..estimators import boot_ci, pair_pse, percentile_ci, valid
from ..records import load_records, released_cells
from ..tables import portable_frame

#: UNRESOLVED in the spec (§9.7): seeds of the order-consistent intervals. Decision: one fresh
#: ``default_rng(0)`` per cell or fit and 2,000 resamples (the count printed for Table 13), for
#: Tables 11, 12 and 13 alike. Table 13 reproduces exactly with it; see the notebook for 11-12.
ORDER_CI_SEED = 0
ORDER_CI_DRAWS = 2000
POSITION_MIN_PSE_PP = 5.0  # Table 9 "sign changes": cells with |PSE| > 5 pp
MODELS = tuple(config.MODELS)  # the four models of the battery (Supplementary Note 15)
TABLE9_MODELS = ("deepseek", "qwen", "gpt", "sonnet")  # row order of Tables 9 and 20
DOSE_LEVELS = ("b030", "b045", "b060")  # Table 20 "dose-response cells": the informative sweep levels


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
    return [c for c in released_cells(model) if parse_cell(c).seed is None]


@functools.lru_cache(maxsize=1)
def order_cells() -> pd.DataFrame:
    """:func:`order_robustness` for every released battery cell of every model (tidy)."""
    rows = [{"model": m, "cell": c, **order_robustness(load_records(m, parse_cell(c)))}
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
    # max |LPM - full| is exactly 0 where the LPM is saturated: float noise (~1e-14) written as 0 (config.ZERO_SNAP)
    return portable_frame(t.reindex(TABLE9_MODELS))


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
        rec = load_records(m, parse_cell(f"k{k}_LH_neutral_absent_zero"))
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
        neu = load_records(m, parse_cell(f"k{k}_LH_neutral_absent_zero"))
        soc = load_records(m, parse_cell(f"k{k}_LH_social_absent_zero"))
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
            recs = [load_records(m, parse_cell(c)) for c in sweep_cells(names)]
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
    # a slope of equal level means is exactly 0: float noise (~1e-16) written as 0 (config.ZERO_SNAP)
    return portable_frame(pd.DataFrame(rows))
