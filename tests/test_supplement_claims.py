"""Tests of analysis.supplement.claims: every registered claim of the supplement tables."""
from __future__ import annotations

import pytest

from analysis import registry, supplement
from analysis.records import NotReleased

def test_not_released_claims_name_what_is_missing():
    assert "60 pairs" in supplement.T7_MISSING


# --- the registry -----------------------------------------------------------------------------

@pytest.fixture(scope="module")
def values():
    return supplement.claim_values(draws=200)


def test_every_registered_claim_is_computed(values):
    reg = registry.registry()
    mine = set(reg["claim_id"][reg["claim_id"].str.startswith(
        ("T7.", "T8.", "T9.", "T10.", "T11.", "T12.", "T13.", "T14.", "T15.", "T18.", "T19.", "T20.", "SN6.", "SN7.",
         "SN9.", "SN10.", "SN11.", "SN12.", "Main.naming"))])
    assert mine == set(values)


def test_claims_match_or_are_explained(values):
    """Point estimates match; any mismatch (interval bounds vary with 200 draws) carries a note."""
    c = registry.paper_vs_ours(values).set_index("claim_id")
    notes = registry.registry().set_index("claim_id")["note"]
    assert len(c) == len(values) and (c["status"] != "not_computed").all()
    released = c[c["status"] != "not_released"]
    points = released[~released.index.str.contains(r"\.(?:lo|hi|lo90|hi90)$")]
    unexplained = [k for k in points.index[points["status"] == "mismatch"] if not notes[k]]
    assert not unexplained
    not_rel = [k for k, v in values.items() if isinstance(v, NotReleased)]
    assert not_rel and all(k.startswith("T7.") for k in not_rel)  # Table 19 and SN 12 are released now
