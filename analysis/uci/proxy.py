"""The proxy model of the joint category and the uniform-draw coupling across groups (spec §11.5-11.6)."""
from __future__ import annotations

import numpy as np
from sklearn.linear_model import LogisticRegression

from .design import CATEGORY_SEP, ORDERINGS, PAYERS, PERMUTED_ORDER_SEED, SEED, SOURCES


def category_order(observed, ordering: str = "fixed") -> list[str]:
    """Category list of a coupling: payer x source product order restricted to ``observed``.

    ``fixed`` is the product order, ``reverse`` its reverse, ``seeded`` its permutation by
    ``default_rng(SEED + 77)``.
    """
    observed = set(observed)
    cats = [p + CATEGORY_SEP + s for p in PAYERS for s in SOURCES if p + CATEGORY_SEP + s in observed]
    if ordering == "fixed":
        return cats
    if ordering == "reverse":
        return cats[::-1]
    if ordering == "seeded":
        perm = np.random.default_rng(PERMUTED_ORDER_SEED).permutation(len(cats))
        return [cats[k] for k in perm]
    raise ValueError(f"unknown coupling order {ordering!r}; expected one of {ORDERINGS}")


def fit_proxy_model(A: np.ndarray, Lz: np.ndarray, category: np.ndarray, train: np.ndarray,
                    features: str = "group+task") -> LogisticRegression:
    """Multinomial logistic regression of the joint category on ``[A, Lz]`` (spec §11.5).

    ``features`` = ``task`` or ``group`` fits the comparison models of Supplementary Note 14.
    """
    X = proxy_features(A, Lz, features)
    return LogisticRegression(max_iter=2000, C=1.0).fit(X[train], np.asarray(category)[train])


def proxy_features(A: np.ndarray, Lz: np.ndarray, features: str = "group+task") -> np.ndarray:
    """Design matrix of the proxy model (group first)."""
    A = np.asarray(A, float).reshape(-1, 1)
    return {"group+task": lambda: np.hstack([A, Lz]), "task": lambda: np.asarray(Lz),
            "group": lambda: A}[features]()


def category_probabilities(model: LogisticRegression, group, Lz: np.ndarray, cats: list[str]) -> np.ndarray:
    """P(category | group, task fields), columns in ``cats`` order (``group`` scalar or per row)."""
    g = np.broadcast_to(np.asarray(group, float), (len(Lz),))
    proba = model.predict_proba(np.column_stack([g, Lz]))
    col = {c: k for k, c in enumerate(model.classes_)}
    return proba[:, [col[c] for c in cats]]


def coupling_uniforms(patient_nbr: np.ndarray, seed: int = SEED) -> np.ndarray:
    """The fixed uniform of each patient: ``default_rng(SeedSequence([seed, patient_nbr])).random()``."""
    return np.array([np.random.default_rng(np.random.SeedSequence([seed, int(p)])).random()
                     for p in np.asarray(patient_nbr)])


def couple(p_own: np.ndarray, p_groups: dict[int, np.ndarray], recorded: np.ndarray,
           u: np.ndarray) -> dict[int, np.ndarray]:
    """Category index of each patient under each group (vectorised uniform-draw coupling).

    ``p_own`` (n x K) is the own-group distribution, ``recorded`` the recorded category index,
    ``u`` the fixed uniforms; ``U = F_own[a-1] + u (F_own[a] - F_own[a-1])`` is mapped through
    each ``p_groups[g]`` by ``searchsorted(cumsum, U, side="right")`` (capped at K - 1).
    Under the own group it returns ``recorded`` (tested as an identity).
    """
    F_own = np.cumsum(p_own, axis=1)
    rows = np.arange(len(recorded))
    upper = F_own[rows, recorded]
    lower = np.where(recorded > 0, F_own[rows, np.maximum(recorded - 1, 0)], 0.0)
    U = lower + np.asarray(u) * (upper - lower)
    K = p_own.shape[1]
    out = {}
    for g, p in p_groups.items():
        F = np.cumsum(p, axis=1)
        out[g] = np.minimum((F <= U[:, None]).sum(axis=1), K - 1)
    return out
