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


# --- each number made once (issue 21): the check reads what the notebooks wrote ----------------

from analysis import products  # noqa: E402


def test_a_product_reads_back_every_float_bit_for_bit():
    values = {"a": 0.1 + 0.2, "b": -7.769023467e-17, "c": float("nan"), "d": NotReleased("the records"), "e": None,
              "f": 1e308, "g": 3}
    key, back = products.from_csv(products.to_csv(values, "k"))
    assert key == "k" and list(back) == list(values)
    assert all(products.same_value(values[c], back[c]) for c in values)
    assert back["a"] == 0.30000000000000004 and back["d"].missing == "the records" and back["e"] is None
    with pytest.raises(products.ProductError):
        products.from_csv("claim_id,value\na,1\n")


@pytest.fixture
def product_dir(tmp_path, monkeypatch):
    monkeypatch.setattr(products, "folder", lambda output_dir=products.TRACKED: tmp_path)
    claims.SOURCE_OF.clear()
    return tmp_path


def _population_ids():
    reg = registry.registry()
    return [c for c in reg["claim_id"] if c.startswith("T2.")][:3]


def test_the_claim_moves_with_the_notebooks_product(product_dir, monkeypatch):
    """The claims check and the notebooks cannot disagree: the check shows what the product holds."""
    ids = _population_ids()
    monkeypatch.setattr(population, "claim_values", lambda: pytest.fail("recomputed a current study"))
    key = claims.expected_key("population")
    for value in (12.25, -3.5):
        products.write("population", {ids[0]: value, ids[1]: NotReleased("x"), ids[2]: 1.0}, key=key)
        out = claims.check(claims.compute_all((population,)), write=False).set_index("claim_id")
        assert out.loc[ids[0], "reproduced_value"] == f"{value:.10g}"
        assert out.loc[ids[1], "status"] == "not_released" and out.loc[ids[0], "notebook"] == "01_population"
        assert claims.SOURCE_OF == {"population": "product"}


def test_a_stale_or_missing_product_is_recomputed(product_dir, monkeypatch):
    ids = _population_ids()
    monkeypatch.setattr(population, "claim_values", lambda: {ids[0]: 99.0})
    assert claims.compute_all((population,)) == {ids[0]: 99.0}  # no product
    assert claims.SOURCE_OF == {"population": "recomputed"}
    products.write("population", {ids[0]: 1.0}, key="made by other code or inputs")
    assert claims.compute_all((population,)) == {ids[0]: 99.0}
    products.write("population", {ids[0]: 1.0}, key=claims.expected_key("population"))
    assert claims.compute_all((population,)) == {ids[0]: 1.0}


def test_every_provider_has_a_product_written_by_its_notebook():
    for mod in claims.PROVIDERS:
        study = claims.study_of(mod.__name__)
        assert study is not None and products.NOTEBOOK_OF[study] == claims.NOTEBOOK_OF[mod.__name__]
        source = (claims.paths.NOTEBOOKS / f"{products.NOTEBOOK_OF[study]}.py").read_text(encoding="utf-8")
        assert f'products.write("{study}", values, output_dir)' in source, study


def test_committed_claims_check_equals_the_notebooks_products():
    """After `make paper`: every row of claims_check.csv is the status and text of its product's value."""
    current = {s: products.read(s) for s in products.NOTEBOOK_OF}
    stale = [s for s, got in current.items() if got is None or got[0] != claims.expected_key(s)]
    if stale:
        pytest.skip(f"no current product of {', '.join(stale)} (run make paper first)")
    check = claims.pd.read_csv(claims.paths.CLAIMS_CHECK, dtype=str, keep_default_na=False)
    made = {cid: (study, v) for study, (_, vals) in current.items() for cid, v in vals.items()}
    for rec in check.to_dict("records"):
        study, value = made[rec["claim_id"]]
        assert (rec["status"], rec["reproduced_value"]) == registry.status_of(rec["paper_value"], rec["tolerance"],
                                                                               value), rec["claim_id"]
        assert rec["notebook"] == products.NOTEBOOK_OF[study]
