"""Construct validity of the audit: a cue panel, an association probe and replication verdicts.

An extension beyond the paper's protocol (issue 15; related papers in ``../shared/related``):

* :mod:`~analysis.validity.panel` — one condition under several cues (:mod:`analysis.cues`):
  PSE, reference, excess, verdict per cue; convergence across cues; cue-robust or cue-dependent;
* :mod:`~analysis.validity.probe` — which of two patients belongs to group A; AUC, abstention,
  association against reliance (correlation, TOST with a declared margin, Benjamini–Hochberg);
* :mod:`~analysis.validity.replication` — stable or collection-dependent over independent pair samples;
* :mod:`~analysis.validity.subjects` — simulated subjects with association and reliance set
  independently; :mod:`~analysis.validity.truth` — their known truth and the intervals' coverage;
* :mod:`~analysis.validity.run` — the battery (plan, answers, analysis);
  :mod:`~analysis.validity.card` — the report card's section.
"""
from __future__ import annotations

from . import card, panel, plots, probe, released, replication, run, subjects, truth  # noqa: F401
from .card import html_section, section  # noqa: F401
from .run import CELLS, ValidityPlan, analyse, collect, describe_plan, plan_table  # noqa: F401
from .subjects import PRESETS, SUBJECTS, CueSubject  # noqa: F401
