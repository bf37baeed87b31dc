"""Naming effects without examples (Fig. 4A data; main text "social names lower reliance")."""
from __future__ import annotations

import numpy as np
import pandas as pd

from .. import data
from .logistic import GEE_DRAWS, TABLE8_ROWS, logistic_table

GATE1_SUMMARY = "data/summaries/gate_summaries/expK_gate1_summary.csv"


def sonnet_k12_naming_summary() -> float:
    """Sonnet's k=12 zero-information no-example social minus neutral PSE (pp), from the condition summary.

    The social cell is released only as a condition summary (Supplementary Note 15), so this value
    is summary-level and has no interval.
    """
    s = data.read_csv(GATE1_SUMMARY)
    s = s[(s["k"] == 12) & (~s["informative"].astype(bool))].set_index("semantic")
    return float(s.at["social", "PSE_pp"] - s.at["neutral", "PSE_pp"])


def naming_effects(draws: int = GEE_DRAWS) -> pd.DataFrame:
    """Fig. 4A data: social minus neutral PSE (pp) per model, zero information, no examples.

    Per-call models use the pair-clustered logistic AME and its interval (Table 8, suppression
    rows); Sonnet at k = 12 is summary-level (no interval).
    """
    t = logistic_table(draws)
    rows = [{"model": "sonnet", "label": "Sonnet 4.5, k=12", "effect_pp": sonnet_k12_naming_summary(),
             "lo_pp": np.nan, "hi_pp": np.nan, "source": "condition summary (expK_gate1_summary.csv)"}]
    for key, label in (("sup.sonnet18", "Sonnet 4.5, k=18"), ("sup.gpt", "GPT-5.6 Terra, k=12"),
                       ("sup.qwen", "Qwen3.7-max, k=12"), ("sup.deepseek", "DeepSeek-V4-Flash, k=12"),
                       ("sup.deepseek3", "DeepSeek-V4-Flash, 3 draws")):
        r = t[key]
        rows.append({"model": TABLE8_ROWS[key][0], "label": label, "effect_pp": r["effect_pp"],
                     "lo_pp": r["lo"], "hi_pp": r["hi"], "source": "per-call records, pair-clustered AME"})
    return pd.DataFrame(rows)
