"""References of the real-record study: the same-example reference learner and the positive control
(paper §4.7; spec §11.9-11.10)."""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd

from ..learners import ReferenceLearner
from .design import ARM_GROUP, CATEGORY_SEP, CONTROL_PAYERS, CONTROL_SOURCE, CONTROL_WEIGHT
from .study import Study


def indicator_design(st: Study, idx: np.ndarray, categories: np.ndarray) -> np.ndarray:
    """Learner features: Lz (9) + payer and source indicators (sorted levels, first dropped)."""
    payers = sorted({c.split(CATEGORY_SEP)[0] for c in st.cats})
    sources = sorted({c.split(CATEGORY_SEP)[1] for c in st.cats})
    parts = pd.Series(np.asarray(categories, dtype=object)).str.split(CATEGORY_SEP, n=1, expand=True, regex=False)
    P = (parts[0].to_numpy()[:, None] == np.array(payers[1:])[None, :]).astype(float)
    S = (parts[1].to_numpy()[:, None] == np.array(sources[1:])[None, :]).astype(float)
    return np.hstack([st.Lz[np.asarray(idx)], P, S])


def learner_pair_effects(st: Study, pairs: pd.DataFrame, ordering: str = "fixed",
                         target_categories: dict[str, np.ndarray] | None = None,
                         labels: np.ndarray | None = None) -> pd.Series:
    """Same-example learner per pair: pick(target under group 1) - pick(target under group 0).

    The learner is :class:`analysis.learners.ReferenceLearner` fitted on the 80 examples'
    :func:`indicator_design`; it picks the target when its prediction is at least the comparator's.
    """
    ex = st.examples
    lab = st.label if labels is None else labels
    cat = st.panel["category"].to_numpy()
    learner = ReferenceLearner().fit(indicator_design(st, ex, cat[ex]), lab[ex])
    i, j = pairs["i"].to_numpy(), pairs["j"].to_numpy()
    pred_j = learner.predict(indicator_design(st, j, cat[j]))
    c = st.coupling[ordering].loc[i]
    picks = {}
    for arm, g in ARM_GROUP.items():
        tcat = c[f"under_{g}"].to_numpy() if target_categories is None else target_categories[arm]
        picks[arm] = (learner.predict(indicator_design(st, i, tcat)) >= pred_j).astype(float)
    return pd.Series(picks["cf_a1"] - picks["cf_a0"], index=pairs["pair_id"].to_numpy(), name="learner")


def payer_indicator(payer: np.ndarray, definition: str = "medicaid_or_selfpay") -> np.ndarray:
    """Positive-control payer indicator: ``medicaid`` or ``medicaid_or_selfpay``.

    >>> payer_indicator(np.array(["Medicaid", "Self-pay", "Medicare"]), "medicaid").tolist()
    [1.0, 0.0, 0.0]
    """
    keys = {"medicaid": ("Medicaid",), "medicaid_or_selfpay": ("Medicaid", "Self-pay")}[definition]
    return np.isin(np.asarray(payer, dtype=object), keys).astype(float)


@dataclass(frozen=True)
class ControlRule:
    """Positive-control outcome rule: risk + weight x (indicator - mean) / sd (UNRESOLVED choices)."""

    indicator: str = "medicaid_or_selfpay"  # or "medicaid"
    standardise_on: str = "risk_train"  # split whose recorded payers give mean and SD (or "all")
    weight: float = CONTROL_WEIGHT


def control_risk(st: Study, rule: ControlRule, idx: np.ndarray, payers: np.ndarray) -> np.ndarray:
    """Positive-control risk of patients ``idx`` shown with ``payers``."""
    rec = st.panel["payer"].to_numpy()
    pop = np.arange(len(rec)) if rule.standardise_on == "all" else st.splits[rule.standardise_on]
    ind = payer_indicator(rec[pop], rule.indicator)
    z = (payer_indicator(payers, rule.indicator) - ind.mean()) / ind.std()
    return st.risk[np.asarray(idx)] + rule.weight * z


def positive_control_categories(st: Study, pairs: pd.DataFrame) -> dict[str, np.ndarray]:
    """Target categories of the control arms: Referral with BCBS (cf_a0) or Medicaid (cf_a1)."""
    n = len(pairs)
    return {arm: np.full(n, p + CATEGORY_SEP + CONTROL_SOURCE, dtype=object) for arm, p in CONTROL_PAYERS.items()}


def positive_control_references(st: Study, pairs: pd.DataFrame, rule: ControlRule = ControlRule()) -> dict:
    """Full-information and same-example learner PSE (pp) of the positive control.

    The comparator keeps its recorded category; example labels are regenerated as control risk
    plus the same noise draw (``default_rng(SEED + 7)``).
    """
    i, j = pairs["i"].to_numpy(), pairs["j"].to_numpy()
    rec = st.panel["payer"].to_numpy()
    r_j = control_risk(st, rule, j, rec[j])
    bayes = {arm: (control_risk(st, rule, i, np.full(len(i), p)) >= r_j).astype(float)
             for arm, p in CONTROL_PAYERS.items()}
    n = len(st.panel)
    everyone = np.arange(n)
    labels = control_risk(st, rule, everyone, rec) + (st.label - st.risk)
    learner = learner_pair_effects(st, pairs, target_categories=positive_control_categories(st, pairs),
                                   labels=labels)
    return {"full_information_pp": 100 * float(np.mean(bayes["cf_a1"] - bayes["cf_a0"])),
            "learner_pp": 100 * float(learner.mean()), "labels": labels}


def same_payer_indicator(st: Study, pairs: pd.DataFrame, definition: str = "medicaid_or_selfpay",
                         ordering: str = "fixed") -> int:
    """Targets whose payer indicator is the same under both group settings."""
    c = st.coupling[ordering].loc[pairs["i"].to_numpy()]
    pay = {g: c[f"under_{g}"].str.split(CATEGORY_SEP, n=1, regex=False).str[0].to_numpy() for g in (0, 1)}
    return int((payer_indicator(pay[1], definition) == payer_indicator(pay[0], definition)).sum())
