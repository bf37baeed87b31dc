"""The reference learner and its category-indicator variant (paper §4.3; spec PROTOCOL-statistics
§8.2 and PROTOCOL-representation §10.4).

:class:`ReferenceLearner` is a conjugate Bayesian linear regression with an intercept, shaped like
a scikit-learn regressor (hyper-parameters in ``__init__``, ``fit`` returns ``self``, ``coef_`` and
``intercept_``). It is fitted on the labelled examples the prompt shows, at full float64 precision.
:class:`IndicatorLearner` is the same learner on the numeric task fields and indicators of the
proxies' quartile bins (the representation control's reference). The UCI study uses
:class:`ReferenceLearner` on its own features.
"""
from __future__ import annotations

import numpy as np

from . import config
from .encoding import indicator_features


class ReferenceLearner:
    """Posterior mean of ``theta`` in ``y ~ N([1|X] theta, sigma^2)``, ``theta ~ N(0, tau^2 I)``.

    ``S = inv(I / tau^2 + X_aug' X_aug / sigma^2)`` (an explicit inverse, as the release computes
    it) and ``m = S X_aug' y / sigma^2``; ``m[0]`` is the intercept (also shrunk by the prior).

    Parameters
    ----------
    sigma : float
        Label noise SD (``config.LEARNER_SIGMA`` = 0.5).
    tau : float
        Prior SD of every coefficient, intercept included (``config.LEARNER_TAU`` = 1).

    Attributes
    ----------
    coef_ : ndarray of shape (n_features,)
        Posterior mean of the slopes.
    intercept_ : float
        Posterior mean of the intercept.
    posterior_mean_ : ndarray of shape (n_features + 1,)
        ``[intercept_, *coef_]``.

    Examples
    --------
    >>> X = np.array([[0.0], [1.0], [2.0]]); y = np.array([0.0, 1.0, 2.0])
    >>> m = ReferenceLearner().fit(X, y)
    >>> round(float(m.intercept_), 4), np.round(m.coef_, 4).tolist(), np.round(m.predict([[1.0]]), 4).tolist()
    (0.093, [0.8992], [0.9922])
    """

    def __init__(self, sigma: float = config.LEARNER_SIGMA, tau: float = config.LEARNER_TAU):
        self.sigma = sigma
        self.tau = tau

    def fit(self, X, y) -> "ReferenceLearner":
        """Fit on examples ``X`` (n x p) with labels ``y`` (n,); returns ``self``."""
        X_aug = np.column_stack([np.ones(len(X)), np.asarray(X, dtype=float)])
        precision = np.eye(X_aug.shape[1]) / self.tau**2 + X_aug.T @ X_aug / self.sigma**2
        S = np.linalg.inv(precision)
        self.posterior_mean_ = S @ X_aug.T @ np.asarray(y, dtype=float) / self.sigma**2
        self.intercept_ = float(self.posterior_mean_[0])
        self.coef_ = self.posterior_mean_[1:]
        return self

    def predict(self, X) -> np.ndarray:
        """Posterior predictive mean ``intercept_ + X @ coef_`` of rows ``X``."""
        X = np.atleast_2d(np.asarray(X, dtype=float))
        return self.intercept_ + X @ self.coef_


class IndicatorLearner(ReferenceLearner):
    """The category-indicator reference learner of the representation control (spec §10.4).

    Features: the ``L`` task values, then the indicators of bins 1..3 (bin 0 the baseline) of each
    proxy, binned with ``edges`` (:func:`analysis.encoding.quartile_edges`). Ordered labels and
    arbitrary codes show the same bins, so one learner serves both displays.

    Parameters
    ----------
    L : int
        Number of task fields (the columns before the proxies).
    edges : ndarray of shape (M, 3)
        Quartile cut points of each proxy.
    sigma, tau : float
        As :class:`ReferenceLearner`.

    Attributes
    ----------
    coef_, intercept_, posterior_mean_
        As :class:`ReferenceLearner`, over the indicator features.
    """

    def __init__(self, L: int, edges, sigma: float = config.LEARNER_SIGMA, tau: float = config.LEARNER_TAU):
        super().__init__(sigma=sigma, tau=tau)
        self.L = L
        self.edges = edges

    def features(self, X) -> np.ndarray:
        """The indicator features of displayed rows ``X``."""
        return indicator_features(np.asarray(X, dtype=float), self.L, np.asarray(self.edges))

    def fit(self, X, y) -> "IndicatorLearner":
        """Fit on displayed example rows ``X`` (n x k) with labels ``y``; returns ``self``."""
        return super().fit(self.features(X), y)

    def predict(self, X) -> np.ndarray:
        """Posterior predictive mean of displayed rows ``X``."""
        return super().predict(self.features(X))
