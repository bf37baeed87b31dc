"""Tests of analysis.figures: the paper's figure drawings (issue 17 item 7)."""
from __future__ import annotations

import matplotlib.colors as mcolors
import numpy as np
import pandas as pd
import pytest

from analysis import figures


def _texts(fig) -> str:
    return " ".join(t.get_text() for t in fig.texts)


def _naming_frame():
    return pd.DataFrame({"model": ["sonnet", "gpt", "qwen"], "label": ["a", "b", "c"],
                         "effect_pp": [-20.0, -15.0, -4.0], "lo_pp": [np.nan, -22.0, -9.0],
                         "hi_pp": [np.nan, -8.0, 1.0], "source": ["s", "r", "r"]})


def test_fig4a_rows_and_markers_match_fig1b():
    fig = figures.fig4a_naming(_naming_frame())
    ax = fig.axes[0]
    ticks = dict(zip([t.get_text() for t in ax.get_yticklabels()], ax.get_yticks()))
    assert ticks["a"] > ticks["b"] > ticks["c"]  # first row on top
    assert ax.get_xlabel().startswith("social minus neutral")
    points = [ln for ln in ax.lines if len(ln.get_xdata()) == 1]
    by_y = {float(ln.get_ydata()[0]): ln for ln in points}
    summary, resolved, unresolved = by_y[ticks["a"]], by_y[ticks["b"]], by_y[ticks["c"]]
    assert summary.get_marker() == "D"  # no interval: a diamond, never Fig. 1B's open circle
    assert resolved.get_marker() == "s"  # interval below zero, filled
    assert unresolved.get_marker() == "o" and unresolved.get_markerfacecolor() == "white"  # Fig. 1B: no resolved difference
    assert "condition summary" in _texts(fig) + " ".join(t.get_text() for leg in fig.legends for t in leg.get_texts())


def _dimension_frame():
    rows = []
    for corner, ks in (("LH", (6, 12, 18)), ("HH", (6, 18))):
        for ex in (80, 0):
            for names in ("neutral", "social"):
                for k in ks:
                    rows.append({"structure": corner, "examples": ex, "names": names, "k": k, "error_pct": 30.0 + k,
                                 "pse_pp": 10.0 - k, "pse_lo": 5.0 - k, "pse_hi": 15.0 - k})
    return pd.DataFrame(rows)


def test_fig4bc_hh_is_not_drawn_through_k12():
    fig = figures.fig4bc_fields(_dimension_frame())
    hh = mcolors.to_rgba("#c0392b")
    for ax in fig.axes[:2]:
        lines = [ln for ln in ax.lines if mcolors.to_rgba(ln.get_color()) == hh and len(ln.get_xdata()) > 1]
        assert lines and all(ln.get_linestyle() == "None" for ln in lines)
        for ln in lines:
            assert not np.any(np.isclose(np.asarray(ln.get_xdata(), float), 12, atol=0.5))


def test_fig3a_says_sonnet_and_names_its_cell():
    effects = pd.DataFrame({"quantity": ["battery", "ordered", "arbitrary"], "effect_pp": [21.0, 8.0, -1.0],
                            "lo_pp": [14.0, 4.0, -6.0], "hi_pp": [29.0, 13.0, 3.0]})
    fig = figures.fig3a_representation(effects, -5.05)
    assert "Sonnet" in fig.axes[0].get_title(loc="left")
    assert "k12_LH_neutral_learned_zero" in _texts(fig)
    legend = fig.axes[0].get_legend()
    assert legend is not None and legend.get_bbox_to_anchor().bounds == fig.axes[0].bbox.bounds  # inside the axes


def test_proxy_shift_says_a_is_the_hidden_group():
    rng = np.random.default_rng(0)
    df = pd.DataFrame({"corner": "k=12 LH", "A": rng.integers(0, 2, 200), "proxy": rng.standard_normal(200)})
    fig = figures.proxy_shift(df)
    labels = [t.get_text() for t in fig.axes[-1].get_legend().get_texts()]
    assert labels == ["hidden group A = 0", "hidden group A = 1"]
    assert "never shown" in _texts(fig)


def _points_and_slopes():
    rows, slopes = [], []
    for m in ("sonnet", "gpt"):
        for n in ("neutral", "social"):
            for x in (0.0, 4.0, 13.0, 23.0):
                rows.append({"model": m, "names": n, "level": "l", "learner_pse_pp": x, "pse_pp": 20 + 0.1 * x,
                             "pse_lo": 15 + 0.1 * x, "pse_hi": 25 + 0.1 * x, "alpha": 20.0, "gamma": 0.1, "n_pairs": 99})
            slopes.append({"model": m, "names": n, "gamma": 0.1, "lo": -0.1, "hi": 0.3 if m == "sonnet" else 0.6,
                           "simultaneous_upper": 0.45, "n_pairs": 99})
    slopes.append({"model": "pooled4", "names": "both", "gamma": 0.05, "lo": -0.02, "hi": 0.13})
    return pd.DataFrame(rows), pd.DataFrame(slopes)


def test_fig2_has_panel_b_with_slopes_against_half():
    points, slopes = _points_and_slopes()
    fig = figures.fig2_tracking(points, slopes)
    assert len(fig.axes) == 3
    b = fig.axes[-1]
    assert b.get_title(loc="left").startswith("B") and "2 of 4 upper 95% bounds < 0.5" in b.get_title(loc="left")
    assert any(np.allclose(ln.get_xdata(), 0.5) for ln in b.lines)  # the 0.5 line
    assert any(np.allclose(ln.get_xdata(), [-0.1, 0.3]) for ln in b.lines)  # an interval on gamma
    assert [t.get_text() for t in b.get_yticklabels()][-1] == "Pooled, 4 models"
    assert "k12_LH" in _texts(fig)


@pytest.mark.parametrize("key", sorted(figures.CAPTIONS))
def test_every_caption_names_cells_and_inputs(key):
    assert "Cell" in figures.CAPTIONS[key] and "Input" in figures.CAPTIONS[key]
