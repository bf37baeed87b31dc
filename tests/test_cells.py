"""Cell ids (analysis.cells): malformed ids are refused with the grammar in the message."""
from __future__ import annotations

import pytest

import analysis.audit as A  # imported here: its module-level conditions are not the route's
from analysis import cells


@pytest.mark.parametrize("bad", ["k12_LH_neutral", "k10_LH_neutral_learned_zero", "k12_XX_neutral_learned_zero",
                                 "k12_LH_neutral_absent_info_b030", "k12_LH_neutral_learned_zero_s"])
def test_malformed_cell_ids(bad):
    with pytest.raises(cells.CellError, match=r"expected k\{6,12,18\}"):
        cells.parse_cell(bad)


# --- a Cell from the boundary down (issue 21; STYLE 3) ------------------------------------------

class _CountingPattern:
    """Stands in for the grammar's regular expression and counts each id string parsed."""

    def __init__(self, pattern):
        self.pattern, self.ids = pattern, {}

    def match(self, text):
        self.ids[text] = self.ids.get(text, 0) + 1
        return self.pattern.match(text)


@pytest.fixture
def parses(monkeypatch):
    counter = _CountingPattern(cells._PATTERN)
    monkeypatch.setattr(cells, "_PATTERN", counter)
    return counter.ids


def test_a_cell_changed_or_passed_down_is_not_parsed_again(parses):
    c = cells.parse_cell("k12_LH_neutral_learned_zero")
    assert parses == {"k12_LH_neutral_learned_zero": 1}
    assert cells.parse_cell(c) is c
    assert c.with_(proxies="info", sweep_beta=0.45) == cells.parse_cell("k12_LH_neutral_learned_info_b045")
    assert c.with_(seed=20001).id == "k12_LH_neutral_learned_zero_s20001"
    assert parses == {"k12_LH_neutral_learned_zero": 1, "k12_LH_neutral_learned_info_b045": 1}
    with pytest.raises(cells.CellError, match="sweep levels"):
        c.with_(examples="absent", proxies="info", sweep_beta=0.30)
    with pytest.raises(cells.CellError, match=r"k=7"):
        c.with_(k=7)


def test_caches_below_the_boundary_key_on_the_cell(parses):
    from analysis import references

    c = cells.parse_cell("k6_LH_neutral_learned_zero")
    references.reference_pairs(c)
    hits = references._reference_pairs.cache_info().hits
    references.reference_pairs(c)
    assert references._reference_pairs.cache_info().hits == hits + 1
    assert c in {k for k in [c]} and hash(c) == hash(cells.parse_cell(c.id))
    assert sum(parses.values()) == 2  # the two parse_cell calls of this test, nothing below them


@pytest.fixture
def parse_calls(monkeypatch):
    """Every call of ``parse_cell`` (an id or a Cell), wherever the package imported it by name."""
    import sys

    calls: list = []
    original = cells.parse_cell

    def counting(cell_id):
        calls.append(cell_id)
        return original(cell_id)

    for name, module in list(sys.modules.items()):
        if (name == "analysis" or name.startswith("analysis.")) and getattr(module, "parse_cell", None) is original:
            monkeypatch.setattr(module, "parse_cell", counting)
    return calls


def test_the_audit_parses_each_cell_id_once(parses, parse_calls, tmp_path):
    """Following the battery from audit.run.run_audit (the smoke battery, a simulated model): each
    cell id is parsed once, where its Condition is made (its copies carry the Cell), never below.
    Before issue 21 the same route called parse_cell 3,137 times (4 on an id string); then 2."""
    res = A.run_audit("simulated", "reads-everything", tmp_path, battery="smoke", draws=200, progress=False,
                      log=lambda *a: None)
    assert res.complete
    assert parses == {c: 1 for c in A.SMOKE_CELLS}
    assert sorted(parse_calls) == sorted(A.SMOKE_CELLS)  # one call per distinct cell, none with a Cell


def test_a_cell_id_below_the_boundary_is_refused_in_one_line():
    """A function below the boundary takes the Cell only: an id string raises a one-line TypeError
    that names the function and says where to parse."""
    from analysis import population, references

    with pytest.raises(TypeError, match=r"^reference_pairs\(\) takes an analysis\.cells\.Cell, not str "
                                        r"'k12_LH_neutral_learned_zero'; parse the cell id at the boundary "
                                        r"with cells\.parse_cell$") as info:
        references.reference_pairs("k12_LH_neutral_learned_zero")
    assert "\n" not in str(info.value)
    with pytest.raises(TypeError, match=r"^population\(\) takes an analysis\.cells\.Cell, not NoneType None;"):
        population.population(None)
    c = cells.parse_cell("k12_LH_neutral_learned_zero")
    assert cells.expect_cell(c) is c
