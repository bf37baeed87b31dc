"""Shared figure style and saving (STYLE 11).

Figure functions live with their stage (``battery``, ``representation``, ``uci``,
``supplement``) and take tidy DataFrames; they call :func:`apply_style` and return a
:class:`matplotlib.figure.Figure`. Notebooks save them with :func:`save` as PNG and PDF.
"""
from __future__ import annotations

from pathlib import Path

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

from . import paths  # noqa: E402

#: colours by judgment and by model, used across every figure
JUDGMENT_COLORS = {"excess": "#c0392b", "no resolved difference": "#7f8c8d", "shortfall": "#2471a3"}
MODEL_COLORS = {"sonnet": "#d35400", "deepseek": "#2874a6", "qwen": "#7d3c98", "gpt": "#1e8449",
                "simulated": "#616a6b"}
DISPLAY_COLORS = {"numeric": "#34495e", "ordered": "#d35400", "arbitrary": "#2e86c1"}

RC = {
    "figure.dpi": 110,
    "savefig.dpi": 200,
    "savefig.bbox": "tight",
    "font.size": 9,
    "axes.titlesize": 10,
    "axes.labelsize": 9,
    "axes.spines.top": False,
    "axes.spines.right": False,
    "axes.grid": True,
    "grid.alpha": 0.3,
    "legend.frameon": False,
    "pdf.fonttype": 42,
    "svg.hashsalt": "proxy-audit",  # deterministic output
}


def apply_style() -> None:
    """Apply the compendium's matplotlib style."""
    plt.rcParams.update(RC)


def save(fig, name: str, folder: Path | None = None) -> list[Path]:
    """Save ``fig`` as ``figures/<name>.png`` and ``.pdf`` (metadata without dates, so reruns do not churn)."""
    folder = paths.FIGURES if folder is None else Path(folder)
    folder.mkdir(parents=True, exist_ok=True)
    out = []
    for ext, meta in (("png", {"Software": None}), ("pdf", {"CreationDate": None, "Producer": None})):
        p = folder / f"{name}.{ext}"
        fig.savefig(p, metadata=meta)
        out.append(p)
    return out


def proxy_shift(df, value: str = "proxy", group: str = "A", facet: str = "corner"):
    """Histograms of a displayed proxy by hidden group, one panel per configuration (notebook 01).

    ``df`` is tidy: one row per patient with columns ``facet``, ``group`` and ``value``.
    """
    import numpy as np

    apply_style()
    facets = list(dict.fromkeys(df[facet]))
    fig, axes = plt.subplots(1, len(facets), figsize=(3.2 * len(facets), 2.6), sharey=True)
    axes = np.atleast_1d(axes)
    bins = np.linspace(df[value].quantile(0.001), df[value].quantile(0.999), 41)
    for ax, f in zip(axes, facets):
        sub = df[df[facet] == f]
        for g, colour in ((0, "#2e86c1"), (1, "#d35400")):
            ax.hist(sub.loc[sub[group] == g, value], bins=bins, alpha=0.55, color=colour, density=True,
                    label=f"A = {g}")
        ax.set_title(f)
        ax.set_xlabel("displayed proxy (standardised)")
    axes[0].set_ylabel("density")
    axes[-1].legend()
    return fig
