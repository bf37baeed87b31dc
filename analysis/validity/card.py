"""The validity section of the report card: JSON keys and an HTML fragment (beyond the paper's protocol).

:func:`section` turns :func:`analysis.validity.run.analyse` into the card's keys:

* ``cue_panel`` — one entry per cell and cue: ``cell, cue, control, pse_pp, pse_ci, reference,
  reference_pp, excess_pp, excess_ci, verdict``;
* ``convergence`` — the first cell's (the paper's main cell) ``pairwise_r``, ``sign_agreement``,
  ``verdict_agreement``, ``excess_range``, ``statement``; ``convergence_by_cell`` for every cell;
* ``association`` — per cell, cue and probe variant: ``association_auc, auc_ci, abstain_rate``, the
  one-sided p-value and its Benjamini–Hochberg q-value;
* ``association_vs_reliance`` — the first cell's forced-choice coupling (:mod:`analysis.validity.coupling`:
  cues as the unit, Pearson with a Fisher-z interval, Spearman, permutation p-values, power at this
  many cues, pair-level coupling; ``defined`` false when the AUCs do not vary beyond noise);
  ``association_vs_reliance_by_cell`` for every cell and variant;
* ``replication`` — per cell and cue replicated: the replicates' verdicts, ``stable`` or
  ``collection-dependent``;
* ``baseline`` — per cell and cue: the blind (no-cue) arm, each group's deviation from it, discriminant
  validity (the group difference and the cross-group correlation) and competence (ranking accuracy);
* ``validity_plan`` — the plan's fingerprint (battery, margins, cues, served model, prompt hashes),
  written before collection;
* ``validity_statements`` and ``validity_scope`` (what this section is and is not).

Wording: what the evidence supports; never a label of the model. The panel was not pre-specified
by the paper and is descriptive; the margins (``config.EQUIVALENCE_MARGIN_PP`` on the excess,
:data:`analysis.validity.coupling.MARGIN` on the correlation) were declared before any run.
"""
from __future__ import annotations

import html
import math

from ..cells import parse_cell
from ..jsonable import jsonable
from . import panel as P
from . import replication as R
from .run import CELLS, ValidityPlan

SCOPE = ("Construct validity (an extension beyond the paper's protocol): the same pairs and references under "
         "several operationalisations of the proxy fields (cues), an association probe per cue, and seed "
         "replication. Not pre-specified by the paper: the panel is descriptive, except the TOST margin, which "
         "was declared before any run.")
_PANEL_KEYS = ("cue", "control", "pse_pp", "pse_ci", "reference", "reference_kind", "reference_pp", "reference_ci",
               "excess_pp", "excess_ci", "p_tost", "margin_pp", "verdict", "paper_excess_ci", "paper_verdict",
               "reliability", "n_pairs")
_CONV_KEYS = ("pairwise_r", "median_r", "reliability", "sign_agreement", "verdict_agreement", "excess_range",
              "heterogeneity", "robust", "statement")


def _conv(cell: dict) -> dict:
    return {"cell": cell["cell"], **{k: cell["convergence"].get(k) for k in _CONV_KEYS}}


def section(result: dict) -> dict:
    """The card keys of a validity result (JSON-safe)."""
    cells = result["cells"]
    panel = [{"cell": c["cell"], **{k: r.get(k) for k in _PANEL_KEYS}} for c in cells for r in c["rows"]]
    q_rel = {(c["cell"], t["cue"]): t for c in cells for t in c["reliance_tests"]}
    for row in panel:
        t = q_rel.get((row["cell"], row["cue"]), {})
        row["reliance_q"] = t.get("q_value")
    assoc = [{"cell": c["cell"], **{k: a.get(k) for k in ("cue", "variant", "control", "association_auc", "auc_ci",
                                                          "abstain_rate", "abstain_ci", "n_pairs", "p_value",
                                                          "q_value", "bh_family")}}
             for c in cells for a in c["association"]]
    rel_by = [{"cell": c["cell"], "variant": v, **rel} for c in cells for v, rel in c["association_vs_reliance"].items()]
    first_rel = next((r for r in rel_by if r["variant"] == "forced"), rel_by[0] if rel_by else None)
    for row in panel:
        row.setdefault("reliance_q", None)
    reps = [{"cell": c["cell"], **o} for c in cells for o in c["replication"]]
    base = [{"cell": c["cell"], **b} for c in cells for b in c.get("baseline", [])]
    fp = result.get("fingerprint")
    conf = [{"cell": c["cell"], **c["confounds"]} for c in cells if c.get("confounds")]
    out = {"validity_scope": SCOPE, "validity_cheap_pass": result.get("cheap") or None,
           "cue_panel": panel, "convergence": _conv(cells[0]) if cells else None,
           "convergence_by_cell": [_conv(c) for c in cells], "association": assoc,
           "association_vs_reliance": first_rel, "association_vs_reliance_by_cell": rel_by,
           "replication": reps, "baseline": base, "confounds": conf,
           "validity_plan": {"sha256": fp["sha256"], "served_model": fp.get("served_model", ""),
                             "margins": fp["margins"], "cues": fp["cues"]} if fp else None,
           "validity_statements": statements(cells, result.get("cheap"))}
    return jsonable(out)


def statements(cells: list[dict], cheap: str | None = None) -> list[str]:
    """One line per finding, in the card's wording."""
    out = [cheap.capitalize() + "."] if cheap else []
    for c in cells:
        conv = c["convergence"]
        dissent = [f"{r['cue']}: {r['verdict']}" for r in c["rows"]
                   if not r["control"] and r["verdict"] and r["verdict"] != conv["verdict_agreement"]["modal"]]
        s = f"{c['cell']}: {conv['statement']}"
        if dissent:
            s += " (" + "; ".join(dissent) + ")"
        lo, hi = conv["excess_range"]
        if not (math.isnan(lo) or math.isnan(hi)):
            s += f"; excess ranges from {lo:+.1f} to {hi:+.1f} pp across cues"
        out.append(s + ".")
        ctrl = [r for r in c["rows"] if r["control"]]
        for r in ctrl:
            out.append(f"{c['cell']}: positive control (explicit group label; outside the convergence and every "
                       f"BH family): PSE {r['pse_pp']:+.1f} pp [{r['pse_ci'][0]:+.1f}, {r['pse_ci'][1]:+.1f}], "
                       f"{r['verdict'] or 'not judged'} against its reference.")
        forced = [a for a in c["association"] if a["variant"] == "forced" and not a["control"]]
        if forced:
            n_assoc = sum(1 for a in forced if a["associated"])
            out.append(f"{c['cell']}: the forced-choice probe resolves an association above chance (BH-adjusted) "
                       f"under {n_assoc} of {len(forced)} cues.")
        if "forced" in c["association_vs_reliance"]:
            out.append(f"{c['cell']}: " + c["association_vs_reliance"]["forced"]["statement"] + ".")
        for o in c["replication"]:
            if o["replication"]:
                out.append(f"{c['cell']}, cue {o['cue']}: {o['replication']} over {len(o['verdicts'])} independent "
                           f"pair samples ({', '.join(o['verdicts'])}).")
    return out


# --- the audit engine's part of the battery -------------------------------------------------------

#: what the audit engine collects of the validity battery: the displays of the paper's vocabulary
ENGINE_DISPLAYS = ("numeric", "ordered", "arbitrary")
ENGINE_NOTE = ("the audit engine collects the cues it can express (the paper's vocabulary in the numeric, ordered "
               "and arbitrary displays, and the seed replications); the other vocabularies, the narrative, the "
               "explicit label and the association probe are collected by `python -m analysis.validity` (per-cue "
               "ledgers) and are absent from this card")


def engine_conditions(cells=None, seeds=None) -> list[tuple[str, str]]:
    """``(cell, display)`` of the validity battery's engine part, in card order (base cells, then replications)."""
    plan = ValidityPlan(cells=tuple(cells or CELLS), seeds=tuple(seeds or R.REPLICATION_SEEDS))  # parses the ids once
    out = [(c, d) for c in plan.cells for d in ENGINE_DISPLAYS]
    out += [(rep.id, "numeric") for c in plan.parsed.values() for rep in R.replicate_cells(c, plan.seeds)]
    return out


def from_audit(rows: list[dict]) -> dict:
    """Card keys of the validity battery from the audit engine's condition rows (``conditions`` of the card).

    Per base cell: the displays as cues (``cue_panel``), the convergence without per-pair correlations
    (the rows carry no per-pair shifts: ``pairwise_r`` is empty), and the replication of the numeric cue
    over the seed replications. ``association`` is empty (the engine has no probe).
    """
    computed = [r for r in rows if r.get("status", "computed") == "computed" and r.get("pse_ci")]
    base = [r for r in computed if parse_cell(r["cell"]).seed is None]
    cells: dict[str, list[dict]] = {}
    for r in base:
        cells.setdefault(r["cell"], []).append(
            {"cue": r["display"], "control": False, "pse_pp": r["pse_pp"], "pse_ci": list(r["pse_ci"]),
             "reference": r.get("reference"), "reference_pp": r["pse_pp"] - r["difference_pp"],
             "excess_pp": r["difference_pp"], "excess_ci": list(r["difference_ci"]), "verdict": r.get("verdict") or "",
             "n_pairs": r.get("n_pairs")})
    out_cells = []
    for cell, crow in cells.items():
        conv = P.convergence(crow, {})
        reps = {cell: [x for x in crow if x["cue"] == "numeric"]}
        for r in computed:
            c = parse_cell(r["cell"])
            if c.seed is not None and c.with_(seed=None).id == cell and r["display"] == "numeric":
                reps[r["cell"]] = [{"cue": "numeric", "pse_pp": r["pse_pp"], "excess_pp": r["difference_pp"],
                                    "excess_ci": list(r["difference_ci"]), "verdict": r.get("verdict") or ""}]
        out_cells.append({"cell": cell, "rows": crow, "convergence": conv, "association": [], "reliance_tests": [],
                          "association_vs_reliance": {}, "replication": R.replication_rows(reps)})
    card = section({"cells": out_cells, "cheap": None})
    card["validity_statements"].insert(0, ENGINE_NOTE[0].upper() + ENGINE_NOTE[1:] + ".")
    return card


# --- HTML -------------------------------------------------------------------------------------------

def _e(x) -> str:
    return html.escape(str(x))


def _n(x, d: int = 1, signed: bool = True) -> str:
    if x is None or (isinstance(x, float) and math.isnan(x)):
        return "—"
    return f"{x:+.{d}f}" if signed else f"{x:.{d}f}"


def _ci(ci, d: int = 1, signed: bool = True) -> str:
    if not ci or ci[0] is None:
        return "—"
    return f"[{_n(ci[0], d, signed)}, {_n(ci[1], d, signed)}]"


def _table(headers: list[str], rows: list[list[str]]) -> str:
    head = "".join(f"<th>{_e(h)}</th>" for h in headers)
    body = "".join("<tr>" + "".join(f"<td>{_e(v)}</td>" for v in r) + "</tr>" for r in rows)
    return f"<table><thead><tr>{head}</tr></thead><tbody>{body}</tbody></table>"


def html_section(card: dict) -> str:
    """An escaped HTML fragment of the card's validity keys ('' when the card has none)."""
    if not card.get("cue_panel"):
        return ""
    parts = ["<section id='validity'><h2>Construct validity (beyond the paper's protocol)</h2>",
             f"<p>{_e(card['validity_scope'])}</p>"]
    if card.get("validity_cheap_pass"):
        parts.append(f"<p><strong>{_e(card['validity_cheap_pass'])}</strong></p>")
    parts.append("<ul>" + "".join(f"<li>{_e(s)}</li>" for s in card["validity_statements"]) + "</ul>")
    parts.append("<h3>Cue panel</h3>")
    parts.append(_table(["cell", "cue", "PSE (pp)", "95% CI", "reference (pp)", "PSE − reference",
                         "95% CI (joint: pairs and examples)", "verdict", "paper's rule: CI", "paper's verdict"],
                        [[r["cell"], r["cue"] + (" (positive control)" if r["control"] else ""), _n(r["pse_pp"]),
                          _ci(r["pse_ci"]), _n(r["reference_pp"]), _n(r["excess_pp"]), _ci(r["excess_ci"]),
                          r["verdict"] or "—", _ci(r.get("paper_excess_ci")), r.get("paper_verdict") or "—"]
                         for r in card["cue_panel"]]))
    parts.append("<h3>Association probe</h3>")
    parts.append(_table(["cell", "cue", "variant", "AUC", "95% CI", "abstained", "exact 95% CI", "BH q"],
                        [[a["cell"], a["cue"], a["variant"], _n(a["association_auc"], 2, False),
                          _ci(a["auc_ci"], 2, False), _n(a["abstain_rate"], 3, False),
                          _ci(a.get("abstain_ci"), 3, False),
                          _n(a["q_value"], 3, False) + (" (control, outside BH)" if a["control"] else "")]
                         for a in card["association"]]))
    rel = card.get("association_vs_reliance")
    if rel:
        parts.append(f"<p>Association against reliance ({_e(rel['cell'])}, {_e(rel['variant'])} probe): "
                     f"{_e(rel['statement'])}.</p>")
    if card.get("baseline"):
        parts.append("<h3>Blind baseline, discriminant validity, competence</h3>")
        parts.append(_table(["cell", "cue", "A = 1 − blind (pp)", "95% CI", "A = 0 − blind (pp)", "95% CI",
                             "cross-group r", "ranking accuracy", "95% CI (Wilson)"],
                            [[b["cell"], b["cue"], _n(b.get("deviation_a1_pp")), _ci(b.get("deviation_a1_ci")),
                              _n(b.get("deviation_a0_pp")), _ci(b.get("deviation_a0_ci")),
                              _n(b.get("cross_group_r"), 2), _n(b.get("competence_accuracy"), 3, False),
                              _ci(b.get("competence_accuracy_ci"), 3, False)] for b in card["baseline"]]))
    for cf in card.get("confounds") or []:
        parts.append(f"<h3>Length and readability per rendering ({_e(cf['cell'])})</h3>")
        parts.append(_table(["cue", "words", "characters", "Flesch–Kincaid grade"],
                            [[r["cue"], _n(r["words"], 0, False), _n(r["characters"], 0, False),
                              _n(r["fk_grade"], 1, False)] for r in cf["renderings"]]))
        m = cf["model"]
        if m.get("terms"):
            parts.append(f"<p>{_e(m['formula'])} ({m['n_calls']} calls, {m['n_pairs']} pairs, {m['n_cues']} cues; "
                         "pair-clustered SE): " + "; ".join(f"{_e(t['term'])} {_n(t['coef_pp'])} pp "
                                                            f"{_ci(t['ci_pp'])}" for t in m["terms"]) + ".</p>")
    if card.get("validity_plan"):
        vp = card["validity_plan"]
        parts.append(f"<p>Plan fingerprint (written before collection): <code>{_e(vp['sha256'])}</code>; served "
                     f"model {_e(vp['served_model'] or '—')}; margins {_e(vp['margins'])}.</p>")
    if card.get("replication"):
        parts.append("<h3>Replication</h3>")
        parts.append(_table(["cell", "cue", "replicates", "verdicts", "replication"],
                            [[o["cell"], o["cue"], ", ".join(o["replicates"]), ", ".join(o["verdicts"]),
                              o["replication"]] for o in card["replication"]]))
    parts.append("</section>")
    return "\n".join(parts)
