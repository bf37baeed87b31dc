"""One judgment of a PSE against a reference (analysis.judgments)."""
from __future__ import annotations

import dataclasses
import math

import pytest

from analysis import judgments as J


def test_verdicts_read_the_interval():
    assert J.VERDICTS == ("excess", "no resolved difference", "shortfall")
    assert J.verdict(0.1, 3.0) == "excess"
    assert J.verdict(0.0, 3.0) == "no resolved difference"  # an interval touching zero is not resolved
    assert J.verdict(-3.0, 0.0) == "no resolved difference"
    assert J.verdict(-3.0, -0.1) == "shortfall"


def test_judge_shifts_the_interval_by_the_reference():
    j = J.judge(20.0, (12.0, 28.0), 23.2323, reference="learner")
    assert j.reference == "learner" and j.reference_pp == 23.2323
    assert j.difference_pp == pytest.approx(20.0 - 23.2323)
    assert j.ci == pytest.approx((12.0 - 23.2323, 28.0 - 23.2323))
    assert j.verdict == "no resolved difference"
    assert J.judge(20.0, (12.0, 28.0), 0.0, reference="fullinfo").verdict == "excess"
    assert J.judge(-20.0, [-28.0, -12.0], 0.0).verdict == "shortfall"
    assert isinstance(J.judge(1.0, [0.5, 2.0], 0.0).ci, tuple)


def test_judgment_is_frozen():
    j = J.judge(1.0, (0.5, 2.0), 0.0)
    assert dataclasses.is_dataclass(j)
    with pytest.raises(dataclasses.FrozenInstanceError):
        j.verdict = "shortfall"


def test_no_reference_no_verdict():
    j = J.judge(1.0, (0.5, 2.0), float("nan"))
    assert j.verdict == "" and math.isnan(j.difference_pp)
    assert J.judge(1.0, (float("nan"), float("nan")), 0.0).verdict == ""


@pytest.mark.parametrize("n_pairs", [24, 99, 3])
def test_reading_joint_draws_row_by_row_and_all_at_once_agree_bit_for_bit(n_pairs):
    """issue 21 speed: read_joint_rows equals read_joint on each row (draws on a 1/n_pairs grid, so
    ties at 0 and at the ±5 pp margins occur, as in the calibration), NaN rows included."""
    import numpy as np

    rng = np.random.default_rng(21)
    D = np.round(100 * rng.integers(-6, 7, size=(40, 2000)) / n_pairs + rng.choice([-5.0, 0.0, 5.0], size=(40, 1)), 9)
    D[3] = 0.0
    D[4] = 5.0
    assert J.read_joint_rows(D, n_pairs) == [J.read_joint(row, n_pairs) for row in D]
    D[5, 7] = np.nan
    assert repr(J.read_joint_rows(D, n_pairs)[5]) == repr(J.read_joint(D[5], n_pairs))  # NaN != NaN
