"""The reviewers' claims report (analysis.report): grouped by table with a table of contents and
anchors, a shared not-released reason shown once per group, values at the paper's precision plus
one digit with the tolerance, powers of ten typeset, everything autoescaped."""
from __future__ import annotations

import re

import pandas as pd

from analysis import paths, report


def _row(cid, table, paper, tol, ours, status, note="", row="r", column="c"):
    return {"claim_id": cid, "table": table, "row": row, "column": column, "quantity": "q", "paper_value": paper,
            "tolerance": tol, "note": note, "reproduced_value": ours, "status": status, "notebook": "07"}


REASON = "not released: the regeneration records (NOT_INCLUDED.csv)"
CHECK = pd.DataFrame([
    _row("a", "Table 8", "1.3×10^-11", "5e-13", "1.2534e-11", "match"),
    _row("b", "Table 8", "+21.2", "0.05", "21.2345", "match"),
    _row("c", "Table 19", "+1.0", "0.05", "", "not_released", REASON, row="x1"),
    _row("d", "Table 19", "+2.0", "0.05", "", "not_released", REASON, row="x2"),
    _row("e", "Table 19", "+3.0", "0.05", "", "not_released", "not released: something else", row="x3"),
    _row("f", "SN 6", "3", "0.5", "2", "mismatch", "<b>cause</b>"),
    _row("g", "Main", "0.35", "0.005", "0.35", "match"),
])


def test_contents_and_anchors_in_paper_order():
    html = report.render(CHECK)
    toc = html[html.index("<nav>"):html.index("</nav>")]
    assert re.findall(r'href="#([\w-]+)"', toc) == ["not-matched", "main", "table-8", "table-19", "sn-6"]
    for a in ("main", "table-8", "table-19", "sn-6"):
        assert f'id="{a}"' in html


def test_a_shared_reason_is_shown_once_per_group():
    html = report.render(CHECK)
    assert html.count("the regeneration records (NOT_INCLUDED.csv)") == 1
    assert "2 claims not released: the regeneration records" in html
    assert html.count("see [1]") == 2
    assert "something else" in html  # a reason of one claim stays in its row


def test_precision_plus_one_digit_tolerance_and_typeset_powers():
    html = report.render(CHECK)
    assert "+21.23" in html and "±0.05" in html
    assert "1.3×10<sup>−11</sup>" in html and "1.25×10<sup>−11</sup>" in html and "±5×10<sup>−13</sup>" in html
    assert "10^" not in html


def test_autoescaped():
    html = report.render(CHECK)
    assert "<b>cause</b>" not in html and "&lt;b&gt;cause&lt;/b&gt;" in html


def test_the_committed_check_renders():
    check = pd.read_csv(paths.CLAIMS_CHECK, dtype=str, keep_default_na=False)
    html = report.render(check)
    assert html.count("<h3 id=") == check["table"].nunique()
    assert "10^" not in html


def test_write_updates_the_readme_only_for_the_default_check(tmp_path, capsys):
    src = tmp_path / "check.csv"
    CHECK.to_csv(src, index=False)
    out = tmp_path / "r.html"
    assert report.write(src, out) == 0
    assert out.read_text(encoding="utf-8").startswith("<!doctype html>")
    assert capsys.readouterr().out.strip() == f"wrote {out}"
