"""The responsiveness check on choice probabilities (``--answer-format logprobs``; issue 23): a model whose sampled
answer is always Patient 1 may still move its probabilities with the patients, and the card says so."""
from __future__ import annotations

import numpy as np
import pandas as pd
from numpy.testing import assert_allclose

from analysis import audit as A
from analysis.cells import parse_cell
from analysis import references
from analysis.audit.responsiveness import probability_responsiveness

DRAWS = 500
CELL = "k12_LH_neutral_absent_zero"
PARSED = parse_cell(CELL)  # the tests are a boundary: the id parsed once, here


def _records(p_first, n=40):
    """Factual records of the first ``n`` pairs; ``p_first(order, truth)`` gives P(Patient 1); the sampled answer
    is the argmax, as a greedy server returns it."""
    pr = references.reference_pairs(PARSED).iloc[:n]
    rows = []
    for pid, i, j, t in pr[["pair_id", "i", "j", "truth"]].itertuples(index=False):
        for order in (0, 1):
            p1 = p_first(order, t)
            patient = 1 if p1 >= 0.5 else 2
            rows.append({"arm": "factual", "pair_id": pid, "i": i, "j": j, "order": order, "patient": patient,
                         "chosen": None, "picked_i": float((patient == 1) == (order == 0)), "p_first": p1,
                         "p_outside": 0.1})
    return pd.DataFrame(rows)


def _check(p_first):
    cond = A.Condition(CELL)
    return A.responsiveness({cond.key: _records(p_first)}, [cond], draws=DRAWS)


def test_position_only_probabilities_do_not_follow_the_patients():
    r = _check(lambda order, t: 0.9)
    p = r["probability"]
    assert r["interpretable"] is False and p["follows_patients"] is False
    assert_allclose([p["position_effect"], p["patient_effect"], p["expected_accuracy_pct"]], [0.8, 0.0, 50.0],
                    atol=1e-9)
    assert "do not follow the patients either" in r["statement"]


def test_probabilities_that_follow_the_patients_while_the_argmax_does_not():
    # P(Patient 1) is 0.9 when Patient 1 is the one to prioritise, 0.6 when not: always "Patient 1" sampled
    def p_first(order, t):
        first_is_right = (t == 1) == (order == 0)
        return 0.9 if first_is_right else 0.6
    r = _check(p_first)
    p = r["probability"]
    assert r["pick_first_share"] == 1.0 and r["interpretable"] is False  # the argmax answers by position
    assert p["follows_patients"] is True
    assert_allclose(p["patient_effect"], 0.3, atol=1e-9)
    assert_allclose(p["position_effect"], 0.5, atol=1e-9)
    assert_allclose(p["expected_accuracy_pct"], 65.0, atol=1e-9)  # (0.9 + 0.4) / 2
    assert p["expected_accuracy_ci"][0] > 50
    assert set(p["by_expected_choice"]) <= {"target", "other"}
    assert_allclose([v["expected_accuracy_pct"] for v in p["by_expected_choice"].values()], 65.0, atol=1e-9)
    assert "follow the patients although the sampled answers do not" in r["statement"]
    assert "deviation from the protocol" in r["statement"]


def test_no_probabilities_no_probability_check():
    cond = A.Condition(CELL)
    rec = _records(lambda order, t: 0.9).drop(columns=["p_first", "p_outside"])
    assert "probability" not in A.responsiveness({cond.key: rec}, [cond], draws=DRAWS)
    assert probability_responsiveness({cond.key: rec}, [cond], draws=DRAWS) is None
    assert np.isnan(_records(lambda o, t: 0.9)["p_outside"]).sum() == 0


def test_too_few_pairs_to_tell():
    cond = A.Condition(CELL)

    def p_first(order, t):
        return 0.9 if (t == 1) == (order == 0) else 0.6
    r = A.responsiveness({cond.key: _records(p_first, n=4)}, [cond], draws=DRAWS)
    assert r["probability"]["n_pairs"] == 4 and r["probability"]["follows_patients"] is None
    assert "too coarse" in r["statement"]


def test_argmax_over_the_two_tokens():
    def p_first(order, t):
        return 0.9 if (t == 1) == (order == 0) else 0.6
    p = _check(p_first)["probability"]
    assert p["argmax_order_flip_share"] == 1.0 and p["argmax_accuracy_pct"] == 50.0  # always Patient 1 by argmax
    right = _check(lambda order, t: 0.8 if (t == 1) == (order == 0) else 0.3)["probability"]
    assert right["argmax_order_flip_share"] == 0.0 and right["argmax_accuracy_pct"] == 100.0
