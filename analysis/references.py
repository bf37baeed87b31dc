"""The two references of the audit (paper §4.3; spec PROTOCOL-statistics §8).

* The full-information reference ranks by true risk and undergoes the same replacement as the
  model; it is exactly 0 when the proxies carry no information.
* The reference learner is a conjugate Bayesian linear regression (sigma = 0.5, tau = 1, with an
  intercept) fitted on the same labelled examples the prompt shows, at full float64 precision
  (not the two-decimal rendering; the examples are standardised within their own rows, spec §4).
* The category-indicator learner of the representation control (spec PROTOCOL-representation
  §10.4) uses the numeric task fields and indicators of the proxies' quartile bins.

Each reference gives a PSE (pp) and a ranking error R (share of the 99 pairs whose factual choice
disagrees with the true-risk ranking). The counterfactual of every pair is computed for all 99
targets at once: only the target's proxies change, so only the proxy columns' means and SDs of
the re-standardised counterfactual sample need recomputing (:func:`counterfactual_rows`), which
reproduces :func:`analysis.population.counterfactual` row for row (see the tests).
"""
from __future__ import annotations

import functools
from collections.abc import Iterable

import numpy as np
import pandas as pd

from . import config
from .cells import Cell, expect_cell
from .encoding import indicator_features, quartile_edges  # noqa: F401  (indicator_features re-exported)
from .learners import IndicatorLearner, ReferenceLearner
from .population import counterfactual_rows, examples, pair_counterfactuals, pairs, population  # noqa: F401 (counterfactual_rows re-exported)


def blr_posterior_mean(X: np.ndarray, y: np.ndarray, sigma: float = config.LEARNER_SIGMA,
                       tau: float = config.LEARNER_TAU) -> np.ndarray:
    """``[intercept, *coef]`` of :class:`analysis.learners.ReferenceLearner` fitted on ``X, y``.

    Kept for callers of the first layout; new code uses the learner itself.
    """
    return ReferenceLearner(sigma=sigma, tau=tau).fit(X, y).posterior_mean_


def blr_predict(m: np.ndarray, X: np.ndarray) -> np.ndarray:
    """Posterior predictive mean ``[1 | X] @ m`` (as :meth:`ReferenceLearner.predict`)."""
    X = np.atleast_2d(np.asarray(X, dtype=float))
    return m[0] + X @ m[1:]


# --- counterfactual rows of every pair at once ---------------------------------------------

def _pse_pp(pick1: np.ndarray, pick0: np.ndarray) -> float:
    """``100 * (mean pick in cf_a1 - mean pick in cf_a0)`` (spec §8.1)."""
    return 100 * (float(np.mean(pick1)) - float(np.mean(pick0)))


@functools.lru_cache(maxsize=256)
def _reference_pairs(c: Cell) -> pd.DataFrame:
    pop = population(c)
    pr = pairs(c)
    i, j = pr["i"].to_numpy(), pr["j"].to_numpy()
    out = pr[["pair_id", "i", "j", "stratum"]].copy()
    out["truth"] = (pop.r_true[i] >= pop.r_true[j]).astype(int)
    learner = None
    if c.has_examples:
        ex = examples(c)
        learner = ReferenceLearner().fit(ex.X, ex.Y)
        pred = learner.predict(pop.X)
        out["learner_factual"] = (pred[i] >= pred[j]).astype(int)
    for a in (1, 0):
        cf = pair_counterfactuals(c, a)
        out[f"fullinfo_a{a}"] = (cf["r_true_i"] >= cf["r_true_j"]).astype(int)
        if learner is not None:
            out[f"learner_a{a}"] = (learner.predict(cf["X_i"]) >= learner.predict(cf["X_j"])).astype(int)
    return out


def reference_pairs(cell: Cell) -> pd.DataFrame:
    """Per-pair decisions of both references in a cell (a fresh copy).

    Columns ``pair_id, i, j, stratum, truth`` (1 if the target has the higher true risk in the
    factual population), ``fullinfo_a1, fullinfo_a0`` (full-information pick of the target in
    each counterfactual arm) and, in cells with examples, ``learner_factual, learner_a1,
    learner_a0`` (the reference learner's picks).
    """
    return _reference_pairs(expect_cell(cell)).copy()


@functools.lru_cache(maxsize=256)
def _cell_references(c: Cell) -> dict:
    rp = _reference_pairs(c)
    out = {
        "cell": c.id, "k": c.k, "corner": c.corner, "names": c.names, "examples": c.examples,
        "n_examples": c.n_examples if c.has_examples else 0, "beta": c.beta,
        "seed": c.population_seed, "n_pairs": int(len(rp)),
        "fullinfo_pse_pp": _pse_pp(rp["fullinfo_a1"], rp["fullinfo_a0"]),
        "fullinfo_error_pct": 0.0,  # ranks by true risk: never wrong in the factual population
        "learner_pse_pp": float("nan"), "learner_error": float("nan"), "learner_error_pct": float("nan"),
    }
    if c.has_examples:
        err = float(np.mean(rp["learner_factual"] != rp["truth"]))
        out.update(learner_pse_pp=_pse_pp(rp["learner_a1"], rp["learner_a0"]),
                   learner_error=err, learner_error_pct=100 * err)
    return out


def cell_references(cell: Cell) -> dict:
    """Full-information reference and reference learner of a cell (cached per cell).

    Keys: ``cell, k, corner, names, examples, n_examples, beta, seed, n_pairs``,
    ``fullinfo_pse_pp`` (unrounded pp; exactly 0 at zero information), ``fullinfo_error_pct`` (0),
    ``learner_pse_pp``, ``learner_error`` (R_Ideal over all pairs, a share) and
    ``learner_error_pct`` (NaN in cells without examples, where no learner is defined).

    >>> from analysis.cells import parse_cell
    >>> r = cell_references(parse_cell("k12_LH_neutral_learned_info_b060"))
    >>> round(r["learner_pse_pp"], 2), round(r["fullinfo_pse_pp"], 2), round(r["learner_error"], 4)
    (23.23, 27.27, 0.0404)
    """
    return dict(_cell_references(expect_cell(cell)))


# --- category-indicator learner of the representation control --------------------------------

#: the representation control's cell, ``k12_LH_neutral_learned_zero`` (built field by field: nothing parsed)
REPRESENTATION_CELL = Cell(k=12, corner="LH", names="neutral", examples="learned", proxies="zero")

@functools.lru_cache(maxsize=16)
def _indicator_learner(c: Cell) -> float:
    pop, pr, ex = population(c), pairs(c), examples(c)
    learner = IndicatorLearner(c.L, quartile_edges(c)).fit(ex.X, ex.Y)
    i, j = pr["i"].to_numpy(), pr["j"].to_numpy()
    picks = {}
    for a in (1, 0):
        cf = pair_counterfactuals(c, a)
        picks[a] = (learner.predict(cf["X_i"]) >= learner.predict(cf["X_j"])).astype(int)
    return _pse_pp(picks[1], picks[0])


def indicator_learner_pse(cell: Cell = REPRESENTATION_CELL) -> float:
    """PSE (pp) of the category-indicator learner (PROTOCOL-representation §10.4; -5.05 pp).

    The same for ordered labels and arbitrary codes: both show the same bins.
    """
    c = expect_cell(cell)
    if not c.has_examples:
        raise ValueError(f"cell {c.id} shows no examples; the indicator learner needs them")
    return _indicator_learner(c)


def reference_table(cells: Iterable[Cell]) -> pd.DataFrame:
    """:func:`cell_references` of many cells as a tidy DataFrame (one row per cell)."""
    return pd.DataFrame([cell_references(c) for c in cells])
