"""The reviewers' claims report: one HTML page, every claim grouped by table and supplementary note.

A table of contents links each group (``#table-6``, ``#sn-14``, ``#main``); mismatches and uncomputed
claims are listed first. Each row gives the paper's value, ours at the paper's precision plus one
digit, the tolerance, the status and the notebook that computes it; a not-released reason shared by
several claims of a group is shown once above the group. Powers of ten are typeset. The page is
the jinja2 template ``templates/claims_report.html.j2`` (autoescaped). Input:
``data/derived/claims_check.csv`` (written by ``python -m analysis claims``). Output:
``data/derived/claims_report.html``.
"""
from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

import jinja2
import pandas as pd
from markupsafe import Markup, escape

from . import claims, paths
from .registry import printed_like

REPORT = paths.DERIVED / "claims_report.html"
README = paths.ROOT / "README.md"
INDEX_START, INDEX_END = "<!-- reviewer-index:start -->", "<!-- reviewer-index:end -->"

#: table -> (notebook, section that prints it beside the paper)
TABLE_INDEX = {
 1: ("05_representation_control", "Table 1: the four models"),
 2: ("01_population", "Table 2 · Field counts"),
 3: ("04_references", "Seed replication (Table 3) and GPT's repeated measurement (Table 5)"),
 4: ("04_references", "Tracking slopes (Table 4, Fig. 2)"),
 5: ("04_references", "Seed replication (Table 3) and GPT's repeated measurement (Table 5)"),
 6: ("05_representation_control", "Table 6: Sonnet, eighty examples, 99 shared pairs"),
 7: ("07_supplement_tables", "Table 7 · Suppression by difficulty stratum: not released"),
 8: ("07_supplement_tables", "Table 8 · Pair-clustered logistic model"),
 9: ("07_supplement_tables", "Table 9 · Display-position rates and the order-consistent subpopulation"),
 10: ("07_supplement_tables", "Table 10 · Replacement within each display order"),
 11: ("07_supplement_tables", "Tables 11-13 · The order-consistent subpopulation"),
 12: ("07_supplement_tables", "Tables 11-13 · The order-consistent subpopulation"),
 13: ("07_supplement_tables", "Tables 11-13 · The order-consistent subpopulation"),
 14: ("07_supplement_tables", "Tables 14-15 · Real-data anchors"),
 15: ("07_supplement_tables", "Tables 14-15 · Real-data anchors"),
 16: ("04_references", "Accuracy does not track reliance (§2.2, §2.5): dimension by dependence"),
 17: ("04_references", "Accuracy does not track reliance (§2.2, §2.5): example structure only"),
 18: ("07_supplement_tables", "Table 18 · Audit-error decomposition (summary-level)"),
 19: ("07_supplement_tables", "Table 19 and Supplementary Notes 11-12 · Regeneration schemes"),
 20: ("07_supplement_tables", "Table 20 · Order-inconsistency rates"),
 21: ("06_uci_real_records", "Table 21: all specified real-record conditions"),
 22: ("06_uci_real_records", "Table 22: near ties and the concurrent control"),
 23: ("04_references", "Cell tables (Supplementary Tables 23-26)"),
 24: ("04_references", "Cell tables (Supplementary Tables 23-26)"),
 25: ("04_references", "Cell tables (Supplementary Tables 23-26)"),
 26: ("04_references", "Cell tables (Supplementary Tables 23-26)"),
 27: ("04_references", "Example count and example correlation (Tables 27, 28; Supplementary Note 18)"),
 28: ("04_references", "Example count and example correlation (Tables 27, 28; Supplementary Note 18)"),
}
#: supplementary note -> (notebook, section, claims tables that hold its numbers or None)
NOTE_INDEX = {
 1: ("02_prompts", "header note: the explicit-rule prompt is not given verbatim; design checks are descriptive", None),
 2: ("04_references", "Seed replication (Table 3) …", '"Table 3" "SN 2"'),
 3: ("04_references", "Tracking slopes (Table 4, Fig. 2); … (Table 5)", '"Table 4" "Table 5" "SN 3"'),
 4: ("05_representation_control", "Supplementary Note 4: the second numeric measurement, the no-example secondary and refusals", '"Table 6" "SN 4"'),
 5: ("07_supplement_tables", "Table 7 · Suppression by difficulty stratum: not released", '"Table 7"'),
 6: ("07_supplement_tables", "Tables 8-13 sections", '"Table 8" "Table 9" "Table 10" "Table 11" "Table 12" "Table 13" "SN 6"'),
 7: ("07_supplement_tables", "Tables 14-15 · Real-data anchors", '"Table 14" "Table 15" "SN 7"'),
 8: ("04_references", "Accuracy does not track reliance (§2.2, §2.5)", '"Table 16" "Table 17" "SN 8"'),
 9: ("07_supplement_tables", "Table 18 · Audit-error decomposition (summary-level)", '"Table 18" "SN 9"'),
 10: ("07_supplement_tables", "Supplementary Note 10 · Counterfactual scaling", '"SN 10"'),
 11: ("07_supplement_tables", "Table 19 and Supplementary Notes 11-12 · Regeneration schemes", '"Table 19" "SN 11"'),
 12: ("07_supplement_tables", "Table 19 and Supplementary Notes 11-12 · Regeneration schemes", '"SN 12"'),
 13: ("07_supplement_tables", "Table 20 · Order-inconsistency rates", '"Table 20"'),
 14: ("06_uci_real_records", "Tables 21, 22; Supplementary Note 14: order effects, learner, references, strata; Positive control", '"Table 21" "Table 22" "SN 14"'),
 15: ("05_representation_control / 03_collection", "Supplementary Note 4 … (agreements); request settings in `analysis/collection/subjects/anthropic.py` and `analysis/collection/subjects/openai.py`", '"SN 15"'),
 16: ("04_references", "Cell tables (Supplementary Tables 23-26)", '"Table 23" "Table 24" "Table 25" "Table 26"'),
 17: ("02_prompts", "all sections (prompts byte for byte; released hashes reproduced)", None),
 18: ("04_references", "Example count and example correlation (Tables 27, 28; Supplementary Note 18)", '"Table 27" "Table 28" "SN 18"'),
}

TITLE = "Language Models Give Group-Linked Fields the Wrong Weight"
TEMPLATES = Path(__file__).with_name("templates")
ENV = jinja2.Environment(loader=jinja2.FileSystemLoader(TEMPLATES), autoescape=True, trim_blocks=False,
                         keep_trailing_newline=True)
_SCI = re.compile(r"(?P<m>[+\-\u2212]?\d+(?:\.\d+)?)(?:\s*[×x]\s*10\^\{?|e)(?P<e>[+\-]?\d+)\}?")


def typeset(text: object) -> Markup:
    """HTML of a printed number with powers of ten typeset (``1.3×10^-11`` -> 1.3×10<sup>−11</sup>).

    >>> str(typeset("1.3×10^-11")), str(typeset("7.72e-09")), str(typeset("<b>")), str(typeset("+21.2"))
    ('1.3×10<sup>−11</sup>', '7.72×10<sup>−9</sup>', '&lt;b&gt;', '+21.2')
    """
    s = str(text)
    m = _SCI.fullmatch(s.strip())
    if not m:
        return escape(s)
    exp = int(m.group("e"))
    return Markup("{}×10<sup>{}</sup>").format(m.group("m"), f"{exp}".replace("-", "\u2212"))


ENV.filters["sci"] = typeset


def _group_key(table: str) -> tuple:
    m = re.match(r"(Table|SN) (\d+)", table)
    if table == "Main":
        return (0, 0)
    return (1 if m.group(1) == "Table" else 2, int(m.group(2))) if m else (3, 0)


def anchor(table: str) -> str:
    """The HTML id of a table's group (``Table 6`` -> ``table-6``, ``SN 14`` -> ``sn-14``)."""
    return re.sub(r"[^a-z0-9]+", "-", table.lower()).strip("-")


def ours_text(rec: dict) -> str:
    """Our value at the paper's precision plus one digit (``n/r`` where not released)."""
    if rec["status"] == "not_released":
        return "n/r"
    text = str(rec["reproduced_value"])
    if text in ("", "nan"):
        return text
    return printed_like(float(text), rec["paper_value"], extra_digit=True)


def _reason(note: str) -> str:
    """The not-released reason of a note (the part after ``not released:`` where the note has one)."""
    m = re.search(r"not released: (.*)$", note)
    return m.group(1) if m else note


def _counts_text(df: pd.DataFrame) -> list[str]:
    return [f"{v} {k}" for k, v in claims.summary(df).items() if v]


def context(check: pd.DataFrame) -> dict:
    """What the template shows: overall counts, the not-matched rows, and one group per table."""
    check = check.fillna("")
    recs = []
    for rec in check.to_dict("records"):
        recs.append({**rec, "paper": rec["paper_value"], "ours": ours_text(rec), "anchor": anchor(rec["table"])})
    groups = []
    for table in sorted(check["table"].unique(), key=_group_key):
        rows = [r for r in recs if r["table"] == table]
        reasons: dict[str, dict] = {}
        for r in rows:
            if r["status"] == "not_released":
                reasons.setdefault(_reason(r["note"]), {"n": 0})["n"] += 1
        shared = {text: v for text, v in reasons.items() if v["n"] > 1}
        keyed = []
        for t, (text, v) in enumerate(shared.items(), start=1):
            keyed.append({"key": t, "text": text, "n": v["n"]})
        key_of = {r["text"]: r["key"] for r in keyed}
        for r in rows:
            r["reason"] = key_of.get(_reason(r["note"])) if r["status"] == "not_released" else None
        groups.append({"table": table, "anchor": anchor(table), "rows": rows, "reasons": keyed,
                       "counts": _counts_text(check[check["table"] == table]), "where": section_of(table)})
    order = {"mismatch": 0, "not_computed": 1}
    not_matched = sorted((r for r in recs if r["status"] in order),
                         key=lambda r: (order[r["status"]], _group_key(r["table"])))
    counts = [f"{v} {k}" for k, v in claims.summary(check).items()]
    return {"title": TITLE, "counts": counts, "total": len(check), "groups": groups, "not_matched": not_matched}


def render(check: pd.DataFrame) -> str:
    """The report's HTML text (template ``templates/claims_report.html.j2``, autoescaped)."""
    return ENV.get_template("claims_report.html.j2").render(**context(check))


def section_of(table: str) -> tuple[str, str] | None:
    """``(notebook, section)`` that shows a table's or supplementary note's claims."""
    m = re.fullmatch(r"(Table|SN) (\d+)", table)
    if not m:
        return None
    index = TABLE_INDEX if m.group(1) == "Table" else {k: v[:2] for k, v in NOTE_INDEX.items()}
    return index.get(int(m.group(2)))


#: the columns the index counts, in order
INDEX_STATUSES = ("match", "mismatch", "not_released")
#: the command shown for a note without claims (its numbers are the prompts themselves)
PROMPT_COMMAND = "python -m analysis prompt --cell k12_LH_neutral_absent_zero --pair 0 --arm factual --order 0"


@dataclass(frozen=True)
class IndexEntry:
    """One row of the reviewers' index: a table or supplementary note of the paper.

    ``groups`` are the claims-registry tables that hold its numbers (``()`` for a note without
    claims); ``report_groups`` those present in the claims check, each a group of the claims report
    (anchor :func:`anchor`); ``counts`` is ``status -> n`` over ``groups``.
    """

    item: str
    notebooks: tuple[str, ...]
    section: str
    groups: tuple[str, ...]
    report_groups: tuple[str, ...]
    counts: dict

    @property
    def command(self) -> str:
        if not self.groups:
            return PROMPT_COMMAND
        return "python -m analysis claims --table " + " ".join(f'"{g}"' if " " in g else g for g in self.groups)

    @property
    def counts_text(self) -> str:
        return " / ".join(str(self.counts.get(k, 0)) for k in INDEX_STATUSES) if self.groups else "—"


def index_entries(check: pd.DataFrame) -> list[IndexEntry]:
    """Tables 1-28, Supplementary Notes 1-18 and the main text, each with its notebook section, the
    claims tables that hold its numbers, their groups in the claims report and the status counts."""
    present = set(check["table"])
    items = [(f"Table {t}", nb, sec, (f"Table {t}",)) for t, (nb, sec) in TABLE_INDEX.items()]
    items += [(f"SN {n}", nb, sec, tuple(x.strip('"') for x in tables.split('" "')) if tables else ())
              for n, (nb, sec, tables) in NOTE_INDEX.items()]
    items.append(("Main text", "all", "each notebook's main-text section", ("Main",)))
    entries = []
    for item, nb, sec, groups in items:
        rows = check[check["table"].isin(groups)]
        counts = {k: int((rows["status"] == k).sum()) for k in INDEX_STATUSES}
        entries.append(IndexEntry(item, tuple(s.strip() for s in nb.split("/")), sec, groups,
                                  tuple(g for g in groups if g in present), counts))
    return entries


def reviewer_index(check: pd.DataFrame, report_href: str = "data/derived/claims_report.html") -> str:
    """The README's reviewer index (markdown): one row per table and supplementary note, with the
    notebook and section that show it, the command that recomputes it and its claim counts, each
    linking to its rows in the claims report (``report_href#anchor``)."""
    out = ["| item | notebook | section | recompute | match / mismatch / not released (rows in the claims report) |",
           "|---|---|---|---|---|"]
    for e in index_entries(check):
        notebooks = "all" if e.notebooks == ("all",) else " / ".join(f"`{nb}`" for nb in e.notebooks)
        links = " · ".join(f"[{g}]({report_href}#{anchor(g)})" for g in e.report_groups)
        counts = e.counts_text + (f": {links}" if links else "")
        out.append(f"| {e.item} | {notebooks} | {e.section} | `{e.command}` | {counts} |")
    return "\n".join(out)


def update_readme(check: pd.DataFrame, readme=README) -> None:
    """Rewrite the README's reviewer index between its markers (numbers in prose are written by code)."""
    text = readme.read_text(encoding="utf-8")
    if INDEX_START not in text or INDEX_END not in text:
        raise ValueError(f"{readme}: reviewer-index markers not found")
    head, rest = text.split(INDEX_START, 1)
    _, tail = rest.split(INDEX_END, 1)
    c = claims.summary(check)
    block = (f"{INDEX_START}\nClaims: **{c['match']} match, {c['mismatch']} mismatch, {c['not_released']} not "
             f"released** of {len(check)} (written by `python -m analysis report` from "
             f"`data/derived/claims_check.csv`).\n\n{reviewer_index(check)}\n{INDEX_END}")
    readme.write_text(head + block + tail, encoding="utf-8")


def write(check_path=paths.CLAIMS_CHECK, out=REPORT) -> int:
    """Render ``check_path`` to ``out``; the default claims check also updates the README's reviewer index."""
    check = pd.read_csv(check_path, dtype=str, keep_default_na=False)
    with open(out, "w", encoding="utf-8") as fh:
        fh.write(render(check))
    default = str(check_path) == str(paths.CLAIMS_CHECK)
    if default:
        update_readme(check)
    print(f"wrote {out}" + (" and the README's reviewer index" if default else ""))
    return 0
