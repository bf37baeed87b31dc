"""Many models, one comparison card (issue 14): ``python -m analysis compare OUT1 OUT2 ... --out DIR``.

Reads the report card (``report_card.json``) of each audit folder and writes one comparison
card, ``DIR/comparison_card.html`` and ``DIR/comparison_card.json``:

* one row per model and condition: PSE [95% CI], the primary reference, PSE minus the reference
  [95% CI] and its verdict, in the audit's own words (:func:`condition_statement`);
* a forest plot of PSE minus the reference across models, per condition (as Fig. 1B);
* the tracking slopes side by side, per name set (as Fig. 2B);
* the paper's four models as reference rows, analysed from the released per-call records by the
  audit's own code path (:func:`reference_models`, the same conditions and pair subsets).

Models are listed in the order given, the paper's four after them. The card never ranks
models and never labels one as acceptable or not (paper §1): it states, per condition, what the
interval of each model's difference from the reference supports.
"""
from __future__ import annotations

import datetime as _dt
import json
from pathlib import Path

import numpy as np
from markupsafe import Markup

from .. import config
from ..judgments import VERDICTS
from ..jsonable import jsonable
from ..style import JUDGMENT_COLORS, MODEL_COLORS, apply_style
from ..tables import portable_tree
from .analyse import reference_models
from .batteries import PAPER_MODELS, Condition, n_calls
from .card import METHOD_NOTES, READING_GUIDE, REPORT_JSON
from .html import ENV, ci, num, verdict
from .plots import MARKERS, _png
from .wording import FORBIDDEN_WORDS, REFERENCE_NAMES, _ci, _pp, condition_statement

COMPARE_JSON = "comparison_card.json"
COMPARE_HTML = "comparison_card.html"
SCHEMA = "proxy-audit-comparison-card/1"
AUDITED_COLOR = "#222222"
NOTES = [
    "Models are listed in the order they were given, then the paper's four models; no ordering by result is implied.",
    "Each row is judged against its own condition's reference on the same pairs, with the audit's wording; the card "
    "states what each interval supports and does not label any model as acceptable or not (paper §1).",
    "Reference rows are the paper's four models analysed from the released per-call records by the same code as the "
    "audited models (same conditions, same pair subsets, same bootstrap draws). A condition the release lacks is "
    "listed as not released.",
]


class CompareError(ValueError):
    """A problem with the inputs (no report card, mixed bootstrap settings): one line, exit 2."""


def load_card(path: str | Path) -> dict:
    """The report card of an audit folder (or a ``report_card.json`` path)."""
    p = Path(path)
    p = p / REPORT_JSON if p.is_dir() else p
    if not p.is_file():
        raise CompareError(f"no report card at {p}: run `python -m analysis audit ... --out {path}` first")
    try:
        card = json.loads(p.read_text())
    except ValueError as exc:
        raise CompareError(f"{p} is not a report card ({exc})") from None
    if "conditions" not in card or "subject" not in card:
        raise CompareError(f"{p} is not a report card (no conditions or subject)")
    card["_path"] = str(p)
    return card


def model_label(card: dict) -> str:
    sub = card.get("subject") or {}
    label = f"{sub.get('provider', '?')}/{sub.get('model_requested', '?')}"
    sim = sub.get("simulated") or {}
    if sim.get("seed"):
        label += f" (seed {sim['seed']})"
    return label


def deviations(card: dict) -> list[str]:
    """Settings that depart from the paper's request, as the card records them (prompt cache, overrides)."""
    s = (card.get("subject") or {}).get("request_settings") or {}
    out = []
    if s.get("prompt_cache"):
        out.append("prompt cache: " + str(s["prompt_cache"]))
    fmt = (card.get("settings") or {}).get("answer_format")
    if fmt and fmt != "tool":
        out.append(f"answer format: {fmt}")
    if card.get("notice"):
        out.append(card["notice"])
    return out


def _subset(row: dict) -> int | None:
    """The pair subset of a condition row (its calls / (arms x orders)), None for the whole cell."""
    cond = Condition(row["cell"], row.get("display", "numeric"))
    calls = row.get("n_calls")
    if not calls or calls >= n_calls(cond):
        return None
    arms = len(config.ARMS) if cond.display == "numeric" else 2
    return int(calls // (arms * len(config.ORDERS)))


def conditions_of(cards: list[dict]) -> list[Condition]:
    """Every condition of the cards, in the order of first appearance (pair subsets kept)."""
    seen: dict[str, Condition] = {}
    for card in cards:
        for r in card["conditions"]:
            if r.get("status") != "computed" or r["key"] in seen:
                continue
            seen[r["key"]] = Condition(r["cell"], r.get("display", "numeric"), r.get("group", "zero"), _subset(r))
    return list(seen.values())


def _row(model: str, source: str, r: dict, colour_key: str | None = None) -> dict:
    out = {"model": model, "source": source, "colour_key": colour_key, "key": r["key"], "status": r.get("status")}
    if r.get("status") != "computed":
        return {**out, "reason": r.get("reason", "")}
    keys = ("label", "display", "examples", "reference", "pse_pp", "pse_ci", "fullinfo_pse_pp", "learner_pse_pp",
            "difference_pp", "difference_ci", "verdict", "verdict_fullinfo", "verdict_learner", "error_pct", "n_pairs")
    keys += ("verdict_paper", "judgment", "joint_difference_pp", "joint_ci", "p_value", "p_tost", "margin_pp",
             "joint_n_pairs")  # the judgment beyond the paper (issue 22)
    out.update({k: r.get(k) for k in keys})
    out["statement"] = r.get("statement") or condition_statement(r)
    return out


def _fits(model: str, source: str, tracking: dict | None, colour_key: str | None = None) -> list[dict]:
    if not tracking:
        return []
    rows = [{"model": model, "source": source, "colour_key": colour_key, "names": n, "gamma": f["gamma"],
             "gamma_ci": f["gamma_ci"], "n_pairs": f.get("n_pairs")} for n, f in tracking["fits"].items()]
    p = tracking.get("pooled")
    if p:
        rows.append({"model": model, "source": source, "colour_key": colour_key, "names": "both", "gamma": p["gamma"],
                     "gamma_ci": p["gamma_ci"], "one_sided_bounds": p.get("one_sided_bounds"), "n_pairs": None})
    return rows


def comparison(cards: list[dict], *, reference_rows: bool = True, draws: int | None = None) -> dict:
    """The comparison card's JSON from the audited models' report cards."""
    if not cards:
        raise CompareError("give at least one audit folder")
    used = {int((c.get("settings") or {}).get("bootstrap_draws") or config.BOOTSTRAP_DRAWS) for c in cards}
    if draws is None:
        if len(used) > 1:
            raise CompareError(f"the cards use different bootstrap draws {sorted(used)}; give --draws to fix the "
                               f"reference rows' draws")
        draws = used.pop()
    conds = conditions_of(cards)
    order = [c.key for c in conds]
    models, rows, slopes = [], [], []
    for card in cards:
        label = model_label(card)
        sub = card.get("subject") or {}
        models.append({"model": label, "source": "audited", "card": card["_path"], "battery": card.get("battery"),
                       "provider": sub.get("provider"), "model_requested": sub.get("model_requested"),
                       "models_served": sub.get("models_served"), "collection_dates_utc": sub.get("collection_dates_utc"),
                       "request_settings": sub.get("request_settings"), "deviations": deviations(card),
                       "bootstrap_draws": (card.get("settings") or {}).get("bootstrap_draws")})
        rows += [_row(label, "audited", r) for r in card["conditions"]]
        slopes += _fits(label, "audited", card.get("tracking"))
    if reference_rows and conds:
        refs = reference_models(conds, draws)
        for m in PAPER_MODELS:
            name = config.MODELS[m][0]
            models.append({"model": name, "source": "paper (released records)", "deviations": [],
                           "bootstrap_draws": draws})
            rows += [_row(name, "paper (released records)", r, m) for r in refs[m]["conditions"]]
            slopes += _fits(name, "paper (released records)", refs[m]["tracking"], m)
    rows.sort(key=lambda r: order.index(r["key"]) if r["key"] in order else len(order))  # stable: model order kept
    labels = {c.key: c.label for c in conds}
    card = {
        "schema": SCHEMA,
        "generated_utc": _dt.datetime.now(_dt.timezone.utc).isoformat(timespec="seconds"),
        "models": models,
        "conditions": [{"key": c.key, "label": labels[c.key], "reference": REFERENCE_NAMES[c.primary],
                        "n_pairs_subset": c.n_pairs} for c in conds],
        "rows": rows,
        "tracking": slopes,
        "settings": {"bootstrap_draws": draws, "interval": "95% patient-pair bootstrap (percentile)",
                     "verdicts": list(VERDICTS), "slope_margin": config.EQUIVALENCE_MARGIN},
        "notes": NOTES,
        "reading_guide": READING_GUIDE,
        "method_notes": METHOD_NOTES,
    }
    return portable_tree(jsonable(card), keep_small=("p_value", "q_value"))  # the same bytes on every kernel


# =============================================================================================
# Figures
# =============================================================================================
def _colour(row: dict) -> str:
    return MODEL_COLORS.get(row.get("colour_key") or "", AUDITED_COLOR)


def figure_forest(card: dict):
    """PSE minus the primary reference per condition and model, 95% intervals, verdict markers (as Fig. 1B)."""
    import matplotlib.pyplot as plt  # heavy, optional

    apply_style()
    rows = [r for r in card["rows"] if r.get("status") == "computed" and r.get("difference_pp") is not None]
    conds = [c for c in card["conditions"] if any(r["key"] == c["key"] for r in rows)]
    n = len(rows) + len(conds)
    fig, ax = plt.subplots(figsize=(9, 0.26 * n + 1.6))
    y, ticks, labels = n, [], []
    for c in conds:
        y -= 1
        ax.text(0.0, y, c["label"] + f"  [vs {c['reference']}]", transform=ax.get_yaxis_transform(), fontsize=7.5,
                fontweight="bold", va="center")
        for r in (r for r in rows if r["key"] == c["key"]):
            y -= 1
            v = r["verdict"] if r["verdict"] in MARKERS else "no resolved difference"
            marker, filled = MARKERS[v]
            col = JUDGMENT_COLORS.get(v, "#999999")
            lo, hi = r["difference_ci"]
            ax.plot([lo, hi], [y, y], color=col, lw=1.8)
            ax.plot(r["difference_pp"], y, marker, ms=6, color=col, mfc=col if filled else "white", mew=1.4)
            ticks.append(y)
            labels.append(r["model"])
    ax.axvline(0, color="black", lw=0.8)
    ax.set_yticks(ticks, labels, fontsize=7)
    for t, r in zip(ax.get_yticklabels(), [r for c in conds for r in rows if r["key"] == c["key"]]):
        t.set_color(_colour(r))
    ax.set_ylim(y - 0.8, n + 0.2)
    ax.set_xlabel("PSE − reference (pp), 95% pair-bootstrap interval")
    ax.set_title("Reliance against the evidence, per condition and model", loc="left")
    from matplotlib.lines import Line2D  # heavy, optional

    handles = [Line2D([], [], marker=MARKERS[v][0], color=JUDGMENT_COLORS[v], ls="-",
                      mfc=JUDGMENT_COLORS[v] if MARKERS[v][1] else "white", label=v) for v in VERDICTS]
    fig.legend(handles=handles, loc="lower center", ncol=3, fontsize=7, bbox_to_anchor=(0.5, 0.0))
    fig.tight_layout(rect=(0, 0.05, 1, 1))
    return fig


def figure_slopes(card: dict):
    """Tracking slopes with 95% intervals per model, one panel per name set (as Fig. 2B)."""
    import matplotlib.pyplot as plt  # heavy, optional

    apply_style()
    fits = card["tracking"]
    names = [n for n in ("neutral", "social", "both") if any(f["names"] == n for f in fits)]
    models = list(dict.fromkeys(f["model"] for f in fits))
    fig, axes = plt.subplots(1, len(names), figsize=(3.6 * len(names) + 1.5, 0.32 * len(models) + 1.4),
                             sharey=True, squeeze=False)
    y = np.arange(len(models))[::-1]
    m = config.EQUIVALENCE_MARGIN
    for ax, n in zip(axes[0], names):
        ax.axvspan(-m, m, color="#eeeeee", zorder=0, label=f"±{m:g} (descriptive)")
        ax.axvline(0, color="black", lw=0.8)
        ax.axvline(1, color="#7f8c8d", ls="--", lw=1, label="1: adjusts as the learner")
        ax.axvline(0.5, color="#7f8c8d", ls=":", lw=1, label="0.5")
        for yy, model in zip(y, models):
            f = next((f for f in fits if f["model"] == model and f["names"] == n), None)
            if f is None or f["gamma"] is None:
                continue
            col = _colour(f)
            ax.plot(f["gamma_ci"], [yy, yy], color=col, lw=1.8)
            ax.plot(f["gamma"], yy, "o", color=col, ms=5)
        ax.set_title("both name sets" if n == "both" else f"{n} names", loc="left")
        ax.set_xlabel("tracking slope")
    axes[0][0].set_yticks(y, models, fontsize=7)
    axes[0][-1].legend(fontsize=6.5, loc="upper left", bbox_to_anchor=(1.02, 1))
    fig.tight_layout()
    return fig


def figures(card: dict) -> dict[str, str]:
    out = {}
    if any(r.get("status") == "computed" for r in card["rows"]):
        out["forest"] = _png(figure_forest(card))
    if card["tracking"]:
        out["slopes"] = _png(figure_slopes(card))
    return out


# =============================================================================================
# HTML and the command
# =============================================================================================
def condition_tables(card: dict) -> list[dict]:
    """Per condition: its label, reference and one table row per model (cells escaped or markup)."""
    out = []
    for c in card["conditions"]:
        rows = []
        for r in (r for r in card["rows"] if r["key"] == c["key"]):
            if r.get("status") != "computed":
                rows.append([r["model"], r["source"], "not released", "", "", "", "", r.get("reason", "")])
                continue
            rows.append([r["model"], r["source"], Markup("{} {}").format(num(r["pse_pp"]), ci(r["pse_ci"])),
                         num(r["learner_pse_pp"] if r["reference"] == "learner" else r["fullinfo_pse_pp"], 2),
                         Markup("{} {}").format(num(r["difference_pp"]), ci(r["difference_ci"])),
                         verdict(r["verdict"]), num(r["error_pct"], pct=True), r.get("n_pairs") or ""])
        out.append({"label": c["label"], "key": c["key"], "reference": c["reference"], "rows": rows,
                    "statements": [(r["model"], r["statement"]) for r in card["rows"]
                                   if r["key"] == c["key"] and r.get("status") == "computed"]})
    return out


def slope_rows(card: dict) -> list[list]:
    return [[f["model"], f["source"], "both name sets" if f["names"] == "both" else f["names"], num(f["gamma"], 2),
             ci(f["gamma_ci"], 2), f.get("n_pairs") or ""] for f in card["tracking"]]


def model_rows(card: dict) -> list[list]:
    return [[m["model"], m["source"], m.get("battery") or "", ", ".join(m.get("collection_dates_utc") or []),
             "; ".join(m.get("deviations") or []) or "none"] for m in card["models"]]


def render_html(card: dict, figs: dict[str, str] | None = None) -> str:
    """The comparison card as one self-contained page (jinja2, autoescaped; plots as data URIs)."""
    figs = figures(card) if figs is None else figs
    return ENV.get_template("compare.html.j2").render(card=card, figures=figs, models=model_rows(card),
                                                      conditions=condition_tables(card), slopes=slope_rows(card))


def write_comparison(card: dict, out: str | Path) -> tuple[Path, Path]:
    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
    jpath, hpath = out / COMPARE_JSON, out / COMPARE_HTML
    jpath.write_text(json.dumps(card, indent=1) + "\n")
    page = render_html(card)
    words = [w for w in FORBIDDEN_WORDS if f" {w} " in page.lower()]
    if words:  # the card never labels a model (paper §1)
        raise CompareError(f"comparison card would contain {words}")
    hpath.write_text(page)
    return jpath, hpath


def compare(outs: list[str | Path], out: str | Path, *, reference_rows: bool = True,
            draws: int | None = None) -> tuple[Path, Path, dict]:
    card = comparison([load_card(o) for o in outs], reference_rows=reference_rows, draws=draws)
    jpath, hpath = write_comparison(card, out)
    return jpath, hpath, card


def command(args) -> int:
    """``python -m analysis compare OUT1 OUT2 ... --out DIR``: exit 0, or 2 on bad input (raised)."""
    jpath, hpath, card = compare(args.outs, args.out, reference_rows=not getattr(args, "no_reference_models", False),
                                 draws=getattr(args, "draws", None))
    n = len([m for m in card["models"] if m["source"] == "audited"])
    print(f"comparison card: {n} audited models, {len(card['conditions'])} conditions\n  {hpath}\n  {jpath}")
    return 0

