"""The validity battery: plan, answers and analysis of the cue panel, the probe and replication (beyond the paper).

The battery, per cell (default: k = 12 LH, 80 examples, zero information, neutral and social
names): every cue of :func:`analysis.cues.panel_cues` on the cell's pairs (triage jobs), the
association probe under every cue in the forced and the abstention variant, and the paper's cue
on the seed replications of the cell. ``n_pairs`` restricts everything to the first pairs of each
cell: a cheaper pass, marked as such in the plan and the card, not the battery.

:func:`run` answers every job with a subject (``subject.ask`` for the triage jobs, the collection's
``Job``; ``probe_answer`` for the probe where the subject has one — the simulated subjects — else
``ask`` on the forced variant only, because the collection's tool accepts only 1 or 2) and
:func:`analyse` turns the records into the card section (:mod:`analysis.validity.card`).
"""
from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass, field

import numpy as np
import pandas as pd

from .. import collection as C
from .. import config, cues
from ..cells import Cell, expect_cell, parse_cell
from ..population import pairs
from . import baseline as B
from . import confounds as CF
from . import coupling as CP
from . import panel as P
from . import probe as Q
from . import replication as R

CELLS = ("k12_LH_neutral_learned_zero", "k12_LH_social_learned_zero")
#: a pass on fewer pairs is marked with this phrase wherever it is reported
CHEAP_MARK = "cheaper pass on the first {n} pairs of each cell: descriptive only, not the validity battery"


@dataclass(frozen=True)
class ValidityPlan:
    """What the validity battery asks: cells, the first ``n_pairs`` pairs (None: all), probe variants, seeds."""

    cells: tuple[str, ...] = CELLS
    n_pairs: int | None = None
    variants: tuple[str, ...] = cues.PROBE_VARIANTS
    seeds: tuple[int, ...] = R.REPLICATION_SEEDS
    cue_ids: tuple[str, ...] | None = None  # None: each cell's default panel
    blind: bool = True  # the blind (no-cue) baseline arm
    notes: list = field(default_factory=list, compare=False)
    #: each cell id of the plan and its :class:`~analysis.cells.Cell`, parsed once when the plan is made
    #: (a boundary, like the audit's ``Condition``): everything below takes the Cell
    parsed: dict[str, Cell] = field(init=False, repr=False, compare=False)

    def __post_init__(self):
        object.__setattr__(self, "parsed", {cell_id: parse_cell(cell_id) for cell_id in self.cells})

    def cues_of(self, cell: Cell) -> list[str]:
        if self.cue_ids is not None:
            return list(self.cue_ids)
        return [q.id for q in cues.panel_cues(expect_cell(cell).names)]

    @property
    def cheap(self) -> str:
        return CHEAP_MARK.format(n=self.n_pairs) if self.n_pairs else ""


def _first_pairs(table: pd.DataFrame, n_pairs: int | None) -> pd.DataFrame:
    return table if n_pairs is None else table[table["pair_id"] < int(n_pairs)].reset_index(drop=True)


def plan_table(plan: ValidityPlan = ValidityPlan()) -> pd.DataFrame:
    """One row per part of the battery with its calls: ``part, cell, cue, variant, calls``."""
    rows = []
    for cell, c in plan.parsed.items():
        n = len(_first_pairs(pairs(c), plan.n_pairs))
        for cid in plan.cues_of(c):
            arms = len(cues.parse_cue(cid).arms)
            rows.append({"part": "panel", "cell": cell, "cue": cid, "variant": "", "calls": n * arms * 2})
            for v in plan.variants:
                rows.append({"part": "probe", "cell": cell, "cue": cid, "variant": v, "calls": n * 2})
        if plan.blind:
            rows.append({"part": "blind", "cell": cell, "cue": cues.BLIND, "variant": "", "calls": n * 2})
        for rep in R.replicate_cells(c, plan.seeds):
            rows.append({"part": "replication", "cell": rep.id, "cue": "numeric", "variant": "",
                         "calls": len(_first_pairs(pairs(rep), plan.n_pairs)) * len(config.ARMS) * 2})
    return pd.DataFrame(rows)


def describe_plan(plan: ValidityPlan = ValidityPlan(), usd_per_call: float | None = None) -> str:
    """The plan's cost, printed before anything is asked."""
    t = plan_table(plan)
    by = t.groupby("part")["calls"].sum()
    lines = ["Validity battery (construct validity; an extension beyond the paper's protocol)",
             f"  cells: {', '.join(plan.cells)}",
             f"  cue panel: {int(by.get('panel', 0)):,} calls; association probe ({' + '.join(plan.variants)}): "
             f"{int(by.get('probe', 0)):,} calls; seed replication ({', '.join(map(str, plan.seeds))}): "
             f"{int(by.get('replication', 0)):,} calls; blind baseline: {int(by.get('blind', 0)):,} calls",
             f"  total: {int(t['calls'].sum()):,} calls"]
    if usd_per_call is not None:
        lines[-1] += f" (about ${usd_per_call * t['calls'].sum():,.2f})"
    if plan.n_pairs:
        lines.append("  " + plan.cheap)
    else:
        lines.append("  (--pairs N gives a cheaper pass on the first N pairs of each cell, marked as such)")
    return "\n".join(lines)


# --- the plan's fingerprint (seed 003: frozen before the scientific calls) --------------------------

def prompt_hashes(plan: ValidityPlan) -> dict[str, str]:
    """Per part of the battery, the SHA-256 of its jobs' prompt hashes in table order."""
    out = {}
    for cell, c in plan.parsed.items():
        tables = {f"panel {cell} {cid}": cues.job_table(c, cid) for cid in plan.cues_of(c)}
        tables.update({f"probe {cell} {cid} {v}": cues.probe_table(c, cid, v)
                       for cid in plan.cues_of(c) for v in plan.variants})
        if plan.blind:
            tables[f"blind {cell}"] = cues.blind_table(c)
        tables.update({f"replication {rep.id}": cues.job_table(rep, "numeric")
                       for rep in R.replicate_cells(c, plan.seeds)})
        for k, t in tables.items():
            out[k] = hashlib.sha256("\n".join(_first_pairs(t, plan.n_pairs)["prompt_sha256"]).encode()).hexdigest()
    return out


def fingerprint(plan: ValidityPlan, served_model: str = "") -> dict:
    """The plan frozen before collection: battery, margins, cues, served model, prompt hashes, and one SHA-256."""
    body = {"cells": list(plan.cells), "n_pairs": plan.n_pairs, "variants": list(plan.variants),
            "seeds": list(plan.seeds), "blind": plan.blind,
            "cues": {cell: plan.cues_of(c) for cell, c in plan.parsed.items()},
            "margins": {"equivalence_margin_pp": config.EQUIVALENCE_MARGIN_PP, "tost_alpha": config.TOST_ALPHA,
                        "min_pairs_to_judge": config.MIN_PAIRS_TO_JUDGE, "coupling_margin_r": CP.MARGIN,
                        "fdr": Q.FDR},
            "served_model": served_model, "prompt_hashes": prompt_hashes(plan)}
    text = json.dumps(body, sort_keys=True)
    return {**body, "sha256": hashlib.sha256(text.encode()).hexdigest()}


# --- answers -------------------------------------------------------------------------------------

def _jobs(cell: str, table: pd.DataFrame, display: str) -> list:
    return [C.Job(cell, display, str(r.arm), int(r.pair_id), int(r.i), int(r.j), int(r.order), r.prompt,
                  r.prompt_sha256) for r in table.itertuples(index=False)]


def triage_records(subject, cell: str, table: pd.DataFrame) -> pd.DataFrame:
    """Ask every triage job; records in the release schema (``picked_i`` NaN = invalid)."""
    cue = str(table["cue"].iloc[0])
    display = "numeric" if cue == cues.BLIND else cues.parse_cue(cue).display
    patients = [subject.ask(job).patient for job in _jobs(cell, table, display)]
    return records_from_answers(table, patients)


def records_from_answers(table: pd.DataFrame, patients) -> pd.DataFrame:
    """Release-schema records from a job table and the answered patient numbers (1, 2, None)."""
    p = pd.to_numeric(pd.Series(list(patients), index=table.index), errors="coerce").astype(float)
    first = np.where(table["order"] == 0, table["i"], table["j"])
    second = np.where(table["order"] == 0, table["j"], table["i"])
    chosen = np.where(p == 1, first, np.where(p == 2, second, np.nan))
    out = table[["arm", "pair_id", "i", "j", "order"]].copy()
    out["patient"] = p
    out["chosen"] = chosen
    out["picked_i"] = np.where(np.isnan(chosen), np.nan, (chosen == table["i"]).astype(float))
    out["cue"] = table["cue"].to_numpy()
    return out


def probe_answers(subject, cell: str, table: pd.DataFrame) -> list | None:
    """Answers to probe jobs: the subject's ``probe_answer`` if it has one, else ``ask`` (forced only)."""
    if hasattr(subject, "probe_answer"):
        return [subject.probe_answer(t, s) for t, s in zip(table["prompt"], table["prompt_sha256"])]
    if str(table["variant"].iloc[0]) != "forced":
        return None  # the collection's tool accepts 1 or 2 only: no abstention with a live subject
    jobs = [C.Job(cell, "probe", "probe", int(r.pair_id), int(r.i), int(r.j), int(r.order), r.prompt,
                  r.prompt_sha256) for r in table.itertuples(index=False)]
    return [subject.ask(job).patient for job in jobs]


def collect(subject, plan: ValidityPlan = ValidityPlan()) -> dict:
    """Every record of the battery: ``{"panel": {cell: {cue: df}}, "probe": {cell: {(cue, variant): df}},
    "replication": {cell: {rep_cell: df}}}``."""
    out: dict = {"panel": {}, "probe": {}, "replication": {}, "blind": {}}
    for cell, c in plan.parsed.items():
        out["panel"][cell], out["probe"][cell] = {}, {}
        if plan.blind:
            out["blind"][cell] = triage_records(subject, cell, _first_pairs(cues.blind_table(c), plan.n_pairs))
        for cid in plan.cues_of(c):
            out["panel"][cell][cid] = triage_records(subject, cell, _first_pairs(cues.job_table(c, cid),
                                                                                 plan.n_pairs))
            for v in plan.variants:
                table = _first_pairs(cues.probe_table(c, cid, v), plan.n_pairs)
                answers = probe_answers(subject, cell, table)
                if answers is not None:
                    out["probe"][cell][(cid, v)] = Q.records(table, answers)
        out["replication"][cell] = {
            rep.id: triage_records(subject, rep.id, _first_pairs(cues.job_table(rep, "numeric"), plan.n_pairs))
            for rep in R.replicate_cells(c, plan.seeds)}
    return out


# --- analysis ------------------------------------------------------------------------------------

def analyse(recs: dict, plan: ValidityPlan = ValidityPlan(), draws: int = config.BOOTSTRAP_DRAWS) -> dict:
    """Panel, convergence, association, association vs reliance and replication of every cell."""
    cells = []
    for cell, c in plan.parsed.items():
        pan = P.panel(c, recs["panel"][cell], draws)
        probes = recs["probe"].get(cell, {})
        assoc = Q.association_rows(probes, draws)
        relation = {}
        for v in plan.variants:
            scores = {cid: Q.pair_scores(rec)["score"] for (cid, var), rec in probes.items() if var == v}
            if scores:
                relation[v] = Q.coupling(pan["rows"], pan["per_pair"], scores, draws=min(draws, 2000))
        base = [r for r in pan["rows"] if r["cue"] == "numeric"]
        reps = {cell: base}
        replicates = {rep.id: rep for rep in R.replicate_cells(c, plan.seeds)}
        for rep, rec in recs["replication"].get(cell, {}).items():
            reps[rep] = [P.cue_row(replicates[rep], "numeric", rec, draws)]
        tables = {cid: _first_pairs(cues.job_table(c, cid), plan.n_pairs) for cid in recs["panel"][cell]}
        if plan.blind:
            tables[cues.BLIND] = _first_pairs(cues.blind_table(c), plan.n_pairs)
        forced = {cid: Q.pair_scores(rec)["score"] for (cid, var), rec in probes.items() if var == "forced"}
        judged = {k: v for k, v in recs["panel"][cell].items() if not cues.parse_cue(k).control}
        confounds = {"renderings": CF.rendering_features(tables).to_dict("records"),
                     "model": CF.outcome_model(CF.call_table(judged, tables, forced))}
        base_rows = B.baseline_rows(c, recs["panel"][cell], recs.get("blind", {}).get(cell), min(draws, 2000))
        cells.append({"cell": cell, "rows": pan["rows"], "convergence": pan["convergence"], "association": assoc,
                      "baseline": base_rows, "confounds": confounds,
                      "reliance_tests": Q.reliance_tests(pan["rows"]),
                      "association_vs_reliance": relation, "replication": R.replication_rows(reps)})
    return {"cells": cells, "cheap": plan.cheap, "n_pairs": plan.n_pairs, "variants": list(plan.variants),
            "fingerprint": fingerprint(plan)}


def run(subject, plan: ValidityPlan = ValidityPlan(), draws: int = config.BOOTSTRAP_DRAWS) -> dict:
    """Collect and analyse the battery with one subject."""
    return analyse(collect(subject, plan), plan, draws)
