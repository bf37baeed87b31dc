"""Patient-disjoint splits, the frozen outcome rule and the synthetic example labels (spec §11.3-11.4)."""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd
from sklearn.linear_model import LogisticRegression

from .design import LABEL_NOISE_SD, LABEL_SEED, SEED, SPLIT_CUTS, SPLIT_NAMES, TASK_COLUMNS


def split_indices(n: int, seed: int = SEED) -> dict[str, np.ndarray]:
    """Five patient-disjoint splits in the permutation's order (spec §11.3).

    >>> s = split_indices(100); [len(s[k]) for k in SPLIT_NAMES]
    [35, 10, 35, 10, 10]
    """
    perm = np.random.default_rng(seed).permutation(n)
    parts = np.split(perm, [int(n * c) for c in SPLIT_CUTS])
    return dict(zip(SPLIT_NAMES, parts))


@dataclass
class RiskRule:
    """The frozen outcome rule: standardised task fields -> standardised logistic score."""

    mu: np.ndarray
    sd: np.ndarray
    model: LogisticRegression
    score_mean: float
    score_sd: float

    def standardise(self, L: np.ndarray) -> np.ndarray:
        return (np.asarray(L, float) - self.mu) / self.sd

    def risk(self, Lz: np.ndarray) -> np.ndarray:
        return (self.model.decision_function(Lz) - self.score_mean) / self.score_sd


def fit_risk_rule(panel: pd.DataFrame, train: np.ndarray) -> RiskRule:
    """Logistic regression of 30-day readmission on the standardised task fields (spec §11.4)."""
    L = panel[list(TASK_COLUMNS)].to_numpy(float)
    mu, sd = L[train].mean(0), L[train].std(0)
    sd = np.where(sd == 0, 1.0, sd)
    Lz = (L - mu) / sd
    model = LogisticRegression(max_iter=2000).fit(Lz[train], panel["readmitted_30"].to_numpy()[train])
    score = model.decision_function(Lz[train])
    return RiskRule(mu, sd, model, float(score.mean()), float(score.std()))


def synthetic_labels(risk: np.ndarray, seed: int = LABEL_SEED, sd: float = LABEL_NOISE_SD) -> np.ndarray:
    """Example labels: risk plus Gaussian noise (one draw per patient, all rows)."""
    return risk + np.random.default_rng(seed).normal(0, sd, len(risk))
