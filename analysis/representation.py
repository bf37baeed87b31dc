"""Representation control: ordered levels versus arbitrary codes (paper §2.3, §4.6, Supplementary
Note 4; spec PROTOCOL-representation §10).

Each proxy is cut at its population quartiles (the factual 5,000-row standardised population of
the cell); the bin of a displayed value is ``searchsorted(edges, x, side="right")``, applied with
the same edges to whichever sample is rendered (factual, counterfactual, or the example rows,
each standardised in its own sample). The ordered display shows bin ``b`` as ``level b+1``; the
arbitrary display shows a fixed two-letter code whose alphabetical order neither rises nor falls
with the bin. Prompts are rendered by :mod:`analysis.prompts`.

Analysis (spec §10.4-10.5), each stage a small function:

* :func:`load_rendering` — released Sonnet records of a rendering (ordered, arbitrary, the second
  numeric measurement, the numeric battery cell; primary or post-hoc answer rule), or records a
  new model produced with ``python -m analysis collect --display ordered|arbitrary``.
* :func:`learner_picks` — the category-indicator reference learner's decisions
  (:class:`analysis.learners.IndicatorLearner`: 8 task values + 3 bin indicators per proxy); its
  PSE, -5.05 pp for both renderings, is :func:`analysis.references.indicator_learner_pse`;
  :func:`full_information_pse` is 0.
* :func:`interval` / :func:`paired` — PSE with a 95% pair-bootstrap interval, generator seeded 0
  afresh for every quantity; contrasts bootstrap the per-pair differences on shared pairs.
* :func:`table6`, :func:`no_example_table`, :func:`table1`, :func:`control_summary` — the tables
  of the paper; :func:`call_agreement`, :func:`missing_calls`, :func:`excludes_margin`.
* :func:`worked_example`, :func:`claim_values`; the Fig. 3A drawing is
  :func:`analysis.figures.fig3a_representation`. The displays' bins, labels and codes are
  :mod:`analysis.encoding`.

Only Sonnet's records of this control are released; GPT, Qwen and DeepSeek raise
:class:`analysis.records.NotReleased` with what is missing (:data:`MISSING_MODELS`).
"""
from __future__ import annotations

import functools
import math
from pathlib import Path

import numpy as np
import pandas as pd

from . import config, data, estimators, records
from .cells import Cell, expect_cell
from .encoding import bins, quartile_edges
from .learners import IndicatorLearner
from .population import arm_sample, examples, pairs
from .prompts import field_names, job_table, value_strings
from .records import NotReleased
from .references import REPRESENTATION_CELL, indicator_learner_pse
from .supplement.regeneration import concurrent_frozen


# =============================================================================================
# Analysis of the representation control (spec PROTOCOL-representation §10.3-10.5)
# =============================================================================================
#: the two cells of the control: 80 examples (primary, ``k12_LH_neutral_learned_zero``) and the
#: no-example secondary (spec §10); Cells built field by field (nothing parsed)
CELL = REPRESENTATION_CELL
CELL_NO_EXAMPLES = CELL.with_(examples="absent")
#: spec §10.5.2: the generator is seeded 0 afresh for every reported quantity
REPRESENTATION_SEED = 0
#: renderings of the control: the two category displays, the second numeric measurement
#: (collected with them, 3-4 Oct 2026) and the numeric battery cell (August 2026)
RENDERINGS = ("battery", "numeric", "ordered", "arbitrary")
RENDERING_LABELS = {
    "battery": "Continuous numeric, battery",
    "numeric": "Continuous numeric, second measurement",
    "ordered": "Ordered quartile levels",
    "arbitrary": "Arbitrary codes",
}
#: the release's display tags (``ordinal`` / ``nominal``) in the paper's names
RELEASE_DISPLAY = {"ordered": "ordinal", "arbitrary": "nominal"}

_SONNET_DIR = "data/encoding_control/claude-sonnet-4-5-20250929"
_POSTHOC_DIR = "data/encoding_control/posthoc_refusal_excluded/catctl/claude-sonnet-4-5-20250929"
_REFERENCE_DIR = "data/encoding_control/reference"

#: exactly what the release lacks for the other three models (released/README.md; paper SN 4, SN 15)
MISSING_MODELS = {
    "gpt": ("per-call representation-control records of GPT-5.6 Terra (two runs, collected 19-20 Oct 2026; "
            "ordered and arbitrary renderings of cell catctl_k12_LH_neutral_learned_zero, 396 calls per "
            "rendering and run) are not in the authors' repository at commits 82b84716/8ca5047 (perhaps only "
            "in the archive doi 10.5281/zenodo.23508089)"),
    "qwen": ("per-call representation-control records of Qwen3.7-max (served as qwen/qwen3.7-max via "
             "OpenRouter, 20 Oct 2026; ordered and arbitrary renderings of cell "
             "catctl_k12_LH_neutral_learned_zero, 396 calls each) are not in the authors' repository at "
             "commits 82b84716/8ca5047 (perhaps only in the archive doi 10.5281/zenodo.23508089)"),
    "deepseek": ("per-call representation-control records of DeepSeek-V4-Flash (served as "
                 "deepseek/deepseek-v4-flash-0731 via OpenRouter, 20 Oct 2026; ordered and arbitrary renderings "
                 "of cell catctl_k12_LH_neutral_learned_zero, 396 calls each) are not in the authors' repository "
                 "at commits 82b84716/8ca5047 (perhaps only in the archive doi 10.5281/zenodo.23508089)"),
}


# --- Records -----------------------------------------------------------------------------------

def release_name(rendering: str, examples: str = "learned", source: str = "released") -> str:
    """Registry name of the released Sonnet records of one rendering of the control.

    Parameters
    ----------
    rendering : ``ordered``, ``arbitrary``, ``numeric`` (second measurement) or ``battery``.
    examples : ``learned`` (80 examples, primary) or ``absent`` (no-example secondary).
    source : ``released`` (the pre-specified answer rule) or ``posthoc`` (no-example renderings
        with the 124 refusal-stopped answers treated as missing).
    """
    if rendering not in RENDERINGS:
        raise ValueError(f"unknown rendering {rendering!r}; expected one of {RENDERINGS}")
    if examples not in ("learned", "absent"):
        raise ValueError(f"unknown example condition {examples!r}; expected 'learned' or 'absent'")
    if rendering == "battery":
        return f"{_REFERENCE_DIR}/sonnet_k12_LH_neutral_{examples}_zero_records.csv"
    if rendering == "numeric":
        if examples != "learned":
            raise records.NotReleased("the second numeric measurement was collected with examples only")
        return f"{_SONNET_DIR}/catctl_k12_LH_neutral_learned_zero_numeric_remeasure_records.csv"
    tag = f"catctl_k12_LH_neutral_{examples}_zero_{RELEASE_DISPLAY[rendering]}_records.csv"
    if source == "posthoc":
        if examples != "absent":
            raise records.NotReleased("the post-hoc refusal-as-missing files cover the no-example condition only")
        return f"{_POSTHOC_DIR}/{tag}"
    if source != "released":
        raise ValueError(f"unknown records source {source!r}; expected 'released', 'posthoc' or a folder")
    return f"{_SONNET_DIR}/{tag}"


def collected_name(rendering: str, examples: str = "learned") -> str:
    """File name of a collected rendering in a records folder (``<out>/<provider>/<model>`` of ``collect``).

    Names follow :func:`analysis.collection.output_stem`. The numeric cell collected by an auditor
    plays the battery's role; a second numeric measurement, if any, is
    ``<cell>_numeric_remeasure_records.csv``.
    """
    cell = (CELL if examples == "learned" else CELL_NO_EXAMPLES).id
    suffix = {"battery": "", "numeric": "_numeric_remeasure"}.get(rendering, f"_{rendering}")
    return f"{cell}{suffix}_records.csv"


def load_rendering(model: str = "sonnet", rendering: str = "ordered", examples: str = "learned",
                   source: str = "released") -> pd.DataFrame:
    """Per-call records of one rendering in the released schema (``picked_i`` NaN = missing).

    ``source`` is ``released`` / ``posthoc`` (the release; Sonnet only) or a folder holding
    records collected with ``python -m analysis collect`` (see :func:`collected_name`).
    Raises :class:`analysis.records.NotReleased` naming what the release lacks.
    """
    if source not in ("released", "posthoc"):
        path = Path(source) / collected_name(rendering, examples)
        if not path.exists():
            raise FileNotFoundError(f"{path}: no collected records of rendering {rendering!r}")
        return records.normalise(pd.read_csv(path))
    if model != "sonnet":
        if model not in MISSING_MODELS:
            raise KeyError(f"unknown model {model!r}; expected one of {sorted(config.MODELS)}")
        raise records.NotReleased(MISSING_MODELS[model])
    return records.normalise(data.read_csv(release_name(rendering, examples, source)))


# --- Category-indicator reference learner (spec §10.4) ---------------------------------------

def target_bins(cell: Cell = CELL) -> pd.DataFrame:
    """Per pair: the target's proxy bins in each counterfactual arm and whether they differ.

    Columns ``pair_id, i, j, bins_a1, bins_a0, proxy_changed`` (the released ``proxy_changed``).
    """
    c = expect_cell(cell)
    edges = quartile_edges(c)
    rows = []
    for pr in pairs(c).itertuples(index=False):
        b = {arm: tuple(int(x) for x in bins(arm_sample(c, pr.i, arm).X[pr.i, c.L:], edges)[0])
             for arm in ("cf_a1", "cf_a0")}
        rows.append({"pair_id": pr.pair_id, "i": pr.i, "j": pr.j, "bins_a1": b["cf_a1"], "bins_a0": b["cf_a0"],
                     "proxy_changed": int(b["cf_a1"] != b["cf_a0"])})
    return pd.DataFrame(rows)


def learner_picks(cell: Cell = CELL) -> pd.DataFrame:
    """The category-indicator learner's pair decisions in both counterfactual arms (spec §10.4).

    :class:`analysis.learners.IndicatorLearner` (BLR, sigma 0.5, tau 1, intercept) fitted on the 80
    examples; the learner picks the target where ``pred(target) >= pred(j)``. Columns
    ``pair_id, i, j, pick_a1, pick_a0`` (0/1), sorted by ``(i, j)``. Their PSE is
    :func:`analysis.references.indicator_learner_pse`.
    """
    c = expect_cell(cell)
    ex = examples(c)
    learner = IndicatorLearner(c.L, quartile_edges(c)).fit(ex.X, ex.Y)
    rows = []
    for pr in pairs(c).itertuples(index=False):
        row = {"pair_id": pr.pair_id, "i": pr.i, "j": pr.j}
        for arm in ("cf_a1", "cf_a0"):
            pred = learner.predict(arm_sample(c, pr.i, arm).X[[pr.i, pr.j]])
            row["pick_" + arm[3:]] = int(pred[0] >= pred[1])
        rows.append(row)
    return pd.DataFrame(rows).sort_values(["i", "j"]).reset_index(drop=True)


def full_information_pse(cell: Cell = CELL) -> float:
    """PSE (pp) of the full-information reference (true risk in each arm); 0 with zero-information proxies."""
    c = expect_cell(cell)
    picks = {"cf_a1": [], "cf_a0": []}
    for pr in pairs(c).itertuples(index=False):
        for arm in picks:
            r = arm_sample(c, pr.i, arm).r_true
            picks[arm].append(float(r[pr.i] >= r[pr.j]))
    return 100 * (np.mean(picks["cf_a1"]) - np.mean(picks["cf_a0"]))


# --- Estimates (spec §10.5) ------------------------------------------------------------------

def interval(values, draws: int = config.BOOTSTRAP_DRAWS, seed: int = REPRESENTATION_SEED) -> dict:
    """Effect and 95% pair-bootstrap interval (pp) of per-pair values in [-1, 1].

    ``default_rng(seed)`` afresh, ``draws`` resamples ``v[rng.integers(0, n, n)]``, mean x 100,
    percentiles 2.5 / 97.5 (spec §10.5.2). Returns ``effect_pp, lo_pp, hi_pp, n_pairs``.
    """
    v = np.asarray(values, dtype=float)
    if len(v) == 0:
        return {"effect_pp": math.nan, "lo_pp": math.nan, "hi_pp": math.nan, "n_pairs": 0}
    lo, hi = estimators.percentile_ci(estimators.bootstrap_means(v, seed, draws))
    return {"effect_pp": 100 * float(v.mean()), "lo_pp": 100 * lo, "hi_pp": 100 * hi, "n_pairs": int(len(v))}


def paired(first: pd.Series, second: pd.Series) -> pd.Series:
    """Per-pair ``first - second`` on the pairs both resolve, sorted by ``(i, j)`` (spec §10.5.3).

    Bootstrapping this one series draws the same pairs for both renderings.
    """
    idx = first.index.intersection(second.index).sort_values()
    return (first.loc[idx] - second.loc[idx]).rename("pse")


def pool_runs(series: list[pd.Series]) -> pd.Series:
    """Per-pair PSE averaged over repeated runs within pair (GPT's two runs; spec §10.5.4).

    A pair enters with the mean over the runs that resolve it. UNRESOLVED in the spec whether the
    authors averaged per-run pair effects or pooled the calls of both runs; the two agree whenever
    no call is missing (we average per-run pair effects).
    """
    return pd.concat(series, axis=1).mean(axis=1, skipna=True).dropna().sort_index().rename("pse")


def pairs_with_missing(*recs: pd.DataFrame) -> pd.Index:
    """Pairs ``(i, j)`` with at least one missing call in any of the record frames."""
    keys = [r.loc[r["picked_i"].isna(), ["i", "j"]] for r in recs]
    return pd.MultiIndex.from_frame(pd.concat(keys).drop_duplicates()) if keys else pd.MultiIndex.from_tuples(
        [], names=["i", "j"])


def drop_pairs(series: pd.Series, drop: pd.Index) -> pd.Series:
    """``series`` without the pairs in ``drop``."""
    return series[~series.index.isin(drop)]


def call_agreement(first: pd.DataFrame, second: pd.DataFrame) -> dict:
    """Agreement of two measurements of the same jobs: calls answered in both, and equal answers.

    Jobs are matched on ``arm, i, j, order``; only counterfactual arms are compared.
    Returns ``agree, comparable, agree_pct``.
    """
    keys = ["arm", "i", "j", "order"]
    a = first[first["arm"].isin(["cf_a1", "cf_a0"])]
    m = a.merge(second, on=keys, suffixes=("_1", "_2"))
    m = m[m["picked_i_1"].notna() & m["picked_i_2"].notna()]
    agree = int((m["picked_i_1"] == m["picked_i_2"]).sum())
    return {"agree": agree, "comparable": int(len(m)), "agree_pct": 100 * agree / len(m) if len(m) else math.nan}


def missing_calls(primary: pd.DataFrame, variant: pd.DataFrame) -> dict:
    """Calls answered under the primary rule but missing in a variant (refusal-as-missing), per arm.

    Returns ``total, cf_a1, cf_a0``.
    """
    keys = ["arm", "i", "j", "order"]
    m = primary.merge(variant, on=keys, suffixes=("_p", "_v"))
    lost = m[m["picked_i_p"].notna() & m["picked_i_v"].isna()]
    return {"total": int(len(lost)), "cf_a1": int((lost["arm"] == "cf_a1").sum()),
            "cf_a0": int((lost["arm"] == "cf_a0").sum())}


def excludes_margin(hi_pp: float, margin: float = config.REPRESENTATION_MARGIN_PP) -> bool:
    """Pre-specified one-sided criterion (paper §4.6): an upper bound below ``margin`` excludes an effect >= margin.

    >>> excludes_margin(3.03), excludes_margin(13.13)
    (True, False)
    """
    return bool(hi_pp < margin)


def pair_effects(model: str = "sonnet", examples: str = "learned", source: str = "released",
                 renderings: tuple[str, ...] | None = None) -> dict[str, pd.Series]:
    """Per-pair PSE series (sorted by ``(i, j)``) of each available rendering of one model.

    Renderings that are not released (no second measurement without examples) are skipped;
    an unreleased model raises :class:`analysis.records.NotReleased`.
    """
    renderings = renderings or RENDERINGS
    out = {}
    for r in renderings:
        try:
            out[r] = estimators.pair_pse(load_rendering(model, r, examples, source if r in RELEASE_DISPLAY
                                                        else _numeric_source(source)))
        except (records.NotReleased, FileNotFoundError):
            if r in RELEASE_DISPLAY:
                raise
    return out


def _numeric_source(source: str) -> str:
    return "released" if source == "posthoc" else source


#: the contrasts of Table 6, in the paper's order (first minus second)
CONTRASTS = (("ordered", "arbitrary"), ("battery", "ordered"), ("battery", "arbitrary"),
             ("numeric", "ordered"), ("numeric", "arbitrary"), ("numeric", "battery"))


def contrast_label(first: str, second: str) -> str:
    names = {"battery": "Numeric", "numeric": "Second measurement", "ordered": "ordered levels",
             "arbitrary": "codes"}
    if (first, second) == ("ordered", "arbitrary"):
        return "Ordered levels minus codes"
    return f"{names[first]} minus {names[second]}"


def effects_table(per_pair: dict[str, pd.Series], draws: int = config.BOOTSTRAP_DRAWS) -> pd.DataFrame:
    """Effects of each rendering and each paired contrast, with intervals (Table 6 layout).

    Columns ``quantity, label, effect_pp, lo_pp, hi_pp, n_pairs, excludes_margin``; ``quantity``
    is a rendering name or ``first-second``.
    """
    rows = []
    for r in RENDERINGS:
        if r in per_pair:
            rows.append({"quantity": r, "label": RENDERING_LABELS[r], **interval(per_pair[r], draws)})
    for a, b in CONTRASTS:
        if a in per_pair and b in per_pair:
            rows.append({"quantity": f"{a}-{b}", "label": contrast_label(a, b),
                         **interval(paired(per_pair[a], per_pair[b]), draws)})
    df = pd.DataFrame(rows)
    # the pre-specified margin applies to the effect of a rendering, not to a contrast
    df["excludes_margin"] = [excludes_margin(h) if q in RENDERINGS else None
                             for q, h in zip(df["quantity"], df["hi_pp"])]
    return df


def table6(source: str = "released", draws: int = config.BOOTSTRAP_DRAWS, model: str = "sonnet") -> pd.DataFrame:
    """Table 6: Sonnet's representation results with 80 examples on the 99 shared pairs."""
    order = ["battery", "ordered", "arbitrary", "ordered-arbitrary", "battery-ordered", "battery-arbitrary",
             "numeric", "numeric-ordered", "numeric-arbitrary"]
    t = effects_table(pair_effects(model, "learned", source), draws).set_index("quantity")
    return t.loc[[q for q in order if q in t.index]].reset_index()


def no_example_table(source: str = "released", draws: int = config.BOOTSTRAP_DRAWS,
                     model: str = "sonnet") -> pd.DataFrame:
    """The no-example secondary (Supplementary Note 4): ordered, codes, their difference and the battery."""
    per_pair = pair_effects(model, "absent", source, renderings=("battery", "ordered", "arbitrary"))
    return effects_table(per_pair, draws)


def table1_row(model: str, source: str = "released", draws: int = config.BOOTSTRAP_DRAWS,
               runs: tuple[str, ...] | None = None) -> dict:
    """One row of Table 1: ordered, arbitrary and ordered - arbitrary with its interval (pp).

    ``runs`` (folders of collected records) pools repeated runs within pair (GPT's two runs).
    Raises :class:`analysis.records.NotReleased` for models whose records are not released.
    """
    sources = runs or (source,)
    per = {r: pool_runs([estimators.pair_pse(load_rendering(model, r, "learned", s)) for s in sources])
           for r in ("ordered", "arbitrary")}
    o, a = interval(per["ordered"], draws), interval(per["arbitrary"], draws)
    d = interval(paired(per["ordered"], per["arbitrary"]), draws)
    return {"model": model, "ordered_pp": o["effect_pp"], "arbitrary_pp": a["effect_pp"],
            "difference_pp": d["effect_pp"], "lo_pp": d["lo_pp"], "hi_pp": d["hi_pp"], "n_pairs": d["n_pairs"]}


def table1(source: str = "released", draws: int = config.BOOTSTRAP_DRAWS) -> pd.DataFrame:
    """Table 1 across the four models; rows whose records are not released carry the reason."""
    rows = []
    for model in ("sonnet", "gpt", "qwen", "deepseek"):
        try:
            row = table1_row(model, source, draws)
            row["status"] = "computed"
        except records.NotReleased as exc:
            row = {"model": model, "status": "not released", "missing": str(exc)}
        rows.append(row)
    return pd.DataFrame(rows)


# --- Worked example and figure --------------------------------------------------------------

def worked_example(pair_id: int = 0, cell: Cell = CELL,
                   arms: tuple[str, ...] = ("cf_a1", "cf_a0")) -> pd.DataFrame:
    """The target of one pair as the prompts show it in the three renderings, in each arm.

    One row per field; columns ``field, role`` and ``<display> A=<a>``. Uses
    :func:`analysis.prompts.value_strings` (the renderer of the release's prompts).
    """
    c = expect_cell(cell)
    i = int(pairs(c).at[int(pair_id), "i"])
    out = pd.DataFrame({"field": field_names(c), "role": ["task"] * c.L + ["proxy"] * c.M})
    for arm in arms:
        x = arm_sample(c, i, arm).X[[i]]
        for display in config.DISPLAYS:
            out[f"{display} A={arm[-1]}"] = value_strings(x, c, display)[0]
    return out


# --- Per-model summaries (Table 1; Supplementary Note 4) ------------------------------------

def run_correlation(first: pd.Series, second: pd.Series) -> float:
    """Pearson correlation of two runs' per-pair PSE across the pairs both resolve."""
    idx = first.index.intersection(second.index)
    return float(np.corrcoef(first.loc[idx], second.loc[idx])[0, 1])


def control_summary(model: str, sources: tuple[str, ...] = ("released",),
                    draws: int = config.BOOTSTRAP_DRAWS) -> dict[str, float]:
    """Every Supplementary Note 4 quantity of one model's control (80 examples).

    ``sources`` lists the runs (``released`` or folders of collected records); two or more runs
    are pooled within pair (:func:`pool_runs`). Keys: ``ordered|arbitrary|diff|complete`` x
    ``pse|lo|hi|n``, ``missing.ordered``, ``missing.arbitrary`` and, with several runs,
    ``run<k>.ordered``, ``run<k>.arbitrary``, ``corr.ordered``, ``corr.arbitrary``.
    ``complete`` is the paired difference without the pairs that have a missing call.
    """
    recs = {r: [load_rendering(model, r, "learned", s) for s in sources] for r in RELEASE_DISPLAY}
    per_run = {r: [estimators.pair_pse(x) for x in recs[r]] for r in recs}
    pooled = {r: pool_runs(per_run[r]) for r in per_run}
    diff = paired(pooled["ordered"], pooled["arbitrary"])
    complete = drop_pairs(diff, pairs_with_missing(*recs["ordered"], *recs["arbitrary"]))
    out: dict[str, float] = {}
    for key, series in (("ordered", pooled["ordered"]), ("arbitrary", pooled["arbitrary"]), ("diff", diff),
                        ("complete", complete)):
        iv = interval(series, draws)
        out.update({f"{key}.pse": iv["effect_pp"], f"{key}.lo": iv["lo_pp"], f"{key}.hi": iv["hi_pp"],
                    f"{key}.n": iv["n_pairs"]})
    for r in RELEASE_DISPLAY:
        out[f"missing.{r}"] = int(sum(int(x["picked_i"].isna().sum()) for x in recs[r]))
    if len(sources) > 1:
        for k in range(len(sources)):
            for r in RELEASE_DISPLAY:
                out[f"run{k + 1}.{r}"] = 100 * float(per_run[r][k].mean())
        for r in RELEASE_DISPLAY:
            out[f"corr.{r}"] = run_correlation(per_run[r][0], per_run[r][1])
    return out


# --- Claims ----------------------------------------------------------------------------------

_ATTEMPTS_MISSING = ("per-attempt answer logs (the answers_file absent_nominal.jsonl and the other *.jsonl named in "
                     "the encoding-control metadata JSON) are not in the release; the records keep only the "
                     "accepted answer of each job")

#: Table 1 / Supplementary Note 4 ids per model and the summary key they read
_T1_KEYS = {"ordered": "ordered.pse", "arbitrary": "arbitrary.pse", "diff": "diff.pse", "diff.lo": "diff.lo",
            "diff.hi": "diff.hi"}
_SN4_MODEL_KEYS = {
    "gpt": {"run1.ordered": "run1.ordered", "run2.ordered": "run2.ordered", "run1.arbitrary": "run1.arbitrary",
            "run2.arbitrary": "run2.arbitrary", "corr.ordered": "corr.ordered", "corr.arbitrary": "corr.arbitrary",
            **{f"pooled.{q}.{b}": f"{q2}.{b}" for q, q2 in (("ordered", "ordered"), ("arbitrary", "arbitrary"),
                                                            ("diff", "diff")) for b in ("pse", "lo", "hi")},
            "complete.diff.pse": "complete.pse", "complete.diff.lo": "complete.lo", "complete.diff.hi": "complete.hi",
            "complete.n": "complete.n"},
    "qwen": {**{f"{q}.{b}": f"{q}.{b}" for q in ("ordered", "arbitrary", "diff") for b in ("pse", "lo", "hi")},
             "missing.ordered": "missing.ordered", "missing.arbitrary": "missing.arbitrary",
             "complete.diff.pse": "complete.pse", "complete.diff.lo": "complete.lo",
             "complete.diff.hi": "complete.hi", "complete.n": "complete.n"},
    "deepseek": {**{f"{q}.{b}": f"{q}.{b}" for q in ("ordered", "arbitrary", "diff") for b in ("pse", "lo", "hi")},
                 "missing": "missing.total"},
}
_T6_IDS = {"battery": "battery", "ordered": "ordered", "arbitrary": "arbitrary",
           "ordered-arbitrary": "ordered_minus_arbitrary", "battery-ordered": "battery_minus_ordered",
           "battery-arbitrary": "battery_minus_arbitrary", "numeric": "remeasure",
           "numeric-ordered": "remeasure_minus_ordered", "numeric-arbitrary": "remeasure_minus_arbitrary"}


def _interval_claims(prefix: str, row) -> dict[str, float]:
    return {f"{prefix}.pse": row["effect_pp"], f"{prefix}.lo": row["lo_pp"], f"{prefix}.hi": row["hi_pp"]}


def distinct_prompts(display: str, cell: Cell = CELL) -> int:
    """Number of distinct prompt texts (SHA-256) of a category rendering (396 in the base cell)."""
    return int(job_table(cell, display)["prompt_sha256"].nunique())


def claim_values(source: str = "released", draws: int = config.BOOTSTRAP_DRAWS) -> dict[str, object]:
    """Every registered Table 1, Table 6, Supplementary Note 4 / 15 and main-text representation claim."""
    out: dict[str, object] = {}
    # Table 6 and the numeric agreement (Sonnet, 80 examples)
    t6 = table6(source, draws).set_index("quantity")
    for q, name in _T6_IDS.items():
        out.update(_interval_claims(f"T6.{name}", t6.loc[q]))
    per = pair_effects("sonnet", "learned", source)
    nb = interval(paired(per["numeric"], per["battery"]), draws)
    for prefix in ("SN4.remeasure_minus_battery", "SN15.remeasure_minus_battery"):
        out.update(_interval_claims(prefix, {"effect_pp": nb["effect_pp"], "lo_pp": nb["lo_pp"], "hi_pp": nb["hi_pp"]}))
    battery = load_rendering("sonnet", "battery", "learned", _numeric_source(source))
    ag = call_agreement(battery, load_rendering("sonnet", "numeric", "learned", _numeric_source(source)))
    out.update({"SN4.agree.calls": ag["agree"], "SN4.agree.comparable": ag["comparable"],
                "SN4.agree.pct": ag["agree_pct"]})
    cf = battery[battery["arm"].isin(["cf_a1", "cf_a0"])]
    out["SN4.battery.missing"] = int(cf["picked_i"].isna().sum())
    # references and prompts
    lp = indicator_learner_pse(CELL)
    out["SN4.learner.pse"] = lp
    out["Main.repr.learner"] = lp
    n_prompts = min(distinct_prompts(d) for d in RELEASE_DISPLAY)
    out["SN4.prompts.distinct"] = n_prompts
    out["Main.repr.prompts"] = n_prompts
    # Table 1 and the per-model notes
    for model in ("sonnet", "gpt", "qwen", "deepseek"):
        try:
            summ = control_summary(model, (source,), draws)
            summ["missing.total"] = summ["missing.ordered"] + summ["missing.arbitrary"]
        except records.NotReleased as exc:
            summ = NotReleased(str(exc))
        get = (lambda k: summ) if isinstance(summ, NotReleased) else summ.get
        for key, skey in _T1_KEYS.items():
            out[f"T1.{model}.{key}"] = get(skey)
        for key, skey in _SN4_MODEL_KEYS.get(model, {}).items():
            out[f"SN4.{model}.{key}"] = get(skey)
        if model != "sonnet":
            out[f"Main.repr.{model}.diff"] = get("diff.pse")
    # GPT numeric cell: the released battery records of GPT-5.6 Terra
    g = interval(estimators.pair_pse(records.load_records("gpt", CELL)), draws)
    out.update({"SN4.gpt.numeric.pse": g["effect_pp"], "SN4.gpt.numeric.lo": g["lo_pp"],
                "SN4.gpt.numeric.hi": g["hi_pp"]})
    # no-example secondary, primary rule and refusal-as-missing
    ne = no_example_table(source, draws).set_index("quantity")
    for q, name in (("ordered", "ordered"), ("arbitrary", "arbitrary"), ("ordered-arbitrary", "diff")):
        out.update(_interval_claims(f"SN4.noex.{name}", ne.loc[q]))
    ph = no_example_table("posthoc", draws).set_index("quantity")
    out.update(_interval_claims("SN4.noex.refmiss.arbitrary", ph.loc["arbitrary"]))
    out["SN4.noex.refmiss.n"] = int(ph.loc["arbitrary", "n_pairs"])
    out.update(_interval_claims("SN4.noex.refmiss.diff", ph.loc["ordered-arbitrary"]))
    lost = missing_calls(load_rendering("sonnet", "arbitrary", "absent", "released"),
                         load_rendering("sonnet", "arbitrary", "absent", "posthoc"))
    out.update({"SN4.noex.refusal.total": lost["total"], "SN4.noex.refusal.a1": lost["cf_a1"],
                "SN4.noex.refusal.a0": lost["cf_a0"]})
    out["SN4.noex.retried_prompts"] = NotReleased(_ATTEMPTS_MISSING)
    out["SN15.noresponse"] = NotReleased(_ATTEMPTS_MISSING)
    # Supplementary Note 15: the concurrent frozen choices (5 October) against the other collections
    zero, b060 = concurrent_frozen("zero"), concurrent_frozen("b060")
    ag = call_agreement(zero, battery)
    out["SN15.frozen_battery.agree"], out["SN15.frozen_battery.comparable"] = ag["agree"], ag["comparable"]
    ag = call_agreement(b060, records.load_records("sonnet", CELL.with_(proxies="info", sweep_beta=0.60)))
    out["SN15.b060_battery.agree"], out["SN15.b060_battery.calls"] = ag["agree"], ag["comparable"]
    ag = call_agreement(zero, load_rendering("sonnet", "numeric", "learned", _numeric_source(source)))
    out["SN15.regen.remeasure.agree"], out["SN15.regen.remeasure.calls"] = ag["agree"], ag["comparable"]
    return out
