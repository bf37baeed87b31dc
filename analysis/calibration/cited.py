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
#: the validity battery's own table (notebook 09: one row per verdict of the panel, ``n_pairs`` per cue)
VALIDITY_CSV = DERIVED / "calibration_validity.csv"
VALIDITY_NOTEBOOK = "notebooks/09_construct_validity.ipynb"
#: the panel's verdict the card's judgment is, and the paper's rule beside it (rows of ``calibration_validity.csv``)
PANEL_JOINT = "excess or shortfall (panel: joint bootstrap, TOST)"
PANEL_PAPER = "excess or shortfall (the paper's rule: PSE interval shifted by a fixed reference)"


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


def validity_section(n_pairs: int | None, path: Path = VALIDITY_CSV) -> dict:
    """The validity battery's calibration (notebook 09's table) for its card; ``n_pairs`` None is the
    table's own pair count, any other count is not calibrated."""
    t = pd.read_csv(path) if Path(path).is_file() else pd.DataFrame()
    if not t.empty and n_pairs is not None:
        t = t[t["n_pairs"] == int(n_pairs)]
    where = f"battery 'validity' at --pairs {pairs_label(n_pairs)}"
    joint = t[t["verdict"] == PANEL_JOINT] if not t.empty else t
    paper = t[t["verdict"] == PANEL_PAPER] if not t.empty else t
    if joint.empty:
        return {"rows": [], "statement": f"Calibration: no known-truth calibration of the {where} has been run "
                                         f"(see {VALIDITY_NOTEBOOK}); the verdicts' error rates are not measured here."}
    j = joint.iloc[0]
    s = (f"Calibration ({VALIDITY_NOTEBOOK}, {int(j['n_seeds'])} simulated collections, {int(j['n_pairs'])} pairs a "
         f"cue): the panel's judgment calls an excess or shortfall where there is none in {_pct(j['false_finding_rate'])} "
         f"of cue judgments (at most {_pct(j['false_finding_max_cue'])} for one cue; goal 5%), covers the true "
         f"difference in {_pct(j['coverage'])} (at least {_pct(j['coverage_min_cue'])} for one cue; goal 93%), and "
         f"finds a true excess of 5 / 10 / 20 pp in {_pct(j['power_5pp'])} / {_pct(j['power_10pp'])} / "
         f"{_pct(j['power_20pp'])}; every verdict of the panel is in the table.")
    if not paper.empty:
        s += (f" The paper's rule (reference held fixed) reaches a false-finding rate of "
              f"{_pct(paper['false_finding_rate'].iloc[0])} (up to {_pct(paper['false_finding_max_cue'].iloc[0])} for one cue).")
    return {"rows": t.to_dict("records"), "statement": s}


def calibration_section(battery: str, n_pairs: int | None, path: Path = SUMMARY_CSV) -> dict:
    """``{"rows": [...], "statement": str}`` for the card; the statement says so when none was run."""
    if battery == "validity":
        return validity_section(n_pairs)
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
