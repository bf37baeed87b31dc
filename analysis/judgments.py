"""The judgment of a PSE against a reference (paper §2.1, §4.3; spec PROTOCOL-statistics §8-9).

The difference from a reference is ``PSE - reference``; its 95% interval is the PSE's pair-bootstrap
interval shifted by the reference (the references are computed exactly, not estimated). The verdict
reads the interval: *excess* when it lies above zero, *shortfall* below zero, otherwise *no resolved
difference*. One function, :func:`judge`, is called by the audit and by the paper's cell tables.
"""
from __future__ import annotations

import math
from dataclasses import dataclass

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
