"""Tests of analysis.supplement.naming: the Fig. 4A data (naming effects without examples)."""
from __future__ import annotations

import numpy as np

from analysis import supplement


def test_naming_effects_rows_and_sources():
    df = supplement.naming_effects(draws=40)
    assert list(df["model"]) == ["sonnet", "sonnet", "gpt", "qwen", "deepseek", "deepseek"]
    summary = df[df["source"].str.startswith("condition summary")]
    assert len(summary) == 1 and summary[["lo_pp", "hi_pp"]].isna().all(axis=None)
    assert summary["effect_pp"].iloc[0] == supplement.sonnet_k12_naming_summary()
    per_call = df.drop(summary.index)
    assert np.all(per_call["lo_pp"] <= per_call["effect_pp"]) and np.all(per_call["effect_pp"] <= per_call["hi_pp"])
    assert (df["effect_pp"] < 0).all()  # social names lower reliance in every model (Fig. 4A)
