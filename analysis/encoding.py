"""The displays' encoding of the proxies (paper §4.6; spec PROTOCOL-representation §10.1-10.2).

Each proxy is cut at its population quartiles (the factual 5,000-row standardised population of
the cell); the bin of a displayed value is ``searchsorted(edges, x, side="right")``, applied with
the same edges to whichever sample is rendered (factual, counterfactual, or the example rows,
each standardised in its own sample). The ordered display shows bin ``b`` as ``level b+1``; the
arbitrary display shows a fixed two-letter code whose alphabetical order neither rises nor falls
with the bin (:func:`code_table`). :func:`indicator_features` are the category-indicator
learner's features (task values and indicators of bins 1..3 of every proxy).
"""
from __future__ import annotations

import functools

import numpy as np

from . import config
from .cells import Cell, expect_cell
from .population import population


@functools.lru_cache(maxsize=32)
def _edges(c: Cell) -> tuple[tuple[float, float, float], ...]:
    pop = population(c)
    cols = range(pop.L, pop.L + pop.M)
    return tuple(tuple(np.quantile(pop.X[:, c], [0.25, 0.5, 0.75])) for c in cols)


def quartile_edges(cell: Cell) -> np.ndarray:
    """Cut points (M x 3) of each proxy at the factual population's quartiles."""
    c = expect_cell(cell)
    # the factual population: informative level does not change displayed values
    base = c.with_(proxies="zero", sweep_beta=None, n_examples=config.N_EXAMPLES, example_corr=None,
                   example_corner=None)
    return np.array(_edges(base))


def bins(values: np.ndarray, edges: np.ndarray) -> np.ndarray:
    """Bin (0..3) of displayed proxy values; ``values`` is (n x M) or (M,), ``edges`` is (M x 3)."""
    values = np.atleast_2d(values)
    out = np.column_stack([np.searchsorted(edges[m], values[:, m], side="right") for m in range(edges.shape[0])])
    return out


@functools.lru_cache(maxsize=8)
def code_table(n_fields: int = 6, seed: int = config.CODE_SEED) -> tuple[tuple[str, ...], ...]:
    """Two-letter codes per proxy field and bin (spec §10.2; checkpoint C11).

    For each field in order, draw 4 distinct codes from the remaining pool until they are
    neither sorted ascending nor descending; assign them to bins 0..3; remove them from the pool.
    The pool of 16 codes covers four fields; fields beyond the fourth reuse the cycle.
    """
    rng = np.random.default_rng(seed)
    pool = list(config.CODE_POOL)
    fields: list[tuple[str, ...]] = []
    for _ in range(min(n_fields, 4)):
        while True:
            pick = [pool[t] for t in rng.choice(len(pool), 4, replace=False)]
            if pick != sorted(pick) and pick != sorted(pick, reverse=True):
                break
        fields.append(tuple(pick))
        pool = [c for c in pool if c not in pick]
    while len(fields) < n_fields:
        fields.append(fields[len(fields) % 4])
    return tuple(fields)


def label(b: int, field: int, display: str) -> str:
    """The displayed label of bin ``b`` of proxy ``field`` in ``display`` (ordered / arbitrary)."""
    if display == "ordered":
        return f"level {int(b) + 1}"
    if display == "arbitrary":
        return code_table()[field][int(b)]
    raise ValueError(f"unknown category display {display!r}; expected 'ordered' or 'arbitrary'")


def indicator_features(X: np.ndarray, L: int, edges: np.ndarray) -> np.ndarray:
    """Task values followed by the indicators [bin == 1], [bin == 2], [bin == 3] of every proxy."""
    X = np.atleast_2d(X)
    b = bins(X[:, L:], edges)
    ind = [(b[:, m] == level).astype(float) for m in range(b.shape[1]) for level in (1, 2, 3)]
    return np.column_stack([X[:, :L], *ind])
