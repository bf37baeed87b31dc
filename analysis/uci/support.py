"""Cross-group support of the substituted records (Supplementary Note 14; spec R2)."""
from __future__ import annotations

import numpy as np
import pandas as pd
from sklearn.linear_model import LogisticRegression

from .design import CATEGORY_SEP, PROPENSITY_FEATURES, SUPPORT_MIN_PROB, SUPPORT_PROPENSITY
from .study import Study


def substituted_categories(st: Study, targets: np.ndarray, ordering: str = "fixed") -> np.ndarray:
    """Category of each target under the OTHER group (the one the substitution shows)."""
    c = st.coupling[ordering].loc[np.asarray(targets)]
    return np.where(c["A"].to_numpy() == 1, c["under_0"].to_numpy(), c["under_1"].to_numpy())


def _one_hot_levels(values: np.ndarray, levels: list[str]) -> np.ndarray:
    """Indicators of ``levels[1:]`` (levels sorted, the first dropped)."""
    return (np.asarray(values, dtype=object)[:, None] == np.array(levels[1:], dtype=object)[None, :]).astype(float)


def group_propensity(st: Study, idx: np.ndarray, features: str = PROPENSITY_FEATURES, fit_on: str = "proxy_train",
                     categories: np.ndarray | None = None) -> np.ndarray:
    """P(A = 1 | ...) from a logistic regression (``max_iter=2000``) fitted on split ``fit_on``.

    ``features``:

    * ``"task+payer+source"`` (spec R2, the default): the nine standardised task fields, one-hot
      payer and one-hot admission source (levels sorted, first dropped);
    * ``"task"``: the task fields alone;
    * ``"task+category"``: the task fields and indicators of the joint category.

    The model is fitted on recorded categories; patients ``idx`` are evaluated with ``categories``
    (e.g. the substituted ones) or, when ``None``, their recorded categories.
    """
    A, cat = st.panel["A"].to_numpy(), st.panel["category"].to_numpy()
    cats = np.array(st.cats)
    payers = sorted(set(st.panel["payer"]))
    sources = sorted(set(st.panel["source"]))

    def X(rows, c):
        if features == "task":
            return st.Lz[rows]
        if features == "task+category":
            return np.hstack([st.Lz[rows], (np.asarray(c)[:, None] == cats[None, 1:]).astype(float)])
        if features == "task+payer+source":
            parts = pd.Series(np.asarray(c, dtype=object)).str.split(CATEGORY_SEP, n=1, expand=True, regex=False)
            return np.hstack([st.Lz[rows], _one_hot_levels(parts[0].to_numpy(), payers),
                              _one_hot_levels(parts[1].to_numpy(), sources)])
        raise ValueError(f"unknown propensity features {features!r}")

    fit = np.arange(len(A)) if fit_on == "all" else st.splits[fit_on]
    m = LogisticRegression(max_iter=2000).fit(X(fit, cat[fit]), A[fit])
    idx = np.asarray(idx)
    return m.predict_proba(X(idx, cat[idx] if categories is None else categories))[:, 1]


def support_checks(st: Study, targets: np.ndarray, ordering: str = "fixed", features: str = PROPENSITY_FEATURES,
                   fit_on: str = "proxy_train", evaluate: str = "substituted") -> dict[str, float]:
    """Cross-group support of the substituted records (the primary targets), in % (spec R2).

    ``propensity_outside_pct``: share with group propensity (:func:`group_propensity`, by default
    task fields + one-hot payer + one-hot admission source, fitted on proxy-train) outside
    [0.02, 0.98], each target evaluated with its task fields and its ``evaluate`` category
    (``"substituted"``: the other group's, as shown; ``"recorded"``: its own);
    ``substituted_below_pct``: share whose substituted category has probability below 0.01 under
    the other group.
    """
    targets = np.asarray(targets)
    sub = st.coupling[ordering].loc[targets]
    if evaluate not in ("substituted", "recorded"):
        raise ValueError(f"evaluate must be 'substituted' or 'recorded', not {evaluate!r}")
    shown = substituted_categories(st, targets, ordering) if evaluate == "substituted" else None
    prop = group_propensity(st, targets, features, fit_on, categories=shown)
    lo, hi = SUPPORT_PROPENSITY
    outside = (prop < lo) | (prop > hi)
    return {"n": int(len(targets)), "propensity_outside": int(outside.sum()),
            "propensity_outside_pct": 100 * float(outside.mean()),
            "substituted_below_pct": 100 * float((sub["p_other_substituted"].to_numpy() < SUPPORT_MIN_PROB).mean())}


def support_variants(st: Study, targets: np.ndarray) -> pd.DataFrame:
    """Propensity-outside counts under other propensity models and evaluations (for the notebook).

    The first row is the spec's model (R2); the others show how much the count depends on it.
    """
    rows = []
    grid = (("task+payer+source", "substituted", "proxy_train"), ("task+payer+source", "substituted", "risk_train"),
            ("task+payer+source", "substituted", "all"), ("task+payer+source", "recorded", "proxy_train"),
            ("task", "substituted", "proxy_train"), ("task+category", "substituted", "proxy_train"))
    for features, evaluate, fit_on in grid:
        s = support_checks(st, targets, features=features, fit_on=fit_on, evaluate=evaluate)
        rows.append({"features": features, "categories": evaluate, "fitted_on": fit_on, "records": s["n"],
                     "outside": s["propensity_outside"], "outside_pct": s["propensity_outside_pct"]})
    return pd.DataFrame(rows)
