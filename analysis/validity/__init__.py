"""Construct validity of the audit: a cue panel, an association probe and replication verdicts.

An extension beyond the paper's protocol (issue 15; related papers in ``../shared/related``):

* :mod:`~analysis.validity.panel` — one condition under several cues (:mod:`analysis.cues`):
  PSE, reference, excess, verdict per cue (joint bootstrap with :mod:`~analysis.validity.reference`'s
  refitted learners, TOST); convergence across cues against its :mod:`~analysis.validity.reliability`
  ceiling; :mod:`~analysis.validity.heterogeneity` (cue-dependent, cue-robust within ±X pp, inconclusive);
* :mod:`~analysis.validity.baseline` — the blind arm, deviations per group, discriminant validity,
  competence; :mod:`~analysis.validity.confounds` — length, readability, the pair fixed-effects model;
* :mod:`~analysis.validity.coupling` — association against reliance with cues as the unit;
* :mod:`~analysis.validity.calibration` — false-finding rate, power and coverage of every verdict;
* :mod:`~analysis.validity.probe` — which of two patients belongs to group A; AUC, abstention
  (exact interval), Benjamini–Hochberg with the positive control outside the family;
* :mod:`~analysis.validity.replication` — stable or collection-dependent over independent pair samples;
* :mod:`~analysis.validity.subjects` — simulated subjects with association and reliance set
  independently; :mod:`~analysis.validity.truth` — their known truth and the intervals' coverage;
* :mod:`~analysis.validity.run` — the battery (plan, answers, analysis);
  :mod:`~analysis.validity.card` — the report card's section.
"""
from __future__ import annotations

from . import (baseline, calibration, card, confounds, coupling, heterogeneity, panel, plots, probe,  # noqa: F401
               reference, released, reliability, replication, run, subjects, truth)
from .card import html_section, section  # noqa: F401
from .run import CELLS, ValidityPlan, analyse, collect, describe_plan, plan_table  # noqa: F401
from .subjects import PRESETS, SUBJECTS, CueSubject  # noqa: F401
