"""Estimation and judgment of the audit's conditions: the audited model and the paper's four models alike.

Paper §2.1-§2.5, §4.3-§4.6; spec PROTOCOL-statistics §8-§9.4.

* The cell analysis of spec §9.1-9.2 (:func:`condition_row`), judged against both references
  with :func:`analysis.judgments.judge`, the one judgment function that the paper's cell tables
  also call. With examples the primary reference is the reference learner fitted to the same
  examples; without examples the full-information reference (paper §4.2). The reference is a
  fixed benchmark on the same pairs, so the interval of the difference is the PSE interval
  shifted by the reference (as the paper's Fig. 1B and Tables 23-26).
* The tracking slope of §9.3-9.4, the ordered - arbitrary contrast with a shared pair draw
  (PROTOCOL-representation §10.5), the naming contrast and the field-count contrast.
* :func:`analyse` applies them to one model; :func:`reference_models` to the paper's four models
  from the released records (the card's reference rows).

Seeds: cell PSE seed 2 and error seed 1 (spec §9.2); per-fit tracking slope seed 7 (spec §9.3,
exact learner x); the slope pooled over the two name sets uses the shared-pair bootstrap of
spec §9.4 (seed 0); paired contrasts (display, naming, structure) use a generator seeded 0
afresh (PROTOCOL-representation §10.5.2).
"""
from __future__ import annotations

import functools
import os
from pathlib import Path
from typing import Callable

import numpy as np
import pandas as pd

from .. import collection as C
from .. import config, records, representation
from .. import estimators as E
from ..battery import learner_x, summary_row
from ..cells import Cell
from ..judgments import PAPER_METHOD, judge, judge_joint, reference_pair_draws, reference_pair_point
from ..population import pairs as cell_pairs
from ..population import truth
from ..records import NotReleased, normalise
from ..references import cell_references, indicator_learner_pse, reference_pairs
from ..representation import excludes_margin, interval, paired
from .batteries import NAME_SETS, PAPER_MODELS, REP_CELL, STRUCTURE_CELLS, SWEEP_LEVELS, Condition, sweep_cell
from .responsiveness import responsiveness
from .wording import _ci, _isnan, _pp, display_statement, naming_statement, slope_statement

CONTRAST_SEED = 0  # paired contrasts, generator seeded afresh (PROTOCOL-representation §10.5.2)



def _interval(values, draws: int, seed: int = CONTRAST_SEED) -> dict:
    """Mean and 95% pair-bootstrap interval (pp) of per-pair values in [-1, 1]; generator seeded afresh."""
    return interval(values, draws, seed)


def subset_references(cell: Cell, n_pairs: int) -> dict:
    """Both references on the first ``n_pairs`` pairs of a cell (as :func:`analysis.references.cell_references`)."""
    rp = reference_pairs(cell).iloc[:n_pairs]
    out = {"fullinfo_pse_pp": 100 * float((rp["fullinfo_a1"] - rp["fullinfo_a0"]).mean()),
           "learner_pse_pp": float("nan"), "learner_error_pct": float("nan")}
    if "learner_a1" in rp:
        out["learner_pse_pp"] = 100 * float((rp["learner_a1"] - rp["learner_a0"]).mean())
        out["learner_error_pct"] = 100 * float((rp["learner_factual"] != rp["truth"]).mean())
    return out


def condition_references(cond: Condition) -> dict:
    """``fullinfo_pse_pp`` and ``learner_pse_pp`` (NaN without examples) of a condition.

    Category displays use the category-indicator learner (paper §4.3: -5.05 pp for both renderings).
    A condition on the first ``n_pairs`` pairs (the smoke battery) gets the references of those
    pairs, so that the model and the references are compared on the same replacements.
    """
    ref = cell_references(cond.parsed) if cond.n_pairs is None else subset_references(cond.parsed, cond.n_pairs)
    out = {"fullinfo_pse_pp": float(ref["fullinfo_pse_pp"]), "learner_pse_pp": float(ref["learner_pse_pp"]),
           "learner_error_pct": float(ref["learner_error_pct"]), "learner": "Bayesian linear regression"}
    if cond.display != "numeric":
        out.update(learner_pse_pp=float(indicator_learner_pse(cond.parsed)), learner_error_pct=float("nan"),
                   learner="category-indicator Bayesian linear regression")
    return out


def _verdict(pse_pp, pse_ci, reference_pp, reference: str) -> str | None:
    """The verdict of :func:`analysis.judgments.judge`, None where there is nothing to judge."""
    return judge(pse_pp, pse_ci, reference_pp, reference).verdict or None


def judged(row: dict, cond: Condition) -> dict:
    """Add differences from both references and their verdicts to a condition row (:func:`analysis.judgments.judge`)."""
    ci = row["pse_ci"]
    row["reference"] = cond.primary
    row["verdict_fullinfo"] = _verdict(row["pse_pp"], ci, row["fullinfo_pse_pp"], "fullinfo")
    row["verdict_learner"] = _verdict(row["pse_pp"], ci, row["learner_pse_pp"], "learner")
    ref = row["learner_pse_pp"] if cond.primary == "learner" else row["fullinfo_pse_pp"]
    j = judge(row["pse_pp"], ci, ref, cond.primary)
    row["difference_pp"] = j.difference_pp
    row["difference_ci"] = list(j.ci)
    row["verdict"] = row[f"verdict_{cond.primary}"]
    return row


def condition_row(cond: Condition, rec: pd.DataFrame, draws: int = config.BOOTSTRAP_DRAWS,
                  common: pd.Index | None = None) -> dict:
    """PSE [95% CI], both references, verdicts and ranking error of one condition's records.

    Numeric cells: cell analysis of spec §9.1-9.2 (pairs resolved in the factual and both
    counterfactual arms; PSE seed 2, error seed 1). Sweep levels 0.30-0.60 use the pairs resolved
    at all four levels (``common``; Table 23 caption). Category displays have no factual arm:
    PSE over the pairs resolved in both counterfactual arms, seed 0 (PROTOCOL-representation
    §10.5), and no error.
    """
    c = cond.parsed
    refs = condition_references(cond)
    row = {"key": cond.key, "cell": cond.cell, "display": cond.display, "group": cond.group, "label": cond.label,
           "short": cond.short,
           "k": c.k, "corner": c.corner, "names": c.names, "examples": c.n_examples if c.has_examples else 0,
           "beta": c.beta, "source": "records", **{k: refs[k] for k in ("fullinfo_pse_pp", "learner_pse_pp")},
           "learner": refs["learner"] if c.has_examples else None,
           "n_calls": int(len(rec)), "n_missing": int(rec["picked_i"].isna().sum())}
    if cond.display == "numeric":
        est = E.cell_estimates(rec, truth(c), draws=draws)
        per_pair = E.pair_effects(rec, truth(c)).dropna()["pse"]
        if c.sweep_beta is not None and common is not None:
            per_pair = E.pair_pse(rec).reindex(common)
            pse = per_pair.to_numpy()
            est["pse_pp"] = 100 * float(pse.mean())
            est["pse_ci"] = [100 * x for x in E.boot_ci(pse, config.CELL_PSE_SEED, draws)]
            est["n_pairs"] = int(len(common))
        row.update(pse_pp=est["pse_pp"], pse_ci=list(est["pse_ci"]), n_pairs=est["n_pairs"],
                   error_pct=est["error_pct"], error_ci=list(est["error_ci"]))
    else:
        per_pair = E.pair_pse(rec)
        iv = _interval(per_pair, draws)
        row.update(pse_pp=iv["effect_pp"], pse_ci=[iv["lo_pp"], iv["hi_pp"]], n_pairs=iv["n_pairs"],
                   error_pct=float("nan"), error_ci=[float("nan")] * 2)
    row["learner_error_pct"] = refs["learner_error_pct"] if c.has_examples else float("nan")
    row.update(sampling_summary(rec))  # --samples R / --answer-format logprobs (issue 20)
    row["accuracy_pct"] = 100 - row["error_pct"]
    row["excess_error_pp"] = row["error_pct"] - row["learner_error_pct"]
    return joint_judged(judged(row, cond), cond, per_pair, draws)


def joint_judged(row: dict, cond: Condition, per_pair: pd.Series | None, draws: int = config.BOOTSTRAP_DRAWS) -> dict:
    """Add the joint judgment (beyond the paper; :func:`analysis.judgments.judge_joint`) to a judged row.

    ``per_pair`` is the model's per-pair PSE (in [-1, 1], indexed by ``(i, j)``) on the pairs the
    row's PSE uses; the reference is taken on the same pairs. Adds ``judgment`` (the four-way
    verdict: excess, shortfall, equivalent within ±X pp, inconclusive, or too few pairs to judge),
    ``joint_difference_pp``, ``joint_ci``, ``p_value``, ``p_tost``, ``margin_pp``, ``judgment_method``;
    ``verdict_paper`` repeats the paper's verdict (``verdict``) under its own name. None where
    there are no per-pair records (a condition summary) or no reference.
    """
    row["verdict_paper"] = row.get("verdict")
    row["verdict_paper_method"] = PAPER_METHOD
    empty = {"judgment": None, "joint_difference_pp": float("nan"), "joint_ci": [float("nan")] * 2,
             "p_value": float("nan"), "p_tost": float("nan"), "margin_pp": config.EQUIVALENCE_MARGIN_PP,
             "judgment_method": None}
    row.update(empty)
    if per_pair is None or row.get("verdict") is None:
        return row
    pos = pd.Series(np.arange(len(cell_pairs(cond.parsed))),
                    index=pd.MultiIndex.from_frame(cell_pairs(cond.parsed)[["i", "j"]]))
    per_pair = per_pair.dropna()
    at = pos.reindex(per_pair.index).to_numpy()
    point = reference_pair_point(cond.parsed, cond.display)
    ref = reference_pair_draws(cond.parsed, cond.display, draws)
    j = judge_joint(per_pair.to_numpy(), ref[:, at], point[at], cond.primary, draws=draws)
    row.update(judgment=j.verdict, joint_difference_pp=j.difference_pp, joint_ci=list(j.ci), p_value=j.p_value,
               p_tost=j.p_tost, margin_pp=j.margin_pp, judgment_method=j.method, joint_n_pairs=j.n_pairs)
    return row



def summary_condition_row(cond: Condition, model: str) -> dict:
    """A Sonnet no-example cell released only as a condition summary (``battery.summary_row``)."""
    c = cond.parsed
    s = summary_row(c)
    refs = condition_references(cond)
    row = {"key": cond.key, "cell": cond.cell, "display": cond.display, "group": cond.group, "label": cond.label,
           "short": cond.short,
           "k": c.k, "corner": c.corner, "names": c.names, "examples": 0, "beta": c.beta, "source": "summary",
           "fullinfo_pse_pp": refs["fullinfo_pse_pp"], "learner_pse_pp": float("nan"), "learner": None,
           "n_calls": None, "n_missing": None, "pse_pp": s["pse_pp"], "pse_ci": list(s["pse_ci"]),
           "n_pairs": s["n_pairs"], "error_pct": s["error_pct"], "error_ci": [float("nan")] * 2,
           "learner_error_pct": float("nan")}
    row["accuracy_pct"] = 100 - row["error_pct"]
    row["excess_error_pp"] = float("nan")
    return joint_judged(judged(row, cond), cond, None)


def tracking_section(sweep: dict[str, pd.DataFrame], draws: int = config.BOOTSTRAP_DRAWS) -> dict:
    """Tracking slope ``PSE_model = alpha + gamma PSE_learner`` per name set and pooled (spec §9.3-9.4).

    ``sweep[names]`` is the levels x pairs matrix (pp) of pairs resolved at all four levels.
    Per fit: single-fit bootstrap (seed 7, exact learner x). Both name sets: unweighted mean of the
    two fits with the shared-pair bootstrap (seed 0); its one-sided 95% bounds are the ends of the
    90% interval (paper §4.4).
    """
    x = learner_x()
    out: dict = {"learner_pse_pp": [float(v) for v in x], "levels": [float(b) for b in config.SWEEP_BETAS],
                 "fits": {}, "pooled": None}
    for n, Y in sweep.items():
        f = E.tracking_fit(Y.to_numpy(), x, draws=draws)
        pts = []
        for li in range(len(SWEEP_LEVELS)):
            v = Y.iloc[li].to_numpy() / 100
            lo, hi = (100 * b for b in E.boot_ci(v, config.CELL_PSE_SEED, draws))
            pts.append({"pse_pp": 100 * float(v.mean()), "pse_ci": [lo, hi]})
        fit = {"names": n, "gamma": f["gamma"], "gamma_ci": f["gamma_ci"], "alpha": f["alpha"],
               "alpha_ci": f["alpha_ci"], "n_pairs": f["n_pairs"], "points": pts}
        fit["statement"] = slope_statement(fit["gamma"], fit["gamma_ci"], f"With {n} names")
        out["fits"][n] = fit
    if len(sweep) == 2:
        res = E.pooled_tracking(dict(sweep), x, draws=draws, pools={"both": list(sweep)})
        p = res["pooled"].iloc[0]
        out["pooled"] = {"gamma": float(p["gamma"]), "gamma_ci": [float(p["lo95"]), float(p["hi95"])],
                         "one_sided_bounds": [float(p["lo90"]), float(p["hi90"])],
                         "within_margin": bool(-config.EQUIVALENCE_MARGIN < p["lo90"] and p["hi90"] < config.EQUIVALENCE_MARGIN)}
    return out


#: the representation control's ordered-label condition, whose references the display section reports (made once)
_REP_ORDERED = Condition(REP_CELL, "ordered")


def display_section(recs: dict[str, pd.DataFrame], draws: int = config.BOOTSTRAP_DRAWS) -> dict | None:
    """Ordered and arbitrary labels, their paired difference and the 5-pp margin (paper §2.3, §4.6).

    The difference bootstraps per-pair (ordered - arbitrary) values on shared pairs (same pair
    draw for both renderings), seed 0. The pre-specified one-sided criterion applies to a
    rendering's effect: an upper bound below 5 pp excludes an average effect of 5 pp or more.
    """
    ko, ka = f"{REP_CELL}:ordered", f"{REP_CELL}:arbitrary"
    if ko not in recs or ka not in recs:
        return None
    per = {"ordered": E.pair_pse(recs[ko]), "arbitrary": E.pair_pse(recs[ka])}
    if REP_CELL in recs:
        per["numeric"] = E.pair_pse(recs[REP_CELL])
    ivs = {k: _interval(v, draws) for k, v in per.items()}
    d = _interval(paired(per["ordered"], per["arbitrary"]), draws)
    margin = config.REPRESENTATION_MARGIN_PP
    ref = condition_references(_REP_ORDERED)
    out = {"margin_pp": margin, "fullinfo_pse_pp": ref["fullinfo_pse_pp"], "learner_pse_pp": ref["learner_pse_pp"]}
    for k, iv in ivs.items():
        out[f"{k}_pp"] = iv["effect_pp"]
        out[f"{k}_ci"] = [iv["lo_pp"], iv["hi_pp"]]
        out[f"{k}_excludes_margin"] = excludes_margin(iv["hi_pp"], margin)
    out.update(difference_pp=d["effect_pp"], difference_ci=[d["lo_pp"], d["hi_pp"]], n_pairs=d["n_pairs"])
    lo, hi = out["difference_ci"]
    out["difference"] = ("ordered above arbitrary" if lo > 0 else "arbitrary above ordered" if hi < 0
                         else "no resolved difference")
    out["difference_vs_margin"] = ("above the margin" if lo > margin else "excludes a difference of the margin or more"
                                   if hi < margin else "interval reaches across the margin")
    out["statement"] = display_statement(out)
    return out


def naming_section(recs: dict[str, pd.DataFrame], rows: dict[str, dict], draws: int = config.BOOTSTRAP_DRAWS) -> dict:
    """Social minus neutral names, without and with examples (paper §2.4; zero information, k = 12 LH).

    Both name sets use the same pairs, so the contrast bootstraps per-pair differences (seed 0).
    A cell released only as a summary gives the point difference without an interval.
    """
    out = {}
    for ex in ("absent", "learned"):
        kn, ks = f"k12_LH_neutral_{ex}_zero", f"k12_LH_social_{ex}_zero"
        if kn in recs and ks in recs:
            pn, ps = E.pair_pse(recs[kn]), E.pair_pse(recs[ks])
            d = _interval(paired(ps, pn), draws)
            sec = {"neutral_pp": 100 * float(pn.mean()), "social_pp": 100 * float(ps.mean()),
                   "difference_pp": d["effect_pp"], "difference_ci": [d["lo_pp"], d["hi_pp"]], "n_pairs": d["n_pairs"],
                   "source": "records"}
        elif kn in rows and ks in rows and not _isnan(rows[kn].get("pse_pp")) and not _isnan(rows[ks].get("pse_pp")):
            sec = {"neutral_pp": rows[kn]["pse_pp"], "social_pp": rows[ks]["pse_pp"],
                   "difference_pp": rows[ks]["pse_pp"] - rows[kn]["pse_pp"], "difference_ci": None,
                   "n_pairs": None, "source": "summary (no per-call records of one cell: no interval)"}
        else:
            continue
        ci = sec["difference_ci"]
        sec["verdict"] = (None if ci is None else "social names lower reliance" if ci[1] < 0
                          else "social names raise reliance" if ci[0] > 0 else "no resolved difference")
        sec["statement"] = naming_statement(sec, ex)
        out[ex] = sec
    return out


def structure_section(recs: dict[str, pd.DataFrame], rows: dict[str, dict],
                      draws: int = config.BOOTSTRAP_DRAWS) -> dict | None:
    """Field count by dependence (paper §2.5): (k18 HH - k6 HH) - (k18 LH - k6 LH) with its interval.

    The four cells use separate pair samples, so each draw resamples each cell's pairs
    independently (one generator, seed 0, cells in :data:`STRUCTURE_CELLS` order). Descriptive.
    """
    if not all(c in recs for c in STRUCTURE_CELLS):
        return None
    rng = np.random.default_rng(CONTRAST_SEED)
    vals = [100 * E.pair_pse(recs[c]).to_numpy() for c in STRUCTURE_CELLS]
    boots = [v[rng.integers(0, len(v), size=(draws, len(v)))].mean(axis=1) for v in vals]
    means = [v.mean() for v in vals]

    def contrast(m):
        return (m[0] - m[1]) - (m[2] - m[3])

    lo, hi = E.percentile_ci(contrast(boots))
    out = {"cells": list(STRUCTURE_CELLS), "reversal_pp": float(contrast(means)), "reversal_ci": [lo, hi],
           "lh_change_pp": float(means[2] - means[3]), "hh_change_pp": float(means[0] - means[1])}
    out["excess_error_pp"] = {c: rows[c]["excess_error_pp"] for c in ("k6_LH_neutral_learned_zero", REP_CELL,
                                                                        "k18_LH_neutral_learned_zero") if c in rows}
    out["statement"] = (f"From 6 to 18 fields, reliance changed by {_pp(out['lh_change_pp'])} pp with distinct task "
                        f"fields (LH) and by {_pp(out['hh_change_pp'])} pp with overlapping task fields (HH); the "
                        f"difference is {_pp(out['reversal_pp'])} pp {_ci(out['reversal_ci'])}. This is descriptive "
                        f"(paper §2.5): the cells use separate pair samples.")
    return out


def first_pairs_of(rec: pd.DataFrame, cond: Condition) -> pd.DataFrame:
    """The records of the condition's first ``n_pairs`` pairs (all records when it has no ``n_pairs``)."""
    if cond.n_pairs is None:
        return rec
    keep = reference_pairs(cond.parsed)["pair_id"].iloc[:cond.n_pairs]
    return rec[rec["pair_id"].isin(keep)].reset_index(drop=True)


def analyse(load: Callable[[Condition], pd.DataFrame], conditions: list[Condition],
            draws: int = config.BOOTSTRAP_DRAWS, model: str | None = None) -> dict:
    """Every section of the card for one model: condition rows, tracking slope, display, naming, structure.

    ``load(condition)`` returns its records (released schema) or raises
    :class:`analysis.records.NotReleased` / ``FileNotFoundError``; such conditions get a row with
    ``status`` ``not released`` and the reason (a Sonnet no-example cell falls back to the
    condition summary).
    """
    recs, missing = {}, {}
    for cond in conditions:
        try:
            recs[cond.key] = first_pairs_of(load(cond), cond)
        except (NotReleased, FileNotFoundError) as exc:
            missing[cond.key] = str(exc)
    sweep = {}
    for n in NAME_SETS:
        keys = [sweep_cell(n, lv) for lv in SWEEP_LEVELS]
        if all(k in recs for k in keys):
            sweep[n] = E.resolved_at_all_levels([E.pair_pse(recs[k]) for k in keys])
    rows: dict[str, dict] = {}
    for cond in conditions:
        if cond.key in recs:
            common = sweep[cond.parsed.names].columns if cond.parsed.names in sweep else None
            rows[cond.key] = {"status": "computed", **condition_row(cond, recs[cond.key], draws, common)}
        elif model == "sonnet" and cond.display == "numeric" and not cond.parsed.has_examples:
            rows[cond.key] = {"status": "computed", **summary_condition_row(cond, model)}
        else:
            rows[cond.key] = {"key": cond.key, "status": "not released", "reason": missing.get(cond.key, "")}
    return {"responsiveness": responsiveness(recs, conditions, draws),
            "conditions": [rows[c.key] for c in conditions], "tracking": tracking_section(sweep, draws) if sweep else None,
            "display": display_section(recs, draws), "naming": naming_section(recs, rows, draws),
            "structure": structure_section(recs, rows, draws)}


def collected_loader(out: str | os.PathLike, subject: C.Subject) -> Callable[[Condition], pd.DataFrame]:
    """Records of the audited model written by :func:`analysis.audit.run.collect_audit` into ``out``."""
    key, _ = C.request_key(subject)
    tag = subject.tag(key)

    def load(cond: Condition) -> pd.DataFrame:
        path, _ = C.output_paths(Path(out), subject.provider, subject.model, cond.cell, cond.display, tag)
        if not path.exists():
            raise FileNotFoundError(f"{path}: not collected")
        return normalise(pd.read_csv(path))

    return load


def released_loader(model: str) -> Callable[[Condition], pd.DataFrame]:
    """Released records of one of the paper's models (representation control: Sonnet only)."""
    def load(cond: Condition) -> pd.DataFrame:
        if cond.display != "numeric":
            return representation.load_rendering(model, cond.display, "learned")
        return records.load_records(model, cond.parsed)

    return load


@functools.lru_cache(maxsize=8)
def _reference_models(conditions: tuple[Condition, ...], draws: int) -> dict:
    return {m: analyse(released_loader(m), list(conditions), draws, model=m) for m in PAPER_MODELS}


def reference_models(conditions: list[Condition], draws: int = config.BOOTSTRAP_DRAWS) -> dict:
    """The paper's four models analysed exactly like the audited model, from the released records (cached)."""
    return _reference_models(tuple(conditions), draws)


def sampling_summary(rec: pd.DataFrame) -> dict:
    """``--samples R``: how often a prompt's R answers agree (:func:`analysis.estimators.within_prompt_agreement`);
    ``--answer-format logprobs``: answers with log-probabilities and their mean mass outside the tokens 1 and 2.
    The PSE, intervals and verdicts above are already on per-prompt choice probabilities
    (:func:`analysis.estimators.pair_pse`, Supplementary Note 12's rule); with one answer per prompt they are
    the protocol's."""
    out: dict = {}
    if "sample_id" in rec:
        out["within_prompt_agreement"] = E.within_prompt_agreement(rec)
    if "p_first" in rec and rec["p_first"].notna().any():
        out["logprobs"] = {"n_answers": int(rec["p_first"].notna().sum()),
                           "mean_p_outside": float(pd.to_numeric(rec["p_outside"], errors="coerce").mean())}
    return out
