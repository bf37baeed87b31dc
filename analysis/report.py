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
        parts.append("<table><tr>" + "".join(f"<th>{h}</th>" for h in head) + "</tr>" + _rows(sub, False)
                     + "</table>")
    return "\n".join(parts) + "\n"


def cli_report(argv: list[str]) -> int:
    ap = argparse.ArgumentParser(prog="python -m analysis report", description=__doc__.splitlines()[0])
    ap.add_argument("--check", default=str(paths.CLAIMS_CHECK), help="claims_check.csv to render")
    ap.add_argument("--out", default=str(REPORT))
    a = ap.parse_args(argv)
    check = pd.read_csv(a.check, dtype=str, keep_default_na=False)
    with open(a.out, "w", encoding="utf-8") as fh:
        fh.write(render(check))
    print(f"wrote {a.out}")
    return 0
