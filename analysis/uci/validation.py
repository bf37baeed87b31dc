"""Validation of the risk rule and the proxy model on their held-out splits (Supplementary Note 14)."""
from __future__ import annotations

import numpy as np
import pandas as pd
from sklearn.metrics import log_loss, roc_auc_score

from .design import CALIBRATION_MIN_PREVALENCE
from .proxy import category_probabilities, fit_proxy_model, proxy_features
from .study import Study


def risk_validation(st: Study) -> dict[str, float]:
    """Risk rule on risk-validation: log loss, prevalence-only log loss (training prevalence), AUC."""
    y = st.panel["readmitted_30"].to_numpy()
    tr, va = st.splits["risk_train"], st.splits["risk_validation"]
    p = st.rule.model.predict_proba(st.Lz[va])[:, 1]
    return {"log_loss": float(log_loss(y[va], p)),
            "log_loss_prevalence": float(log_loss(y[va], np.full(len(va), y[tr].mean()))),
            "auc": float(roc_auc_score(y[va], p)),
            "n_validation": int(len(va)), "prevalence": float(y[va].mean())}


def proxy_validation(st: Study) -> dict[str, float]:
    """Proxy model on proxy-validation (Supplementary Note 14).

    Log loss of the group + task model, of the task-only and the group-only models (both refitted
    on proxy-train), and the maximum calibration error over categories above 2 % prevalence
    (see :func:`calibration_errors`; decile bins, the decision recorded in the notebook).
    """
    A, cat = st.panel["A"].to_numpy(), st.panel["category"].to_numpy()
    tr, va = st.splits["proxy_train"], st.splits["proxy_validation"]
    out = {}
    for key in ("group+task", "task", "group"):
        m = st.proxy if key == "group+task" else fit_proxy_model(A, st.Lz, cat, tr, key)
        proba = m.predict_proba(proxy_features(A[va], st.Lz[va], key))
        out[f"log_loss_{key}"] = float(log_loss(cat[va], proba, labels=m.classes_))
    out["max_calibration_error"] = float(calibration_errors(st)["decile_ece"].max())
    return out


def calibration_errors(st: Study, bins: int = 10) -> pd.DataFrame:
    """Calibration of the proxy model on proxy-validation, per category above 2 % prevalence.

    Columns: ``prevalence``; ``mean_gap`` = |mean predicted - observed share|; ``decile_ece`` =
    size-weighted mean |mean predicted - observed share| over ``bins`` equal-count bins of the
    predicted probability (the definition used for the claim); ``uniform_ece`` = the same over
    equal-width bins on [0, 1]. The paper does not define its calibration error (UNRESOLVED).
    """
    A, cat = st.panel["A"].to_numpy(), st.panel["category"].to_numpy()
    va = st.splits["proxy_validation"]
    proba = category_probabilities(st.proxy, A[va], st.Lz[va], st.cats)
    rows = []
    for k, c in enumerate(st.cats):
        y = (cat[va] == c).astype(float)
        if y.mean() <= CALIBRATION_MIN_PREVALENCE:
            continue
        p = proba[:, k]
        edges = np.quantile(p, np.linspace(0, 1, bins + 1))
        dec = np.clip(np.searchsorted(edges, p, side="right") - 1, 0, bins - 1)
        uni = np.minimum((p * bins).astype(int), bins - 1)
        rows.append({"category": c, "prevalence": y.mean(), "mean_gap": abs(p.mean() - y.mean()),
                     "decile_ece": _binned_gap(p, y, dec), "uniform_ece": _binned_gap(p, y, uni)})
    return pd.DataFrame(rows).set_index("category")


def _binned_gap(p: np.ndarray, y: np.ndarray, b: np.ndarray) -> float:
    n = np.bincount(b)
    keep = n > 0
    gap = np.abs(np.bincount(b, p)[keep] / n[keep] - np.bincount(b, y)[keep] / n[keep])
    return float((gap * n[keep]).sum() / len(p))
