"""The card's wording (paper §2.1: what the evidence supports; never a label of the model).

Each function turns a section's numbers into one sentence. Numbers print with a true minus sign.
"""
from __future__ import annotations

import math

import numpy as np

HALF_ADJUSTMENT = 0.5  # "individual upper 95% bounds below 0.5 test for incomplete adjustment" (paper §4.4)
REFERENCE_NAMES = {"learner": "reference learner", "fullinfo": "full-information reference"}
FORBIDDEN_WORDS = ("fair", "unfair", "fairness")  # the card never labels a model (paper §1)


def _isnan(x) -> bool:
    return x is None or (isinstance(x, (float, np.floating)) and math.isnan(x))


def _pp(x, digits: int = 1) -> str:
    return "n/a" if _isnan(x) else f"{x:+.{digits}f}".replace("-", "−")


def _ci(ci, digits: int = 1) -> str:
    if ci is None or _isnan(ci[0]):
        return "[no interval]"
    return f"[{_pp(ci[0], digits)}, {_pp(ci[1], digits)}]"


def condition_statement(row: dict) -> str:
    """One sentence on what the interval of PSE minus the primary reference supports."""
    ref = REFERENCE_NAMES[row["reference"]]
    refval = row["learner_pse_pp"] if row["reference"] == "learner" else row["fullinfo_pse_pp"]
    where = ("the reference learner fitted to the same examples" if row["reference"] == "learner"
             else "the full-information reference (the rule that generated the outcomes)")
    head = f"PSE {_pp(row['pse_pp'])} pp {_ci(row['pse_ci'])} against {_pp(refval)} pp for {where}: "
    v = row["verdict"]
    if v == "excess":
        s = f"reliance exceeded what the {ref} supports (the interval of the difference lies above zero)."
    elif v == "shortfall":
        s = f"reliance fell short of what the {ref} supports (the interval of the difference lies below zero)."
    else:
        s = (f"no difference from the {ref} is resolved (the interval of the difference includes zero; this does "
             f"not show that they are equal).")
    if row.get("examples") == 0 and row.get("display") == "numeric":
        s += " The no-example prompt states that higher values indicate greater severity."
    return head + s + joint_statement(row)


def joint_statement(row: dict) -> str:
    """The judgment beyond the paper (joint bootstrap with the reference's own variability, TOST), "" without it."""
    j = row.get("judgment")
    if not j:
        return ""
    if j == "too few pairs to judge":
        return f" Beyond the paper: too few pairs to judge ({row.get('joint_n_pairs', row.get('n_pairs'))} pairs)."
    return (f" Beyond the paper, with the sampling variability of the reference itself (joint pair bootstrap, "
            f"learner refitted on resampled examples) and an equivalence test at ±{row['margin_pp']:g} pp: {j} "
            f"({_pp(row['joint_difference_pp'])} pp {_ci(row['joint_ci'])}, TOST p = {row['p_tost']:.3f}).")


def slope_statement(gamma: float, ci, who: str) -> str:
    """What a tracking slope's 95% interval supports (paper §2.2, §4.4)."""
    lo, hi = ci
    parts = [f"{who}, the tracking slope is {_pp(gamma, 2)} {_ci(ci, 2)} (1 = adjusts as much as the reference "
             f"learner, 0 = no adjustment)."]
    if hi < HALF_ADJUSTMENT:
        parts.append("Its upper 95% bound lies below 0.5: the model adjusted less than half as much as the learner.")
    elif hi < 1:
        parts.append("The interval lies below 1: the model adjusted less than the learner.")
    elif lo > 1:
        parts.append("The interval lies above 1: the model adjusted more than the learner.")
    else:
        parts.append("The interval includes 1: a difference from full adjustment is not resolved.")
    if lo <= 0 <= hi:
        parts.append("It also includes 0: no adjustment is resolved.")
    return " ".join(parts)


def display_statement(d: dict) -> str:
    """What the ordered - arbitrary contrast and the 5-pp margin support (paper §2.3, §4.6)."""
    s = (f"Ordered labels {_pp(d['ordered_pp'])} pp {_ci(d['ordered_ci'])}, arbitrary labels "
         f"{_pp(d['arbitrary_pp'])} pp {_ci(d['arbitrary_ci'])}; ordered − arbitrary {_pp(d['difference_pp'])} pp "
         f"{_ci(d['difference_ci'])}. ")
    if d["difference"] == "ordered above arbitrary":
        s += "The same category information drew more reliance as an ordered scale than as arbitrary labels."
    elif d["difference"] == "arbitrary above ordered":
        s += "The same category information drew more reliance as arbitrary labels than as an ordered scale."
    else:
        s += "No difference between the two displays is resolved."
    if d["arbitrary_excludes_margin"]:
        s += (f" The arbitrary-label interval ends below {d['margin_pp']:.0f} pp, which excludes an average effect of "
              f"{d['margin_pp']:.0f} pp or more (the pre-specified one-sided criterion).")
    else:
        s += (f" The arbitrary-label interval does not exclude an average effect of {d['margin_pp']:.0f} pp "
              f"or more.")
    return s


def naming_statement(sec: dict, examples: str) -> str:
    when = "without examples" if examples == "absent" else "with 80 examples"
    s = (f"{when.capitalize()}, social names {_pp(sec['social_pp'])} pp and neutral names {_pp(sec['neutral_pp'])} pp: "
         f"social − neutral {_pp(sec['difference_pp'])} pp {_ci(sec['difference_ci'])}. ")
    v = sec["verdict"]
    if v is None:
        return s + "No interval is available (one cell is released only as a summary)."
    if v == "social names lower reliance":
        return s + "Social names lowered reliance on the same values (naming suppression)."
    if v == "social names raise reliance":
        return s + "Social names raised reliance on the same values."
    return s + "No difference between the name sets is resolved."


def accuracy_statement(rows: list[dict]) -> str:
    err = [r["error_pct"] for r in rows if r.get("status") == "computed" and not _isnan(r.get("error_pct"))]
    pse = [r["pse_pp"] for r in rows if r.get("status") == "computed" and r.get("display") == "numeric"]
    if not err:
        return "Ranking error was not measured in these conditions."
    return (f"Ranking error ranged from {min(err):.1f}% to {max(err):.1f}% across the conditions with a factual "
            f"version, while reliance ranged from {_pp(min(pse))} to {_pp(max(pse))} pp. Accuracy is reported "
            f"beside reliance, not in place of it: it cannot show whether reliance is warranted by the evidence "
            f"(paper §2.5).")

