"""The four-model battery and the Sonnet manipulations: cell tables, tracking slopes, accuracy versus reliance.

Paper §2.2, §2.4, §2.5, §4.3-§4.5; Supplementary Notes 2, 3, 8, 16 and 18 (Tables 3, 4, 5, 16,
17 and 23-28); spec PROTOCOL-statistics §8-§9.

* :mod:`.cells` -- cell tables (Tables 16, 17, 23-28) and the Fig. 1B judgments;
* :mod:`.tracking` -- tracking slopes (Tables 3-5, Fig. 2);
* :mod:`.reliance` -- accuracy versus reliance (frozen policy, dimension-by-dependence reversal,
  partial and pair-level correlations; §2.2, §2.5, Supplementary Note 8);
* :mod:`.claims` -- every registered claim of these tables and notes (:func:`claim_values`).

The judgment (excess / no resolved difference / shortfall) is :func:`analysis.judgments.judge`;
the figure drawings are in :mod:`analysis.figures`; the claims view is
:func:`analysis.registry.paper_vs_ours`.
"""
from __future__ import annotations

from ..judgments import VERDICTS, verdict  # noqa: F401  (kept importable: the one judgment lives in judgments)
from .cells import (GATE1_SUMMARY, LEVELS, MODEL_NAMES, MODELS, NAME_SETS, REPLICATION_SEEDS, all_cell_results,
                    battery_cells, cell_result, cell_table, dimension_table, dimension_table_cells,
                    example_correlation_table, example_count_summary, example_count_table, example_proxy_correlation,
                    example_structure_table, excess_judgments, reference_cells, structure_cell, summary_row,
                    sweep_cell, sweep_level_cell, sweep_pairs, sweep_references)
from .claims import claim_values
from .reliance import (COUPLING_SEED, DIMENSION_CELLS, FROZEN_POLICY_ORDER, INTERACTION_MODELS, INTERACTION_SEED,
                       PAIR_PERMUTATION_SEED, coupling_partial_correlation, dimension_interaction, frozen_policy_table,
                       pair_level_covariation, permutation_p, stouffer_p)
from .tracking import (learner_x, repeated_measurement, seed_replication_cells, seed_replication_contrasts,
                       seed_replication_fits, single_fit, sweep_matrix, sweep_points, tracking_table)

__all__ = [name for name in dir() if not name.startswith("_") and name != "annotations"]
