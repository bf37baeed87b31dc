"""Supplementary tables 7-15 and 18-20 and Supplementary Notes 5-7 and 9-13: one concept per module.

* :mod:`.logistic` -- the pair-clustered logistic model (Tables 8, 10; Supplementary Note 6);
* :mod:`.order` -- order robustness (Tables 9, 11-13, 20);
* :mod:`.anchors` -- real-data anchors (Tables 14-15; Supplementary Note 7);
* :mod:`.decomposition` -- the audit-error decomposition, summary-level (Table 18; Supplementary Note 9);
* :mod:`.regeneration` -- frozen against stochastic regeneration (Table 19; Supplementary Note 11);
* :mod:`.temperature` -- the temperature-1 resampling check (Supplementary Note 12);
* :mod:`.scaling` -- counterfactual scaling on our population (Supplementary Note 10);
* :mod:`.naming` -- naming effects without examples (Fig. 4A data);
* :mod:`.claims` -- every registered claim of these tables (:func:`claim_values`).

Table 7 (suppression by difficulty stratum, Supplementary Note 5) has no released per-call records,
so its claims are :class:`analysis.records.NotReleased`. The figure drawing of Fig. 4A is
:func:`analysis.figures.fig4a_naming`.
"""
from __future__ import annotations

from .anchors import (ANCHOR_BAND, ANCHOR_COLUMNS, ANCHOR_DRAWS, ANCHOR_EXCLUDED, ANCHOR_PANELS, ANCHOR_SEED,
                      DIABETES_UTILISATION, PROXY_LEVELS, TABLE14_ORDER, anchor_panel, anchor_source, auto_columns,
                      proxy_anchors, r2_given, structure_anchors, structure_statistic)
from .claims import T7_MISSING, claim_values
from .decomposition import EXPB, audit_decomposition, combine_gap
from .logistic import (GEE_DRAWS, GEE_SEED, TABLE8_ROWS, batch_logit, cluster_counts, design, fit_gee, gee_frame,
                       logistic_effect, logistic_table, model_frames, per_order_flips, per_order_values, table8,
                       table10)
from .naming import GATE1_SUMMARY, naming_effects, sonnet_k12_naming_summary
from .order import (DOSE_LEVELS, MODELS, ORDER_CI_DRAWS, ORDER_CI_SEED, POSITION_MIN_PSE_PP, TABLE9_MODELS,
                    TABLE11_ROWS, TABLE12_ROWS, battery_cells, consistent_pairs, inconsistency_rates, lpm_arm_effect,
                    order_cells, order_robustness, position_rates, sweep_cells, sweep_x, table9, table11, table12,
                    table13, table20)
from .regeneration import (CONCURRENT_RECORDS, REGEN_BOOT_DRAWS, REGEN_CELLS, REGEN_DRAWS_PER_PAIR, REGEN_FOLDERS,
                           REGEN_SEED, REGEN_SLOPE_DIVISOR_PP, REGEN_SLOPE_SEED, arm_contrast_by_pair,
                           concurrent_frozen, concurrent_pairs, concurrent_records, frozen_baseline_checks,
                           regeneration_pairs, regeneration_records, regeneration_summary, table19, v41_difference)
from .scaling import comparator_moves, scaling_sensitivity
from .temperature import (SINGLE_RESPONSE_SUPPORT, outside_support, pooled_contrast_by_pair,
                          probability_contrast_by_pair, t1_records, temperature_check, temperature_table)

__all__ = [name for name in dir() if not name.startswith("_") and name != "annotations"]
