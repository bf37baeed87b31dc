"""The compendium's figure style and saving (STYLE 11): colours by judgment, model and display,
matplotlib rc settings, :func:`apply_style` and :func:`save`.

Figure functions take tidy DataFrames, call :func:`apply_style` and return a
:class:`matplotlib.figure.Figure`; notebooks save them with :func:`save` as PNG and PDF.
"""
from __future__ import annotations

from pathlib import Path

from . import paths

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
    import matplotlib  # heavy, optional: only figure-drawing code calls this

    matplotlib.rcParams.update(RC)


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
