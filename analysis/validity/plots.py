"""Figures of the construct-validity panel (beyond the paper's protocol); drawn inline by notebook 09."""
from __future__ import annotations

import math

import numpy as np

from ..style import JUDGMENT_COLORS, apply_style


def panel_figure(panels: dict[str, list[dict]], title: str = "PSE minus reference under each cue"):
    """One column per panel (subject or model): each cue's excess with its 95% interval, coloured by verdict."""
    import matplotlib.pyplot as plt  # heavy, optional

    apply_style()
    n = len(panels)
    fig, axes = plt.subplots(1, n, figsize=(3.3 * n + 0.8, 0.42 * max(len(r) for r in panels.values()) + 1.4),
                             sharey=False, squeeze=False)
    for ax, (name, rows) in zip(axes[0], panels.items()):
        ys = np.arange(len(rows))[::-1]
        for y, r in zip(ys, rows):
            c = JUDGMENT_COLORS.get(r["verdict"], "#aaaaaa")
            lo, hi = r["excess_ci"]
            ax.plot([lo, hi], [y, y], color=c, lw=2)
            ax.plot([r["excess_pp"]], [y], "o", color=c, mfc=c if r["verdict"] == "excess" else "white")
        ax.axvline(0, color="black", lw=0.8)
        ax.set_yticks(ys, [r["cue"] + (" (control)" if r.get("control") else "") for r in rows])
        ax.set_title(name, fontsize=10)
        ax.set_xlabel("PSE − reference (pp)")
    fig.suptitle(title, fontsize=11)
    fig.tight_layout()
    return fig


def association_figure(points: dict[str, list[tuple[str, float, list, float]]]):
    """Association (probe AUC) against reliance (excess) across cues, one panel per subject or model.

    ``points`` maps a name to ``(cue, auc, auc_ci, excess_pp)`` tuples.
    """
    import matplotlib.pyplot as plt  # heavy, optional

    apply_style()
    n = len(points)
    fig, axes = plt.subplots(1, n, figsize=(3.3 * n + 0.6, 3.2), squeeze=False)
    for ax, (name, pts) in zip(axes[0], points.items()):
        for cue, auc, ci, ex in pts:
            if math.isnan(auc):
                continue
            ax.errorbar([auc], [ex], xerr=[[auc - ci[0]], [ci[1] - auc]], fmt="o", color="#34495e", ms=4)
            ax.annotate(cue, (auc, ex), fontsize=7, xytext=(3, 3), textcoords="offset points")
        ax.axvline(0.5, color="grey", lw=0.8, ls=":")
        ax.axhline(0, color="black", lw=0.8)
        ax.set_xlim(0.3, 1.05)
        ax.set_title(name, fontsize=10)
        ax.set_xlabel("association (probe AUC)")
        ax.set_ylabel("PSE − reference (pp)")
    fig.tight_layout()
    return fig
