"""The four-model battery and the Sonnet manipulations: cell tables, tracking slopes, judgments.

Paper §2.2, §2.4, §2.5, §4.3-§4.5; Supplementary Notes 2, 3, 8, 16 and 18 (Tables 3, 4, 5, 16,
17 and 23-28); spec PROTOCOL-statistics §8-§9.

* **Cell tables** (Tables 16, 17, 23-28): per cell, the factual ranking error, the PSE with its
  pair-bootstrap interval (5,000 draws, seed 2 as the released cell script; spec §9.2), both
  references (:mod:`analysis.references`), regret (model error minus learner error) and excess
  over each reference. Six Sonnet no-example cells are released only as condition summaries
  (``expK_gate1_summary.csv``); their rows are reproduced at summary level (``source`` column).
* **Tracking slopes** (Table 4, Fig. 2): ``PSE_model = alpha + gamma PSE_learner`` over the four
  sweep levels, with the shared-pair bootstrap, simultaneous and pooled bounds (spec §9.4);
  seed-replication fits (Table 3) and the GPT repeated measurement (Table 5) use the single-fit
  bootstrap (seed 7, spec §9.3, §9.5).
* **Accuracy versus reliance** (§2.5, Supplementary Note 8): frozen-policy control (spec §9.6),
  dimension-by-dependence reversal (§9.9), partial correlation of regret and PSE (§9.10) and the
  pair-level covariation.
* **Judgments** (Fig. 1B): :func:`verdict` reads an interval of the difference from a reference
  as excess (above zero), shortfall (below zero) or no resolved difference.

:func:`claim_values` computes every registered claim of these tables and notes.
"""
from __future__ import annotations

import functools

import numpy as np
import pandas as pd

from . import config, data
from . import estimators as E
from .cells import parse_cell
from .claims import NotReleased
from .population import examples, pairs, population, truth
from .records import NotReleased as RecordsNotReleased
from .records import load_records
from .references import cell_references

MODELS = ("sonnet", "deepseek", "qwen", "gpt")
MODEL_NAMES = {m: config.MODELS[m][0] for m in MODELS}
LEVELS = ("zero", "info_b030", "info_b045", "info_b060")  # the predictive-value sweep, paper §4.4
NAME_SETS = ("neutral", "social")
REPLICATION_SEEDS = (20001, 20002)  # Supplementary Note 2
#: condition summaries of the Sonnet no-example cells (six of them lack per-call records)
GATE1_SUMMARY = "data/summaries/gate_summaries/expK_gate1_summary.csv"
#: order in which the released frozen-policy script processed the models (spec §9.6: one shared
#: generator, models in command-line order, neutral then social); read off frozen_policy_residuals.csv
FROZEN_POLICY_ORDER = ("deepseek", "qwen", "gpt", "sonnet")
#: models pooled in the dimension-by-dependence reversal (paper §2.5; spec §9.9), in the order the
#: spec lists them (the authors' command-line order is UNRESOLVED)
INTERACTION_MODELS = ("sonnet", "qwen", "deepseek")
INTERACTION_SEED = 0
COUPLING_SEED = 101  # spec §9.10
PAIR_PERMUTATION_SEED = 202  # spec §9.10
VERDICTS = ("excess", "no resolved difference", "shortfall")


# --- judgments -------------------------------------------------------------------------------

def verdict(lo: float, hi: float) -> str:
    """Judgment from the 95% interval of a difference from a reference (paper §2.1).

    >>> verdict(2.0, 9.0), verdict(-1.0, 3.0), verdict(-8.0, -0.5)
    ('excess', 'no resolved difference', 'shortfall')
    """
    if lo > 0:
        return "excess"
    if hi < 0:
        return "shortfall"
    return "no resolved difference"


# --- cells -----------------------------------------------------------------------------------

def sweep_cell(names: str, level: str, seed: int | None = None) -> str:
    """Cell id of a sweep level (k12 LH, 80 examples)."""
    return f"k12_LH_{names}_learned_{level}" + (f"_s{seed}" if seed else "")


@functools.lru_cache(maxsize=1)
def _gate1() -> pd.DataFrame:
    return data.read_csv(GATE1_SUMMARY)


def summary_row(cell) -> dict:
    """A Sonnet LH no-example cell from the released condition summary (summary level).

    Returns ``error_pct, pse_pp, pse_ci, n_pairs, missing_rate`` as the summary states them.
    """
    c = parse_cell(cell)
    if c.has_examples or c.corner != "LH" or c.seed or c.sweep_beta:
        raise ValueError(f"no condition summary for cell {c.id}")
    g = _gate1()
    row = g[(g["k"] == c.k) & (g["informative"] == c.informative) & (g["semantic"] == c.names)].iloc[0]
    return {"error_pct": 100 * float(row["R_LLM"]), "pse_pp": float(row["PSE_pp"]),
            "pse_ci": [float(row["PSE_ci_lo"]), float(row["PSE_ci_hi"])], "n_pairs": int(row["n_pairs"]),
            "missing_rate": float(row["missing_rate"]), "n_calls": float("nan"), "error_ci": [float("nan")] * 2}


@functools.lru_cache(maxsize=None)
def sweep_pairs(model: str, names: str, seed: int | None = None) -> pd.MultiIndex:
    """Pairs whose PSE is resolved at all four sweep levels (Table 23 caption; spec §9.3)."""
    per = [E.pair_pse(load_records(model, sweep_cell(names, lv, seed))) for lv in LEVELS]
    return E.resolved_at_all_levels(per).columns


@functools.lru_cache(maxsize=None)
def _cell_result(model: str, cell_id: str, pse_seed: int) -> dict:
    c = parse_cell(cell_id)
    ref = cell_references(c)
    try:
        rec = load_records(model, c)
    except RecordsNotReleased:
        if model != "sonnet":
            raise
        est = summary_row(c)
        source = "summary"
    else:
        est = E.cell_summary(rec, c, pse_seed=pse_seed)
        source = "records"
        if c.sweep_beta is not None:
            common = sweep_pairs(model, c.names, c.seed)
            pse = E.pair_pse(rec).reindex(common).to_numpy()
            est["pse_pp"] = 100 * float(pse.mean())
            est["pse_ci"] = [100 * x for x in E.boot_ci(pse, pse_seed)]
            est["n_pairs_pse"] = int(len(common))
    out = {"model": model, "cell": c.id, "k": c.k, "structure": c.corner, "examples": c.n_examples if c.has_examples else 0,
           "names": c.names, "proxies": c.proxies, "beta": c.beta, "source": source,
           "error_pct": est["error_pct"], "pse_pp": est["pse_pp"], "pse_lo": est["pse_ci"][0], "pse_hi": est["pse_ci"][1],
           "n_pairs": est["n_pairs"], "n_pairs_pse": est.get("n_pairs_pse", est["n_pairs"]),
           "fullinfo_pse_pp": ref["fullinfo_pse_pp"], "learner_pse_pp": ref["learner_pse_pp"],
           "learner_error_pct": ref["learner_error_pct"]}
    out["regret_pp"] = out["error_pct"] - out["learner_error_pct"]
    out["excess_fullinfo_pp"] = out["pse_pp"] - out["fullinfo_pse_pp"]
    out["excess_learner_pp"] = out["pse_pp"] - out["learner_pse_pp"]
    return out


def cell_result(model: str, cell, pse_seed: int = config.CELL_PSE_SEED) -> dict:
    """One row of a cell table: error, PSE [interval], both references, regret and excesses.

    Sweep cells use the pairs resolved at all four levels for the PSE, as the Table 23 caption
    states (97 pairs for Sonnet with social names; 99 elsewhere; the zero level resolves the same
    97 on its own). A Sonnet
    no-example LH cell without per-call records comes from the condition summary (``source``).
    """
    return dict(_cell_result(model, parse_cell(cell).id, pse_seed))


def battery_cells(model: str) -> list[str]:
    """Cells of Table 23 (Sonnet, 30 LH cells) or Tables 24-26 (other models, 16 cells), table order."""
    if model == "sonnet":
        cells = [f"k{k}_LH_{n}_absent_{p}" for k in (6, 12, 18) for p in ("zero", "info") for n in NAME_SETS]
        cells += [f"k{k}_LH_{n}_learned_{p}" for k in (6, 12, 18) for p in ("zero", "info") for n in NAME_SETS]
        cells += [sweep_cell(n, lv) for lv in LEVELS[1:] for n in NAME_SETS]
        return cells
    cells = [f"k12_LH_{n}_absent_{p}" for p in ("zero", "info") for n in NAME_SETS]
    cells += ["k6_HH_neutral_learned_zero", "k6_LH_neutral_learned_zero", "k12_LH_neutral_learned_zero",
              "k12_LH_social_learned_zero", "k18_HH_neutral_learned_zero", "k18_LH_neutral_learned_zero"]
    cells += [sweep_cell(n, lv) for lv in LEVELS[1:] for n in NAME_SETS]
    return cells


def cell_table(model: str) -> pd.DataFrame:
    """Table 23 (Sonnet) or Table 24/25/26 (DeepSeek/Qwen/GPT) as a tidy DataFrame."""
    return pd.DataFrame([cell_result(model, c) for c in battery_cells(model)])


def all_cell_results() -> pd.DataFrame:
    """Every battery cell of every model (Tables 23-26) in one tidy frame."""
    return pd.concat([cell_table(m) for m in MODELS], ignore_index=True)


def dimension_table() -> pd.DataFrame:
    """Table 16: Sonnet, dimension by dependence (LH and HH; 80 and no examples), zero information."""
    rows = []
    for ex in ("learned", "absent"):
        for k, corner in ((6, "LH"), (6, "HH"), (12, "LH"), (18, "LH"), (18, "HH")):
            for n in NAME_SETS:
                rows.append(cell_result("sonnet", f"k{k}_{corner}_{n}_{ex}_zero"))
    return pd.DataFrame(rows)


def structure_cell(k: int, corner: str) -> str:
    """Cell of the example-structure design: LH pairs of ``k``, examples from ``corner``."""
    return f"k{k}_LH_neutral_learned_zero" + ("" if corner == "LH" else f"_x{corner}")


def example_structure_table() -> pd.DataFrame:
    """Table 17: Sonnet with examples from each configuration, LH pairs, 80 examples, neutral names."""
    rows = []
    for k in (6, 12, 18):
        for corner in ("LL", "LH", "HL", "HH"):
            rows.append({**cell_result("sonnet", structure_cell(k, corner)), "examples_from": corner})
    return pd.DataFrame(rows)


def example_proxy_correlation(cell) -> float:
    """Mean sample correlation between each displayed proxy and the example outcomes (Tables 27-28)."""
    ex = examples(cell)
    return float(np.mean([np.corrcoef(ex.X[:, c], ex.Y)[0, 1] for c in range(ex.L, ex.L + ex.M)]))


def example_count_table() -> pd.DataFrame:
    """Table 27: 12, 20 or 80 examples, neutral names (k12 LH zero information)."""
    rows = []
    for n in (12, 20, 80):
        cell = "k12_LH_neutral_learned_zero" + ("" if n == 80 else f"_n{n}")
        rows.append({**cell_result("sonnet", cell), "n_examples": n, "proxy_outcome_r": example_proxy_correlation(cell)})
    return pd.DataFrame(rows)


def example_correlation_table() -> pd.DataFrame:
    """Table 28: example correlation 0 / 0.4 / 0.7, both name sets (k12 LH zero information, 80 examples)."""
    rows = []
    for rho in ("00", "40", "70"):
        for n in NAME_SETS:
            cell = f"k12_LH_{n}_learned_zero_r{rho}"
            rows.append({**cell_result("sonnet", cell), "correlation": int(rho) / 100,
                         "proxy_outcome_r": example_proxy_correlation(cell)})
    return pd.DataFrame(rows)


# --- tracking slopes (Tables 3-5, Fig. 2) --------------------------------------------------

def learner_x(seed: int | None = None, decimals: int | None = None) -> np.ndarray:
    """Learner PSE (pp) at the four sweep levels; ``decimals=2`` gives the pooled script's x (spec §9.4)."""
    x = np.array([cell_references(sweep_cell("neutral", lv, seed))["learner_pse_pp"] for lv in LEVELS])
    return x if decimals is None else np.round(x, decimals)


@functools.lru_cache(maxsize=None)
def _sweep_matrix(model: str, names: str, seed: int | None, run: str | None) -> pd.DataFrame:
    per = [E.pair_pse(load_records(model, sweep_cell(names, lv, seed), run=run)) for lv in LEVELS]
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
                        rec = load_records(m, cell)
                        pse = E.pair_pse(rec).to_numpy()
                        lo, hi = (100 * b for b in E.boot_ci(pse, config.CELL_PSE_SEED))
                        c = parse_cell(cell)
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
    runs = {r: [E.pair_pse(load_records("gpt", sweep_cell("neutral", lv), run=r)) for lv in LEVELS] for r in "ab"}
    level_means = {r: [100 * float(s.mean()) for s in runs[r]] for r in "ab"}
    avg = [(runs["a"][li] + runs["b"][li]) / 2 for li in range(len(LEVELS))]
    Y = E.resolved_at_all_levels(avg)
    fit = E.tracking_fit(Y.to_numpy(), x)
    curves = E.run_choice_curves([level_means["a"], level_means["b"]], x)
    table = pd.DataFrame({"beta": [parse_cell(sweep_cell("neutral", lv)).beta for lv in LEVELS],
                          "learner_pse_pp": x, "run1_pse_pp": level_means["a"], "run2_pse_pp": level_means["b"],
                          "mean_pse_pp": Y.mean(axis=1).to_numpy()})
    key = ["arm", "i", "j", "order"]

    def agreement(a: pd.DataFrame, b: pd.DataFrame) -> float:
        m = a[a["arm"] != "factual"].merge(b[b["arm"] != "factual"], on=key)
        return 100 * float((m["picked_i_x"] == m["picked_i_y"]).mean())

    zero = sweep_cell("neutral", "zero")
    ra, rb, bat = (load_records("gpt", zero, run=r) for r in ("a", "b", None))
    calls = [len(load_records("gpt", sweep_cell("neutral", lv), run=r)) for r in "ab" for lv in LEVELS]
    return {"table": table, "fit": fit, "curves": curves, "calls": calls,
            "agree_runs": agreement(ra, rb), "agree_a_battery": agreement(ra, bat),
            "agree_b_battery": agreement(rb, bat),
            "battery_zero_pse": 100 * float(E.pair_pse(bat).mean())}


def repeated_measurement() -> dict:
    """Table 5 and Supplementary Note 3: GPT's two runs per level, the averaged fit and the 16 curves."""
    return dict(_repeated())


# --- accuracy versus reliance (§2.2, §2.5; Supplementary Note 8) -----------------------------

@functools.lru_cache(maxsize=1)
def _frozen() -> pd.DataFrame:
    parts, keys = [], []
    for m in FROZEN_POLICY_ORDER:
        for n in NAME_SETS:
            c0, c60 = sweep_cell(n, "zero"), sweep_cell(n, "info_b060")
            fp = E.frozen_policy(E.choice_probability(load_records(m, c0)), E.choice_probability(load_records(m, c60)),
                                 truth(c0), truth(c60))
            parts.append(fp)
            keys.append((m, n))
    cis = E.frozen_policy_intervals([p["residual"].to_numpy() for p in parts])
    rows = []
    for (m, n), fp, (lo, hi) in zip(keys, parts, cis):
        rows.append({"model": m, "names": n, "n_pairs": len(fp), "observed_pp": 100 * fp["observed"].mean(),
                     "mechanical_pp": 100 * fp["mechanical"].mean(), "residual_pp": 100 * fp["residual"].mean(),
                     "residual_lo": 100 * lo, "residual_hi": 100 * hi})
    return pd.DataFrame(rows)


def frozen_policy_table() -> pd.DataFrame:
    """Frozen-policy control (paper §2.2, §4.4; spec §9.6): accuracy gain, its mechanical part, residual."""
    return _frozen().copy()


DIMENSION_CELLS = ("k18_HH_neutral_learned_zero", "k6_HH_neutral_learned_zero",
                   "k18_LH_neutral_learned_zero", "k6_LH_neutral_learned_zero")


@functools.lru_cache(maxsize=1)
def _interaction() -> dict:
    vec = {m: [100 * E.pair_pse(load_records(m, c)).to_numpy() for c in DIMENSION_CELLS] for m in INTERACTION_MODELS}

    def contrast(means):
        return (means[0] - means[1]) - (means[2] - means[3])

    per_model = {m: contrast([v.mean() for v in vec[m]]) for m in INTERACTION_MODELS}
    rng = np.random.default_rng(INTERACTION_SEED)
    draws = np.empty(config.BOOTSTRAP_DRAWS)
    for b in range(config.BOOTSTRAP_DRAWS):  # draw order of spec §9.9: models, then cells, per draw
        draws[b] = np.mean([contrast([v[rng.integers(0, len(v), len(v))].mean() for v in vec[m]])
                            for m in INTERACTION_MODELS])
    lo, hi = E.percentile_ci(draws)
    return {"per_model": per_model, "pooled": float(np.mean(list(per_model.values()))), "lo": lo, "hi": hi}


def dimension_interaction() -> dict:
    """Dimension-by-dependence reversal pooled over Sonnet, Qwen and DeepSeek (paper §2.5; spec §9.9)."""
    return dict(_interaction())


def _coupling_cells(exclude: tuple[tuple[int, str], ...]):
    cells = []
    for k in (6, 12, 18):
        for corner in ("LL", "LH", "HL", "HH"):
            if (k, corner) in exclude:
                continue
            cell = structure_cell(k, corner)
            eff = E.pair_effects(load_records("sonnet", cell), truth(cell)).dropna()
            cells.append((k, corner, eff, cell_references(cell)["learner_error"]))
    return cells


@functools.lru_cache(maxsize=4)
def _coupling(exclude: tuple[tuple[int, str], ...], draws: int) -> dict:
    cells = _coupling_cells(exclude)
    ks = np.array([c[0] for c in cells], dtype=float)
    regret = np.array([100 * (c[2]["error"].mean() - c[3]) for c in cells])
    pse = np.array([100 * c[2]["pse"].mean() for c in cells])
    point = E.partial_correlation(regret, pse, ks)
    # shared pair list per k: the sorted union of the k's cells' pairs (all four corners)
    lists = {k: sorted(set().union(*[set(c[2].index) for c in _coupling_cells(()) if c[0] == k])) for k in (6, 12, 18)}
    aligned = []
    for k, corner, eff, r_ideal in cells:
        idx = pd.MultiIndex.from_tuples(lists[k], names=E.PAIR_INDEX)
        aligned.append((k, eff["error"].reindex(idx).to_numpy(), eff["pse"].reindex(idx).to_numpy(), r_ideal))
    rng = np.random.default_rng(COUPLING_SEED)
    sizes = [len(lists[k]) for k in (6, 12, 18)]
    if len(set(sizes)) == 1:  # one call draws the per-draw, per-k sequence in the loop's order
        idx_all = rng.integers(0, sizes[0], size=(draws, 3, sizes[0]))
    else:
        idx_all = [[rng.integers(0, n, n) for n in sizes] for _ in range(draws)]
        idx_all = np.array(idx_all, dtype=object)
    reg_d, pse_d = [], []
    for k, err, ps, r_ideal in aligned:
        pos = (6, 12, 18).index(k)
        idx = np.stack(idx_all[:, pos]) if idx_all.dtype == object else idx_all[:, pos, :]
        reg_d.append(100 * (np.nanmean(err[idx], axis=1) - r_ideal))
        pse_d.append(100 * np.nanmean(ps[idx], axis=1))
    reg_d, pse_d = np.array(reg_d).T, np.array(pse_d).T  # draws x cells
    boot = np.array([E.partial_correlation(reg_d[b], pse_d[b], ks) for b in range(draws)])
    lo, hi = E.percentile_ci(boot)
    table = pd.DataFrame({"k": ks.astype(int), "examples_from": [c[1] for c in cells], "regret_pp": regret,
                          "pse_pp": pse})
    return {"partial_r": point, "lo": lo, "hi": hi, "cells": table}


def coupling_partial_correlation(include_k18_hh: bool = False, draws: int = config.BOOTSTRAP_DRAWS) -> dict:
    """Partial correlation of regret and PSE across example-structure cells, controlling k (spec §9.10).

    The primary value excludes the k=18 HH cell (Supplementary Note 8). Bootstrap: seed 101; per
    draw and k (ascending), the k's shared pair list is resampled once and reused by its corners.
    """
    return dict(_coupling(() if include_k18_hh else ((18, "HH"),), draws))


@functools.lru_cache(maxsize=1)
def _pair_level() -> pd.DataFrame:
    rng = np.random.default_rng(PAIR_PERMUTATION_SEED)
    rows = []
    for k in (6, 12, 18):
        for corner in ("HH", "HL", "LH", "LL"):
            cell = structure_cell(k, corner)
            eff = E.pair_effects(load_records("sonnet", cell), truth(cell)).dropna()
            err, apse = eff["error"].to_numpy(), np.abs(eff["pse"].to_numpy())
            r = float(np.corrcoef(err, apse)[0, 1])
            pop = population(cell)
            i = eff.index.get_level_values("i").to_numpy()
            j = eff.index.get_level_values("j").to_numpy()
            gap = np.abs(pop.r[i] - pop.r[j])
            perm = np.array([np.corrcoef(err, apse[rng.permutation(len(apse))])[0, 1]
                             for _ in range(config.BOOTSTRAP_DRAWS)])
            p = (1 + np.sum(np.abs(perm) >= abs(r))) / (1 + len(perm))
            rows.append({"k": k, "examples_from": corner, "n_pairs": len(eff), "r": r, "p_perm": float(p),
                         "r_given_gap": E.partial_correlation(err, apse, gap)})
    return pd.DataFrame(rows)


def stouffer_p(p_values) -> float:
    """Combined p of independent tests by Stouffer's method (equal weights)."""
    from scipy import stats

    z = stats.norm.isf(np.asarray(p_values, dtype=float))
    return float(stats.norm.sf(z.sum() / np.sqrt(len(z))))


def pair_level_covariation() -> pd.DataFrame:
    """Within-cell correlation of pair error and |PSE| in the 12 example-structure cells (Suppl. Note 8).

    Permutation p (two-sided, ``(1 + #{|r_perm| >= |r|}) / (B + 1)``; one generator, seed 202, over
    the cells in order) and the partial correlation controlling the pair's task-risk gap ``|r_i - r_j|``.
    The paper's "controlling for pair difficulty" (+0.223) does not say which difficulty measure
    it used; the task-risk gap is the one the pairs are stratified on (paper §4.2).
    """
    return _pair_level().copy()


# --- claims ----------------------------------------------------------------------------------

_CELL_COLUMNS = {"error": "error_pct", "regret": "regret_pp", "pse": "pse_pp", "pse_lo": "pse_lo",
                 "pse_hi": "pse_hi", "learner": "learner_pse_pp", "excess": "excess_fullinfo_pp",
                 "learner_error": "learner_error_pct"}
_CAPTION_CELLS = {"k6_info": "k6_LH_neutral_learned_info", "k12_info": "k12_LH_neutral_learned_info",
                  "k18_info": "k18_LH_neutral_learned_info", "b030": sweep_cell("neutral", "info_b030"),
                  "b045": sweep_cell("neutral", "info_b045"), "b060": sweep_cell("neutral", "info_b060")}


def _cell_claims(out: dict) -> None:
    """Tables 16, 17, 23-26 and their captions (claim ids ``T<n>.<cell>.<column>``)."""
    for tn, model in ((23, "sonnet"), (24, "deepseek"), (25, "qwen"), (26, "gpt")):
        for cell in battery_cells(model):
            r = cell_result(model, cell)
            for col, key in _CELL_COLUMNS.items():
                out[f"T{tn}.{cell}.{col}"] = r[key]
        for key, cell in _CAPTION_CELLS.items():
            out[f"T{tn}.caption.fullinfo.{key}"] = cell_references(cell)["fullinfo_pse_pp"]
    for _, r in dimension_table().iterrows():
        for col, key in _CELL_COLUMNS.items():
            out[f"T16.{r['cell']}.{col}"] = r[key]
    for _, r in example_structure_table().iterrows():
        for col, key in _CELL_COLUMNS.items():
            out[f"T17.{r['cell']}.{col}"] = r[key]


def _manipulation_claims(out: dict) -> None:
    """Tables 27 and 28."""
    for _, r in example_count_table().iterrows():
        key = f"T27.n{r['n_examples']}"
        out[f"{key}.r"] = r["proxy_outcome_r"]
        for col in ("error", "learner_error", "pse", "pse_lo", "pse_hi", "learner"):
            out[f"{key}.{col}"] = r[_CELL_COLUMNS[col]]
    for _, r in example_correlation_table().iterrows():
        key = f"T28.r{round(r['correlation'] * 100):02d}.{r['names']}"
        out[f"{key}.corr"] = r["proxy_outcome_r"]
        for col in ("error", "learner_error", "pse", "pse_lo", "pse_hi", "learner"):
            out[f"{key}.{col}"] = r[_CELL_COLUMNS[col]]


def _tracking_claims(out: dict) -> None:
    """Tables 3, 4 and 5."""
    for _, r in seed_replication_fits().iterrows():
        base = f"T3.{r['model']}.s{r['seed']}.{r['names']}"
        for col in ("gamma", "gamma_lo", "gamma_hi", "alpha", "alpha_lo", "alpha_hi"):
            out[f"{base}.{col}"] = r[col]
    for _, r in tracking_table().iterrows():
        base = f"T4.{r['model']}" + ("" if r["names"] == "both" else f".{r['names']}")
        out[f"{base}.gamma"], out[f"{base}.lo"], out[f"{base}.hi"] = r["gamma"], r["lo"], r["hi"]
    rep = repeated_measurement()
    for _, r in rep["table"].iterrows():
        key = f"T5.b{round(r['beta'] * 100):03d}"
        out[f"{key}.learner"], out[f"{key}.run1"] = r["learner_pse_pp"], r["run1_pse_pp"]
        out[f"{key}.run2"], out[f"{key}.mean"] = r["run2_pse_pp"], r["mean_pse_pp"]


def _pse(model: str, cell: str) -> float:
    return cell_result(model, cell)["pse_pp"]


def _main_claims(out: dict) -> None:
    """Numbers of main-text §2.2, §2.4 and §2.5 (claim ids ``Main.s22.*``, ``Main.s24.*``, ``Main.s25.*``)."""
    others = ("deepseek", "qwen", "gpt")
    # §2.2
    for k in (6, 12, 18):
        out[f"Main.s22.sonnet_absent_k{k}"] = _pse("sonnet", f"k{k}_LH_neutral_absent_zero")
    absent = [_pse(m, "k12_LH_neutral_absent_zero") for m in others]
    out["Main.s22.others_absent_k12_min"], out["Main.s22.others_absent_k12_max"] = min(absent), max(absent)
    for m in MODELS:
        out[f"Main.s22.learned_k12.{m}"] = _pse(m, "k12_LH_neutral_learned_zero")
    top = cell_references(sweep_cell("neutral", "info_b060"))["learner_pse_pp"]
    out["Main.s22.learner_top"] = out["Main.s22.deepseek_ref_b060"] = top
    t4 = tracking_table()
    fits = t4[t4["names"] != "both"]
    out["Main.s22.slope_min"], out["Main.s22.slope_max"] = fits["gamma"].min(), fits["gamma"].max()
    for key in ("pooled3", "pooled4"):
        r = t4[t4["model"] == key].iloc[0]
        out[f"Main.s22.{key}"], out[f"Main.s22.{key}_lo"], out[f"Main.s22.{key}_hi"] = r["gamma"], r["lo"], r["hi"]
    fit = repeated_measurement()["fit"]
    out["Main.s22.gpt_repeated"] = fit["gamma"]
    out["Main.s22.gpt_repeated_lo"], out["Main.s22.gpt_repeated_hi"] = fit["gamma_ci"]
    out["Main.s22.deepseek_zero"] = _pse("deepseek", sweep_cell("neutral", "zero"))
    out["Main.s22.deepseek_b060"] = _pse("deepseek", sweep_cell("neutral", "info_b060"))
    fp = frozen_policy_table().set_index(["model", "names"])
    out["Main.s22.qwen_mechanical"] = fp.loc[("qwen", "neutral"), "mechanical_pp"]
    out["Main.s22.qwen_observed"] = fp.loc[("qwen", "neutral"), "observed_pp"]
    qs = fp.loc[("qwen", "social")]
    out["Main.s22.qwen_social_residual"] = qs["residual_pp"]
    out["Main.s22.qwen_social_residual_lo"], out["Main.s22.qwen_social_residual_hi"] = qs["residual_lo"], qs["residual_hi"]
    out["Main.s22.frozen_excl0"] = int(((fp["residual_lo"] > 0) | (fp["residual_hi"] < 0)).sum())
    # §2.4
    out["Main.s24.sonnet_info_k12_excess"] = cell_result("sonnet", "k12_LH_neutral_absent_info")["excess_fullinfo_pp"]
    exc = [cell_result(m, "k12_LH_neutral_absent_info")["excess_fullinfo_pp"] for m in others]
    out["Main.s24.others_info_k12_excess_min"], out["Main.s24.others_info_k12_excess_max"] = min(exc), max(exc)
    below = [-cell_result("sonnet", f"k{k}_LH_social_absent_info")["excess_fullinfo_pp"] for k in (6, 12, 18)]
    out["Main.s24.sonnet_social_info_below_min"], out["Main.s24.sonnet_social_info_below_max"] = min(below), max(below)
    out["Main.s24.sonnet_social_absent"] = _pse("sonnet", "k12_LH_social_absent_zero")
    out["Main.s24.sonnet_social_learned"] = _pse("sonnet", "k12_LH_social_learned_zero")
    t28 = example_correlation_table().set_index(["correlation", "names"])
    r00 = t28.loc[(0.0, "social")]
    out["Main.s24.r00_social_pse"], out["Main.s24.r00_learner"] = r00["pse_pp"], r00["learner_pse_pp"]
    out["Main.s24.r00_social_lo"], out["Main.s24.r00_social_hi"] = r00["pse_lo"], r00["pse_hi"]
    rise = {(rho, n): t28.loc[(rho, n), "pse_pp"] - t28.loc[(0.0, n), "pse_pp"] for rho in (0.4, 0.7) for n in NAME_SETS}
    lrise = {rho: t28.loc[(rho, "neutral"), "learner_pse_pp"] - t28.loc[(0.0, "neutral"), "learner_pse_pp"]
             for rho in (0.4, 0.7)}
    out["Main.s24.r40_neutral_rise"] = out["SN18.r40_neutral_rise"] = rise[(0.4, "neutral")]
    out["Main.s24.r40_learner_rise"] = out["SN18.r40_learner_rise"] = lrise[0.4]
    out["Main.s24.r70_social_rise"] = out["SN18.r70_social_rise"] = rise[(0.7, "social")]
    out["Main.s24.r70_learner_rise"] = out["SN18.r70_learner_rise"] = lrise[0.7]
    # §2.5
    t16 = dimension_table().set_index("cell")
    for k in (6, 12, 18):
        out[f"Main.s25.regret_k{k}"] = t16.loc[f"k{k}_LH_neutral_learned_zero", "regret_pp"]
    err = [t16.loc[f"k{k}_LH_neutral_absent_zero", "error_pct"] for k in (6, 12, 18)]
    out["Main.s25.absent_error_min"], out["Main.s25.absent_error_max"] = min(err), max(err)
    for k in (6, 18):
        drop = (t16.loc[f"k{k}_LH_neutral_learned_zero", "regret_pp"]
                - t16.loc[f"k{k}_HH_neutral_learned_zero", "regret_pp"])
        out[f"Main.s25.hh_regret_drop_k{k}"] = out[f"SN8.hh_regret_drop_k{k}"] = drop
        out[f"Main.s25.lh_pse_k{k}"] = out[f"SN8.pse_lh_k{k}"] = t16.loc[f"k{k}_LH_neutral_learned_zero", "pse_pp"]
        out[f"Main.s25.hh_neutral_k{k}"] = out[f"SN8.pse_hh_k{k}"] = t16.loc[f"k{k}_HH_neutral_learned_zero", "pse_pp"]
        out[f"Main.s25.hh_social_k{k}"] = t16.loc[f"k{k}_HH_social_learned_zero", "pse_pp"]
        out[f"SN8.absent_error_hh_k{k}"] = t16.loc[f"k{k}_HH_neutral_absent_zero", "error_pct"]
        out[f"SN8.absent_error_lh_k{k}"] = t16.loc[f"k{k}_LH_neutral_absent_zero", "error_pct"]
    inter = dimension_interaction()
    out["Main.s25.reversal"], out["Main.s25.reversal_lo"], out["Main.s25.reversal_hi"] = inter["pooled"], inter["lo"], inter["hi"]
    t17 = example_structure_table().set_index(["k", "examples_from"])
    for corner in ("HL", "HH"):
        tag = corner.lower()
        out[f"Main.s25.x_{tag}_error"] = out[f"SN8.x_{tag}_error"] = t17.loc[(6, corner), "error_pct"]
        out[f"Main.s25.x_{tag}_pse"] = out[f"SN8.x_{tag}_pse"] = t17.loc[(6, corner), "pse_pp"]
    for k in (6, 12, 18):
        out[f"SN8.xhh_pse_k{k}"] = t17.loc[(k, "HH"), "pse_pp"]
    out["SN8.k18hh_learner_error"] = t17.loc[(18, "HH"), "learner_error_pct"]
    span = [_pse(m, "k12_LH_social_absent_zero") for m in MODELS]
    out["Main.s25.cross_model_span"] = max(span) - min(span)
    t27 = example_count_table().set_index("n_examples")
    out["Main.s25.n12_drop"] = out["SN18.n12_drop"] = t27.loc[80, "pse_pp"] - t27.loc[12, "pse_pp"]
    out["Main.s25.n12_error_change"] = t27.loc[12, "error_pct"] - t27.loc[80, "error_pct"]
    pc = coupling_partial_correlation()
    out["Main.s25.partial"] = out["SN8.partial"] = pc["partial_r"]
    out["Main.s25.partial_lo"] = out["SN8.partial_lo"] = pc["lo"]
    out["Main.s25.partial_hi"] = out["SN8.partial_hi"] = pc["hi"]
    out["SN8.partial_all"] = coupling_partial_correlation(include_k18_hh=True)["partial_r"]
    pl = pair_level_covariation()
    out["Main.s25.pair_r"] = out["SN8.pair_r"] = out["SN8.pair_r_before"] = pl["r"].mean()
    out["SN8.pair_sig"] = int((pl["p_perm"] < 0.05).sum())
    out["SN8.pair_cells"] = len(pl)
    out["SN8.pair_r_after"] = pl["r_given_gap"].mean()


def _note_claims(out: dict) -> None:
    """Prose numbers of Supplementary Notes 2, 3 and 18."""
    rc = seed_replication_cells()
    out["SN2.cells"] = len(rc)
    out["SN2.missing"] = int(rc["n_missing"].sum())
    zero = rc[rc["beta"] == 0]
    out["SN2.zero_excl"] = int(((zero["pse_lo"] > 0) | (zero["pse_hi"] < 0)).sum())
    out["SN2.zero_min"], out["SN2.zero_max"] = zero["pse_pp"].min(), zero["pse_pp"].max()
    con = seed_replication_contrasts()
    out["SN2.social_dir"] = int((con["contrast_pp"] < 0).sum())
    out["SN2.social_least"], out["SN2.social_most"] = con["contrast_pp"].max(), con["contrast_pp"].min()
    for m in ("deepseek", "qwen"):
        out[f"SN2.main_{m}"] = _pse(m, "k12_LH_social_absent_zero") - _pse(m, "k12_LH_neutral_absent_zero")
    t3 = seed_replication_fits()
    out["SN2.curves"] = int(((t3["gamma_hi"] < 1) & (t3["gamma_lo"] < 0) & (t3["gamma_hi"] > 0)).sum())
    out["SN2.gamma_min"], out["SN2.gamma_max"] = t3["gamma"].min(), t3["gamma"].max()
    out["SN2.alpha_min"], out["SN2.alpha_max"] = t3["alpha"].min(), t3["alpha"].max()
    t4 = tracking_table().set_index(["model", "names"])
    out["SN3.simul_sonnet_neutral"] = t4.loc[("sonnet", "neutral"), "simultaneous_upper"]
    out["SN3.simul_sonnet_social"] = t4.loc[("sonnet", "social"), "simultaneous_upper"]
    out["SN3.simul_below"] = int((t4["simultaneous_upper"] < 0.5).sum())
    out["SN3.seedrep_max_upper"] = t3["gamma_hi"].max()
    rep = repeated_measurement()
    out["SN3.gpt_calls"] = min(rep["calls"])
    out["SN3.agree_runs"], out["SN3.agree_a_battery"] = rep["agree_runs"], rep["agree_a_battery"]
    out["SN3.agree_b_battery"] = rep["agree_b_battery"]
    out["SN3.gpt_zero_mean"] = rep["table"]["mean_pse_pp"].iloc[0]
    out["SN3.gpt_zero_battery"] = rep["battery_zero_pse"]
    fit = rep["fit"]
    out["SN3.t5_gamma"], (out["SN3.t5_gamma_lo"], out["SN3.t5_gamma_hi"]) = fit["gamma"], fit["gamma_ci"]
    out["SN3.t5_alpha"], (out["SN3.t5_alpha_lo"], out["SN3.t5_alpha_hi"]) = fit["alpha"], fit["alpha_ci"]
    out["SN3.curves_n"] = len(rep["curves"])
    out["SN3.curves_min"], out["SN3.curves_max"] = rep["curves"]["gamma"].min(), rep["curves"]["gamma"].max()
    t27 = example_count_table().set_index("n_examples")
    n12 = t27.loc[12]
    out["SN18.n12_corr"], out["SN18.n12_learner"] = n12["proxy_outcome_r"], n12["learner_pse_pp"]
    out["SN18.n12_excess"] = n12["excess_learner_pp"]
    out["SN18.n12_excess_lo"] = n12["pse_lo"] - n12["learner_pse_pp"]
    out["SN18.n12_excess_hi"] = n12["pse_hi"] - n12["learner_pse_pp"]
    r70 = example_correlation_table().set_index(["correlation", "names"]).loc[(0.7, "social")]
    out["SN18.r70_social_excess"] = r70["excess_learner_pp"]
    for lv in LEVELS:
        key = "b000" if lv == "zero" else lv[-4:]
        cell = sweep_cell("neutral", lv)
        out[f"SN18.sweep_corr_{key}"] = example_proxy_correlation(cell)
        out[f"SN18.sweep_pse_{key}"] = _pse("sonnet", cell)


def claim_values() -> dict:
    """Every registered claim of Tables 3-5, 16, 17, 23-28, main §2.2/§2.4/§2.5 and Notes 2, 3, 8, 16, 18.

    Values are computed from the released per-call records and our own population; the six
    Sonnet no-example cells without per-call records come from their condition summary
    (summary level, stated in each claim's note).
    """
    out: dict = {}
    _cell_claims(out)
    _manipulation_claims(out)
    _tracking_claims(out)
    _main_claims(out)
    _note_claims(out)
    registered = _registered_ids()
    return {k: (float(v) if not isinstance(v, NotReleased) else v) for k, v in out.items() if k in registered}


def _registered_ids() -> set[str]:
    from .claims import registry

    prefixes = ("T3.", "T4.", "T5.", "T16.", "T17.", "T23.", "T24.", "T25.", "T26.", "T27.", "T28.",
                "Main.s22.", "Main.s24.", "Main.s25.", "SN2.", "SN3.", "SN8.", "SN18.")
    return {c for c in registry()["claim_id"] if c.startswith(prefixes)}


# --- notebook helpers ------------------------------------------------------------------------

def reference_cells() -> list[str]:
    """Every synthetic cell the battery and the Sonnet manipulations use (incl. seed replications)."""
    cells = []
    for m in MODELS:
        cells += battery_cells(m)
    cells += list(dimension_table_cells())
    cells += [structure_cell(k, c) for k in (6, 12, 18) for c in ("LL", "LH", "HL", "HH")]
    cells += ["k12_LH_neutral_learned_zero_n12", "k12_LH_neutral_learned_zero_n20"]
    cells += [f"k12_LH_{n}_learned_zero_r{r}" for r in ("00", "40", "70") for n in NAME_SETS]
    cells += [f"k12_LH_{n}_{ex}_zero_s{s}" for s in REPLICATION_SEEDS for ex in ("absent", "learned") for n in NAME_SETS]
    cells += [sweep_cell(n, lv, s) for s in REPLICATION_SEEDS for lv in LEVELS[1:] for n in NAME_SETS]
    return list(dict.fromkeys(cells))


def dimension_table_cells() -> list[str]:
    """The cells of Table 16."""
    return [f"k{k}_{corner}_{n}_{ex}_zero" for ex in ("learned", "absent")
            for k, corner in ((6, "LH"), (6, "HH"), (12, "LH"), (18, "LH"), (18, "HH")) for n in NAME_SETS]


def sweep_references() -> pd.DataFrame:
    """Both references at the four sweep levels, main population and the two replication draws."""
    rows = []
    for seed in (None, *REPLICATION_SEEDS):
        for lv in LEVELS:
            r = cell_references(sweep_cell("neutral", lv, seed))
            rows.append({"seed": r["seed"], "beta": r["beta"], "learner_pse_pp": r["learner_pse_pp"],
                         "fullinfo_pse_pp": r["fullinfo_pse_pp"], "learner_error_pct": r["learner_error_pct"]})
    return pd.DataFrame(rows)


def excess_judgments() -> pd.DataFrame:
    """Fig. 1B data: excess over the full-information reference without examples (left) and over the
    reference learner with 80 examples, zero information, neutral names (right), with verdicts.

    Intervals are the PSE's 95% pair-bootstrap interval shifted by the (fixed) reference.
    """
    rows = []
    specs = [("sonnet", k) for k in (6, 12, 18)] + [(m, 12) for m in MODELS[1:]]
    for m, k in specs:
        label = f"{MODEL_NAMES[m]}" + (f", k={k}" if m == "sonnet" else "")
        for proxies in ("zero", "info"):
            for n in NAME_SETS:
                r = cell_result(m, f"k{k}_LH_{n}_absent_{proxies}")
                ref = r["fullinfo_pse_pp"]
                rows.append({"panel": "no examples, vs full information", "model": m, "row": label, "k": k,
                             "names": n, "proxies": proxies, "excess_pp": r["pse_pp"] - ref,
                             "lo": r["pse_lo"] - ref, "hi": r["pse_hi"] - ref, "source": r["source"]})
        r = cell_result(m, f"k{k}_LH_neutral_learned_zero")
        ref = r["learner_pse_pp"]
        rows.append({"panel": "80 examples, vs reference learner", "model": m, "row": label, "k": k,
                     "names": "neutral", "proxies": "zero", "excess_pp": r["pse_pp"] - ref,
                     "lo": r["pse_lo"] - ref, "hi": r["pse_hi"] - ref, "source": r["source"]})
    df = pd.DataFrame(rows)
    df["verdict"] = [verdict(lo, hi) for lo, hi in zip(df["lo"], df["hi"])]
    return df


def _decimals(printed: str) -> int:
    s = str(printed).split("×")[0]
    return len(s.split(".")[1]) if "." in s else 0


def paper_vs_ours(table: str, values: dict | None = None) -> pd.DataFrame:
    """The registered claims of one table (``Table 23``, ``Main``, ``SN 8`` ...) beside our values.

    Columns ``claim_id, row, column, paper, ours`` (rounded to the printed digits), ``status`` and
    ``note`` (first 60 characters). Only this module's claims are evaluated.
    """
    from .claims import registry, status_of

    values = claim_values() if values is None else values
    reg = registry()
    reg = reg[(reg["table"] == table) & reg["claim_id"].isin(values.keys())]
    rows = []
    for rec in reg.to_dict("records"):
        v = values[rec["claim_id"]]
        status, _ = status_of(rec["paper_value"], rec["tolerance"], v)
        d = _decimals(rec["paper_value"])
        sign = "+" if rec["paper_value"].lstrip()[:1] in "+-" else ""
        ours = "n/r" if isinstance(v, NotReleased) else f"{float(v):{sign}.{d}f}"
        rows.append({"claim_id": rec["claim_id"], "row": rec["row"], "column": rec["column"],
                     "paper": rec["paper_value"], "ours": ours, "status": status, "note": rec["note"][:60]})
    return pd.DataFrame(rows)


# --- figures ---------------------------------------------------------------------------------

def fig1b_excess(judgments: pd.DataFrame):
    """Fig. 1B: excess judgments from 95% intervals (filled circle excess, open circle no resolved
    difference, filled square shortfall). Left: no examples vs full information; right: 80
    examples vs the reference learner."""
    import matplotlib.pyplot as plt

    from .figures import JUDGMENT_COLORS, apply_style

    apply_style()
    panels = list(dict.fromkeys(judgments["panel"]))
    fig, axes = plt.subplots(1, len(panels), figsize=(8.5, 3.6), sharey=True,
                             gridspec_kw={"width_ratios": [2, 1]})
    rows = list(dict.fromkeys(judgments["row"]))
    ypos = {r: len(rows) - 1 - t for t, r in enumerate(rows)}
    conds = [("zero", "neutral"), ("zero", "social"), ("info", "neutral"), ("info", "social")]
    offsets = dict(zip(conds, (0.27, 0.09, -0.09, -0.27)))
    colors = dict(zip(conds, ("#34495e", "#2e86c1", "#d35400", "#a04000")))
    for ax, panel in zip(np.atleast_1d(axes), panels):
        sub = judgments[judgments["panel"] == panel]
        for r in sub.itertuples():
            off = offsets[(r.proxies, r.names)] if len(sub[sub["row"] == r.row]) > 1 else 0.0
            y = ypos[r.row] + off
            col = colors[(r.proxies, r.names)]
            ax.plot([r.lo, r.hi], [y, y], color=col, lw=1.2)
            if r.verdict == "excess":
                ax.plot(r.excess_pp, y, "o", color=col, ms=5)
            elif r.verdict == "shortfall":
                ax.plot(r.excess_pp, y, "s", color=col, ms=5)
            else:
                ax.plot(r.excess_pp, y, "o", mfc="white", mec=col, ms=5)
        ax.axvline(0, color="black", lw=0.8)
        ax.set_title(panel)
        ax.set_xlabel("PSE minus reference (pp)")
    ax0 = np.atleast_1d(axes)[0]
    ax0.set_yticks(list(ypos.values()), list(ypos.keys()))
    handles = [plt.Line2D([], [], color=colors[c], marker="o", lw=1.2, label=f"{'zero-information' if c[0] == 'zero' else 'informative'}, {c[1]}")
               for c in conds]
    handles += [plt.Line2D([], [], color="grey", marker="o", ls="", label="excess"),
                plt.Line2D([], [], color="grey", marker="o", mfc="white", ls="", label="no resolved difference"),
                plt.Line2D([], [], color="grey", marker="s", ls="", label="shortfall")]
    fig.legend(handles=handles, loc="lower center", ncol=4, bbox_to_anchor=(0.5, -0.12), fontsize=7)
    _ = JUDGMENT_COLORS  # judgments are shown by marker shape; colours code the condition
    fig.tight_layout()
    return fig


def fig2_tracking(points: pd.DataFrame):
    """Fig. 2: each model's PSE against the learner PSE over the sweep, with fitted tracking lines
    (neutral and social names) and the line of full adjustment (slope 1 through the zero level)."""
    import matplotlib.pyplot as plt

    from .figures import MODEL_COLORS, apply_style

    apply_style()
    models = list(dict.fromkeys(points["model"]))
    fig, axes = plt.subplots(1, len(models), figsize=(10, 3.0), sharey=True)
    for ax, m in zip(np.atleast_1d(axes), models):
        for n, ls, mk in (("neutral", "-", "o"), ("social", "--", "s")):
            sub = points[(points["model"] == m) & (points["names"] == n)].sort_values("learner_pse_pp")
            x = sub["learner_pse_pp"].to_numpy()
            ax.errorbar(x, sub["pse_pp"], yerr=[sub["pse_pp"] - sub["pse_lo"], sub["pse_hi"] - sub["pse_pp"]],
                        fmt=mk, color=MODEL_COLORS[m], mfc="white" if n == "social" else MODEL_COLORS[m],
                        ms=4, capsize=2, lw=0.8, label=f"{n}")
            a, g = sub["alpha"].iloc[0], sub["gamma"].iloc[0]
            xx = np.linspace(0, x.max(), 2)
            ax.plot(xx, a + g * xx, ls, color=MODEL_COLORS[m], lw=1.2)
            ax.text(0.03, 0.89 if n == "social" else 0.97, f"{n}: γ = {g:+.2f}", transform=ax.transAxes,
                    fontsize=7, ha="left", va="top")
        base = points[(points["model"] == m) & (points["names"] == "neutral")].sort_values("learner_pse_pp")
        xx = np.linspace(0, base["learner_pse_pp"].max(), 2)
        ax.plot(xx, base["alpha"].iloc[0] + xx, ":", color="black", lw=0.9, label="slope 1 (full adjustment)")
        ax.set_title(MODEL_NAMES[m])
        ax.set_xlabel("learner PSE (pp)")
    np.atleast_1d(axes)[0].set_ylabel("model PSE (pp)")
    np.atleast_1d(axes)[0].legend(loc="lower right", fontsize=6)
    fig.tight_layout()
    return fig


def fig4bc_fields(dim: pd.DataFrame):
    """Fig. 4B (factual error vs field count) and 4C (PSE vs field count by dependence), Sonnet."""
    import matplotlib.pyplot as plt

    from .figures import apply_style

    apply_style()
    fig, (ax_b, ax_c) = plt.subplots(1, 2, figsize=(8, 3.2))
    styles = {"LH": ("#2471a3", "o"), "HH": ("#c0392b", "s")}
    for corner, (col, mk) in styles.items():
        for ex, ls in ((80, "-"), (0, ":")):
            sub = dim[(dim["structure"] == corner) & (dim["examples"] == ex) & (dim["names"] == "neutral")].sort_values("k")
            ax_b.plot(sub["k"], sub["error_pct"], ls, marker=mk, color=col,
                      label=f"{corner}, {'80' if ex else 'no'} examples")
        for n, ls in (("neutral", "-"), ("social", "--")):
            sub = dim[(dim["structure"] == corner) & (dim["examples"] == 80) & (dim["names"] == n)].sort_values("k")
            ax_c.errorbar(sub["k"], sub["pse_pp"], yerr=[sub["pse_pp"] - sub["pse_lo"], sub["pse_hi"] - sub["pse_pp"]],
                          fmt=ls, marker=mk, color=col, mfc="white" if n == "social" else col, capsize=2, lw=1.1,
                          label=f"{corner}, {n}")
    ax_b.set(xlabel="displayed fields k", ylabel="factual ranking error (%)", title="B  error (neutral names)",
             xticks=[6, 12, 18])
    ax_c.axhline(0, color="black", lw=0.7)
    ax_c.set(xlabel="displayed fields k", ylabel="PSE (pp)", title="C  reliance (80 examples)", xticks=[6, 12, 18])
    for ax in (ax_b, ax_c):
        ax.legend(fontsize=7, loc="upper center", bbox_to_anchor=(0.5, -0.2), ncol=2)
    fig.tight_layout()
    return fig


def side_by_side(table: str, values: dict | None = None, exclude_rows: tuple[str, ...] = ("caption",)) -> pd.DataFrame:
    """One line per table row: ``paper | ours`` for every printed column, and the row's status.

    ``status`` is ``match`` when every column matches, else the mismatched columns are named.
    Rows in ``exclude_rows`` (the captions' reference values) are left out; see :func:`paper_vs_ours`.
    """
    pv = paper_vs_ours(table, values)
    pv = pv[~pv["row"].isin(exclude_rows)]
    if pv.empty:
        return pv
    pv["cell"] = pv["paper"] + " | " + pv["ours"]
    wide = pv.pivot_table(index="row", columns="column", values="cell", aggfunc="first", sort=False)
    status = pv.groupby("row", sort=False).apply(
        lambda g: "match" if (g["status"] == "match").all()
        else "mismatch: " + ", ".join(g.loc[g["status"] != "match", "column"]), include_groups=False)
    fullest = pv.groupby("row", sort=False)["column"].apply(list).loc[lambda c: c.map(len).idxmax()]
    wide = wide[list(dict.fromkeys(fullest + pv["column"].tolist()))]
    wide["status"] = status
    return wide.fillna("").reset_index()


def status_counts(values: dict | None = None) -> pd.DataFrame:
    """Claims of this module per table and status (match / mismatch / not_released)."""
    from .claims import registry, status_of

    values = claim_values() if values is None else values
    reg = registry().set_index("claim_id").loc[list(values)]
    st = [status_of(r["paper_value"], r["tolerance"], values[c])[0] for c, r in reg.iterrows()]
    out = pd.crosstab(reg["table"], pd.Series(st, index=reg.index, name="status"))
    for s in ("match", "mismatch", "not_released"):
        if s not in out:
            out[s] = 0
    return out[["match", "mismatch", "not_released"]]
