"""The card as one self-contained HTML page: jinja2 templates with autoescaping (templates/*.html.j2).

Every value reaches the page escaped; the few cells that carry markup (numbers, intervals,
verdicts) are built here with :class:`markupsafe.Markup`, which escapes what it formats.
"""
from __future__ import annotations

import json
from pathlib import Path

import jinja2
from markupsafe import Markup

from .. import config
from ..validity import card as validity_card
from .plots import card_figures
from .wording import REFERENCE_NAMES, _ci, _isnan, _pp

ENV = jinja2.Environment(loader=jinja2.FileSystemLoader(Path(__file__).with_name("templates")),
                         autoescape=jinja2.select_autoescape(["html", "j2"], default=True),
                         trim_blocks=True, lstrip_blocks=True, keep_trailing_newline=True,
                         undefined=jinja2.ChainableUndefined)
NA = Markup('<span class="small">n/a</span>')


def num(x, digits: int = 1, pct: bool = False) -> Markup:
    """A number as tabular figures (``n/a`` for a missing one); signed pp unless ``pct``."""
    if _isnan(x):
        return NA
    return Markup('<span class="num">{}</span>').format(f"{x:.{digits}f}%" if pct else _pp(x, digits))


def ci(c, digits: int = 1) -> Markup:
    return Markup('<span class="num">{}</span>').format(_ci(c, digits))


def verdict(v) -> Markup:
    if v is None:
        return NA
    return Markup('<span class="{}">{}</span>').format({"excess": "excess", "shortfall": "shortfall"}.get(v, "none"), v)


def small(text) -> Markup:
    return Markup('<span class="small">{}</span>').format(text)


def _both(x, c, digits: int = 1) -> Markup:
    return num(x, digits) + Markup(" ") + ci(c, digits)


def _pct(x) -> str:
    return "n/a" if x is None else f"{100 * x:.0f}%"


ENV.filters.update(pp=_pp, num=num, ci=ci, verdict=verdict)


def responsiveness_rows(card: dict) -> list[list]:
    who = [("this model", card.get("responsiveness"))] + [
        (ref["name"], ref.get("responsiveness")) for ref in (card.get("reference_models") or {}).values()]
    rows = []
    for name, r in who:
        if not r or not r.get("n_calls"):
            continue
        flips = (NA if r["order_flip_share"] is None else
                 Markup('<span class="num">{} [{}, {}]</span>').format(_pct(r["order_flip_share"]),
                                                                        *map(_pct, r["order_flip_ci"])))
        acc = NA if r["accuracy_pct"] is None else Markup('<span class="num">{:.1f}% [{:.1f}, {:.1f}]</span>').format(
            r["accuracy_pct"], *r["accuracy_ci"])
        reading = ("not checked" if r["interpretable"] is None else
                   "responds to the patients" if r["interpretable"] else "; ".join(
                       "answers by position" if "position" in x else "at chance" if "chance" in x else x
                       for x in r["reasons"]))
        rows.append([name, flips, r["n_pairs"], _pct(r["pick_first_share"]), acc, _pct(r["valid_share"]), reading])
    return rows


def condition_rows(card: dict) -> list[list]:
    rows = []
    for r in card["conditions"]:
        if r.get("status") != "computed":
            rows.append([r["key"], small(r.get("reason", ""))] + [""] * 9)
            continue
        err = num(r["error_pct"], pct=True)
        if not _isnan(r["error_ci"][0]):
            err += Markup(' <span class="num">[{:.1f}, {:.1f}]</span>').format(*r["error_ci"])
        rows.append([r["label"], _both(r["pse_pp"], r["pse_ci"]), num(r["fullinfo_pse_pp"]), num(r["learner_pse_pp"]),
                     REFERENCE_NAMES[r["reference"]], _both(r["difference_pp"], r["difference_ci"]),
                     verdict(r["verdict"]), judgment_cell(r), err, num(r["learner_error_pct"], pct=True),
                     num(r["excess_error_pp"])])
    return rows


def judgment_cell(r: dict) -> Markup:
    """The card's own judgment (issue 22): PSE - reference from the joint pair bootstrap with its 95% interval,
    then excess / shortfall / equivalent within ±X pp / inconclusive / too few pairs to judge."""
    if not r.get("judgment"):
        return NA
    return _both(r.get("joint_difference_pp"), r.get("joint_ci")) + Markup(" ") + verdict(r["judgment"])


def reference_rows(card: dict) -> list[list]:
    models = list(card.get("reference_models") or {})
    rows = []
    for r in card["conditions"]:
        cells = [r.get("label", r["key"]), num(r.get("pse_pp")) + Markup(" ") + verdict(r.get("verdict"))]
        for m in models:
            ref = r.get("reference_models", {}).get(m, {})
            if ref.get("status") != "computed":
                cells.append(small("not released"))
            else:
                src = " (summary)" if ref.get("source") == "summary" else ""
                cells.append(_both(ref["pse_pp"], ref["pse_ci"]) + Markup(" ") + verdict(ref["verdict"]) + small(src))
        rows.append(cells)
    return rows


def tracking_rows(card: dict) -> list[list]:
    t = card.get("tracking")
    if not t:
        return []
    rows = [["this model", n, num(f["gamma"], 2), ci(f["gamma_ci"], 2), num(f["alpha"]), f["n_pairs"]]
            for n, f in t["fits"].items()]
    if t.get("pooled"):
        p = t["pooled"]
        rows.append(["this model", "both (mean)", num(p["gamma"], 2),
                     ci(p["gamma_ci"], 2) + small(" one-sided 95%: ") + ci(p["one_sided_bounds"], 2), "", ""])
    for ref in (card.get("reference_models") or {}).values():
        for n, f in ((ref.get("tracking") or {}).get("fits") or {}).items():
            rows.append([ref["name"], n, num(f["gamma"], 2), ci(f["gamma_ci"], 2), num(f["alpha"]), f["n_pairs"]])
    return rows


def display_rows(card: dict) -> list[list]:
    d = card.get("display")
    if not d:
        return []

    def row(who, dd):
        return [who] + [_both(dd.get(k + "_pp"), dd.get(k + "_ci")) if dd.get(k + "_pp") is not None else NA
                        for k in ("numeric", "ordered", "arbitrary", "difference")] + [dd["difference"]]

    rows = [row("this model", d)]
    for ref in (card.get("reference_models") or {}).values():
        rows.append(row(ref["name"], ref["display"]) if ref.get("display") else
                    [ref["name"], small("representation-control records not released"), "", "", "", ""])
    return rows


def naming_rows(card: dict) -> list[list]:
    nm = card.get("naming") or {}
    rows = []
    for ex in ("absent", "learned"):
        who = [("this model", nm.get(ex))] + [(ref["name"], (ref.get("naming") or {}).get(ex))
                                               for ref in (card.get("reference_models") or {}).values()]
        for name, sec in who:
            if sec is not None:
                rows.append(["no examples" if ex == "absent" else "80 examples", name, num(sec["neutral_pp"]),
                             num(sec["social_pp"]), _both(sec["difference_pp"], sec["difference_ci"]),
                             sec["verdict"] or "no interval (summary)"])
    return rows


def structure_rows(card: dict) -> list[list]:
    s = card.get("structure")
    if not s:
        return []
    rows = [["this model", num(s["lh_change_pp"]), num(s["hh_change_pp"]), _both(s["reversal_pp"], s["reversal_ci"])]]
    for ref in (card.get("reference_models") or {}).values():
        rs = ref.get("structure")
        if rs:
            rows.append([ref["name"], num(rs["lh_change_pp"]), num(rs["hh_change_pp"]),
                         _both(rs["reversal_pp"], rs["reversal_ci"])])
    return rows


def provenance_rows(card: dict) -> list[list]:
    sub = card["subject"]
    tok = sub.get("tokens") or {}
    return [["request settings", Markup("<code>{}</code>").format(json.dumps(sub.get("request_settings"), sort_keys=True))],
            ["sampling", card["settings"].get("sampling") or "n/a"],  # issue 20
            ["base URL", sub.get("base_url") or "default"],
            ["collection dates (UTC)", ", ".join(sub.get("collection_dates_utc") or [])],
            ["tokens", f"input {tok.get('input', 0):,}, output {tok.get('output', 0):,}"],
            ["SDK versions", json.dumps(sub.get("sdk_versions"), sort_keys=True)],
            ["ledger", sub.get("ledger")],
            ["bootstrap", f"{card['settings']['bootstrap_draws']:,} draws; seeds {card['settings']['seeds']}"]]


def render_html(card: dict, figures: dict[str, str] | None = None) -> str:
    """The card as one self-contained HTML page (inline CSS, plots as data URIs, no external resources)."""
    figures = card_figures(card) if figures is None else figures
    sub = card["subject"]
    cost = sub.get("cost_usd")
    t = card.get("tracking")
    levels = "" if not t else ", ".join(f"β {b:.2f}: {_pp(v, 2)} pp" for b, v in zip(t["levels"], t["learner_pse_pp"]))
    page = ENV.get_template("report_card.html.j2").render(
        card=card, sub=sub, figures=figures, levels=levels, margin=f"{config.EQUIVALENCE_MARGIN_PP:g}",
        served=", ".join(f"{k} ({v})" for k, v in (sub.get("models_served") or {}).items()) or "n/a",
        cost="unknown" if cost is None else f"${cost:,.2f}",
        resp_rows=responsiveness_rows(card), condition_rows=condition_rows(card), tracking_rows=tracking_rows(card),
        display_rows=display_rows(card), naming_rows=naming_rows(card), structure_rows=structure_rows(card),
        reference_names=[ref["name"] for ref in (card.get("reference_models") or {}).values()],
        reference_rows=reference_rows(card), provenance_rows=provenance_rows(card))
    # construct validity (analysis.validity, beyond the paper's protocol): '' unless the card has its keys
    return page.replace("</body>", validity_card.html_section(card) + "</body>", 1)
