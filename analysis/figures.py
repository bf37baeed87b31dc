"""The paper's figure drawings (Fig. 1B, 2, 3A, 4A-C and the proxy-shift figure; STYLE 11).

Each function takes tidy DataFrames from a study (:mod:`analysis.battery`,
:mod:`analysis.representation`, :mod:`analysis.supplement`, :mod:`analysis.population`), applies
:func:`analysis.style.apply_style` and returns a :class:`matplotlib.figure.Figure` whose bottom line
names its cells and inputs (:data:`CAPTIONS`). Notebooks save them with :func:`save` as PNG and PDF.
The markers of judgments are those of Fig. 1B everywhere: filled circle = excess (interval above
zero), open circle = no resolved difference, filled square = shortfall; a value without an interval
(summary level) is a diamond.
"""
from __future__ import annotations

import matplotlib

matplotlib.use("Agg")  # heavy, optional: figures are drawn headless
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402
import pandas as pd  # noqa: E402

from . import config  # noqa: E402
from .judgments import verdict  # noqa: E402
from .style import DISPLAY_COLORS, JUDGMENT_COLORS, MODEL_COLORS, RC, apply_style, save  # noqa: E402,F401

#: the cells and inputs of each figure (the bottom line of the figure)
CAPTIONS = {
    "fig1b": ("Cells: k{6,12,18} (Sonnet) and k12 (other models) LH no examples, zero/informative proxies, both "
              "name sets (left); k12 LH 80 examples zero neutral (right). Inputs: released per-call records "
              "(six Sonnet cells: condition summary expK_gate1_summary.csv); references from our population."),
    "fig2": ("Cells: k12_LH_{neutral,social}_learned_{zero,info_b030,b045,b060}, pairs resolved at all four "
             "levels. Inputs: released per-call records of the four models; learner PSE from our population. "
             "B: 95% shared-pair intervals, | simultaneous upper bound; pooled rows one-sided 95% bounds."),
    "fig3a": ("Cell: Sonnet 4.5, k12_LH_neutral_learned_zero (80 examples, zero information). Inputs: released "
              "encoding-control records (ordered, arbitrary, second numeric measurement) and the battery cell."),
    "fig4a": ("Cells: k12 (k18 for Sonnet's modelled row) LH no examples, zero information, social minus neutral. "
              "Inputs: released per-call records (pair-clustered AME, Table 8); Sonnet k=12 from the condition "
              "summary expK_gate1_summary.csv (no interval)."),
    "fig4bc": ("Cells: Sonnet k{6,12,18}_LH and k{6,18}_HH (HH not measured at k=12), zero information, 80 and no "
               "examples (Table 16). Inputs: released per-call records; k6 no-example cells from the condition summary."),
    "proxy_shift": ("Cells: k12_LL and k12_LH (neutral, 80 examples, zero information), factual population of "
                    "5,000. Input: our population (analysis.population); A is never shown to a model."),
}
_CONDITIONS = [("zero", "neutral"), ("zero", "social"), ("info", "neutral"), ("info", "social")]
_CONDITION_COLORS = dict(zip(_CONDITIONS, ("#34495e", "#2e86c1", "#d35400", "#a04000")))


def _caption(fig, key: str, bottom: float = 0.09) -> None:
    """Reserve ``bottom`` of the figure and write the figure's cells and inputs there."""
    fig.tight_layout(rect=(0, bottom, 1, 1))
    fig.text(0.01, 0.005, CAPTIONS[key], fontsize=5.5, color="#555555", ha="left", va="bottom", wrap=True)


def _judged_marker(ax, x: float, y: float, lo: float, hi: float, color: str, ms: float = 5) -> None:
    """Point with the Fig. 1B marker of its interval's verdict; a diamond where there is no interval."""
    if not (np.isfinite(lo) and np.isfinite(hi)):
        ax.plot(x, y, "D", color=color, ms=ms)
        return
    ax.plot([lo, hi], [y, y], color=color, lw=1.2)
    v = verdict(lo, hi)
    if v == "no resolved difference":
        ax.plot(x, y, "o", mfc="white", mec=color, ms=ms)
    else:
        ax.plot(x, y, "o" if v == "excess" else "s", color=color, ms=ms)


def _marker_legend() -> list:
    return [plt.Line2D([], [], color="grey", marker="o", ls="", label="interval above zero"),
            plt.Line2D([], [], color="grey", marker="o", mfc="white", ls="", label="no resolved difference"),
            plt.Line2D([], [], color="grey", marker="s", ls="", label="interval below zero")]


def proxy_shift(df, value: str = "proxy", group: str = "A", facet: str = "corner"):
    """Histograms of a displayed proxy by the hidden group A, one panel per configuration (notebook 01).

    ``df`` is tidy: one row per patient with columns ``facet``, ``group`` (the hidden group A, never
    shown to a model) and ``value``.
    """
    apply_style()
    facets = list(dict.fromkeys(df[facet]))
    fig, axes = plt.subplots(1, len(facets), figsize=(3.2 * len(facets), 2.9), sharey=True)
    axes = np.atleast_1d(axes)
    bins = np.linspace(df[value].quantile(0.001), df[value].quantile(0.999), 41)
    for ax, f in zip(axes, facets):
        sub = df[df[facet] == f]
        for g, colour in ((0, "#2e86c1"), (1, "#d35400")):
            ax.hist(sub.loc[sub[group] == g, value], bins=bins, alpha=0.55, color=colour, density=True,
                    label=f"hidden group A = {g}")
        ax.set_title(f)
        ax.set_xlabel("displayed proxy (standardised)")
    axes[0].set_ylabel("density")
    axes[-1].legend(fontsize=7)
    fig.suptitle("The first proxy shifts with the hidden group A (A is not displayed)", fontsize=9)
    _caption(fig, "proxy_shift", 0.1)
    return fig


def fig1b_excess(judgments: pd.DataFrame):
    """Fig. 1B: excess judgments from 95% intervals (filled circle excess, open circle no resolved
    difference, filled square shortfall). Left: no examples vs full information; right: 80
    examples vs the reference learner. ``judgments`` from :func:`analysis.battery.excess_judgments`."""
    apply_style()
    panels = list(dict.fromkeys(judgments["panel"]))
    fig, axes = plt.subplots(1, len(panels), figsize=(8.5, 4.2), sharey=True, gridspec_kw={"width_ratios": [2, 1]})
    rows = list(dict.fromkeys(judgments["row"]))
    ypos = {r: len(rows) - 1 - t for t, r in enumerate(rows)}
    offsets = dict(zip(_CONDITIONS, (0.27, 0.09, -0.09, -0.27)))
    for ax, panel in zip(np.atleast_1d(axes), panels):
        sub = judgments[judgments["panel"] == panel]
        for r in sub.itertuples():
            off = offsets[(r.proxies, r.names)] if len(sub[sub["row"] == r.row]) > 1 else 0.0
            _judged_marker(ax, r.excess_pp, ypos[r.row] + off, r.lo, r.hi, _CONDITION_COLORS[(r.proxies, r.names)])
        ax.axvline(0, color="black", lw=0.8)
        ax.set_title(panel)
        ax.set_xlabel("PSE minus reference (pp)")
    np.atleast_1d(axes)[0].set_yticks(list(ypos.values()), list(ypos.keys()))
    handles = [plt.Line2D([], [], color=_CONDITION_COLORS[c], marker="o", lw=1.2,
                          label=f"{'zero-information' if c[0] == 'zero' else 'informative'}, {c[1]}")
               for c in _CONDITIONS]
    handles += [plt.Line2D([], [], color="grey", marker="o", ls="", label="excess"),
                plt.Line2D([], [], color="grey", marker="o", mfc="white", ls="", label="no resolved difference"),
                plt.Line2D([], [], color="grey", marker="s", ls="", label="shortfall")]
    fig.legend(handles=handles, loc="lower center", ncol=4, bbox_to_anchor=(0.5, 0.07), fontsize=7, frameon=False)
    _caption(fig, "fig1b", 0.2)
    return fig


def fig2_tracking(points: pd.DataFrame, slopes: pd.DataFrame | None = None):
    """Fig. 2. A: each model's PSE against the learner PSE over the sweep, with the fitted tracking
    lines (neutral and social names) and the line of full adjustment (slope 1 through the zero level).
    B: the tracking slopes gamma with their 95% intervals, simultaneous upper bounds and the pooled
    slopes, against 0, 0.5 and 1.

    ``points`` from :func:`analysis.battery.sweep_points`; ``slopes`` from
    :func:`analysis.battery.tracking_table` (panel B is left out when ``None``).
    """
    apply_style()
    models = list(dict.fromkeys(points["model"]))
    ncols = len(models) + (slopes is not None)
    ratios = [1] * len(models) + ([1.4] if slopes is not None else [])
    fig, axes = plt.subplots(1, ncols, figsize=(2.7 * ncols + 0.6, 3.3), gridspec_kw={"width_ratios": ratios})
    axes = np.atleast_1d(axes)
    for t, (ax, m) in enumerate(zip(axes, models)):
        for n, ls, mk in (("neutral", "-", "o"), ("social", "--", "s")):
            sub = points[(points["model"] == m) & (points["names"] == n)].sort_values("learner_pse_pp")
            x = sub["learner_pse_pp"].to_numpy()
            ax.errorbar(x, sub["pse_pp"], yerr=[sub["pse_pp"] - sub["pse_lo"], sub["pse_hi"] - sub["pse_pp"]],
                        fmt=mk, color=MODEL_COLORS[m], mfc="white" if n == "social" else MODEL_COLORS[m],
                        ms=4, capsize=2, lw=0.8, label=n)
            a, g = sub["alpha"].iloc[0], sub["gamma"].iloc[0]
            xx = np.linspace(0, x.max(), 2)
            ax.plot(xx, a + g * xx, ls, color=MODEL_COLORS[m], lw=1.2)
            ax.text(0.03, 0.89 if n == "social" else 0.97, f"{n}: γ = {g:+.2f}", transform=ax.transAxes,
                    fontsize=7, ha="left", va="top")
        base = points[(points["model"] == m) & (points["names"] == "neutral")].sort_values("learner_pse_pp")
        xx = np.linspace(0, base["learner_pse_pp"].max(), 2)
        ax.plot(xx, base["alpha"].iloc[0] + xx, ":", color="black", lw=0.9, label="slope 1 (full adjustment)")
        ax.set_title(("A  " if t == 0 else "") + config.MODELS[m][0], loc="left" if t == 0 else "center")
        ax.set_xlabel("learner PSE (pp)")
        if t:
            ax.sharey(axes[0])
    axes[0].set_ylabel("model PSE (pp)")
    axes[0].legend(loc="lower right", fontsize=6)
    if slopes is not None:
        _slope_panel(axes[-1], slopes, models)
    _caption(fig, "fig2", 0.12)
    return fig


def _slope_panel(ax, slopes: pd.DataFrame, models: list[str]) -> None:
    """Fig. 2B: gamma with 95% intervals (pooled: one-sided 95% bounds) and simultaneous upper bounds."""
    rows = [(m, n) for m in models for n in ("neutral", "social")] + [(p, "both") for p in ("pooled3", "pooled4")]
    s = slopes.set_index(["model", "names"])
    labels = []
    for t, key in enumerate(rows):
        if key not in s.index:
            continue
        r = s.loc[key]
        y = len(rows) - 1 - t
        pooled = key[1] == "both"
        color = "#222222" if pooled else MODEL_COLORS[key[0]]
        ax.plot([r["lo"], r["hi"]], [y, y], color=color, lw=1.4)
        ax.plot(r["gamma"], y, "D" if pooled else ("o" if key[1] == "neutral" else "s"), color=color,
                mfc="white" if key[1] == "social" else color, ms=5)
        if not pooled and np.isfinite(r.get("simultaneous_upper", np.nan)):
            ax.plot(r["simultaneous_upper"], y, "|", color=color, ms=9, mew=1.6)
        labels.append((y, ("Pooled, 3 models" if key[0] == "pooled3" else "Pooled, 4 models") if pooled
                       else f"{config.MODELS[key[0]][0]}, {key[1]}"))
    for x, ls, lab in ((0, "-", "no adjustment"), (0.5, "--", "0.5"), (1, ":", "full adjustment")):
        ax.axvline(x, color="#c0392b" if x == 0.5 else "black", ls=ls, lw=0.9)
    ax.set_yticks([y for y, _ in labels], [lab for _, lab in labels], fontsize=7)
    ax.yaxis.tick_right()
    ax.set_xlim(-0.6, 1.1)
    ax.set_xlabel("tracking slope γ")
    fits = slopes[slopes["names"] != "both"]
    below = int((fits["hi"] < 0.5).sum())
    ax.set_title(f"B  slopes: {below} of {len(fits)} upper 95% bounds < 0.5", loc="left")


def fig3a_representation(effects: pd.DataFrame, learner_pp: float | None = None,
                         margin: float = config.REPRESENTATION_MARGIN_PP):
    """Fig. 3A: Sonnet's PSE per rendering with 95% intervals, the learner reference and the margin.

    ``effects`` has columns ``quantity`` (rendering names), ``effect_pp, lo_pp, hi_pp`` (rows of
    :func:`analysis.representation.table6`; contrast rows are ignored). Returns a matplotlib Figure.
    """
    apply_style()
    order = [r for r in ("battery", "numeric", "ordered", "arbitrary") if r in set(effects["quantity"])]
    e = effects.set_index("quantity").loc[order]
    short = {"battery": "Numeric (battery)", "numeric": "Numeric (second measurement)",
             "ordered": "Ordered levels", "arbitrary": "Arbitrary codes"}
    fig, ax = plt.subplots(figsize=(5.6, 3.0))
    y = np.arange(len(order))[::-1]
    for yy, (q, row) in zip(y, e.iterrows()):
        color = DISPLAY_COLORS["numeric" if q in ("battery", "numeric") else q]
        ax.errorbar(row["effect_pp"], yy, xerr=[[row["effect_pp"] - row["lo_pp"]], [row["hi_pp"] - row["effect_pp"]]],
                    fmt="o", color=color, capsize=3, lw=1.5)
    ax.axvline(0, color="black", lw=0.8, label="full-information reference (0)")
    if learner_pp is not None:
        ax.axvline(learner_pp, color="#7f8c8d", ls="--", lw=1, label=f"category learner ({learner_pp:+.2f} pp)")
    ax.axvline(margin, color="#c0392b", ls=":", lw=1, label=f"{margin:.0f}-pp margin")
    ax.set_yticks(y, [short[q] for q in order])
    ax.set_ylim(-0.6, len(order) - 0.4)
    ax.set_xlabel("Proxy-specific effect (pp), 95% pair-bootstrap interval")
    ax.set_title("A  Sonnet 4.5: display control, k = 12, 80 examples", loc="left")
    ax.legend(loc="lower right", fontsize=6.5)
    _caption(fig, "fig3a", 0.1)
    return fig


def fig4a_naming(df: pd.DataFrame):
    """Fig. 4A: social minus neutral PSE (pp) without examples, per model, with 95% intervals.

    ``df`` as from :func:`analysis.supplement.naming_effects`. Markers as in Fig. 1B (filled: the
    interval excludes zero, open: no resolved difference); a row without an interval (condition
    summary) is a diamond.
    """
    apply_style()
    fig, ax = plt.subplots(figsize=(4.8, 3.3))
    y = np.arange(len(df))[::-1]
    for yy, r in zip(y, df.itertuples()):
        color = MODEL_COLORS.get(r.model, "#444444")
        _judged_marker(ax, r.effect_pp, yy, r.lo_pp, r.hi_pp, color, ms=6)
    ax.axvline(0, color="#333333", lw=0.8)
    ax.set_yticks(y, df["label"])
    ax.set_xlabel("social minus neutral PSE (pp)")
    ax.set_title("A  Naming effect without examples", loc="left")
    handles = _marker_legend() + [plt.Line2D([], [], color="grey", marker="D", ls="",
                                             label="condition summary (no interval)")]
    fig.legend(handles=handles, fontsize=6, loc="lower center", ncol=2, bbox_to_anchor=(0.5, 0.09), frameon=False)
    _caption(fig, "fig4a", 0.24)
    return fig


def fig4bc_fields(dim: pd.DataFrame):
    """Fig. 4B (factual error vs field count) and 4C (PSE vs field count by dependence), Sonnet.

    LH is measured at k = 6, 12, 18 and drawn as lines; HH only at k = 6 and 18, so its points are
    not joined (no line runs through k = 12, where there is no data). ``dim`` from
    :func:`analysis.battery.dimension_table`.
    """
    apply_style()
    fig, (ax_b, ax_c) = plt.subplots(1, 2, figsize=(8, 3.7))
    styles = {"LH": ("#2471a3", "o"), "HH": ("#c0392b", "s")}
    for corner, (col, mk) in styles.items():
        joined = corner == "LH"
        for ex, ls in ((80, "-"), (0, ":")):
            sub = dim[(dim["structure"] == corner) & (dim["examples"] == ex) & (dim["names"] == "neutral")].sort_values("k")
            ax_b.plot(sub["k"], sub["error_pct"], ls=ls if joined else "none", marker=mk, color=col,
                      mfc=col if ex else "white", label=f"{corner}, {'80' if ex else 'no'} examples")
        for n, ls, dx in (("neutral", "-", -0.25), ("social", "--", 0.25)):
            sub = dim[(dim["structure"] == corner) & (dim["examples"] == 80) & (dim["names"] == n)].sort_values("k")
            ax_c.errorbar(sub["k"] + dx, sub["pse_pp"], yerr=[sub["pse_pp"] - sub["pse_lo"], sub["pse_hi"] - sub["pse_pp"]],
                          ls=ls if joined else "none", marker=mk, color=col, mfc="white" if n == "social" else col,
                          capsize=2, lw=1.1, label=f"{corner}, {n}")
    ax_b.set(xlabel="displayed fields k", ylabel="factual ranking error (%)", title="B  error (neutral names)",
             xticks=[6, 12, 18])
    ax_c.axhline(0, color="black", lw=0.7)
    ax_c.set(xlabel="displayed fields k", ylabel="PSE (pp)", title="C  reliance (80 examples)", xticks=[6, 12, 18])
    ax_c.text(0.02, 0.03, "HH measured at k = 6 and 18 only", transform=ax_c.transAxes, ha="left", va="bottom",
              fontsize=7, color=styles["HH"][0])
    for ax in (ax_b, ax_c):
        ax.legend(fontsize=7, loc="upper center", bbox_to_anchor=(0.5, -0.2), ncol=2, frameon=False)
    _caption(fig, "fig4bc", 0.1)
    return fig
