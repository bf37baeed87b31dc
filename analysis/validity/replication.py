"""Replication verdicts: is a condition's verdict stable over independent pair samples? (beyond the paper)

The main paper's own caution (Supplementary Note 9): a condition-level judgment can depend on the
collection. A condition measured on independent pair samples — seed replications (spec §1, §3:
population S, pairs S + 20000, examples S + 40000; cells ``..._s<S>``) or repeated collections — is
called **stable** when every replicate gives the same verdict and **collection-dependent** when
they do not. Each replicate is judged against its own references (the examples differ per seed).
"""
from __future__ import annotations

import pandas as pd

from ..cells import Cell, expect_cell

#: the release's seed replications (Table 3): populations 20001 and 20002
REPLICATION_SEEDS = (20001, 20002)
STABLE = "stable"
DEPENDENT = "collection-dependent"


def replicate_cells(cell: Cell, seeds=REPLICATION_SEEDS) -> list[Cell]:
    """The seed-replication cells of a cell (its seed replaced)."""
    c = expect_cell(cell)
    return [c.with_(seed=int(s)) for s in seeds]


def replication_verdict(verdicts: list[str]) -> str:
    """``stable`` when all replicate verdicts agree, else ``collection-dependent`` (empty: ``""``).

    >>> replication_verdict(["excess", "excess"]), replication_verdict(["excess", "no resolved difference"])
    ('stable', 'collection-dependent')
    """
    vs = [v for v in verdicts if v]
    if len(vs) < 2:
        return ""
    return STABLE if len(set(vs)) == 1 else DEPENDENT


def replication_rows(rows: dict[str, list[dict]]) -> list[dict]:
    """One row per condition (cue): its replicates' PSE, excess and verdicts, and the replication verdict.

    ``rows`` maps a replicate label (cell id or collection name) to its panel rows.
    """
    by_cue: dict[str, list[tuple[str, dict]]] = {}
    for rep, rs in rows.items():
        for r in rs:
            by_cue.setdefault(r["cue"], []).append((rep, r))
    out = []
    for cue, reps in by_cue.items():
        verdicts = [r["verdict"] for _, r in reps]
        out.append({"cue": cue, "replicates": [rep for rep, _ in reps],
                    "pse_pp": [r["pse_pp"] for _, r in reps], "excess_pp": [r["excess_pp"] for _, r in reps],
                    "excess_ci": [r["excess_ci"] for _, r in reps], "verdicts": verdicts,
                    "replication": replication_verdict(verdicts)})
    return out


def replication_table(out: list[dict]) -> pd.DataFrame:
    """A flat view: one line per cue and replicate."""
    return pd.DataFrame([{"cue": o["cue"], "replicate": rep, "pse_pp": p, "excess_pp": e, "verdict": v,
                          "replication": o["replication"]}
                         for o in out for rep, p, e, v in zip(o["replicates"], o["pse_pp"], o["excess_pp"],
                                                              o["verdicts"])])
