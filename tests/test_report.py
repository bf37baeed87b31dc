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


# --- the reviewers' index (issue 21): counts, links to the report's rows, existing modules only ----------

def _committed_check():
    return pd.read_csv(paths.CLAIMS_CHECK, dtype=str, keep_default_na=False)


def test_every_index_row_counts_its_claims_and_links_to_its_rows_in_the_report():
    check = _committed_check()
    html = report.render(check)
    entries = report.index_entries(check)
    assert [e.item for e in entries][:28] == [f"Table {n}" for n in range(1, 29)]
    assert [e.item for e in entries][28:46] == [f"SN {n}" for n in range(1, 19)]
    for e in entries:
        rows = check[check["table"].isin(e.groups)]
        assert sum(e.counts.values()) == len(rows) - (rows["status"] == "not_computed").sum(), e.item
        for g in e.report_groups:
            assert f'id="{report.anchor(g)}"' in html, (e.item, g)  # the link lands on the group's rows
        assert set(e.report_groups) == set(e.groups) & set(check["table"]), e.item
    index = report.reviewer_index(check)
    t6 = next(line for line in index.splitlines() if line.startswith("| Table 6 |"))
    counts = check[check["table"] == "Table 6"]["status"].value_counts()
    assert t6.endswith(f"| {counts.get('match', 0)} / {counts.get('mismatch', 0)} / {counts.get('not_released', 0)}: "
                       "[Table 6](data/derived/claims_report.html#table-6) |"), t6


def _named_modules(text: str) -> tuple[set[str], set[str]]:
    """Paths ``analysis/….py`` (or folders ``analysis/…/``) and dotted names ``analysis.…`` in ``text``."""
    files = set(re.findall(r"\banalysis/[\w/]*\w(?:\.py)?", text))
    dotted = set(re.findall(r"`(analysis(?:\.\w+)+)", text))
    return files, dotted


def _exists(dotted: str) -> bool:
    import importlib

    parts = dotted.split(".")
    for i in range(len(parts), 0, -1):
        try:
            obj = importlib.import_module(".".join(parts[:i]))
        except ModuleNotFoundError:
            continue
        for attr in parts[i:]:
            if not hasattr(obj, attr):
                return False
            obj = getattr(obj, attr)
        return True
    return False


def test_the_index_and_the_readmes_name_only_modules_and_notebooks_that_exist():
    """SN 15 named `analysis/collection.py` after it had become a package: every module path the
    reviewers' index (README block and site, both from analysis.report) and the READMEs name exists."""
    check = _committed_check()
    texts = [report.reviewer_index(check), (paths.ROOT / "README.md").read_text(encoding="utf-8"),
             (paths.ROOT / "data" / "README.md").read_text(encoding="utf-8")]
    texts += [sec for _, sec in report.TABLE_INDEX.values()] + [v[1] for v in report.NOTE_INDEX.values()]
    missing = []
    for text in texts:
        files, dotted = _named_modules(text)
        missing += [f for f in files if not (paths.ROOT / f).exists()]
        missing += [d for d in dotted if not _exists(d)]
    assert not missing, sorted(set(missing))
    for e in report.index_entries(check):
        for nb in e.notebooks:
            assert nb == "all" or (paths.NOTEBOOKS / f"{nb}.py").is_file(), (e.item, nb)
    assert _named_modules("request settings in `analysis/collection.py`")[0] == {"analysis/collection.py"}
    assert not (paths.ROOT / "analysis/collection.py").exists()  # the old SN 15 entry would fail
