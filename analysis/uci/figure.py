"""Fig. 3B: Sonnet's effect in every real-record condition with the reference learner and the margin."""
from __future__ import annotations

import numpy as np
import pandas as pd

from .. import style
from .design import CONDITIONS, MARGIN_PP
from .pipeline import Results


def effects_frame(res: Results) -> pd.DataFrame:
    """Tidy effects for Fig. 3B: condition, model PSE and interval, learner reference (pp)."""
    rows = []
    for key in CONDITIONS:
        c = res.conditions[key]
        rows.append({"condition": CONDITIONS[key][0], "group": "Table 21", **c.loc["all", ["n", "pse_pp", "lo_pp",
                     "hi_pp"]].to_dict(), "learner_pp": c.loc["learner", "pse_pp"]})
        if key == "primary":
            rows.append({"condition": "Primary, changed targets", "group": "Table 21",
                         **c.loc["changed", ["n", "pse_pp", "lo_pp", "hi_pp"]].to_dict(), "learner_pp": np.nan})
    for sample, label in (("neartie", "Near tie, gap <0.3"), ("wide", "Wide-gap control")):
        rows.append({"condition": label, "group": "Table 22",
                     **res.neartie.loc[(sample, "all"), ["n", "pse_pp", "lo_pp", "hi_pp"]].to_dict(),
                     "learner_pp": res.neartie.loc[(sample, "learner"), "pse_pp"]})
    rows.append({"condition": "Near tie, changed targets", "group": "Table 22",
                 **res.neartie.loc[("neartie", "changed"), ["n", "pse_pp", "lo_pp", "hi_pp"]].to_dict(),
                 "learner_pp": np.nan})
    return pd.DataFrame(rows)


def plot_effects(effects: pd.DataFrame, margin_pp: float = MARGIN_PP):
    """Fig. 3B-style forest plot: Sonnet's PSE with 95 % intervals, learner references, margin."""
    import matplotlib.pyplot as plt  # heavy, optional: only the figure needs it

    style.apply_style()
    fig, ax = plt.subplots(figsize=(6.2, 0.36 * len(effects) + 1.2))
    y = np.arange(len(effects))[::-1]
    ax.axvspan(-margin_pp, margin_pp, color="#d5dbdb", alpha=0.45, lw=0, label=f"±{margin_pp:g} pp margin")
    ax.axvline(0, color="black", lw=0.8, label="Full-information reference (0)")
    col = style.MODEL_COLORS["sonnet"]
    ax.errorbar(effects["pse_pp"], y, xerr=[effects["pse_pp"] - effects["lo_pp"], effects["hi_pp"] - effects["pse_pp"]],
                fmt="o", color=col, ms=4, capsize=2, lw=1.2, label="Sonnet 4.5 (95% pair bootstrap)")
    has = effects["learner_pp"].notna()
    ax.plot(effects.loc[has, "learner_pp"], y[has.to_numpy()], "D", mfc="white", mec="#2c3e50", ms=5,
            label="Reference learner")
    ax.set_yticks(y)
    ax.set_yticklabels([f"{c} (n={int(n)})" for c, n in zip(effects["condition"], effects["n"])])
    ax.set_xlabel("Proxy-specific effect (pp)")
    ax.set_title("Real-record substitution (UCI Diabetes 130-US)")
    ax.legend(loc="lower center", bbox_to_anchor=(0.5, -0.02 - 0.6 / len(effects) * 4), ncol=2, fontsize=7)
    fig.tight_layout()
    return fig
