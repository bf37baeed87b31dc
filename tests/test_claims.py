"""The claims check (analysis.claims): providers imported directly, merged without clashes."""
from __future__ import annotations

import types

import pytest

from analysis import claims, population, registry
from analysis.records import NotReleased


def test_providers_are_the_study_modules():
    assert all(isinstance(m, types.ModuleType) and callable(m.claim_values) for m in claims.PROVIDERS)
    assert [m.__name__ for m in claims.PROVIDERS] == list(claims.NOTEBOOK_OF)


def _provider(name, values):
    mod = types.ModuleType(name)
    mod.claim_values = lambda: dict(values)
    return mod


def test_compute_all_merges_and_refuses_a_claim_computed_twice():
    a, b = _provider("p.a", {"T6.battery.pse": 21.2}), _provider("p.b", {"T6.ordered.pse": NotReleased("x")})
    got = claims.compute_all((a, b))
    assert set(got) == {"T6.battery.pse", "T6.ordered.pse"} and claims.PROVIDER_OF["T6.ordered.pse"] == "p.b"
    with pytest.raises(ValueError, match="already computed"):
        claims.compute_all((a, _provider("p.c", {"T6.battery.pse": 1.0})))


def test_check_adds_the_missing_inputs_to_the_note():
    out = claims.check({"T6.ordered.pse": NotReleased("the ordered rendering")}, write=False)
    row = out.set_index("claim_id").loc["T6.ordered.pse"]
    assert row["status"] == "not_released" and "not released: the ordered rendering" in row["note"]
    assert claims.summary(out)["not_computed"] == len(out) - 1


def test_compare_is_the_one_view():
    values = population.claim_values()
    c = claims.compare(values)
    v = registry.paper_vs_ours(values, ids=list(values))
    assert c["reproduced_value"].tolist() == v["reproduced_value"].tolist()
    assert c["claim_id"].tolist() == list(values)
