"""Counterfactual scaling (Supplementary Note 10) on our own synthetic population."""
from __future__ import annotations

import functools

import pandas as pd

from .. import population
from ..cells import Cell
from ..estimators import pair_pse
from ..prompts import value_strings
from ..records import load_records
from .order import MODELS

#: Supplementary Note 10's cell, ``k12_LH_neutral_absent_zero`` (built field by field: nothing parsed)
CELL = Cell(k=12, corner="LH", names="neutral", examples="absent", proxies="zero")

@functools.lru_cache(maxsize=4)
def comparator_moves(cell: Cell = CELL) -> pd.MultiIndex:
    """Pairs whose comparator's rendered values differ between the two counterfactual arms.

    Each arm re-standardises the 5,000-patient sample after regenerating the target's proxies
    (spec PROTOCOL-synthetic §5.4), so the comparator ``j``'s displayed two-decimal values can move.
    """
    pop = population.population(cell)
    moved = []
    for p in population.pairs(cell).itertuples():
        shown = [value_strings(population.counterfactual(pop, p.i, a).X[[p.j]], cell)[0] for a in (1, 0)]
        if shown[0] != shown[1]:
            moved.append((p.i, p.j))
    return pd.MultiIndex.from_tuples(moved, names=["i", "j"])


def scaling_sensitivity(cell: Cell = CELL) -> pd.DataFrame:
    """PSE (pp) per model with and without the pairs whose comparator moves."""
    moved = comparator_moves(cell)
    rows = []
    for m in MODELS:
        pse = pair_pse(load_records(m, cell))
        keep = pse.drop(index=moved.intersection(pse.index))
        rows.append({"model": m, "pse_pp": 100 * pse.mean(), "pse_excluding_pp": 100 * keep.mean(),
                     "n_pairs": len(pse), "n_excluded": len(pse) - len(keep)})
    return pd.DataFrame(rows)
