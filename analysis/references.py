"""The two references of the audit (paper §4.3; spec PROTOCOL-statistics §8).

* The full-information reference ranks by true risk and undergoes the same replacement as the
  model; it is exactly 0 when the proxies carry no information.
* The reference learner is a conjugate Bayesian linear regression (sigma = 0.5, tau = 1, with an
  intercept) fitted on the same labelled examples the prompt shows, at full float64 precision.
"""
from __future__ import annotations

import numpy as np

from . import config


def blr_posterior_mean(X: np.ndarray, y: np.ndarray, sigma: float = config.LEARNER_SIGMA,
                       tau: float = config.LEARNER_TAU) -> np.ndarray:
    """Posterior mean ``m`` of ``theta`` in ``y ~ N([1|X] theta, sigma^2)``, ``theta ~ N(0, tau^2 I)``.

    ``S = inv(I / tau^2 + X_aug' X_aug / sigma^2)`` (explicit inverse, as the release) and
    ``m = S X_aug' y / sigma^2``; ``m[0]`` is the intercept.
    """
    X_aug = np.column_stack([np.ones(len(X)), np.asarray(X, dtype=float)])
    precision = np.eye(X_aug.shape[1]) / tau**2 + X_aug.T @ X_aug / sigma**2
    S = np.linalg.inv(precision)
    return S @ X_aug.T @ np.asarray(y, dtype=float) / sigma**2


def blr_predict(m: np.ndarray, X: np.ndarray) -> np.ndarray:
    """Posterior predictive mean ``[1 | X] @ m``."""
    X = np.atleast_2d(np.asarray(X, dtype=float))
    return m[0] + X @ m[1:]
