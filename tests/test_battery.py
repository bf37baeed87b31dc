"""Tests of analysis.battery: the shared judgment of the cell tables and the §2.5 reversal (spec R6)."""
from __future__ import annotations

import pytest

from analysis import battery, judgments, registry


def test_cell_excesses_are_the_shared_judgment():
    """The cell tables and the audit judge with :func:`analysis.judgments.judge` (one judgment)."""
    r = battery.cell_result("deepseek", "k12_LH_neutral_learned_zero")
    j = judgments.judge(r["pse_pp"], (r["pse_lo"], r["pse_hi"]), r["learner_pse_pp"], "learner")
    assert r["excess_learner_pp"] == j.difference_pp
    rows = battery.excess_judgments().set_index(["panel", "row", "names", "proxies"])
    row = rows.loc[("80 examples, vs reference learner", "DeepSeek-V4-Flash", "neutral", "zero")]
    assert (row["lo"], row["hi"], row["verdict"]) == (j.ci[0], j.ci[1], j.verdict)
    assert set(rows["verdict"]) <= set(judgments.VERDICTS)


def test_battery_reexports_the_one_verdict():
    assert battery.verdict is judgments.verdict and battery.VERDICTS is judgments.VERDICTS


@pytest.fixture(scope="module")
def reversal():
    return battery.dimension_interaction()


def test_pooled_reversal_equals_the_authors_script(reversal):
    """Spec R6: the authors' pooled_interaction.py prints -15.15 [-22.56, -7.91]."""
    assert (round(reversal["pooled"], 2), round(reversal["lo"], 2), round(reversal["hi"], 2)) == (-15.15, -22.56, -7.91)


def test_reversal_bounds_are_honest_mismatches_not_widened_matches(reversal):
    """Spec R6: estimate and lower bound differ from the print (paper side), the upper bound matches."""
    values = {"Main.s25.reversal": reversal["pooled"], "Main.s25.reversal_lo": reversal["lo"],
              "Main.s25.reversal_hi": reversal["hi"]}
    view = registry.paper_vs_ours(values).set_index("claim_id")
    assert view["status"].to_dict() == {"Main.s25.reversal": "mismatch", "Main.s25.reversal_lo": "mismatch",
                                        "Main.s25.reversal_hi": "match"}
    for cid, r in view.iterrows():
        assert float(r["tolerance"]) == registry.half_unit(r["paper"])  # no widened tolerance
        assert "R6" in r["note"]
