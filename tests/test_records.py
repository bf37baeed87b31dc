"""Released per-call records (analysis.records): every released file uses our pairs; NotReleased."""
from __future__ import annotations

from analysis import cells, data, population, records


#: released files whose pair ids number the strata in descending order (jobs were queued
#: stratum-descending); their (i, j) pairs are ours, in blocks of 33 from stratum 2 down
STRATUM_DESCENDING_IDS = {"data/raw_records/claude-sonnet-4-5/coupling/expK_cpl_k12_HH_factual_records.csv"}


def test_every_released_synthetic_records_file_uses_our_pairs():
    cat = records.catalogue()
    assert len(cat) >= 250
    for row in cat.itertuples():
        cell = cells.parse_cell(row.cell)  # an id of the catalogue
        raw = data.read_csv(row.name, usecols=["pair_id", "i", "j"])
        rel = raw.assign(pair_id=records._pair_ids(raw, cell)).drop_duplicates()
        ours = population.pairs(cell)
        m = rel.merge(ours, on=["i", "j"], how="left", suffixes=("", "_ours"), validate="1:1")
        assert m["pair_id_ours"].notna().all(), f"{row.name}: pairs not in our pair set"
        expected = m["pair_id_ours"].astype(int)
        if row.name in STRATUM_DESCENDING_IDS:
            expected = 33 * (2 - m["stratum"]) + expected % 33
        assert (m["pair_id"] == expected).all(), row.name
        assert rel["pair_id"].nunique() == len(rel), row.name


def test_one_not_released_raised_and_used_as_a_value():
    from analysis import claims, registry

    exc = records.NotReleased("the regeneration records")
    assert isinstance(exc, LookupError) and exc.missing == "the regeneration records"
    assert str(exc) == "the regeneration records" and exc == records.NotReleased("the regeneration records")
    assert claims.NotReleased is records.NotReleased  # one class (claims uses it; no second class)
    assert registry.status_of("+1.0", "0.05", exc) == ("not_released", "")
    try:
        records.record_files("qwen", cells.parse_cell("k12_LH_neutral_learned_zero_r70"))
    except records.NotReleased as raised:
        assert "not in the release" in raised.missing
    else:
        raise AssertionError("expected NotReleased")
