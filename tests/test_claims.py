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


# --- claims --table: fast, and refusing what is not a table (issue 17) -------------------------

def _sandbox(tmp_path, monkeypatch):
    """claims_check.csv and its fingerprint in a temporary folder (a copy of the committed check)."""
    check = tmp_path / "claims_check.csv"
    check.write_bytes(claims.paths.CLAIMS_CHECK.read_bytes())
    monkeypatch.setattr(claims.paths, "CLAIMS_CHECK", check)
    monkeypatch.setattr(claims, "CHECK_FINGERPRINT", tmp_path / "claims_check.inputs.sha256")
    return check


def test_claims_table_refuses_an_unknown_table_with_one_line(capsys):
    from analysis import cli

    assert cli.main(["claims", "--table", "Table 99"]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "unknown table 'Table 99'" in err[0] and "Table 6" in err[0]


def test_claims_table_reads_a_current_check_without_computing(tmp_path, monkeypatch):
    _sandbox(tmp_path, monkeypatch)
    claims.CHECK_FINGERPRINT.write_text(claims.inputs_fingerprint() + "\n")
    monkeypatch.setattr(claims, "compute_all", lambda *a, **k: pytest.fail("a current check was recomputed"))
    view, recomputed = claims.check_tables(["Table 6"])
    assert not recomputed and len(view) == 27 and set(view["table"]) == {"Table 6"}


def test_claims_table_recomputes_only_the_studies_behind_a_stale_table(tmp_path, monkeypatch):
    _sandbox(tmp_path, monkeypatch)
    claims.CHECK_FINGERPRINT.write_text("stale\n")
    asked = []

    def fake_compute_all(providers=claims.PROVIDERS):
        asked.append(tuple(m.__name__ for m in providers))
        return {}

    monkeypatch.setattr(claims, "compute_all", fake_compute_all)
    view, recomputed = claims.check_tables(["Table 2"])
    assert recomputed and asked == [("analysis.population",)]
    assert set(view["table"]) == {"Table 2"} and set(view["status"]) == {"not_computed"}


def test_a_full_check_writes_the_fingerprint_and_a_partial_one_does_not(tmp_path, monkeypatch):
    _sandbox(tmp_path, monkeypatch)
    claims.check(values={}, write=True)  # partial: every row not computed
    assert not claims.CHECK_FINGERPRINT.exists() and not claims.check_is_current()
