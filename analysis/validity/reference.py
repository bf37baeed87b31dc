"""The cue panel's references with their own sampling variability (issue 22; beyond the paper's protocol).

The paper's judgment shifts the PSE interval by the reference as if the reference were exact. A
reference *learner* is fitted on the 80 examples the prompt shows, so its PSE is itself an estimate:
the category-indicator learner's −5.05 pp in the base cell is a finite-sample artefact (paper §4.6),
and a subject that ignores the proxies (PSE exactly 0) was called "excess +5.05 [5.05, 5.05]" under
the ordered and arbitrary displays. Here every learner of a cue is refitted on resampled examples
(the honest unit of its variability: one ``default_rng(seed).integers(0, n, (draws, n))`` of example
indices, shared by every learner of the cell, so differences between cues stay joint), and its
per-pair picks are kept, so the panel bootstraps PSE − reference over pairs and examples together.
The full-information reference ranks by true risk and is exact (no draws vary).

Kinds: ``learner`` (the reference learner; numeric vocabularies and the narrative), ``indicator``
(category-indicator learner; ordered and arbitrary displays), ``label`` (the reference learner with
the group indicator as one more feature; the explicit label), ``fullinfo`` (cells without examples).
"""
from __future__ import annotations

import functools

import numpy as np
import pandas as pd

from .. import cues
from ..cells import Cell, parse_cell
from ..encoding import quartile_edges
from ..learners import IndicatorLearner, ReferenceLearner
from ..population import counterfactual_rows, examples, pairs, population
from ..references import reference_pairs

#: example resampling of the learners (one stream per cell, shared by its learners)
REFERENCE_SEED = 404
KINDS = ("learner", "indicator", "label", "fullinfo")


def reference_kind(c: Cell, cue) -> str:
    """The reference of a cue in a cell (see the module docstring).

    >>> c = parse_cell("k12_LH_neutral_learned_zero")
    >>> reference_kind(c, "ordered"), reference_kind(c.with_(examples="absent"), "label")
    ('indicator', 'fullinfo')
    """
    q = cues.parse_cue(cue)
    if not c.has_examples:
        return "fullinfo"
    if q.label:
        return "label"
    return "learner" if q.display == "numeric" else "indicator"


@functools.lru_cache(maxsize=16)
def _design(c: Cell) -> dict:
    """Counterfactual target/comparator rows of every pair, in the (i, j)-sorted pair order."""
    pop = population(c)
    pr = pairs(c).sort_values(["i", "j"]).reset_index(drop=True)
    i, j = pr["i"].to_numpy(), pr["j"].to_numpy()
    rows = {a: counterfactual_rows(pop, i, j, a) for a in (1, 0)}
    return {"i": i, "j": j, "rows": rows, "A_j": np.asarray(pop.A)[j],
            "index": pd.MultiIndex.from_arrays([i, j], names=["i", "j"])}


def pair_index(cell: Cell) -> pd.MultiIndex:
    """The pairs ``(i, j)`` of a cell, sorted (the order of :func:`analysis.estimators.pair_pse`)."""
    return _design(cell)["index"]


def _features(kind: str, X: np.ndarray, A: np.ndarray) -> np.ndarray:
    return np.column_stack([X, A]) if kind == "label" else X


def _learner(c, kind: str):
    return IndicatorLearner(c.L, quartile_edges(c)) if kind == "indicator" else ReferenceLearner()


def pair_shifts(c: Cell, kind: str, idx: np.ndarray | None = None) -> np.ndarray:
    """Per-pair reference shift (pick in ``cf_a1`` minus pick in ``cf_a0``, in {-1, 0, 1}), pairs sorted.

    ``idx`` resamples the examples the learner is fitted on (None: the examples as shown).
    """
    d = _design(c)
    if kind == "fullinfo":
        rp = reference_pairs(c).set_index(["i", "j"]).reindex(d["index"])
        return (rp["fullinfo_a1"] - rp["fullinfo_a0"]).to_numpy(float)
    ex = examples(c)
    X, Y, A = ex.X, ex.Y, ex.A
    if idx is not None:
        X, Y, A = X[idx], Y[idx], A[idx]
    model = _learner(c, kind).fit(_features(kind, X, A), Y)
    picks = {}
    for a in (1, 0):
        r = d["rows"][a]
        Ai = np.full(len(d["i"]), a)
        picks[a] = (model.predict(_features(kind, r["X_i"], Ai))
                    >= model.predict(_features(kind, r["X_j"], d["A_j"]))).astype(float)
    return picks[1] - picks[0]


def reference_pse(cell: Cell, kind: str) -> float:
    """The reference's PSE (pp) on the examples as shown (equals :func:`analysis.validity.panel.cue_reference`)."""
    return 100 * float(pair_shifts(cell, kind).mean())


@functools.lru_cache(maxsize=32)
def _shift_draws(c: Cell, kind: str, draws: int, seed: int) -> np.ndarray:
    n_pairs = len(_design(c)["i"])
    if kind == "fullinfo":
        return np.broadcast_to(pair_shifts(c, kind), (draws, n_pairs)).copy()
    n = len(examples(c).Y)
    idx = np.random.default_rng(seed).integers(0, n, size=(draws, n))
    F = _feature_design(c, kind)
    return np.stack([_refit_shifts(F, k) for k in idx]).astype(np.int8)


def _feature_design(c: Cell, kind: str) -> dict:
    """The learner's features of the examples and of every pair's counterfactual rows, computed once
    for all refits (features are per row, so a resample's features are the resampled rows')."""
    d, ex, learner = _design(c), examples(c), _learner(c, kind)
    feat = learner.features if isinstance(learner, IndicatorLearner) else (lambda X: np.asarray(X, dtype=float))
    out = {"examples": feat(_features(kind, ex.X, ex.A)), "Y": ex.Y}
    for a in (1, 0):
        r = d["rows"][a]
        out[a] = (feat(_features(kind, r["X_i"], np.full(len(d["i"]), a))), feat(_features(kind, r["X_j"], d["A_j"])))
    return out


def _refit_shifts(F: dict, idx: np.ndarray) -> np.ndarray:
    """:func:`pair_shifts` of the learner refitted on examples ``idx``, from :func:`_feature_design`
    (the same fit and predictions, operation for operation)."""
    model = ReferenceLearner().fit(F["examples"][idx], F["Y"][idx])
    picks = {a: (model.predict(F[a][0]) >= model.predict(F[a][1])).astype(float) for a in (1, 0)}
    return picks[1] - picks[0]


def shift_draws(c: Cell, cue, draws: int, seed: int = REFERENCE_SEED) -> np.ndarray:
    """``draws x pairs`` per-pair reference shifts of a cue, the learner refitted on resampled examples.

    Row ``b`` uses the ``b``-th example resample of the cell (shared by every learner and cue).
    """
    return _shift_draws(c, reference_kind(c, cue), int(draws), int(seed))


def true_reference_pp(cell: Cell) -> float:
    """The reference's estimand where it is known: the full-information reference (exactly 0 at zero
    information, where neither the proxies nor the group predict risk, so any learner's expected PSE
    over example draws is 0 too). Used as the truth of the known-truth calibration."""
    return 100 * float(pair_shifts(cell, "fullinfo").mean())
