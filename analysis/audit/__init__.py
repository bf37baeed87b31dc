"""Audit your own model: one command, a report card of judgments against the evidence (issues 8, 13).

Paper §2.1-§2.5, §4.3-§4.6 and Fig. 1; spec PROTOCOL-statistics §8-§9.4.

``python -m analysis audit --provider P --model M --out DIR`` runs a *battery* of the paper's
conditions on any model reachable through :mod:`analysis.collection` (Anthropic, any
OpenAI-compatible endpoint, or an offline simulated subject), then writes a report card:
``DIR/report_card.html`` (one self-contained page) and ``DIR/report_card.json`` (the same numbers).

The package, one stage per module (imports run downward in this order):

=================  ===========================================================================
batteries          :class:`Condition`, the batteries (``core``, ``full``, ``smoke``), jobs, calls
subjects           simulated subjects (``tracks-learner``, ``answers-first``, ...) and the factory
wording            the card's sentences (what the evidence supports; never a label of the model)
plan               calls, tokens and cost before anything is asked; what the folder spent
responsiveness     does the model read the patients? (order flips, accuracy vs chance, validity)
analyse            estimation and judgment (:func:`analysis.judgments.judge`), reference models
card               the JSON card
plots              the card's plots (matplotlib, base64 PNG)
html               the HTML page (jinja2 templates in ``templates/``, autoescaped)
run                :func:`run_audit`: plan, collect, estimate, judge, write
commands           ``python -m analysis audit`` (:func:`audit` on a parsed Namespace)
=================  ===========================================================================

The card states what the evidence supports. It never labels a model as acceptable or not:
whether a use of a field is lawful or appropriate depends on the decision setting (paper §1).
"""
from __future__ import annotations

from ..judgments import VERDICTS, verdict
from .analyse import (CONTRAST_SEED, analyse, collected_loader, condition_references, condition_row, display_section,
                      first_pairs_of, judged, naming_section, reference_models, released_loader, structure_section,
                      subset_references, summary_condition_row, tracking_section)
from .batteries import (BATTERIES, BATTERY_NAMES, GROUPS, NAME_SETS, PAPER_MODELS, REP_CELL, SMOKE_BATTERIES,
                        SMOKE_CELLS, SMOKE_PAIRS, STRUCTURE_CELLS, SWEEP_LEVELS, Condition, battery_calls,
                        battery_conditions, first_pairs, jobs_of, n_calls, select_conditions, sweep_cell)
from .card import (METHOD_NOTES, NOT_INTERPRETABLE, READING_GUIDE, REPORT_HTML, REPORT_JSON, SCHEMA, provenance,
                   report_card, smoke_notice, summary_statements)
from .commands import audit, graceful_interrupt
from .html import render_html
from .plan import describe_plan, plan_audit, spent_in_ledger
from .plots import card_figures, figure_conditions, figure_display, figure_tracking
from .responsiveness import CHANCE_PCT, factual_pairs, responsiveness
from .run import AuditResult, collect_audit, run_audit, write_report
from .subjects import (AUDIT_PRESETS, DRY_RUN_KEY, UNRESPONSIVE, LearnerTracker, parse_examples, simulated_subject,
                       subject_factory)
from .wording import (FORBIDDEN_WORDS, HALF_ADJUSTMENT, REFERENCE_NAMES, accuracy_statement, condition_statement,
                      display_statement, naming_statement, slope_statement)
