"""Known-truth simulation of a battery's conditions at the level of per-pair answers (issue 22).

A condition's answers are Bernoulli draws from exact per-call probabilities. The base subject is
the collection's ``ignores-proxies`` simulated subject (:class:`analysis.collection.SimulatedSubject`:
it reads the task fields, has a position bias and logistic noise, and gives the proxies no weight).
A subject with a **true effect** ``delta`` pp adds ``+s`` to the logit of picking the target in the
``cf_a1`` arm and ``-s`` in ``cf_a0``, with ``s`` solved (``scipy.optimize.brentq``) so that its
expected PSE is the reference's true value plus ``delta``. Hence the truth of ``PSE - reference``
is ``delta`` exactly.

The reference's true value: 0 at zero information (the proxies predict nothing; the full-information
reference is exactly 0 and a learner's expected PSE over example sets is 0 by the symmetry of the two
groups, while the fitted learner's -5.05 pp for category displays is one example set's artefact);
in an informative cell the fitted reference on the condition's pairs (the paper's value, the truth
conditional on the shown examples).

Seeds draw their uniforms from ``default_rng([CALIBRATION_SEED_OFFSET + seed, crc32(condition key)])``
(in the role of the subject's keyed draws); every seed is bootstrapped with one shared set of pair
resamples and reference refits, the same as the card uses.
"""
from __future__ import annotations

import functools
import zlib
from dataclasses import dataclass

import numpy as np
from scipy import optimize, special

from .. import config
from ..collection import SimulatedSubject
from ..judgments import JOINT_SEED, reference_pair_draws, reference_pair_point
from ..population import pairs as cell_pairs
from ..audit.batteries import Condition, jobs_of

CALIBRATION_SEED_OFFSET = 220000  # subject seeds of the calibration study (no seed shared with a run)
BASE_SUBJECT = "ignores-proxies"


@dataclass(frozen=True)
class ConditionModel:
    """What a condition's simulation needs: design, base probabilities and the reference."""

    key: str
    W: np.ndarray  # jobs x pairs: +1/2 in cf_a1, -1/2 in cf_a0 (per-pair PSE = picked @ W)
    sign: np.ndarray  # jobs: +1 cf_a1, -1 cf_a0, 0 factual
    logit0: np.ndarray  # jobs: logit of P(pick target) of the base subject
    ref_point: np.ndarray  # pairs: the fitted reference's per-pair PSE
    ref_draws: np.ndarray  # draws x pairs: refitted reference per pair
    truth_ref_pp: float  # the reference's true value (pp)
    zero_information: bool
    reference: str


@functools.lru_cache(maxsize=64)
def condition_model(cond: Condition, draws: int = 2000) -> ConditionModel:
    """The simulation model of one condition (its first ``cond.n_pairs`` pairs when set)."""
    jobs = jobs_of(cond)
    subj = SimulatedSubject.preset(BASE_SUBJECT)
    p1 = np.array([subj.probability_first(j.prompt) for j in jobs])
    order = np.array([j.order for j in jobs])
    p = np.clip(np.where(order == 0, p1, 1 - p1), 1e-9, 1 - 1e-9)
    arm = np.array([j.arm for j in jobs])
    pr = cell_pairs(cond.parsed)
    pos = {(int(a), int(b)): k for k, (a, b) in enumerate(zip(pr["i"], pr["j"]))}
    col = np.array([pos[(j.i, j.j)] for j in jobs])
    used = np.unique(col)
    remap = np.full(len(pr), -1)
    remap[used] = np.arange(len(used))
    sign = np.where(arm == "cf_a1", 1.0, np.where(arm == "cf_a0", -1.0, 0.0))
    W = np.zeros((len(jobs), len(used)))
    W[np.arange(len(jobs)), remap[col]] = sign / len(config.ORDERS)
    point = reference_pair_point(cond.parsed, cond.display)[used]
    zero = not cond.parsed.informative
    return ConditionModel(cond.key, W, sign, special.logit(p), point,
                          reference_pair_draws(cond.parsed, cond.display, draws)[:, used],
                          0.0 if zero else 100 * float(point.mean()), zero, cond.primary)


def probabilities(m: ConditionModel, delta_pp: float) -> np.ndarray:
    """Per-job P(pick target) of the subject whose true ``PSE - reference`` is ``delta_pp``."""
    target = (m.truth_ref_pp + delta_pp) / 100

    def expected(s):
        return float((special.expit(m.logit0 + s * m.sign) @ m.W).mean()) - target

    s = 0.0 if abs(expected(0.0)) < 1e-12 else optimize.brentq(expected, -20.0, 20.0, xtol=1e-12)
    return special.expit(m.logit0 + s * m.sign)


def per_pair_pse(m: ConditionModel, delta_pp: float, seeds) -> np.ndarray:
    """Seeds x pairs: per-pair PSE (in [-1, 1]) of each seed's simulated answers."""
    p = probabilities(m, delta_pp)
    U = np.stack([np.random.default_rng([CALIBRATION_SEED_OFFSET + int(s), zlib.crc32(m.key.encode())])
                  .random(len(p)) for s in seeds])
    return (U < p).astype(float) @ m.W


def boot_counts(n: int, draws: int, seed: int = JOINT_SEED) -> tuple[np.ndarray, np.ndarray]:
    """``(idx, K)``: draws x n resampling indices and the pairs x draws matrix of counts / n."""
    idx = np.random.default_rng(seed).integers(0, n, size=(draws, n))
    K = np.zeros((n, draws))
    np.add.at(K, (idx, np.arange(draws)[:, None]), 1.0)
    return idx, K / n
