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
