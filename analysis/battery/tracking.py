"""Tracking slopes (Tables 3-5, Fig. 2; paper §2.2, §4.4; spec PROTOCOL-statistics §9.3-§9.5).

``PSE_model = alpha + gamma PSE_learner`` over the four sweep levels, with the shared-pair bootstrap,
simultaneous and pooled bounds (spec §9.4); seed-replication fits (Table 3) and the GPT repeated
measurement (Table 5) use the single-fit bootstrap (seed 7, spec §9.3, §9.5).
"""
from __future__ import annotations

import functools

import numpy as np
import pandas as pd

from .. import config
from .. import estimators as E
from ..cells import parse_cell
from ..records import load_records
from ..references import cell_references
from .cells import LEVELS, MODELS, NAME_SETS, REPLICATION_SEEDS, sweep_cell, sweep_level_cell


def learner_x(seed: int | None = None, decimals: int | None = None) -> np.ndarray:
    """Learner PSE (pp) at the four sweep levels; ``decimals=2`` gives the pooled script's x (spec §9.4)."""
    x = np.array([cell_references(sweep_level_cell("neutral", lv, seed))["learner_pse_pp"] for lv in LEVELS])
    return x if decimals is None else np.round(x, decimals)


@functools.lru_cache(maxsize=None)
def _sweep_matrix(model: str, names: str, seed: int | None, run: str | None) -> pd.DataFrame:
    per = [E.pair_pse(load_records(model, sweep_level_cell(names, lv, seed), run=run)) for lv in LEVELS]
    return E.resolved_at_all_levels(per)


def sweep_matrix(model: str, names: str, seed: int | None = None, run: str | None = None) -> pd.DataFrame:
    """Per-pair PSE (pp), levels x pairs resolved at all four levels (cf arms only; spec §9.3)."""
    return _sweep_matrix(model, names, seed, run).copy()


def single_fit(model: str, names: str, seed: int | None = None) -> dict:
    """One tracking fit with the single-fit bootstrap (seed 7, exact learner x; spec §9.3)."""
    return E.tracking_fit(sweep_matrix(model, names, seed).to_numpy(), learner_x(seed))


@functools.lru_cache(maxsize=1)
def _pooled() -> dict:
    fits = {f"{m}.{n}": _sweep_matrix(m, n, None, None) for m in MODELS for n in NAME_SETS}
    pools = {"pooled3": [f for f in fits if not f.startswith("gpt")], "pooled4": list(fits)}
    return E.pooled_tracking(fits, learner_x(decimals=2), pools=pools)


def tracking_table() -> pd.DataFrame:
    """Table 4: per-fit slopes with shared-pair 95% intervals and simultaneous bounds, then pooled rows."""
    res = _pooled()
    fits = res["fits"].copy()
    fits[["model", "names"]] = fits["fit"].str.split(".", expand=True)
    pooled = res["pooled"].rename(columns={"lo90": "lo", "hi90": "hi"})
    pooled["model"], pooled["names"] = pooled["fit"], "both"
    cols = ["model", "names", "gamma", "lo", "hi", "simultaneous_upper", "n_pairs"]
    return pd.concat([fits[cols], pooled[["model", "names", "gamma", "lo", "hi"]]], ignore_index=True)


def sweep_points(seed: int | None = None) -> pd.DataFrame:
    """Fig. 2 data: per model, name set and level the learner x and the model PSE with a 95% interval."""
    x = learner_x(seed)
    rows = []
    for m in MODELS:
        for n in NAME_SETS:
            Y = sweep_matrix(m, n, seed)
            fit = E.tracking_fit(Y.to_numpy(), x)
            for li, lv in enumerate(LEVELS):
                v = Y.iloc[li].to_numpy() / 100
                lo, hi = (100 * b for b in E.boot_ci(v, config.CELL_PSE_SEED))
                rows.append({"model": m, "names": n, "level": lv, "learner_pse_pp": x[li],
                             "pse_pp": float(Y.iloc[li].mean()), "pse_lo": lo, "pse_hi": hi,
                             "alpha": fit["alpha"], "gamma": fit["gamma"], "n_pairs": Y.shape[1]})
    return pd.DataFrame(rows)


def seed_replication_fits() -> pd.DataFrame:
    """Table 3: tracking fits of DeepSeek and Qwen on the two replication draws (learner per seed)."""
    rows = []
    for m in ("deepseek", "qwen"):
        for s in REPLICATION_SEEDS:
            for n in NAME_SETS:
                f = single_fit(m, n, s)
                rows.append({"model": m, "seed": s, "names": n, "gamma": f["gamma"], "gamma_lo": f["gamma_ci"][0],
                             "gamma_hi": f["gamma_ci"][1], "alpha": f["alpha"], "alpha_lo": f["alpha_ci"][0],
                             "alpha_hi": f["alpha_ci"][1], "n_pairs": f["n_pairs"]})
    return pd.DataFrame(rows)


def seed_replication_cells() -> pd.DataFrame:
    """The 40 seed-replication cells (Supplementary Note 2): PSE [interval, seed 2], calls, missing."""
    rows = []
    for m in ("deepseek", "qwen"):
        for s in REPLICATION_SEEDS:
            for ex in ("absent", "learned"):
                for n in NAME_SETS:
                    cells = [f"k12_LH_{n}_{ex}_zero_s{s}"]
                    if ex == "learned":
                        cells += [sweep_cell(n, lv, s) for lv in LEVELS[1:]]
                    for cell in cells:
                        c = parse_cell(cell)
                        rec = load_records(m, c)
                        pse = E.pair_pse(rec).to_numpy()
                        lo, hi = (100 * b for b in E.boot_ci(pse, config.CELL_PSE_SEED))
                        rows.append({"model": m, "seed": s, "cell": cell, "examples": ex, "names": n,
                                     "beta": c.beta, "pse_pp": 100 * pse.mean(), "pse_lo": lo, "pse_hi": hi,
                                     "n_calls": len(rec), "n_missing": int(rec["picked_i"].isna().sum())})
    return pd.DataFrame(rows)


def seed_replication_contrasts() -> pd.DataFrame:
    """Social minus neutral PSE without examples per model and seed (Supplementary Note 2)."""
    cells = seed_replication_cells()
    z = cells[(cells["examples"] == "absent")]
    piv = z.pivot_table(index=["model", "seed"], columns="names", values="pse_pp")
    return (piv["social"] - piv["neutral"]).rename("contrast_pp").reset_index()


@functools.lru_cache(maxsize=1)
def _repeated() -> dict:
    x = learner_x()
    runs = {r: [E.pair_pse(load_records("gpt", sweep_level_cell("neutral", lv), run=r)) for lv in LEVELS] for r in "ab"}
    level_means = {r: [100 * float(s.mean()) for s in runs[r]] for r in "ab"}
    avg = [(runs["a"][li] + runs["b"][li]) / 2 for li in range(len(LEVELS))]
    Y = E.resolved_at_all_levels(avg)
    fit = E.tracking_fit(Y.to_numpy(), x)
    curves = E.run_choice_curves([level_means["a"], level_means["b"]], x)
    table = pd.DataFrame({"beta": list(config.SWEEP_BETAS),
                          "learner_pse_pp": x, "run1_pse_pp": level_means["a"], "run2_pse_pp": level_means["b"],
                          "mean_pse_pp": Y.mean(axis=1).to_numpy()})
    key = ["arm", "i", "j", "order"]

    def agreement(a: pd.DataFrame, b: pd.DataFrame) -> float:
        m = a[a["arm"] != "factual"].merge(b[b["arm"] != "factual"], on=key)
        return 100 * float((m["picked_i_x"] == m["picked_i_y"]).mean())

    zero = sweep_level_cell("neutral", "zero")
    ra, rb, bat = (load_records("gpt", zero, run=r) for r in ("a", "b", None))
    calls = [len(load_records("gpt", sweep_level_cell("neutral", lv), run=r)) for r in "ab" for lv in LEVELS]
    return {"table": table, "fit": fit, "curves": curves, "calls": calls,
            "agree_runs": agreement(ra, rb), "agree_a_battery": agreement(ra, bat),
            "agree_b_battery": agreement(rb, bat),
            "battery_zero_pse": 100 * float(E.pair_pse(bat).mean())}


def repeated_measurement() -> dict:
    """Table 5 and Supplementary Note 3: GPT's two runs per level, the averaged fit and the 16 curves."""
    return dict(_repeated())
