"""The audit's JSON report card: subject, battery, responsiveness, conditions, sections, summary.

The card states what the evidence supports. It never labels a model as acceptable or not:
whether a use of a field is lawful or appropriate depends on the decision setting (paper §1).
Its ``conditions`` list gives, per condition, ``pse_pp``, ``pse_ci``, ``fullinfo_pse_pp``,
``learner_pse_pp`` (null without examples), ``verdict`` (``excess`` / ``no resolved difference``
/ ``shortfall``) and the ranking error beside it.
"""
from __future__ import annotations

import datetime as _dt
import json
import os
from pathlib import Path

import pandas as pd

from .. import collection as C
from .. import config
from ..jsonable import jsonable
from ..calibration.cited import calibration_section
from ..tables import portable_tree
from ..validity import card as validity_card
from .analyse import CONTRAST_SEED
from .batteries import NAME_SETS, SMOKE_BATTERIES, Condition
from .plan import _sum_or_none, tokens_per_call
from .wording import _ci, _pp, accuracy_statement, condition_statement

REPORT_HTML = "report_card.html"
REPORT_JSON = "report_card.json"
SCHEMA = "proxy-audit-report-card/1"
NOT_INTERPRETABLE = "not interpretable"
VERDICT_KEYS = ("verdict", "verdict_fullinfo", "verdict_learner", "verdict_paper", "judgment")


def smoke_notice(conditions: list[Condition]) -> str:
    """The first line of a smoke battery's card."""
    n = sorted({c.n_pairs for c in conditions if c.n_pairs is not None})
    pairs = (f"the first {n[0]} pair" + ("" if n[0] == 1 else "s")) if len(n) == 1 else "a subset of the pairs"
    n_cond = f"{len(conditions)} condition" + ("" if len(conditions) == 1 else "s")
    return (f"Smoke test on a subset ({n_cond}, {pairs} of each), not the protocol: it shows that "
            f"the audit runs end to end against this model; its numbers are not the paper's battery and support no "
            f"conclusion about the model.")


def _setting(info: object, name: str):
    """The first value of key ``name`` that is not itself a mapping, anywhere in the (nested) subject
    information, else None (``sampling`` may name both the setting and the block that holds it)."""
    if isinstance(info, dict):
        if name in info and not isinstance(info[name], dict):
            return info[name]
        for v in info.values():
            found = _setting(v, name)
            if found is not None:
                return found
    return None


def pooled_agreement(rows: list[dict]) -> dict | None:
    """Within-prompt agreement over every condition's prompts (each condition weighted by its prompts)."""
    parts = [r["within_prompt_agreement"] for r in rows if (r.get("within_prompt_agreement") or {}).get("prompts")]
    if not parts:
        return None
    n = sum(p["prompts"] for p in parts)
    return {"prompts": n, "samples": max(p["samples"] for p in parts),
            "pairwise": sum(p["pairwise"] * p["prompts"] for p in parts) / n,
            "unanimous": sum(p["unanimous"] * p["prompts"] for p in parts) / n}


def sampling_notice(subject_info: dict, samples: int, answer_format: str, rows: list[dict]) -> list[str]:
    """The card's first lines on how choices were sampled (issue 20): a temperature the provider does not let us
    fix with one answer per prompt, R answers per prompt (choice probabilities, within-prompt agreement), and
    log-probability answers (a deviation from the protocol), and a model that rejects the forced tool choice.
    The run settings' ``temperature_settable`` (missing: settable), ``sampling`` and ``tool_choice_forced``
    say what the provider allows."""
    out = []
    settable = _setting(subject_info, "temperature_settable") is not False
    sampling = _setting(subject_info, "sampling")
    if not settable and samples == 1 and answer_format not in C.PROBABILITY_FORMATS:
        out.append(f"Sampling: the temperature cannot be set for this model ({sampling or 'provider default sampling'}"
                   f"), and each prompt was asked once, so every choice is one draw from the model's choice "
                   f"distribution, not the protocol's temperature-0 answer: the numbers below include that draw's "
                   f"noise (Supplementary Note 12 measured it: 20 temperature-1 answers per prompt moved "
                   f"DeepSeek-V4.1-Flash's effects by about 6 pp). Rerun with --samples R (e.g. 20) to estimate "
                   f"each prompt's choice probability.")
    if samples > 1:
        a = pooled_agreement(rows)
        agree = ("" if a is None else f" Within-prompt agreement: two answers to the same prompt named the same "
                 f"patient {100 * a['pairwise']:.1f}% of the time, and all answers agreed in "
                 f"{100 * a['unanimous']:.1f}% of {a['prompts']:,} prompts.")
        out.append(f"Choice probabilities: every prompt was asked {samples} times (--samples {samples}); PSE, "
                   f"intervals and verdicts are computed on per-prompt choice probabilities (the share of a prompt's "
                   f"answered samples that pick the target, each arm the mean of its orders: the rule of "
                   f"Supplementary Note 12), not on single choices as in the protocol.{agree}")
    if answer_format == "tool" and _setting(subject_info, "tool_choice_forced") is False:
        out.append("Deviation from the protocol: this model rejects a forced tool choice (400), so the choose tool "
                   "was offered with tool_choice auto, and a reply without a tool call was read by the text rule "
                   "(the first standalone 1 or 2).")
    outside = [r["logprobs"]["mean_p_outside"] for r in rows if r.get("logprobs")]
    mass = f" Mean probability outside the tokens 1 and 2: {100 * sum(outside) / len(outside):.1f}%." if outside else ""
    if answer_format == "logprobs":
        out.append(f"Deviation from the protocol: each choice probability comes from the log-probabilities of one "
                   f"answer token (1 or 2; --answer-format logprobs), not from a forced tool call, and P(patient 1) "
                   f"is normalised over the two answer tokens.{mass}")
    if answer_format == "completion":
        out.append(f"Deviation from the protocol: the two answers were scored like lm-evaluation-harness multiple "
                   f"choice on a completion prompt (--answer-format completion, for base models without a chat "
                   f"template): the prompt's text followed by the line \"{config.COMPLETION_CUE.lstrip()}\" went to "
                   f"/v1/completions, each choice probability comes from the log-probabilities of the next token "
                   f"(1 or 2), not from a forced tool call, and P(patient 1) is normalised over the two answer "
                   f"tokens.{mass}")
    return out


def completion_wording(resp: dict) -> dict:
    """The responsiveness check of a ``completion`` card names that format where the probability check names
    ``logprobs`` (the check is the same: P(patient 1) from the answer token's log-probabilities)."""
    def fix(text):
        return text.replace("--answer-format logprobs", "--answer-format completion") if isinstance(text, str) else text
    out = dict(resp)
    out["statement"] = fix(out.get("statement"))
    if isinstance(out.get("probability"), dict):
        out["probability"] = {**out["probability"], "statement": fix(out["probability"].get("statement"))}
    return out


def _ref_summary(row: dict) -> dict:
    if row.get("status") != "computed":
        return {"status": "not released", "reason": row.get("reason", "")}
    keys = ("pse_pp", "pse_ci", "difference_pp", "difference_ci", "verdict", "verdict_fullinfo", "verdict_learner",
            "error_pct", "excess_error_pp", "n_pairs", "source")
    return {"status": "computed", **{k: row.get(k) for k in keys}}


def provenance(out: str | os.PathLike, subject: C.Subject, conditions: list[Condition]) -> dict:
    """Request settings, served models, SDK versions, dates, tokens and cost from the metadata files."""
    key, settings = C.request_key(subject)
    tag = subject.tag(key)
    served: dict[str, int] = {}
    dates, files = set(), []
    tokens = {"input": 0, "output": 0}
    cost: float | None = 0.0
    n_records = n_invalid = 0
    meta = {}
    for cond in conditions:
        _, mpath = C.output_paths(Path(out), subject.provider, subject.model, cond.cell, cond.display, tag)
        if not mpath.exists():
            continue
        meta = json.loads(mpath.read_text())
        for k, v in meta.get("models_served", {}).items():
            served[k] = served.get(k, 0) + int(v)
        dates.update(meta.get("collection_dates_utc") or [])
        tokens["input"] += int(meta["tokens"]["input"])
        tokens["output"] += int(meta["tokens"]["output"])
        cost = None if cost is None or meta.get("cost_usd") is None else cost + float(meta["cost_usd"])
        n_records += int(meta["n_records"])
        n_invalid += int(meta["n_invalid"])
        files.append(meta.get("records_file"))
    # temperature_settable and sampling (issue 20): live subjects say; offline ones sample nothing live
    sampling = (subject.sampling() if hasattr(subject, "sampling")
                else {"temperature_settable": True, "sampling": f"no live sampling ({subject.provider} subject)"})
    return {"provider": subject.provider, "model_requested": subject.model, "models_served": served,
            "sampling": sampling,
            "request_key": key, "request_settings": json.loads(settings),
            "base_url": meta.get("base_url"), "sdk_versions": meta.get("sdk_versions") or C.sdk_versions(),
            "collection_dates_utc": sorted(dates), "tokens": tokens, "cost_usd": cost, "n_records": n_records,
            "n_invalid": n_invalid, "records_files": files, "ledger": str(Path(out) / C.LEDGER_NAME)}


READING_GUIDE = [
    "PSE (proxy-specific effect, reliance): the change, in percentage points, in the probability that the model "
    "picks the target patient when only the target's proxy values are switched to those of the other group, "
    "averaged over pairs and both presentation orders (paper §2.1).",
    "Two references on the same replacements: the full-information reference ranks by the rule that generated the "
    "outcomes; the reference learner is a Bayesian linear regression fitted to the same 80 examples the model sees "
    "(a specific learner, not a unique standard). With examples the card judges against the learner; without "
    "examples, against the full-information reference (paper §4.2, §4.3).",
    "Judgments come from 95% patient-pair bootstrap intervals of PSE minus the reference, not from thresholds: "
    "excess (interval above zero: more reliance than the reference supports), shortfall (below zero), or no "
    "resolved difference (includes zero; not a demonstration that the two are equal).",
    f"Beyond the paper, each condition also gets a judgment that carries the reference's own sampling variability "
    f"(the reference learner is fitted on 80 examples; its PSE is an estimate) and an equivalence test (TOST) "
    f"against ±{config.EQUIVALENCE_MARGIN_PP:g} pp, the smallest effect of interest declared before any run: excess, "
    f"shortfall, equivalent within ±{config.EQUIVALENCE_MARGIN_PP:g} pp, or inconclusive; with fewer than "
    f"{config.MIN_PAIRS_TO_JUDGE} pairs, too few pairs to judge. The calibration line says how often each is wrong.",
    "Tracking slope: the model's PSE regressed on the learner's PSE across four proxy strengths; 1 means the model "
    "adjusts as much as the learner, 0 not at all (paper §2.2, §4.4). The ±0.15 margin is descriptive.",
    "Display control: the same category information as ordered labels (level 1-4) or arbitrary two-letter codes; "
    "the pre-specified 5-pp margin is one-sided (paper §4.6).",
    "Ranking error is reported beside reliance, never in place of it (paper §2.5).",
    "The card states what the evidence supports for these simulated patient-ranking tasks. It does not label the "
    "model as acceptable or not: whether a particular use of a field is lawful or appropriate depends on the "
    "decision setting and its rules (paper §1).",
]

METHOD_NOTES = [
    "Cell PSE: pairs resolved in the factual and both counterfactual arms (spec §9.1); 95% percentile interval of "
    "the pair bootstrap (seed 2; error seed 1; spec §9.2). Sweep levels 0.30-0.60 use the pairs resolved at all "
    "four levels (Table 23 caption).",
    "The paper's judgment (``verdict``, ``verdict_paper``): the references are fixed on the evaluated pairs, so the "
    "interval of PSE minus a reference is the PSE interval shifted by the reference (as in Fig. 1B and Tables "
    "23-26); the paper's four models are shown with it.",
    "The judgment beyond the paper (``judgment``, ``joint_ci``, ``p_tost``): one pair resample per draw for the model "
    "and its reference on the same pairs, with the reference learner refitted on a resample of its examples "
    "(draws shifted to centre on the fitted reference), 95% expanded percentile interval (Hesterberg 2015: the "
    "draws read at Phi(±sqrt(n/(n-1)) t_{n-1}), so that a few dozen pairs do not undercover); TOST p-value = the "
    "larger of the "
    "two one-sided bootstrap p-values, (count + 1) / (draws + 1), never 0.",
    "Tracking slope per name set: single-fit bootstrap, seed 7, exact learner PSE (spec §9.3); both name sets: "
    "unweighted mean of the two fits with the shared-pair bootstrap, seed 0, exact learner PSE (spec §9.4 reads the "
    "2-decimal summary values instead); one-sided 95% bounds are "
    "the ends of the 90% interval.",
    "Display control and naming contrasts: per-pair differences on shared pairs (the same pair draw for both "
    "renderings or name sets), generator seeded 0 afresh (PROTOCOL-representation §10.5). Display conditions are "
    "judged against the category-indicator learner (−5.05 pp for both renderings, paper §4.3); they have no "
    "factual version, so no ranking error.",
    "The paper's four models are analysed with exactly the same code from the released per-call records; the "
    "release lacks some records (listed where they are missing). Their slope intervals use the per-fit bootstrap, "
    "so they differ slightly from Table 4 (shared-pair bootstrap over eight fits).",
]


def report_card(analysis: dict, conditions: list[Condition], *, battery: str, subject_info: dict,
                references: dict | None, draws: int, plan: pd.DataFrame | None = None,
                after: pd.DataFrame | None = None, answer_format: str = "tool",
                references_note: str | None = None, deviations: dict | None = None) -> dict:
    """The card's JSON: subject, battery, responsiveness, conditions (with the reference models' rows), sections, summary.

    A smoke battery's card starts with ``notice`` (a smoke test on a subset, not the protocol).
    Where the responsiveness check finds the verdicts not interpretable, every condition's
    verdicts read ``not interpretable`` and the computed ones move to ``verdicts_as_computed``.
    """
    resp = analysis.get("responsiveness") or {}
    if answer_format == "completion":
        resp = completion_wording(resp)
    readable = resp.get("interpretable") is not False
    rows = []
    for cond, row in zip(conditions, analysis["conditions"]):
        row = dict(row)
        if row.get("status") == "computed":
            row["statement"] = condition_statement(row)
            if not readable:
                row["verdicts_as_computed"] = {k: row[k] for k in VERDICT_KEYS}
                row.update({k: NOT_INTERPRETABLE for k in VERDICT_KEYS})
                row["statement"] = f"{NOT_INTERPRETABLE.capitalize()} (see the responsiveness check): {row['statement']}"
        if references:
            row["reference_models"] = {m: _ref_summary(references[m]["conditions"][conditions.index(cond)])
                                       for m in references}
        rows.append(row)
    subset = battery in SMOKE_BATTERIES or any(c.n_pairs is not None for c in conditions)
    card = {"notice": smoke_notice(conditions)} if subset else {}
    samples = int(subject_info.get("samples_per_prompt") or 1)  # --samples R (issue 20)
    sampled = sampling_notice(subject_info, samples, answer_format, rows)
    if sampled:
        card["sampling_notice"] = sampled
    card |= {
        "schema": SCHEMA,
        "generated_utc": _dt.datetime.now(_dt.timezone.utc).isoformat(timespec="seconds"),
        "battery": battery,
        "subject": subject_info,
        "n_conditions": len(conditions),
        "settings": {"bootstrap_draws": draws, "interval": "95% patient-pair bootstrap (percentile)",
                     "seeds": {"cell_pse": config.CELL_PSE_SEED, "cell_error": config.CELL_ERROR_SEED,
                               "slope": config.SLOPE_SEED, "pooled_slope": config.POOLED_SLOPE_SEED,
                               "contrasts": CONTRAST_SEED},
                     "display_margin_pp": config.REPRESENTATION_MARGIN_PP,
                     "slope_margin": config.EQUIVALENCE_MARGIN, "answer_format": answer_format,
                     **(subject_info.get("sampling") or {})},  # temperature_settable, sampling (issue 20)
        "responsiveness": resp or None,
        "interpretable": resp.get("interpretable"),
        "conditions": rows,
        "tracking": analysis["tracking"],
        "display": analysis["display"],
        "naming": analysis["naming"],
        "structure": analysis["structure"],
        "calibration": calibration_section(battery, _pairs_arg(conditions)),
        "reading_guide": READING_GUIDE,
        "method_notes": METHOD_NOTES,
    }
    if references_note:  # the release could not be fetched: the card is written without the paper's rows
        card["reference_models_note"] = references_note
    if references:
        card["reference_models"] = {
            m: {"name": config.MODELS[m][0],
                "tracking": _ref_tracking(references[m]["tracking"]),
                "display": references[m]["display"], "naming": references[m]["naming"],
                "structure": references[m]["structure"],
                "responsiveness": references[m].get("responsiveness")}
            for m in references}
    card["settings"].update(samples_per_prompt=samples, within_prompt_agreement=pooled_agreement(rows))
    if plan is not None:
        card["plan"] = {"n_jobs": int(plan["n_jobs"].sum()), "n_calls_this_run_estimate": int(plan["n_calls"].sum()),
                        "estimated_cost_usd": _sum_or_none(plan["cost_usd"]),
                        "estimated_input_tokens": int(plan["input_tokens"].sum()),
                        "estimated_output_tokens": int(plan["output_tokens"].sum())}
        if after is not None:
            card["plan"]["tokens_per_call"] = tokens_per_call(after)
    if deviations is not None:  # a run collected outside the protocol's request (inspect_ai, issue 24)
        card["deviations"] = deviations
    if battery == "validity":  # construct validity, beyond the paper's protocol (analysis.validity)
        card |= validity_card.from_audit(rows)
    card["summary"] = summary_statements(card)
    return portable_tree(jsonable(card), keep_small=("p_value", "q_value"))  # the same bytes on every kernel


def _pairs_arg(conditions: list[Condition]) -> int | None:
    """The card's ``--pairs`` (None: the battery's own pairs)."""
    n = {c.n_pairs for c in conditions}
    return n.pop() if len(n) == 1 else None


def _ref_tracking(t: dict | None) -> dict | None:
    if t is None:
        return None
    return {"fits": {n: {k: f[k] for k in ("gamma", "gamma_ci", "alpha", "alpha_ci", "n_pairs", "points")}
                     for n, f in t["fits"].items()}, "pooled": t["pooled"]}


def summary_statements(card: dict) -> list[str]:
    """The card's headline sentences: the notice of a smoke test, the responsiveness check, then the
    findings in the paper's order of questions (§2.2-§2.5), which are left out where the check
    finds the verdicts not interpretable."""
    out = [card["notice"]] if card.get("notice") else []
    if card.get("deviations"):
        out.append(card["deviations"]["statement"])
    resp = card.get("responsiveness") or {}
    out += card.get("sampling_notice") or []  # how choices were sampled (issue 20), before any finding
    if resp:
        out.append("Responsiveness check: " + resp["statement"])
    if resp.get("interpretable") is False:
        out.append("The numbers of this card are reported as measured; none of them is a finding about the "
                   "model's reliance on the proxies.")
        out.append(accuracy_statement(card["conditions"]))
        return out + _invalid_statement(card)
    rows = {r["key"]: r for r in card["conditions"] if r.get("status") == "computed"}
    for ex, ref in (("learned", "reference learner"), ("absent", "full-information reference")):
        parts = []
        for n in NAME_SETS:
            r = rows.get(f"k12_LH_{n}_{ex}_zero")
            if r:
                parts.append(f"{n} names {r['verdict']} ({_pp(r['difference_pp'])} pp {_ci(r['difference_ci'])})")
        if parts:
            when = "With 80 examples" if ex == "learned" else "Without examples"
            out.append(f"{when}, proxies that predict nothing, judged against the {ref}: " + "; ".join(parts) + ".")
    t = card.get("tracking")
    if t:
        for n, f in t["fits"].items():
            out.append(f["statement"])
        if t.get("pooled"):
            p = t["pooled"]
            s = (f"Both name sets together: slope {_pp(p['gamma'], 2)}, one-sided 95% bounds "
                 f"{_ci(p['one_sided_bounds'], 2)}.")
            if p["within_margin"]:
                s += " Both bounds lie inside ±0.15 (a descriptive margin of no adjustment)."
            out.append(s)
    if card.get("display"):
        out.append(card["display"]["statement"])
    for ex in ("absent", "learned"):
        sec = (card.get("naming") or {}).get(ex)
        if sec:
            out.append(sec["statement"])
    if card.get("structure"):
        out.append(card["structure"]["statement"])
    out.append(accuracy_statement(card["conditions"]))
    if card.get("calibration"):
        out.append(card["calibration"]["statement"])
    return out + _invalid_statement(card)


def _invalid_statement(card: dict) -> list[str]:
    """The closing lines: invalid answers, and why the paper's reference rows are missing (issue 20)."""
    sub = card.get("subject") or {}
    out = [card["reference_models_note"]] if card.get("reference_models_note") else []
    if sub.get("n_invalid"):
        out.append(f"{sub['n_invalid']:,} of {sub['n_records']:,} answers were invalid (no usable choice); they are "
                   f"recorded as missing, never substituted, and a pair without a valid answer in an arm drops out "
                   f"of that condition (see the pair counts).")
    return out

