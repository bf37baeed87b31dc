"""The card's plots with conditions that resolved no pair (issue 23: found live with --answer-format text)."""
from __future__ import annotations

import copy
import json
from pathlib import Path

from analysis.audit import plots

EXAMPLE = Path(__file__).resolve().parents[1] / "audit_out" / "example" / "report_card.json"


def _card_without_resolved_pairs() -> dict:
    """The committed live card with every condition as `audit --answer-format text` left it when no pair resolved:
    computed, but with no difference, no interval and no error (None in the JSON card)."""
    card = copy.deepcopy(json.loads(EXAMPLE.read_text()))
    for r in card["conditions"]:
        r.update(pse_pp=None, pse_ci=[None, None], difference_pp=None, difference_ci=[None, None], error_pct=None,
                 error_ci=[None, None], n_pairs=0)
    return card


def test_a_condition_with_no_resolved_pair_never_stops_the_html_figures():
    card = _card_without_resolved_pairs()
    assert any(r["status"] == "computed" for r in card["conditions"])
    figs = plots.card_figures(card)  # raised "x, y, and format string must not be None" before the fix
    assert set(figs) >= {"conditions"} and len(figs["conditions"]) > 1000


def test_a_resolved_condition_is_still_drawn_beside_an_unresolved_one():
    card = json.loads(EXAMPLE.read_text())
    card["conditions"][0].update(difference_pp=None, difference_ci=[None, None], error_pct=None, error_ci=[None, None])
    fig = plots.figure_conditions(card)
    ax = fig.axes[0]
    texts = [t.get_text().strip() for t in ax.texts]
    assert texts.count("no resolved pair") == 1  # the unresolved condition is said, the other one drawn
    assert any(len(line.get_xdata()) == 2 for line in ax.get_lines())  # the resolved interval


def test_a_card_is_drawn_once_per_process_and_its_cached_plots_equal_a_fresh_drawing():
    """The content-keyed cache (issue 21 speed): the same content gives the PNGs a fresh drawing gives,
    byte for byte; a changed card is drawn anew."""
    card = json.loads(EXAMPLE.read_text())
    plots._DRAWN.clear()
    first = plots.card_figures(card)
    assert plots.card_figures(copy.deepcopy(card)) == first == plots.draw_card_figures(card)
    assert len(plots._DRAWN) == 1
    changed = copy.deepcopy(card)
    changed["conditions"][0]["difference_pp"] = 99.0
    assert plots.card_key(changed) != plots.card_key(card)
    assert plots.card_figures(changed)["conditions"] != first["conditions"] and len(plots._DRAWN) == 2
