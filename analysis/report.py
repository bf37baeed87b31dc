"""The reviewers' claims report: one HTML page, every claim grouped by table and supplementary note.

Mismatches and ``not_released`` rows come first; each row gives the paper's value, ours, the
status and the notebook that computes it. Input: ``data/derived/claims_check.csv`` (written by
``python -m analysis claims``). Output: ``data/derived/claims_report.html``.
"""
from __future__ import annotations

import argparse
import html
import re

import pandas as pd

from . import claims, paths

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
 15: ("05_representation_control / 03_collection", "Supplementary Note 4 … (agreements); request settings in `analysis/collection.py`", '"SN 15"'),
 16: ("04_references", "Cell tables (Supplementary Tables 23-26)", '"Table 23" "Table 24" "Table 25" "Table 26"'),
 17: ("02_prompts", "all sections (prompts byte for byte; released hashes reproduced)", None),
 18: ("04_references", "Example count and example correlation (Tables 27, 28; Supplementary Note 18)", '"Table 27" "Table 28" "SN 18"'),
}

CSS = """
body{font-family:system-ui,sans-serif;margin:2em auto;max-width:1100px;color:#222}
table{border-collapse:collapse;width:100%;margin:.4em 0 1.4em}td,th{border-bottom:1px solid #ddd;padding:3px 6px;
font-size:13px;text-align:left;vertical-align:top}th{background:#f4f4f4}.match{color:#1e8449}
.mismatch{color:#c0392b;font-weight:bold}.not_released{color:#7d6608}.not_computed{color:#c0392b}
.num{font-variant-numeric:tabular-nums;white-space:nowrap}h2{margin-top:1.6em}.small{color:#666;font-size:12px}
"""


def _group_key(table: str) -> tuple:
    m = re.match(r"(Table|SN) (\d+)", table)
    if table == "Main":
        return (0, 0)
    return (1 if m.group(1) == "Table" else 2, int(m.group(2))) if m else (3, 0)


def _rows(df: pd.DataFrame, with_table: bool) -> str:
    out = []
    for r in df.itertuples(index=False):
        cells = [html.escape(str(r.table))] if with_table else []
        cells += [html.escape(str(r.row)), html.escape(str(r.column)),
                  f'<span class="num">{html.escape(str(r.paper_value))}</span>',
                  f'<span class="num">{html.escape(str(r.reproduced_value))}</span>',
                  f'<span class="{r.status}">{r.status}</span>',
                  html.escape(str(r.notebook)), f'<span class="small">{html.escape(str(r.note))}</span>']
        out.append("<tr>" + "".join(f"<td>{c}</td>" for c in cells) + "</tr>")
    return "\n".join(out)


def render(check: pd.DataFrame) -> str:
    """The report's HTML text."""
    check = check.fillna("")
    counts = claims.summary(check)
    head = ["row", "column", "paper", "ours", "status", "notebook", "note"]
    parts = [f"<!doctype html><meta charset='utf-8'><title>Claims report</title><style>{CSS}</style>",
             "<h1>Claims report: “Language Models Give Group-Linked Fields the Wrong Weight”</h1>",
             "<p>Every published number beside the value this compendium computes from the released per-call "
             "records and its own population. Tolerance: half a unit of the last printed digit unless the note "
             "says otherwise. Recompute with <code>python -m analysis claims</code>.</p>",
             "<p><b>" + ", ".join(f"{v} {k}" for k, v in counts.items()) + f"</b> of {len(check)} claims.</p>"]
    first = check[check["status"] != "match"]
    if len(first):
        parts.append("<h2>Not matched: mismatches, unreleased inputs, uncomputed</h2>")
        order = {"mismatch": 0, "not_computed": 1, "not_released": 2}
        first = first.assign(_o=first["status"].map(order)).sort_values(["_o", "table"], kind="stable")
        parts.append("<table><tr>" + "".join(f"<th>{h}</th>" for h in ["table"] + head) + "</tr>"
                     + _rows(first, True) + "</table>")
    parts.append("<h2>All claims by table and supplementary note</h2>")
    for table in sorted(check["table"].unique(), key=_group_key):
        sub = check[check["table"] == table]
        c = claims.summary(sub)
        parts.append(f"<h3 id='{html.escape(table)}'>{html.escape(table)} <span class='small'>("
                     + ", ".join(f"{v} {k}" for k, v in c.items() if v) + ")</span></h3>")
        where = section_of(table)
        if where:
            parts.append(f"<p class='small'>Computed and shown in notebook <code>{html.escape(where[0])}</code>, "
                         f"section “{html.escape(where[1])}”.</p>")
        parts.append("<table><tr>" + "".join(f"<th>{h}</th>" for h in head) + "</tr>" + _rows(sub, False)
                     + "</table>")
    return "\n".join(parts) + "\n"


def section_of(table: str) -> tuple[str, str] | None:
    """``(notebook, section)`` that shows a table's or supplementary note's claims."""
    m = re.fullmatch(r"(Table|SN) (\d+)", table)
    if not m:
        return None
    index = TABLE_INDEX if m.group(1) == "Table" else {k: v[:2] for k, v in NOTE_INDEX.items()}
    return index.get(int(m.group(2)))


def _counts(check: pd.DataFrame, tables: list[str]) -> str:
    v = check[check["table"].isin(tables)]["status"].value_counts()
    return " / ".join(str(v.get(k, 0)) for k in ("match", "mismatch", "not_released"))


def reviewer_index(check: pd.DataFrame) -> str:
    """The README's reviewer index (markdown): one row per table and supplementary note, with the
    notebook and section that show it, the command that recomputes it and its claim counts."""
    out = ["| item | notebook | section | recompute | match / mismatch / not released |",
           "|---|---|---|---|---|"]
    for t, (nb, sec) in TABLE_INDEX.items():
        out.append(f"| Table {t} | `{nb}` | {sec} | `python -m analysis claims --table \"Table {t}\"` | "
                   f"{_counts(check, [f'Table {t}'])} |")
    for n, (nb, sec, tables) in NOTE_INDEX.items():
        if tables:
            names = [x.strip('"') for x in tables.split('" "')]
            cmd, cnt = f"`python -m analysis claims --table {tables}`", _counts(check, names)
        else:
            cmd, cnt = "`python -m analysis prompt --cell k12_LH_neutral_absent_zero --pair 0 --arm factual --order 0`", "—"
        out.append(f"| SN {n} | `{nb}` | {sec} | {cmd} | {cnt} |")
    out.append(f"| Main text | all | each notebook's main-text section | `python -m analysis claims --table Main` | "
               f"{_counts(check, ['Main'])} |")
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


def cli_report(argv: list[str]) -> int:
    ap = argparse.ArgumentParser(prog="python -m analysis report", description=__doc__.splitlines()[0])
    ap.add_argument("--check", default=str(paths.CLAIMS_CHECK), help="claims_check.csv to render")
    ap.add_argument("--out", default=str(REPORT))
    a = ap.parse_args(argv)
    check = pd.read_csv(a.check, dtype=str, keep_default_na=False)
    with open(a.out, "w", encoding="utf-8") as fh:
        fh.write(render(check))
    if a.check == str(paths.CLAIMS_CHECK):
        update_readme(check)
    print(f"wrote {a.out}" + (" and the README's reviewer index" if a.check == str(paths.CLAIMS_CHECK) else ""))
    return 0
