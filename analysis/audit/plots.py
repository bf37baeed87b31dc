"""The card's plots, embedded in the HTML as base64 PNG (matplotlib, imported where it draws).

``conditions``: PSE minus the primary reference per condition (verdict markers as Fig. 1B) and
the ranking error beside it; ``tracking``: model PSE against the learner's PSE at the four proxy
strengths; ``display``: numeric, ordered and arbitrary renderings with the 5-pp margin.
"""
from __future__ import annotations

import base64
import hashlib
import io
import json

import numpy as np

from .. import config
from ..judgments import VERDICTS
from ..style import DISPLAY_COLORS, JUDGMENT_COLORS, MODEL_COLORS, apply_style
from .batteries import Condition
from .wording import _ci, _pp

MARKERS = {"excess": ("o", True), "no resolved difference": ("o", False), "shortfall": ("s", True)}
UNREAD_COLOR = "#999999"  # verdicts the responsiveness check finds not interpretable


def _png(fig) -> str:
    import matplotlib.pyplot as plt  # heavy, optional

    buf = io.BytesIO()
    fig.savefig(buf, format="png", dpi=110, metadata={"Software": None})
    plt.close(fig)
    return base64.b64encode(buf.getvalue()).decode("ascii")


def _resolved(row: dict) -> bool:
    """True when a condition row has a difference and both ends of its interval (None where no pair resolved)."""
    ci = row.get("difference_ci") or [None, None]
    return row.get("difference_pp") is not None and None not in ci


def figure_conditions(card: dict):
    """PSE minus the primary reference per condition (verdict markers as Fig. 1B) and the ranking error beside it."""
    import matplotlib.pyplot as plt  # heavy, optional
    from matplotlib.lines import Line2D  # heavy, optional

    apply_style()
    rows = [r for r in card["conditions"] if r.get("status") == "computed"]
    n = len(rows)
    fig, (ax, ax2) = plt.subplots(1, 2, figsize=(10, 0.42 * n + 1.6), sharey=True,
                                  gridspec_kw={"width_ratios": [3, 1.3]})
    y = np.arange(n)[::-1]
    models = list(card.get("reference_models", {}))
    for yy, r in zip(y, rows):
        for mi, m in enumerate(models):
            ref = r.get("reference_models", {}).get(m, {})
            off = 0.28 - 0.14 * mi
            if ref.get("status") == "computed" and ref.get("difference_pp") is not None:
                ax.plot(ref["difference_pp"], yy + off, "|", ms=7, mew=1.6, color=MODEL_COLORS[m], alpha=0.85)
            if ref.get("status") == "computed" and ref.get("error_pct") is not None:
                ax2.plot(ref["error_pct"], yy + off, "|", ms=7, mew=1.6, color=MODEL_COLORS[m], alpha=0.85)
        v = r["verdict"]
        marker, filled = MARKERS.get(v, ("D", False))  # "not interpretable": grey open diamonds
        col = JUDGMENT_COLORS.get(v, UNREAD_COLOR)
        if _resolved(r):
            lo, hi = r["difference_ci"]
            ax.plot([lo, hi], [yy, yy], color=col, lw=2)
            ax.plot(r["difference_pp"], yy, marker, ms=7, color=col, mfc=col if filled else "white", mew=1.5)
        else:  # no pair resolved in every arm (e.g. most text answers invalid): said, never drawn
            ax.text(0.01, yy, " no resolved pair", transform=ax.get_yaxis_transform(), va="center", fontsize=7,
                    color=UNREAD_COLOR)
        if r.get("error_pct") is not None and None not in (r.get("error_ci") or [None]):
            elo, ehi = r["error_ci"]
            ax2.plot([elo, ehi], [yy, yy], color="#34495e", lw=2)
            ax2.plot(r["error_pct"], yy, "o", color="#34495e", ms=5)
        if r.get("learner_error_pct") is not None:
            ax2.plot(r["learner_error_pct"], yy, "x", color="#7f8c8d", ms=6)
    ax.axvline(0, color="black", lw=0.8)
    # the row's own short label (cards written before it carried one: parsed from the card's cell id)
    short = {r["key"]: r.get("short") or Condition(r["cell"], r["display"]).short for r in rows}
    ax.set_yticks(y, [f"{short[r['key']]}  [vs {'learner' if r['reference'] == 'learner' else 'full info'}]"
                      for r in rows], fontsize=7.5)
    ax.set_xlabel("PSE − reference (pp), 95% pair-bootstrap interval")
    ax.set_title("Reliance against the evidence", loc="left")
    ax2.set_xlabel("ranking error (%)")
    ax2.set_title("Accuracy beside it", loc="left")
    handles = [Line2D([], [], marker=MARKERS[v][0], color=JUDGMENT_COLORS[v], ls="-",
                      mfc=JUDGMENT_COLORS[v] if MARKERS[v][1] else "white", label=v) for v in VERDICTS]
    if any(r["verdict"] not in MARKERS for r in rows):
        handles.append(Line2D([], [], marker="D", color=UNREAD_COLOR, mfc="white", label="not interpretable"))
    handles += [Line2D([], [], marker="|", ls="", color=MODEL_COLORS[m], ms=8, mew=1.6,
                       label=card["reference_models"][m]["name"]) for m in models]
    handles += [Line2D([], [], marker="x", ls="", color="#7f8c8d", label="learner error")]
    fig.legend(handles=handles, loc="lower center", ncol=min(len(handles), 5), fontsize=7,
               bbox_to_anchor=(0.5, -0.01))
    fig.tight_layout(rect=(0, 0.07, 1, 1))
    return fig


def figure_tracking(card: dict):
    """Model PSE against the learner's PSE at the four proxy strengths, per name set, with the reference models."""
    import matplotlib.pyplot as plt  # heavy, optional

    apply_style()
    t = card["tracking"]
    x = np.array(t["learner_pse_pp"])
    names = list(t["fits"])
    fig, axes = plt.subplots(1, len(names), figsize=(4.2 * len(names), 3.4), sharey=True, squeeze=False)
    grid = np.linspace(min(x.min(), 0) - 1, x.max() + 1, 10)
    for ax, n in zip(axes[0], names):
        f = t["fits"][n]
        ax.plot(grid, grid, ls="--", color="#7f8c8d", lw=1, label="slope 1 (tracks the learner)")
        for m, ref in card.get("reference_models", {}).items():
            rf = (ref.get("tracking") or {}).get("fits", {}).get(n)
            if rf:
                ax.plot(grid, rf["alpha"] + rf["gamma"] * grid, color=MODEL_COLORS[m], lw=1, alpha=0.6,
                        label=f"{ref['name']} ({_pp(rf['gamma'], 2)})")
        pts = f["points"]
        ys = np.array([p["pse_pp"] for p in pts])
        err = np.array([[p["pse_pp"] - p["pse_ci"][0] for p in pts], [p["pse_ci"][1] - p["pse_pp"] for p in pts]])
        ax.errorbar(x, ys, yerr=err, fmt="o", color="black", capsize=3, zorder=5)
        ax.plot(grid, f["alpha"] + f["gamma"] * grid, color="black", lw=2,
                label=f"this model ({_pp(f['gamma'], 2)} {_ci(f['gamma_ci'], 2)})")
        ax.set_title(f"{n} names", loc="left")
        ax.set_xlabel("reference learner PSE (pp)")
        ax.legend(fontsize=6.5, loc="upper center", bbox_to_anchor=(0.5, -0.2), ncol=2)
    axes[0][0].set_ylabel("model PSE (pp)")
    fig.tight_layout()
    return fig


def figure_display(card: dict):
    """Numeric, ordered and arbitrary renderings and their difference, with the learner and the 5-pp margin."""
    import matplotlib.pyplot as plt  # heavy, optional

    apply_style()
    d = card["display"]
    items = [(k, lab) for k, lab in (("numeric", "numeric values"), ("ordered", "ordered labels"),
                                     ("arbitrary", "arbitrary labels"), ("difference", "ordered − arbitrary"))
             if d.get(f"{k}_pp") is not None]
    fig, ax = plt.subplots(figsize=(7, 0.5 * len(items) + 1.3))
    y = np.arange(len(items))[::-1]
    for yy, (k, lab) in zip(y, items):
        col = DISPLAY_COLORS.get(k, "black")
        lo, hi = d[f"{k}_ci"]
        ax.plot([lo, hi], [yy, yy], color=col, lw=2)
        ax.plot(d[f"{k}_pp"], yy, "o", color=col, ms=7)
        for mi, (m, ref) in enumerate(card.get("reference_models", {}).items()):
            rd = ref.get("display")
            if rd and rd.get(f"{k}_pp") is not None:
                ax.plot(rd[f"{k}_pp"], yy + 0.2 - 0.1 * mi, "|", ms=8, mew=1.6, color=MODEL_COLORS[m],
                        label=ref["name"] if yy == y[0] or k == "ordered" else None)
    ax.axvline(0, color="black", lw=0.8, label="full-information reference (0)")
    ax.axvline(d["learner_pse_pp"], color="#7f8c8d", ls="--", lw=1,
               label=f"category learner ({_pp(d['learner_pse_pp'], 2)} pp)")
    ax.axvline(d["margin_pp"], color="#c0392b", ls=":", lw=1, label=f"{d['margin_pp']:.0f}-pp margin")
    ax.set_yticks(y, [lab for _, lab in items])
    ax.set_xlabel("PSE (pp), 95% pair-bootstrap interval")
    handles, labels = ax.get_legend_handles_labels()
    uniq = dict(zip(labels, handles))
    ax.legend(uniq.values(), uniq.keys(), fontsize=7, loc="upper left", bbox_to_anchor=(1.02, 1))
    fig.tight_layout()
    return fig


#: the figures of the cards drawn in this process, by :func:`card_key` (oldest dropped first)
_DRAWN: dict[str, dict[str, str]] = {}


def card_key(card: dict) -> str:
    """SHA-256 of a card's content (its JSON text in its own key order; arrays as lists, NaN kept)."""
    def other(obj):
        return obj.tolist() if isinstance(obj, (np.ndarray, np.generic)) else repr(obj)
    return hashlib.sha256(json.dumps(card, default=other).encode()).hexdigest()


def card_figures(card: dict) -> dict[str, str]:
    """Base64 PNGs of the card's plots (only the sections present). A card with the content of one
    already drawn in this process (the HTML page, then the notebook's cells) gets those PNGs again."""
    key = card_key(card)
    if key not in _DRAWN:
        while len(_DRAWN) >= config.CARD_FIGURE_CACHE_SIZE:
            _DRAWN.pop(next(iter(_DRAWN)))
        _DRAWN[key] = draw_card_figures(card)
    return dict(_DRAWN[key])


def draw_card_figures(card: dict) -> dict[str, str]:
    """Base64 PNGs of the card's plots, drawn now (uncached :func:`card_figures`)."""
    figs = {}
    if any(r.get("status") == "computed" for r in card["conditions"]):
        figs["conditions"] = _png(figure_conditions(card))
    if card.get("tracking"):
        figs["tracking"] = _png(figure_tracking(card))
    if card.get("display"):
        figs["display"] = _png(figure_display(card))
    return figs

