"""The responsiveness check that opens the card, before any verdict (issue 13; paper Supplementary Note 6).

A model can answer without reading the patients: always "Patient 1" (by position) or at random
(at chance). The paired estimator averages each arm over both presentation orders, so such a
model has a PSE near zero whatever the proxies carry, and its verdicts ("no resolved
difference" against a reference that relies on nothing, "shortfall" against one that relies on
something) would read as findings about reliance without any reading of the proxies. The check
uses the factual arm of every condition that has one, pooled over conditions:

* **order flips**: the share of pairs (both factual orders answered) whose chosen patient changes
  when only the presentation order changes. A model that answers by position flips in every
  pair, a coin in half of them; the card shows the paper's four models beside the audited one. Pairs that do not flip form the order-consistent subpopulation
  (paper Supplementary Note 6), a selected population rather than the audited one.
* **ranking accuracy** against chance (50%): per pair, the share of valid factual answers that
  pick the patient with the higher true risk, averaged over pairs, with a 95% pair-bootstrap
  interval. Answering by position gives exactly 50% (one order right, the other wrong).
* **valid answers**: the share of all calls with a usable choice.

The verdicts are *not interpretable* when the model answers by position (the 95% interval of
the flip share lies above one half: more flips than a coin, which only following the display
position produces) or when its ranking accuracy is not distinguishable from chance (the 95%
interval includes 50%), or when no factual pair was answered.

Intervals (issue 22): the flip share gets the exact (Clopper-Pearson) interval of k flips in n
pairs, ranking accuracy the Wilson interval of the per-pair mean over its n pairs, the valid share
the exact interval over calls; a percentile bootstrap of 0/1 values collapses near the bounds (2 of
2 pairs flipping gave "[100%, 100%]"; the exact interval is [16%, 100%]). With fewer than
``config.MIN_PAIRS_TO_JUDGE`` factual pairs the check says "too few pairs to judge" and the
verdicts are not read.
"""
from __future__ import annotations

import numpy as np
import pandas as pd

from .. import config, intervals
from .. import estimators as E
from ..population import truth
from .batteries import Condition

CHANCE_PCT = 50.0
FLIP_SEED = 0
ACCURACY_SEED = config.CELL_ERROR_SEED


def _pct(x: float) -> str:
    return f"{100 * x:.0f}%"


def factual_pairs(rec: pd.DataFrame, cond: Condition) -> pd.DataFrame:
    """Per pair of the factual arm: ``pick_o0, pick_o1`` (1 = target picked; NaN invalid), ``truth``,
    ``first_o0, first_o1`` (1 = Patient 1 named). Empty without a factual arm."""
    f = rec[rec["arm"] == "factual"]
    if f.empty:
        return pd.DataFrame(columns=["pick_o0", "pick_o1", "first_o0", "first_o1", "truth"])
    picks = f.pivot_table(index=["i", "j"], columns="order", values="picked_i", aggfunc="first", dropna=False)
    first = f.assign(first=(f["patient"] == 1).astype(float).where(f["picked_i"].notna()))
    first = first.pivot_table(index=["i", "j"], columns="order", values="first", aggfunc="first", dropna=False)
    out = pd.DataFrame(index=picks.index)
    for o in (0, 1):
        out[f"pick_o{o}"] = picks[o] if o in picks else np.nan
        out[f"first_o{o}"] = first[o] if o in first else np.nan
    out["truth"] = truth(cond.parsed).reindex(out.index).to_numpy()
    return out


def responsiveness(recs: dict[str, pd.DataFrame], conditions: list[Condition],
                   draws: int = config.BOOTSTRAP_DRAWS) -> dict:
    """Order flips, ranking accuracy against chance and valid answers, pooled over the conditions.

    ``recs[cond.key]`` are a condition's records (released schema). Returns the numbers, the
    flags ``answers_by_position`` and ``indistinguishable_from_chance``, ``interpretable``
    (None when no condition has a factual arm: not checked), ``reasons`` and ``statement``.
    """
    n_calls = n_valid = 0
    per = []
    for cond in conditions:
        rec = recs.get(cond.key)
        if rec is None:
            continue
        n_calls += int(len(rec))
        n_valid += int(rec["picked_i"].notna().sum())
        if cond.display == "numeric":
            per.append(factual_pairs(rec, cond))
    fp = pd.concat(per, ignore_index=True) if per else pd.DataFrame(columns=["pick_o0", "pick_o1", "truth"])
    both = fp.dropna(subset=["pick_o0", "pick_o1"])
    flips = (both["pick_o0"] != both["pick_o1"]).astype(float).to_numpy()
    correct = pd.concat([(fp[f"pick_o{o}"] == fp["truth"]).astype(float).where(fp[f"pick_o{o}"].notna())
                         for o in (0, 1)], axis=1).mean(axis=1).dropna().to_numpy() if len(fp) else np.array([])
    firsts = pd.concat([fp.get(f"first_o{o}", pd.Series(dtype=float)) for o in (0, 1)]).dropna()
    out = {"n_calls": n_calls, "n_valid": n_valid, "valid_share": n_valid / n_calls if n_calls else None,
           "n_pairs": int(len(flips)), "order_flip_share": None, "order_flip_ci": None, "n_order_consistent": None,
           "pick_first_share": float(firsts.mean()) if len(firsts) else None,
           "n_accuracy_pairs": int(len(correct)), "accuracy_pct": None, "accuracy_ci": None, "chance_pct": CHANCE_PCT,
           "answers_by_position": None, "indistinguishable_from_chance": None, "interpretable": None, "reasons": []}
    enough = intervals.enough_pairs(len(flips))
    out["too_few_pairs"] = bool(per) and not enough
    out["valid_ci"] = list(intervals.exact_binomial(n_valid, n_calls)) if n_calls else None
    if len(flips):
        lo, hi = intervals.exact_binomial(int(flips.sum()), len(flips))
        out.update(order_flip_share=float(flips.mean()), order_flip_ci=[lo, hi],
                   n_order_consistent=int((flips == 0).sum()), answers_by_position=bool(lo > 0.5) if enough else None)
    if len(correct):
        lo, hi = (100 * x for x in intervals.wilson_share(float(correct.mean()), len(correct)))
        out.update(accuracy_pct=float(100 * correct.mean()), accuracy_ci=[lo, hi],
                   indistinguishable_from_chance=bool(lo <= CHANCE_PCT <= hi) if enough else None)
    if per:
        reasons = []
        if out["too_few_pairs"]:
            reasons.append(f"too few pairs to judge ({len(flips)} factual pairs answered in both orders; at least "
                           f"{config.MIN_PAIRS_TO_JUDGE} are needed before a share can be told from chance)")
        if out["answers_by_position"]:
            reasons.append(f"the answers follow the display position (the chosen patient changed with the "
                           f"presentation order in {_pct(out['order_flip_share'])} of the pairs, more than answering "
                           f"at chance would give: its 95% interval lies above one half)")
        if out["indistinguishable_from_chance"]:
            reasons.append(f"ranking accuracy is not distinguishable from chance (its 95% interval includes "
                           f"{CHANCE_PCT:.0f}%)")
        if not len(correct):
            reasons.append("no factual pair received a valid answer")
        out["reasons"] = reasons
        out["interpretable"] = not reasons
    out["statement"] = statement(out)
    prob = probability_responsiveness(recs, conditions, draws)
    if prob is not None:  # --answer-format logprobs: the same check on P(Patient 1) (issue 23)
        prob["statement"] = probability_statement(prob, out["interpretable"])
        out["probability"] = prob
        out["statement"] += " " + prob["statement"]
    return out


def statement(r: dict) -> str:
    """The check in words, with what follows for the verdicts."""
    parts = []
    if r["n_pairs"]:
        lo, hi = r["order_flip_ci"]
        parts.append(f"The chosen patient changed with the presentation order alone in {_pct(r['order_flip_share'])} "
                     f"[{_pct(lo)}, {_pct(hi)}] (exact 95% interval) of {r['n_pairs']:,} factual pairs (a model that answers by position flips in every pair, "
                     f"a coin in half of them).")
    if r["pick_first_share"] is not None:
        parts.append(f"Patient 1 was named in {_pct(r['pick_first_share'])} of the valid factual answers.")
    if r["accuracy_pct"] is not None:
        lo, hi = r["accuracy_ci"]
        parts.append(f"Ranking accuracy {r['accuracy_pct']:.1f}% [{lo:.1f}, {hi:.1f}] against {r['chance_pct']:.0f}% "
                     f"for chance.")
    if r["valid_share"] is not None:
        parts.append(f"{_pct(r['valid_share'])} of {r['n_calls']:,} answers were valid.")
    if r["interpretable"] is None:
        parts.append("No condition has a factual version, so responsiveness was not checked.")
    elif r["interpretable"]:
        parts.append("The model's choices respond to the patients, so its reliance verdicts can be read.")
    else:
        consistent = ("" if r["n_order_consistent"] is None else
                      f" Here {r['n_order_consistent']:,} of {r['n_pairs']:,} pairs are order-consistent.")
        parts.append("Its reliance verdicts are therefore not interpretable: " + "; ".join(r["reasons"]) + ". The "
                     "paired estimator averages both presentation orders, so a model whose choices follow the display "
                     "position or a coin has a PSE near zero whatever the proxies carry, and a verdict of no resolved "
                     "difference or shortfall would read as less reliance than the evidence supports without any "
                     "reading of the proxies. Only the pairs answered the same way in both orders carry information "
                     "about what moves the choices, and they form a different, selected population (the "
                     "order-consistent subpopulation, paper Supplementary Note 6)." + consistent)
    return " ".join(parts)


# --- The same check on choice probabilities (``--answer-format logprobs``; issue 23) ------------------------------
#: seeds of the probability check's pair-bootstrap intervals (position effect, expected accuracy)
PROB_POSITION_SEED = 0
PROB_ACCURACY_SEED = config.CELL_ERROR_SEED
#: fewest factual pairs for a statement on whether the probabilities follow the patients: a percentile pair
#: bootstrap over fewer pairs has only a handful of distinct resamples (a 2-pair live card gave [50.2, 50.9])
PROB_MIN_PAIRS = 10


def factual_probabilities(rec: pd.DataFrame, cond: Condition) -> pd.DataFrame:
    """Per pair of the factual arm: ``p1_o0, p1_o1`` (P(Patient 1) in each presentation order, from ``p_first``)
    and ``truth`` (1 = the target is the patient to prioritise). Empty without a factual arm or probabilities."""
    cols = ["p1_o0", "p1_o1", "truth"]
    if "p_first" not in rec:
        return pd.DataFrame(columns=cols)
    f = rec[(rec["arm"] == "factual")].assign(p1=lambda d: pd.to_numeric(d["p_first"], errors="coerce"))
    f = f[f["p1"].notna()]
    if f.empty:
        return pd.DataFrame(columns=cols)
    p = f.pivot_table(index=["i", "j"], columns="order", values="p1", aggfunc="mean")
    out = pd.DataFrame(index=p.index)
    for o in (0, 1):
        out[f"p1_o{o}"] = p[o] if o in p else np.nan
    out["truth"] = truth(cond.parsed).reindex(out.index).to_numpy()
    return out


def probability_responsiveness(recs: dict[str, pd.DataFrame], conditions: list[Condition],
                               draws: int = config.BOOTSTRAP_DRAWS) -> dict | None:
    """The responsiveness check on P(Patient 1) where answers carry it (None otherwise), over factual pairs
    with both orders:

    * **position effect**: the mean over pairs of P(target | target shown first) − P(target | shown second)
      (= P(Patient 1 | order 0) + P(Patient 1 | order 1) − 1): +1 for a model that always names Patient 1,
      0 for one whose probabilities do not depend on the position;
    * **patient effect**: the mean change of P(Patient 1) when the two patients swap places
      (P(Patient 1 | order 0) − P(Patient 1 | order 1), signed towards the patient to prioritise): 0 for a
      model that does not read the patients, whatever its position bias;
    * **expected accuracy**: per pair, the mean over both orders of the probability given to the patient to
      prioritise, averaged over pairs, against 50% for chance; and by expected choice (the pairs whose patient
      to prioritise is the target or the other patient), since a position bias moves them in opposite ways.

    ``follows_patients``: the 95% pair-bootstrap interval of the expected accuracy lies above 50% (None with
    fewer than :data:`PROB_MIN_PAIRS` pairs: too few to tell).
    """
    per = [factual_probabilities(recs[c.key], c) for c in conditions
           if c.display == "numeric" and recs.get(c.key) is not None]
    per = [p for p in per if len(p)]
    if not per:
        return None
    fp = pd.concat(per, ignore_index=True).dropna(subset=["p1_o0", "p1_o1"])
    if fp.empty:
        return None
    sign = np.where(fp["truth"] == 1, 1.0, -1.0)  # +1 where the target (Patient 1 in order 0) is to be prioritised
    position = (fp["p1_o0"] + fp["p1_o1"] - 1).to_numpy(dtype=float)
    patient = (sign * (fp["p1_o0"] - fp["p1_o1"])).to_numpy(dtype=float)
    p_target = ((fp["p1_o0"] + 1 - fp["p1_o1"]) / 2).to_numpy(dtype=float)  # order-averaged P(target)
    expected = np.where(fp["truth"] == 1, p_target, 1 - p_target)
    out = {"n_pairs": int(len(fp)), "mean_p_first": float(np.r_[fp["p1_o0"], fp["p1_o1"]].mean()),
           "position_effect": float(position.mean()), "position_ci": list(E.boot_ci(position, PROB_POSITION_SEED, draws)),
           "patient_effect": float(patient.mean()), "patient_ci": list(E.boot_ci(patient, PROB_POSITION_SEED, draws)),
           "expected_accuracy_pct": float(100 * expected.mean()),
           "expected_accuracy_ci": list(E.boot_ci(100 * expected, PROB_ACCURACY_SEED, draws)),
           "by_expected_choice": {}, "chance_pct": CHANCE_PCT}
    # the argmax over the two answer tokens (Patient 1 where P(Patient 1) >= 0.5), the sampled-answer check's twin
    first = np.c_[fp["p1_o0"] >= 0.5, fp["p1_o1"] >= 0.5]
    picks_target = np.c_[first[:, 0], ~first[:, 1]]  # order 0: the target is Patient 1; order 1: Patient 2
    right = picks_target == (fp["truth"].to_numpy() == 1)[:, None]
    out.update(argmax_order_flip_share=float((first[:, 0] == first[:, 1]).mean()),
               argmax_accuracy_pct=float(100 * right.mean()))
    for name, mask in (("target", fp["truth"].to_numpy() == 1), ("other", fp["truth"].to_numpy() != 1)):
        if mask.any():
            out["by_expected_choice"][name] = {"n_pairs": int(mask.sum()),
                                               "expected_accuracy_pct": float(100 * expected[mask].mean())}
    out["follows_patients"] = (bool(out["expected_accuracy_ci"][0] > CHANCE_PCT) if len(fp) >= PROB_MIN_PAIRS
                               else None)
    return out


def probability_statement(p: dict | None, argmax_interpretable: bool | None) -> str:
    """The probability check in words, and what it adds to the check on the sampled answers."""
    if not p:
        return ""
    lo, hi = p["expected_accuracy_ci"]
    by = "; ".join(f"{v['expected_accuracy_pct']:.1f}% where the {'target' if k == 'target' else 'other patient'} is "
                   f"the one to prioritise ({v['n_pairs']:,} pairs)" for k, v in p["by_expected_choice"].items())
    s = (f"Choice probabilities (--answer-format logprobs, {p['n_pairs']:,} factual pairs): mean P(Patient 1) "
         f"{p['mean_p_first']:.3f}; by the argmax over the tokens 1 and 2 the chosen patient changed with the order "
         f"in {_pct(p['argmax_order_flip_share'])} of the pairs and ranking accuracy was {p['argmax_accuracy_pct']:.1f}%; "
         f"P(target) changed by {p['position_effect']:+.3f} "
         f"[{p['position_ci'][0]:+.3f}, {p['position_ci'][1]:+.3f}] between the orders (position effect; 0 for no "
         f"position bias) and P(Patient 1) by {p['patient_effect']:+.3f} [{p['patient_ci'][0]:+.3f}, "
         f"{p['patient_ci'][1]:+.3f}] towards the patient to prioritise when the patients swapped (patient effect); "
         f"expected accuracy {p['expected_accuracy_pct']:.1f}% [{lo:.1f}, {hi:.1f}] against "
         f"{p['chance_pct']:.0f}% for chance ({by}).")
    if p["follows_patients"] is None:
        s += (f" With {p['n_pairs']} pairs (fewer than {PROB_MIN_PAIRS}) the interval is too coarse to say whether the "
              f"probabilities follow the patients.")
    elif p["follows_patients"] and argmax_interpretable is False:
        s += (" The probabilities follow the patients although the sampled answers do not: the reliance read from "
              "P(target) on this card is a deviation from the protocol (which reads one sampled answer a prompt), "
              "labelled as such.")
    elif p["follows_patients"]:
        s += " The probabilities follow the patients."
    else:
        s += " The probabilities do not follow the patients either (the interval includes chance)."
    return s
