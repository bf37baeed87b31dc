"""The calibration numbers the card cites for its battery and ``--pairs`` (issue 22).

Notebook 10 writes ``data/derived/calibration_summary.csv`` (:func:`analysis.calibration.study.summary`
with ``battery`` and ``pairs`` columns); the card quotes the rows of its own battery and pair count,
the joint judgment's worst false-finding rate and coverage and its power at 5 / 10 / 20 pp, and
links the notebook. No audit import, so :mod:`analysis.audit.card` can use it.
"""
from __future__ import annotations

from pathlib import Path

import pandas as pd

from ..paths import DERIVED

SUMMARY_CSV = DERIVED / "calibration_summary.csv"
NOTEBOOK = "notebooks/10_calibration.ipynb"


def pairs_label(n_pairs: int | None) -> str:
    """``"default"`` for the battery's own pairs, else the number."""
    return "default" if n_pairs is None else str(int(n_pairs))


def calibration_rows(battery: str, n_pairs: int | None, path: Path = SUMMARY_CSV) -> pd.DataFrame:
    """The study's summary rows of a battery at ``--pairs`` (empty when not calibrated)."""
    if not Path(path).is_file():
        return pd.DataFrame()
    t = pd.read_csv(path, dtype={"pairs": str})
    return t[(t["battery"] == battery) & (t["pairs"] == pairs_label(n_pairs))].reset_index(drop=True)


def _pct(x) -> str:
    return f"{100 * float(x):.1f}%"


def calibration_section(battery: str, n_pairs: int | None, path: Path = SUMMARY_CSV) -> dict:
    """``{"rows": [...], "statement": str}`` for the card; the statement says so when none was run."""
    t = calibration_rows(battery, n_pairs, path)
    where = f"battery {battery!r} at --pairs {pairs_label(n_pairs)}"
    if t.empty:
        return {"rows": [], "statement": f"Calibration: no known-truth calibration of the {where} has been run "
                                         f"(see {NOTEBOOK}); the verdicts' error rates are not measured here."}
    j, p = t[t["method"] == "joint"], t[t["method"] == "paper"]
    s = (f"Calibration ({NOTEBOOK}, {int(t['n_seeds'].iloc[0])} simulated collections per condition and true effect, "
         f"{where}): the card's judgment calls a difference where there is none in at most "
         f"{_pct(j['false_finding_rate'].max())} of collections (goal 5%), covers the true difference in at least "
         f"{_pct(j['coverage'].min())} (goal 93%), and finds a true excess of 5 / 10 / 20 pp in "
         f"{_pct(j['power_5'].median())} / {_pct(j['power_10'].median())} / {_pct(j['power_20'].median())} "
         f"(median over conditions).")
    if not p.empty:
        worst = p.loc[p["false_finding_rate"].idxmax()]
        s += (f" The paper's judgment (reference held fixed) reaches a false-finding rate of up to "
              f"{_pct(worst['false_finding_rate'])} ({worst['condition']}).")
    return {"rows": t.to_dict("records"), "statement": s}
