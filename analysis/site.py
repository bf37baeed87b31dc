"""The compendium as a static site for reviewers (``make site``): every executed notebook, the claims
report and an index of the paper's Tables 1-28 and Supplementary Notes 1-18, each linking to the
notebook section that computes it.

``python -m analysis.site [--out _site] [--notebooks 01 04 ...] [--no-check]``

The notebooks are rendered as they are committed (executed by ``make paper``), with nbconvert's
``lab`` template; figures are embedded in the pages. The index page is a jinja2 template
(``analysis/templates/site_index.html.j2``). The claims report ``data/derived/claims_report.html``
and the derived CSV files (which the notebooks' collapsed tables link to) are copied beside them.
After building, every local link and image of every page is checked (:func:`check_links`): a missing
file or a missing ``#anchor`` stops with a list of the broken links.
"""
from __future__ import annotations

import argparse
import html
import re
import shutil
import sys
from dataclasses import dataclass
from html.parser import HTMLParser
from pathlib import Path
from urllib.parse import unquote, urlsplit

import jinja2

from . import paths, report

TEMPLATES = Path(__file__).parent / "templates"
CLAIMS_REPORT = paths.DERIVED / "claims_report.html"


@dataclass
class Page:
    """One rendered notebook: its file name, title, and heading text -> anchor id."""

    stem: str
    title: str
    href: str
    anchors: dict[str, str]


def notebook_paths(only: list[str] | None = None, source: Path = paths.NOTEBOOKS) -> list[Path]:
    """The executed notebooks ``NN_name.ipynb`` of ``source``, in order (``only``: their numbers)."""
    nbs = sorted(Path(source).glob("[0-9][0-9]_*.ipynb"))
    return [p for p in nbs if not only or p.name[:2] in only]


class _Collector(HTMLParser):
    """Collects ids, headings (text -> id), and local links and sources of one HTML page."""

    def __init__(self):
        super().__init__(convert_charrefs=True)
        self.ids: set[str] = set()
        self.links: list[tuple[str, str]] = []  # (attribute, value)
        self.headings: dict[str, str] = {}
        self._heading: tuple[str, list[str]] | None = None

    def handle_starttag(self, tag, attrs):
        a = dict(attrs)
        if "id" in a:
            self.ids.add(a["id"])
        if "name" in a and tag == "a":
            self.ids.add(a["name"])
        for key in ("href", "src"):
            if a.get(key):
                self.links.append((key, a[key]))
        if re.fullmatch(r"h[1-4]", tag) and "id" in a:
            self._heading = (a["id"], [])

    def handle_data(self, data):
        if self._heading is not None:
            self._heading[1].append(data)

    def handle_endtag(self, tag):
        if re.fullmatch(r"h[1-4]", tag) and self._heading is not None:
            ident, parts = self._heading
            self.headings["".join(parts).replace("¶", "").strip()] = ident
            self._heading = None


def parse_page(path: Path) -> _Collector:
    c = _Collector()
    c.feed(Path(path).read_text(encoding="utf-8"))
    return c


def render_notebook(nb_path: Path, out_dir: Path) -> Page:
    """Render one executed notebook to ``out_dir/<stem>.html`` with nbconvert (figures embedded)."""
    import nbconvert  # heavy, optional
    import nbformat  # heavy, optional

    nb = nbformat.read(nb_path, as_version=4)
    for cell in nb.cells:
        if cell.cell_type == "code" and cell.metadata.get("jupyter", {}).get("outputs_hidden"):
            cell.outputs = [_collapsed(o) for o in cell.outputs]
    exporter = nbconvert.HTMLExporter(template_name="lab")
    body, _ = exporter.from_notebook_node(nb, resources={"metadata": {"name": nb_path.stem}})
    out = out_dir / f"{nb_path.stem}.html"
    out.write_text(body, encoding="utf-8")
    page = parse_page(out)
    title = next((c.source.lstrip("# ").splitlines()[0] for c in nb.cells
                  if c.cell_type == "markdown" and c.source.startswith("# ")), nb_path.stem)
    return Page(nb_path.stem, title, f"notebooks/{out.name}", page.headings)


def _collapsed(output):
    """A text output collapsed in JupyterLab shown collapsed on the site too (a ``<details>``)."""
    import nbformat  # heavy, optional

    if output.get("output_type") != "stream":
        return output
    text = output["text"]
    body = (f"<details><summary>text form checked by the tests ({text.count(chr(10))} lines)</summary>"
            f"<pre>{html.escape(text)}</pre></details>")
    return nbformat.v4.new_output("display_data", data={"text/html": body, "text/plain": text})


def find_section(page: Page, section: str, item: str) -> str | None:
    """The anchor of the heading of ``page`` that a reviewer-index ``section`` names.

    Exact heading text first; then a heading that starts with the section's text before any "…" or
    ";"; then the first heading that names ``item`` (``Table 23``, ``Supplementary Note 4``).
    """
    heads = page.anchors
    if section in heads:
        return heads[section]
    stem = re.split(r"[…;]", section)[0].strip(" ·:")
    for text, ident in heads.items():
        if stem and text.startswith(stem):
            return ident
    number = item.split()[-1]
    patterns = ([rf"Tables? [\d\-, ]*\b{number}\b", rf"Tables? {number}\b"] if item.startswith("Table")
                else [rf"Supplementary Notes? [\d\-, ]*\b{number}\b", rf"\bSN {number}\b"])
    for pattern in patterns:
        for text, ident in heads.items():
            if re.search(pattern, text):
                return ident
    return None


def index_entries(pages: dict[str, Page], check=None, report_href: str | None = None) -> list[dict]:
    """Tables 1-28 and Supplementary Notes 1-18 with the notebook section that computes each, their
    match / mismatch / not-released counts (from ``check``, the claims check) and links to their rows
    in the claims report (``report_href#anchor``, when the report is on the site)."""
    import pandas as pd  # heavy, optional

    if check is None:
        check = pd.DataFrame(columns=["table", "status"])
    rows = []
    for e in report.index_entries(check):
        if e.item == "Main text":
            continue
        links = []
        for stem in e.notebooks:
            page = pages.get(stem)
            if page is None:
                continue
            anchor = find_section(page, e.section, e.item)
            links.append({"notebook": stem, "href": page.href + (f"#{anchor}" if anchor else ""),
                          "section": e.section})
        report_links = ([{"group": g, "href": f"{report_href}#{report.anchor(g)}"} for g in e.report_groups]
                        if report_href else [])
        rows.append({"item": e.item, "links": links, "counts": e.counts if e.groups and len(check) else None,
                     "report_links": report_links})
    return rows


def claims_check():
    """``data/derived/claims_check.csv`` as text columns (``None`` when it is absent)."""
    import pandas as pd  # heavy, optional

    if not paths.CLAIMS_CHECK.is_file():
        return None
    return pd.read_csv(paths.CLAIMS_CHECK, dtype=str, keep_default_na=False)


def claims_counts() -> dict[str, int] | None:
    """Status counts of ``data/derived/claims_check.csv`` (``None`` when it is absent)."""
    check = claims_check()
    return None if check is None else check["status"].value_counts().to_dict()


def build(out: Path, only: list[str] | None = None, source: Path = paths.NOTEBOOKS) -> list[Path]:
    """Build the site into ``out`` (emptied first) from the notebooks of ``source``; returns the HTML files."""
    out = Path(out)
    if out.exists():
        shutil.rmtree(out)
    (out / "notebooks").mkdir(parents=True)
    pages = {}
    for nb in notebook_paths(only, source):
        print(f"  rendering {nb.name}", flush=True)
        pages[nb.stem] = render_notebook(nb, out / "notebooks")
    for folder in (paths.DERIVED, paths.FIGURES):
        target = out / folder.relative_to(paths.ROOT)
        target.mkdir(parents=True, exist_ok=True)
        for f in sorted(folder.glob("*")):
            if f.suffix in (".csv", ".png", ".pdf", ".html"):
                shutil.copy2(f, target / f.name)
    report_href = None
    if CLAIMS_REPORT.is_file():
        shutil.copy2(CLAIMS_REPORT, out / "claims_report.html")
        report_href = "claims_report.html"
    figures = sorted(p.name for p in paths.FIGURES.glob("*.png"))
    env = jinja2.Environment(loader=jinja2.FileSystemLoader(TEMPLATES), autoescape=True)
    page = env.get_template("site_index.html.j2").render(
        pages=list(pages.values()), entries=index_entries(pages, claims_check(), report_href), report_href=report_href,
        counts=claims_counts(), figures=figures)
    (out / "index.html").write_text(page, encoding="utf-8")
    return sorted(out.rglob("*.html"))


def check_links(site: Path) -> list[str]:
    """Every local ``href``/``src`` of every HTML page of ``site`` that does not resolve: a missing
    file, or a ``#fragment`` with no such id in its page. External and ``data:`` links are skipped."""
    site = Path(site).resolve()
    parsed: dict[Path, _Collector] = {}

    def page(p: Path) -> _Collector:
        if p not in parsed:
            parsed[p] = parse_page(p)
        return parsed[p]

    problems = []
    for f in sorted(site.rglob("*.html")):
        for attr, value in page(f).links:
            parts = urlsplit(value)
            if parts.scheme or value.startswith(("//", "data:", "mailto:", "javascript:")):
                continue
            target = (f.parent / unquote(parts.path)).resolve() if parts.path else f
            where = f"{f.relative_to(site)}: {attr}={value}"
            if site not in target.parents and target != site:
                problems.append(f"{where} points outside the site")
            elif not target.exists():
                problems.append(f"{where}: no such file")
            elif (parts.fragment and target.suffix == ".html"  # browsers try the fragment as written, then decoded
                  and not {parts.fragment, unquote(parts.fragment)} & page(target).ids):
                problems.append(f"{where}: no anchor #{parts.fragment}")
    return problems


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m analysis.site", description=__doc__.splitlines()[0])
    ap.add_argument("--out", default=str(paths.ROOT / "_site"), help="output folder (emptied first; default _site)")
    ap.add_argument("--notebooks", nargs="*", metavar="NN", help="only these notebooks (default: all)")
    ap.add_argument("--source", default=str(paths.NOTEBOOKS),
                    help="folder of the executed notebooks (default notebooks/)")
    ap.add_argument("--no-check", action="store_true", help="skip the link check")
    a = ap.parse_args(argv)
    written = build(Path(a.out), a.notebooks, Path(a.source))
    if not a.no_check:
        problems = check_links(Path(a.out))
        if problems:
            print("broken links:\n  " + "\n  ".join(problems[:50]), file=sys.stderr)
            return 1
    print(f"site: {len(written)} pages in {a.out}" + ("" if a.no_check else " (every local link resolves)"))
    return 0


if __name__ == "__main__":
    sys.exit(main())
