"""Real-record conditional proxy substitution on UCI Diabetes 130-US Hospitals (paper §2.3, §4.7,
Supplementary Note 14, Tables 21-22; spec PROTOCOL-uci §11).

The dataset is Clore, Cios, DeShazo & Strack (2014), *Diabetes 130-US Hospitals for Years
1999-2008*, UCI Machine Learning Repository, https://doi.org/10.24432/C5230J (CC BY 4.0).

Stages, one module each (imports run downward: ``design`` <- ``panel`` <- ``risk`` <- ``proxy`` <-
``study`` <- ``validation``, ``support``, ``pairs``, ``prompts``, ``references``, ``estimation`` <-
``pipeline`` <- ``figure``, ``claims``):

1. :mod:`.panel` :func:`build_panel` — Black or white patients discharged home, first encounter per patient
   (43,355 rows); payer in 6 groups, admission source in 4, nine task fields, age band.
2. :mod:`.risk` :func:`split_indices` — five patient-disjoint splits (seed 20261002).
3. :mod:`.risk` :func:`fit_risk_rule` — the frozen outcome rule (logistic regression on the task fields; payer,
   admission source and race have zero weight) and synthetic example labels (noise SD 0.5).
4. :mod:`.proxy` :func:`fit_proxy_model` — multinomial model of the joint category given group and task fields.
5. :mod:`.proxy` :func:`couple` — the uniform-draw coupling: a fixed draw inside the recorded category's
   cumulative interval under the own group, mapped through the other group's distribution.
6. :mod:`.pairs` pair sets (:func:`primary_pairs`, :func:`gap_stratified_pairs`, :func:`neartie_pairs`,
   :func:`control_pairs`) and :mod:`.prompts`, the exact prompt (:func:`render_jobs`).
7. :mod:`.references` (:func:`learner_pair_effects`, :func:`positive_control_references`) and the
   analysis of the released Sonnet records (:func:`condition_summary`, :func:`neartie_summary`).

:mod:`.study` :func:`build_study` runs stages 1-5 once; :mod:`.validation` and :mod:`.support` check the
models (Supplementary Note 14); :mod:`.pipeline` :func:`run_pipeline` produces Tables 21-22; :mod:`.figure`
draws Fig. 3B; :mod:`.claims` :func:`claim_values` computes every registered claim. The fixed design
(inputs, groupings, seeds, sizes, conditions) is in :mod:`.design`.

Missing payer: the hashed panel writes missing fields as ``NaN`` (pandas reads them as null), so
``missing_payer="null"`` (Not recorded) is the default; the alternative ``"?"`` (a literal code,
hence Other insurer) is kept to show that it does not reproduce the released prompts.
"""
from __future__ import annotations

from .claims import claim_values
from .design import (ARM_GROUP, BOOT_DRAWS, BOOT_SEEDS, CALIBRATION_MIN_PREVALENCE, CATEGORY_SEP, CONDITIONS,
                     CONTROL_PAYERS, CONTROL_SEED, CONTROL_SOURCE, CONTROL_WEIGHT, COUNT_COLUMNS, DATASET_CITATION,
                     DATASET_DOI, DISCHARGED_HOME, DISPLAY_LABELS, GAP_EDGES, LABEL_NOISE_SD, LABEL_SEED,
                     MAPPING_GATE, MAPPING_NAME, MARGIN_PP, MODEL_DIR, N_CONTROL, N_EXAMPLES, N_NEARTIE, N_PRIMARY,
                     N_SENSITIVITY, N_STRATIFIED, NEARTIE_BOOT_SEED, NEARTIE_DIFF_SEED, NEARTIE_GAP, NEARTIE_LINKS,
                     NEARTIE_RECORDS, NEARTIE_SEED, ORDERINGS, ORDERS, PAIR_SHUFFLE_SEED, PANEL_NAME, PAYER_CODES,
                     PAYER_MISSING, PAYER_OTHER, PAYERS, PER_GAP_STRATUM, PERMUTED_ORDER_SEED, PLAN_ALPHA, PLAN_POWER,
                     PROPENSITY_FEATURES, RACES, SEED, SOURCE_IDS, SOURCE_OTHER, SOURCES, SPLIT_CUTS,
                     SPLIT_FRACTIONS, SPLIT_NAMES, SUPPORT_MIN_PROB, SUPPORT_PROPENSITY, TASK_COLUMNS, TASK_FIELDS)
from .estimation import (boot_interval, condition_summary, neartie_pair_table, neartie_records, neartie_summary,
                         pair_table, read_condition_records, stratum_estimates)
from .figure import effects_frame, plot_effects
from .pairs import (change_fractions, control_pairs, design_pairs, gap_bin, gap_stratified_pairs, neartie_pairs,
                    planning, primary_pairs, random_target_pairs, shuffled_pool)
from .panel import build_panel, check_mapping, cohort_flow, payer_group, read_id_mapping, read_raw_panel, source_group
from .pipeline import (Results, cohort_flow_from_study, condition_pairs, default_results, missing_payer_comparison,
                       positive_control_variants, run_pipeline)
from .prompts import PROMPT_INTRO, hash_check, patient_blocks, prompt_prefix, render_jobs, render_prompt
from .proxy import category_order, category_probabilities, couple, coupling_uniforms, fit_proxy_model, proxy_features
from .references import (ControlRule, control_risk, indicator_design, learner_pair_effects, payer_indicator,
                         positive_control_categories, positive_control_references, same_payer_indicator)
from .risk import RiskRule, fit_risk_rule, split_indices, synthetic_labels
from .study import Study, build_study, coupling_table, default_study
from .support import group_propensity, substituted_categories, support_checks, support_variants
from .validation import calibration_errors, proxy_validation, risk_validation

__all__ = [name for name in dir() if not name.startswith("_") and name != "annotations"]
