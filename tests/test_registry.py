"""The claims registry and the one "paper vs ours" view (analysis.registry).

The view replaces five views of the first layout; each test below pins one of them: the
parameters that reproduce its output, on registered claims whose printed forms cover the
differences (signs, percent, thousands separators, scientific P values, zeros, missing inputs).
"""
from __future__ import annotations

import pandas as pd
import pytest

from analysis import registry as G
from analysis.records import NotReleased

NR = NotReleased("the regeneration records")
VALUES = {
    "T6.battery.pse": 21.2121,         # +21.21
    "T6.arbitrary.pse": -1.5151,       # -1.52
    "T6.ordered.pse": NR,              # +8.59, inputs not released
    "T1.sonnet.ordered": 0.01,         # +8.6, mismatch
    "SN14.support.propensity": 0.0833,  # 0.1%
    "T21.primary.pairs": 1200.0,       # 1,200
    "T8.rep.sonnet12.p": 7.7234e-9,    # 7.7×10^-9
    "SN14.reference.stratified": -0.0004,  # 0.00, a negative zero
}


def test_parse_and_half_unit():
    assert G.parse_printed("1,200") == 1200 and G.parse_printed("2.5%") == 2.5
    assert G.parse_printed("1.3×10^-11") == 1.3e-11 and G.parse_printed("\u22120.5") == -0.5
    assert G.half_unit("+8.59") == 0.005 and G.half_unit("1.3×10^-11") == 5e-13 and G.half_unit("83%") == 0.5


def test_status_of():
    assert G.status_of("+21.21", "0.005", 21.2121) == ("match", "21.2121")
    assert G.status_of("+21.21", "0.005", 21.3)[0] == "mismatch"
    assert G.status_of("+21.21", "0.005", float("nan")) == ("mismatch", "nan")
    assert G.status_of("+21.21", "0.005", NR) == ("not_released", "")
    assert G.status_of("+21.21", "0.005", None) == ("not_computed", "")


def test_view_default_columns_and_registry_order():
    v = G.paper_vs_ours(VALUES)
    assert list(v.columns) == G.VIEW_COLUMNS
    reg_order = [c for c in G.registry()["claim_id"] if c in VALUES]
    assert v["claim_id"].tolist() == reg_order
    ours = dict(zip(v["claim_id"], v["ours"]))
    assert ours == {"T6.battery.pse": "+21.21", "T6.arbitrary.pse": "-1.52", "T6.ordered.pse": "n/r",
                    "T1.sonnet.ordered": "+0.0", "SN14.support.propensity": "0.1", "T21.primary.pairs": "1200",
                    "T8.rep.sonnet12.p": "7.7e-09", "SN14.reference.stratified": "0.00"}
    st = dict(zip(v["claim_id"], v["status"]))
    assert st["T6.ordered.pse"] == "not_released" and st["T1.sonnet.ordered"] == "mismatch"
    assert st["T6.battery.pse"] == "match"


def test_filters_and_order():
    v = G.paper_vs_ours(VALUES, table="Table 6")
    assert set(v["claim_id"]) == {"T6.battery.pse", "T6.arbitrary.pse", "T6.ordered.pse"}
    v = G.paper_vs_ours(VALUES, ids=["T6.arbitrary.pse", "T21.primary.pairs", "not.a.claim"], table="Table 6")
    assert v["claim_id"].tolist() == ["T6.arbitrary.pse"]
    v = G.paper_vs_ours(VALUES, prefixes=("T6.", "T21."), ids=["T21.primary.pairs", "T6.battery.pse",
                                                               "T6.ordered.pse", "T6.arbitrary.pse"])
    assert v["claim_id"].tolist() == ["T21.primary.pairs", "T6.battery.pse", "T6.ordered.pse", "T6.arbitrary.pse"]
    assert G.paper_vs_ours(VALUES, prefixes="SN14.")["claim_id"].str.startswith("SN14.").all()
    assert G.paper_vs_ours({}).empty and list(G.paper_vs_ours({}).columns) == G.VIEW_COLUMNS


def test_battery_view():  # first layout: battery.paper_vs_ours (paper's digits, "n/r", Python's signed zero)
    v = G.paper_vs_ours(VALUES, table="SN 14", not_released="n/r", signed_zero=True)
    assert dict(zip(v["claim_id"], v["ours"])) == {"SN14.support.propensity": "0.1",
                                                   "SN14.reference.stratified": "-0.00"}


def test_representation_and_uci_views():  # first layout: claims_view ("not released"; uci unsigned zero)
    v = G.paper_vs_ours(VALUES, not_released="not released")
    ours = dict(zip(v["claim_id"], v["ours"]))
    assert ours["T6.ordered.pse"] == "not released" and ours["SN14.reference.stratified"] == "0.00"


def test_supplement_view():  # first layout: supplement.compare_table (one more digit, "" where not released)
    v = G.paper_vs_ours(VALUES, ids=list(VALUES), extra_digit=True, not_released="", signed_zero=True)
    ours = dict(zip(v["claim_id"], v["ours"]))
    assert ours == {"T6.battery.pse": "+21.212", "T6.arbitrary.pse": "-1.515", "T6.ordered.pse": "",
                    "T1.sonnet.ordered": "+0.01", "SN14.support.propensity": "0.08", "T21.primary.pairs": "1200.0",
                    "T8.rep.sonnet12.p": "7.72e-09", "SN14.reference.stratified": "-0.000"}
    assert v["claim_id"].tolist() == list(VALUES)


def test_claims_compare_view():  # first layout: claims.compare (the claims check's unrounded text)
    v = G.paper_vs_ours(VALUES, ids=list(VALUES))
    assert dict(zip(v["claim_id"], v["reproduced_value"]))["T6.battery.pse"] == "21.2121"
    assert dict(zip(v["claim_id"], v["reproduced_value"]))["T6.ordered.pse"] == ""


def test_registry_is_well_formed():
    reg = G.registry()
    assert list(reg.columns) == G.REGISTRY_COLUMNS and reg["claim_id"].is_unique
    bad = [p for p in reg["paper_value"] if not isinstance(G.parse_printed(p), float)]
    assert not bad


@pytest.mark.parametrize("printed,decimals", [("+21.2", 1), ("1,200", 0), ("7.7×10^-9", 1), ("2.5%", 1), ("0.00", 2)])
def test_printed_decimals(printed, decimals):
    assert G.printed_decimals(printed) == decimals
