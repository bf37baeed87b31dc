"""The judgment of a PSE against a reference (paper §2.1, §4.3; spec PROTOCOL-statistics §8-9).

**The paper's judgment** (:func:`judge`, kept for reproduction and for the reference rows). The
difference from a reference is ``PSE - reference``; its 95% interval is the PSE's pair-bootstrap
interval shifted by the reference (the references are computed exactly, not estimated). The verdict
reads the interval: *excess* when it lies above zero, *shortfall* below zero, otherwise *no resolved
difference*. One function, :func:`judge`, is called by the audit and by the paper's cell tables.

**The joint judgment** (:func:`judge_joint`, beyond the paper; issue 22). The reference is itself an
estimate: the reference learner is fitted on 80 examples, so its PSE (the category learner's
-5.05 pp at zero information) carries the examples' sampling variability, and it is measured on
the same pairs as the model. Each bootstrap draw resamples the pairs once for the model AND its
reference (a joint pair bootstrap of ``PSE - reference``) and pairs it with the reference learner
refitted on a resample of the examples (:func:`reference_pair_draws`), its draws shifted to centre on
the fitted reference (:func:`joint_draws`). The verdict adds seed
003's equivalence test (TOST against ``config.EQUIVALENCE_MARGIN_PP``): *excess*, *shortfall*,
*equivalent within ±5 pp* or *inconclusive*, and *too few pairs to judge* below
``config.MIN_PAIRS_TO_JUDGE`` pairs (:func:`analysis.intervals.equivalence_verdict`).
"""
from __future__ import annotations

import functools
import math
from dataclasses import dataclass

import numpy as np

from . import config, intervals
from .cells import Cell
from .encoding import indicator_features, quartile_edges
from .population import examples, pair_counterfactuals, pairs

#: the three verdicts, in the order the paper lists them
VERDICTS = ("excess", "no resolved difference", "shortfall")


def verdict(lo: float, hi: float) -> str:
    """Judgment from the 95% interval of a difference from a reference (paper §2.1).

    >>> verdict(2.0, 9.0), verdict(-1.0, 3.0), verdict(-8.0, -0.5)
    ('excess', 'no resolved difference', 'shortfall')
    """
    if lo > 0:
        return "excess"
    if hi < 0:
        return "shortfall"
    return "no resolved difference"


@dataclass(frozen=True)
class Judgment:
    """A PSE judged against one reference.

    ``reference`` names it (``"learner"`` for the reference learner, ``"fullinfo"`` for the
    full-information reference, or another label); ``reference_pp`` is its PSE (pp);
    ``difference_pp`` is ``PSE - reference_pp`` and ``ci`` its 95% interval (pp).
    """

    reference: str
    reference_pp: float
    difference_pp: float
    ci: tuple[float, float]
    verdict: str


def judge(pse_pp: float, pse_ci, reference_pp: float, reference: str = "learner") -> Judgment:
    """Judge a PSE (pp) with its 95% interval ``pse_ci = (lo, hi)`` against ``reference_pp``.

    A NaN reference (no learner in cells without examples) gives NaN differences and the verdict
    ``""`` (nothing to judge).

    >>> j = judge(12.0, (4.0, 20.0), 3.0)
    >>> j.difference_pp, j.ci, j.verdict
    (9.0, (1.0, 17.0), 'excess')
    >>> judge(1.0, (-2.0, 4.0), float("nan")).verdict
    ''
    """
    lo, hi = (float(x) for x in pse_ci)
    ref = float(reference_pp)
    diff = float(pse_pp) - ref
    ci = (lo - ref, hi - ref)
    if math.isnan(ref) or math.isnan(diff) or math.isnan(ci[0]) or math.isnan(ci[1]):
        return Judgment(reference, ref, diff, ci, "")
    return Judgment(reference, ref, diff, ci, verdict(*ci))


# --- the joint judgment (beyond the paper; issue 22) ------------------------------------------------

#: label of the two methods on the card
PAPER_METHOD = "the paper's: PSE interval shifted by the fixed reference"
JOINT_METHOD = "joint pair bootstrap of PSE - reference, reference learner refitted on resampled examples"
JOINT_SEED = 22  # pair draws of the joint bootstrap (issue 22)
REFIT_SEED = 2022  # example resamples of the refitted reference learner (issue 22)
DRAW_DECIMALS = 9  # joint draws are rounded to 1e-9 pp (see joint_draws)


def _fit_many(F: np.ndarray, y: np.ndarray, idx: np.ndarray) -> np.ndarray:
    """Posterior means (R x (p+1)) of :class:`analysis.learners.ReferenceLearner` on each row of ``idx``."""
    Fa = np.column_stack([np.ones(len(F)), F])
    Xr, yr = Fa[idx], y[idx]
    prec = np.eye(Fa.shape[1]) / config.LEARNER_TAU**2 + np.einsum("rni,rnj->rij", Xr, Xr) / config.LEARNER_SIGMA**2
    rhs = np.einsum("rni,rn->ri", Xr, yr) / config.LEARNER_SIGMA**2
    return np.linalg.solve(prec, rhs[..., None])[..., 0]


def _per_pair(c: Cell, display: str, idx: np.ndarray | None) -> np.ndarray:
    """Per-pair reference PSE (rows x pairs): the learner fitted on each row of example indices ``idx``
    (None: the examples as shown, one row); the exact full-information reference without examples."""
    i = pairs(c)["i"].to_numpy()
    if not c.has_examples:  # the full-information reference: exact, no examples to resample
        cf = {a: pair_counterfactuals(c, a) for a in (1, 0)}
        per = [(cf[a]["r_true_i"] >= cf[a]["r_true_j"]).astype(float) for a in (1, 0)]
        return np.broadcast_to((per[0] - per[1])[None], (1 if idx is None else len(idx), len(i))).copy()
    ex = examples(c)
    edges = quartile_edges(c)

    def feat(X):
        X = np.asarray(X, dtype=float)
        return X if display == "numeric" else indicator_features(X, c.L, edges)

    idx = np.arange(len(ex.Y))[None] if idx is None else idx
    M = _fit_many(feat(ex.X), np.asarray(ex.Y, dtype=float), idx)  # rows x (p+1)
    picks = []
    for a in (1, 0):
        cf = pair_counterfactuals(c, a)
        si = np.column_stack([np.ones(len(i)), feat(cf["X_i"])]) @ M.T
        sj = np.column_stack([np.ones(len(i)), feat(cf["X_j"])]) @ M.T
        picks.append((si >= sj).astype(float))  # pairs x rows
    return (picks[0] - picks[1]).T


@functools.lru_cache(maxsize=32)
def _reference_pair_draws(c: Cell, display: str, draws: int, seed: int) -> np.ndarray:
    if not c.has_examples:
        return _per_pair(c, display, np.zeros((draws, 1), dtype=int))
    n = len(examples(c).Y)
    return _per_pair(c, display, np.random.default_rng(seed).integers(0, n, size=(draws, n)))


@functools.lru_cache(maxsize=32)
def _reference_pair_point(c: Cell, display: str) -> np.ndarray:
    return _per_pair(c, display, None)[0]


def reference_pair_point(cell: Cell, display: str = "numeric") -> np.ndarray:
    """Per-pair PSE (pairs in the cell's pair order, values in {-1, 0, 1}) of the condition's fitted
    reference: the learner on the examples as shown (the category-indicator learner for a category
    display), or the full-information reference without examples. Its mean is the paper's reference."""
    return _reference_pair_point(cell, display).copy()


def reference_pair_draws(cell: Cell, display: str = "numeric", draws: int = config.BOOTSTRAP_DRAWS,
                         seed: int = REFIT_SEED) -> np.ndarray:
    """Per-pair reference PSE (draws x pairs, values in {-1, 0, 1}, pairs in the cell's pair order).

    With examples: the condition's reference learner (the category-indicator learner for a category
    display) refitted on ``draws`` resamples of the examples (one ``integers(0, n, n)`` per draw,
    ``default_rng(seed)``); without examples: the full-information reference, exact in every row.
    A fresh copy of a cached array.
    """
    return _reference_pair_draws(cell, display, int(draws), int(seed)).copy()


@dataclass(frozen=True)
class JointJudgment:
    """PSE - reference judged with the joint bootstrap and the equivalence test (pp).

    ``difference_pp`` is the model's PSE minus the (fitted) reference on the same pairs, ``ci`` the
    95% expanded percentile interval of the joint draws, ``p_value`` the two-sided bootstrap p-value of a
    difference of 0, ``p_tost`` the TOST p-value against ``±margin_pp``.
    """

    reference: str
    reference_pp: float
    difference_pp: float
    ci: tuple[float, float]
    p_value: float
    p_tost: float
    margin_pp: float
    n_pairs: int
    verdict: str
    method: str = JOINT_METHOD


def joint_draws(model_pairs, ref_pairs, ref_point_pp: float | None = None, draws: int = config.BOOTSTRAP_DRAWS,
                seed: int = JOINT_SEED) -> np.ndarray:
    """Bootstrap draws (pp) of ``mean(model) - mean(reference)`` resampling pairs jointly.

    ``model_pairs`` (n,) per-pair PSE of the model in [-1, 1], or (S, n) for S simulated
    collections judged with the same draws; ``ref_pairs`` (n,) exact per-pair reference or (R, n)
    refitted draws (draw b uses row ``b mod R``). One ``integers(0, n, (draws, n))`` from
    ``default_rng(seed)`` picks the pairs of both. With ``ref_point_pp`` (the fitted reference, pp)
    the reference part is shifted by a constant so that its mean over draws is the fitted reference:
    the refits keep their spread (the reference's sampling variability) but not the bias of
    bootstrapping a learner (with β = 0.30 the refits average 9.6 pp against the fitted 4.04 pp).
    Returns (draws,) or (S, draws).
    """
    m = np.asarray(model_pairs, dtype=float)
    r = np.asarray(ref_pairs, dtype=float)
    n = m.shape[-1]
    idx = np.random.default_rng(seed).integers(0, n, size=(draws, n))
    K = np.zeros((n, draws))
    np.add.at(K, (idx, np.arange(draws)[:, None]), 1.0)
    model = m @ (K / n)
    if r.ndim == 1:
        ref = r @ (K / n)
    else:
        rows = r[np.arange(draws) % r.shape[0]]
        ref = np.take_along_axis(rows, idx, axis=1).mean(axis=1)
    ref = 100 * ref
    if ref_point_pp is not None:
        ref = ref - ref.mean() + float(ref_point_pp)
    # rounded to 1e-9 pp: a mean of values in {-1, -1/2, 0, 1/2, 1} taken as a matrix product can miss an
    # exact 0 by ~1e-15, which would turn an interval ending at 0 into a spurious excess or shortfall
    return np.round(100 * model - ref, DRAW_DECIMALS)


def read_joint(d: np.ndarray, n_pairs: int, margin_pp: float = config.EQUIVALENCE_MARGIN_PP) -> tuple:
    """``(lo, hi, p_value, p_tost, verdict)`` of one row of joint draws (pp) from ``n_pairs`` pairs.

    The 95% interval is the expanded percentile interval (:func:`analysis.intervals.expanded_percentiles`):
    the plain one undercovers at a few dozen pairs (91% at the smoke battery's 24, notebook 10).
    """
    lo, hi = (float(x) for x in np.percentile(d, intervals.expanded_percentiles(n_pairs)))
    p_tost = intervals.tost(d, margin_pp)
    return lo, hi, intervals.p_two_sided(d), p_tost, intervals.equivalence_verdict(lo, hi, p_tost, margin_pp,
                                                                                  n_pairs=n_pairs)


def read_joint_rows(D: np.ndarray, n_pairs: int, margin_pp: float = config.EQUIVALENCE_MARGIN_PP) -> list[tuple]:
    """:func:`read_joint` of every row of ``D`` (collections x draws) at once: the same tuples, bit for
    bit (the same percentiles and the same counts, ``(count + 1) / (B + 1)``); rows with NaN draws
    are read one by one, as :func:`read_joint` drops their NaNs."""
    D = np.asarray(D, dtype=float)
    if D.ndim != 2 or D.shape[1] == 0 or np.isnan(D).any():
        return [read_joint(row, n_pairs, margin_pp) for row in D]
    lo, hi = np.percentile(D, intervals.expanded_percentiles(n_pairs), axis=1)

    def p(extreme: np.ndarray) -> np.ndarray:
        return (np.count_nonzero(extreme, axis=1) + 1) / (D.shape[1] + 1)

    p_value = np.minimum(1.0, 2 * np.minimum(p(D <= 0.0), p(D >= 0.0)))
    p_tost = np.maximum(p(D <= -margin_pp), p(D >= margin_pp))
    return [(float(a), float(b), float(pv), float(t),
             intervals.equivalence_verdict(float(a), float(b), float(t), margin_pp, n_pairs=n_pairs))
            for a, b, pv, t in zip(lo, hi, p_value, p_tost)]


def judge_joint(model_pairs, ref_pairs, reference_pairs_point, reference: str = "learner",
                draws: int = config.BOOTSTRAP_DRAWS, seed: int = JOINT_SEED,
                margin_pp: float = config.EQUIVALENCE_MARGIN_PP) -> JointJudgment:
    """The joint judgment of a model's per-pair PSE against its reference on the same pairs.

    ``reference_pairs_point`` (n,) is the fitted reference's per-pair PSE (the point); ``ref_pairs``
    its per-pair draws (see :func:`joint_draws`). Fewer than ``config.MIN_PAIRS_TO_JUDGE`` pairs
    give the verdict ``too few pairs to judge``; no pairs give NaN and ``""``.

    >>> j = judge_joint(np.zeros(40), np.zeros(40), np.zeros(40), "fullinfo", draws=200)
    >>> j.difference_pp, j.ci, j.p_value, j.verdict
    (0.0, (0.0, 0.0), 1.0, 'equivalent within ±5 pp')
    """
    m = np.asarray(model_pairs, dtype=float)
    point = np.asarray(reference_pairs_point, dtype=float)
    n = len(m)
    if n == 0:
        nan = math.nan
        return JointJudgment(reference, nan, nan, (nan, nan), nan, nan, margin_pp, 0, "")
    ref_pp = 100 * float(point.mean())
    lo, hi, p, p_tost, v = read_joint(joint_draws(m, ref_pairs, ref_pp, draws, seed), n, margin_pp)
    return JointJudgment(reference, ref_pp, 100 * float(m.mean()) - ref_pp, (lo, hi), p, p_tost, margin_pp, n, v)
