"""Estimates from the Sonnet records (spec §11.9): pair effects, bootstrap rows of Table 21 and
Supplementary Note 14, the near-tie analysis of Table 22, and the per-stratum estimates."""
from __future__ import annotations

import numpy as np
import pandas as pd

from .. import data
from ..estimators import boot_ci
from .design import (BOOT_DRAWS, BOOT_SEEDS, GAP_EDGES, MODEL_DIR, NEARTIE_BOOT_SEED, NEARTIE_DIFF_SEED,
                     NEARTIE_RECORDS)


def read_condition_records(stem: str) -> pd.DataFrame:
    """Released Sonnet records of one Table 21 run (4 logical rows per pair)."""
    return data.read_csv(f"{MODEL_DIR}/{stem}_records.csv")


def pair_table(records: pd.DataFrame, value: str = "picked_i") -> pd.DataFrame:
    """Per pair: ``effect`` (mean over orders of cf_a1 - cf_a0), per-order effects, ``proxy_changed``.

    A pair needs all four responses.
    """
    wide = records.pivot_table(index="pair_id", columns=["arm", "order"], values=value, aggfunc="mean")
    wide = wide.dropna()
    out = pd.DataFrame(index=wide.index)
    for o in (0, 1):
        out[f"order{o}"] = wide[("cf_a1", o)] - wide[("cf_a0", o)]
    out["effect"] = (out["order0"] + out["order1"]) / 2
    out["proxy_changed"] = records.groupby("pair_id")["proxy_changed"].max().reindex(out.index)
    return out.sort_index()


def boot_interval(values, seed: int, draws: int = BOOT_DRAWS) -> tuple[float, float]:
    """Pair-bootstrap 95 % interval of the mean (spec §11.9): ``integers(0, n, (draws, n))``, quantiles
    0.025 / 0.975 — the shared :func:`analysis.estimators.boot_ci`."""
    return boot_ci(values, seed, draws)


def _row(values, seed) -> dict:
    v = np.asarray(values, float)
    lo, hi = boot_interval(v, seed)
    return {"n": int(len(v)), "pse_pp": 100 * float(v.mean()), "lo_pp": 100 * lo, "hi_pp": 100 * hi}


def condition_summary(records: pd.DataFrame, learner: pd.Series) -> pd.DataFrame:
    """Rows of one condition (spec §11.9): all pairs, each order, changed targets, learner, model -
    learner (paired), with bootstrap seeds 7-12. Values in pp."""
    pt = pair_table(records)
    lrn = learner.reindex(pt.index).to_numpy(float)
    rows = {"all": _row(pt["effect"], BOOT_SEEDS["all"]),
            "order0": _row(pt["order0"], BOOT_SEEDS["order0"]),
            "order1": _row(pt["order1"], BOOT_SEEDS["order1"]),
            "changed": _row(pt.loc[pt["proxy_changed"] == 1, "effect"], BOOT_SEEDS["changed"]),
            "learner": _row(lrn, BOOT_SEEDS["learner"]),
            "difference": _row(pt["effect"].to_numpy() - lrn, BOOT_SEEDS["difference"])}
    return pd.DataFrame(rows).T


def neartie_records() -> pd.DataFrame:
    """Released near-tie and wide-gap control records (``picked_target`` renamed ``picked_i``)."""
    return data.read_csv(NEARTIE_RECORDS).rename(columns={"picked_target": "picked_i"})


def neartie_pair_table(records: pd.DataFrame) -> pd.DataFrame:
    """Per pair: mean valid answer per arm (a pair needs >= 1 valid answer per arm), effect, changed."""
    v = records[records["picked_i"].notna()]
    m = v.pivot_table(index="pair_id", columns="arm", values="picked_i", aggfunc="mean").dropna()
    out = pd.DataFrame({"effect": m["cf_a1"] - m["cf_a0"]})
    out["proxy_changed"] = records.groupby("pair_id")["proxy_changed"].max().reindex(out.index)
    return out.sort_index()


def neartie_summary(records: pd.DataFrame, learners: dict[str, pd.Series]) -> pd.DataFrame:
    """Table 22: near tie and control (all, changed, learner, model - learner) and near tie minus
    control (independent resampling of the two groups, ``default_rng(2)``). Values in pp."""
    rows, eff = {}, {}
    for sample in ("neartie", "wide"):
        pt = neartie_pair_table(records[records["sample"] == sample])
        eff[sample] = pt["effect"].to_numpy()
        lrn = learners[sample].reindex(pt.index).to_numpy(float)
        rows[(sample, "all")] = _row(pt["effect"], NEARTIE_BOOT_SEED)
        rows[(sample, "changed")] = _row(pt.loc[pt["proxy_changed"] == 1, "effect"], NEARTIE_BOOT_SEED)
        rows[(sample, "learner")] = _row(lrn, NEARTIE_BOOT_SEED)
        rows[(sample, "difference")] = _row(pt["effect"].to_numpy() - lrn, NEARTIE_BOOT_SEED)
    a, b = eff["neartie"], eff["wide"]
    rng = np.random.default_rng(NEARTIE_DIFF_SEED)
    highs = np.concatenate([np.full(len(a), len(a)), np.full(len(b), len(b))])
    idx = rng.integers(0, highs, size=(BOOT_DRAWS, len(highs)))  # per draw: group 1 then group 2
    d = a[idx[:, :len(a)]].mean(1) - b[idx[:, len(a):]].mean(1)
    lo, hi = np.quantile(d, [0.025, 0.975])
    rows[("difference", "all")] = {"n": len(a) + len(b), "pse_pp": 100 * (a.mean() - b.mean()),
                                   "lo_pp": 100 * lo, "hi_pp": 100 * hi}
    return pd.DataFrame(rows).T


def stratum_estimates(records: pd.DataFrame, pairs: pd.DataFrame) -> pd.DataFrame:
    """PSE (pp) per risk-gap stratum of the gap-stratified sample (smallest gap first)."""
    pt = pair_table(records).join(pairs.set_index("pair_id")["stratum"])
    lo = np.array(GAP_EDGES[:-1])
    g = pt.groupby("stratum")["effect"]
    return pd.DataFrame({"gap_from": lo[g.mean().index], "gap_to": np.array(GAP_EDGES[1:])[g.mean().index],
                         "pairs": g.size(), "pse_pp": 100 * g.mean()})
