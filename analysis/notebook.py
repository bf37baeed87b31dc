"""What the notebooks share: their parameters, their output folders, and how they show results.

* :func:`check_parameters` validates a notebook's parameters cell: an unknown value or an
  impossible combination stops the notebook with one :class:`ParameterError` naming every problem.
* :func:`output_folders` maps the one ``output_dir`` parameter of every notebook to the folders it
  writes: ``<output_dir>/figures`` and ``<output_dir>/data/derived``. ``analysis.build`` (``make
  paper``) passes ``output_dir=".."``, the repository itself, so only the build writes the tracked
  ``figures/`` and ``data/derived/``; a notebook run by hand defaults to the git-ignored scratch
  folder ``out/notebooks/``.
* :func:`claims_table` renders a :func:`analysis.registry.paper_vs_ours` view (the paper's value
  beside ours at the paper's precision, the status coloured); :func:`long_table` shows a long
  table's head with the whole table in a collapsed section; :func:`figure` shows a figure inline.

The rendered objects carry both an HTML form (for readers) and a short text form (``text/plain``),
and neither contains a memory address or a random id, so reruns do not churn the notebooks.
"""
from __future__ import annotations

import hashlib
import html
import io
from dataclasses import dataclass
from pathlib import Path

import pandas as pd

from . import paths
from .tables import FLOAT_FORMAT, portable_frame

#: where a notebook run by hand writes (relative to ``notebooks/``; ``out/`` is git-ignored)
SCRATCH = "../out/notebooks"
#: what ``analysis.build`` passes: the repository root, i.e. the tracked figures/ and data/derived/
TRACKED = ".."

STATUS_COLOURS = {"match": "#d5f5e3", "mismatch": "#fadbd8", "not_released": "#eaecee", "not_computed": "#fdebd0"}


class ParameterError(ValueError):
    """A notebook parameter has an unknown value, or a combination of parameters is impossible."""


def check_parameters(*, choices: dict | None = None, counts: dict | None = None,
                     rules: list[tuple[bool, str]] | tuple = ()) -> None:
    """Validate a parameters cell; raise one :class:`ParameterError` listing every problem.

    ``choices``: ``name -> (value, allowed values)``; ``counts``: ``name -> value`` that must be a
    positive integer; ``rules``: ``(condition, message)`` pairs, the message shown when the
    condition is false (an impossible combination).

    >>> check_parameters(choices={"model": ("sonnet", ("sonnet", "gpt"))}, counts={"draws": 10})
    >>> check_parameters(choices={"model": ("claude", ("sonnet", "gpt"))}, counts={"draws": 0})
    Traceback (most recent call last):
    ...
    analysis.notebook.ParameterError: model='claude' is not one of 'sonnet', 'gpt'; draws=0 must be a positive integer
    """
    problems = []
    for name, (value, allowed) in (choices or {}).items():
        if value not in allowed:
            problems.append(f"{name}={value!r} is not one of {', '.join(map(repr, allowed))}")
    for name, value in (counts or {}).items():
        if isinstance(value, bool) or not isinstance(value, int) or value < 1:
            problems.append(f"{name}={value!r} must be a positive integer")
    problems += [message for ok, message in rules if not ok]
    if problems:
        raise ParameterError("; ".join(problems))


@dataclass(frozen=True)
class Folders:
    """The folders a notebook writes: ``figures`` and ``derived`` (both created)."""

    figures: Path
    derived: Path

    def show(self, path: Path) -> str:
        """``path`` as printed in a notebook: relative to the repository when inside it, never absolute."""
        try:
            return str(Path(path).resolve().relative_to(paths.ROOT))
        except ValueError:
            return Path(path).name


def output_folders(output_dir: str | Path) -> Folders:
    """The folders of ``output_dir`` (relative paths are relative to ``notebooks/``).

    >>> f = output_folders(TRACKED)
    >>> f.figures == paths.FIGURES and f.derived == paths.DERIVED
    True
    """
    root = (paths.NOTEBOOKS / output_dir).resolve()
    folders = Folders(root / "figures", root / "data" / "derived")
    folders.figures.mkdir(parents=True, exist_ok=True)
    folders.derived.mkdir(parents=True, exist_ok=True)
    return folders


class Rendered:
    """An HTML table for readers with a short text form for the notebook's text output."""

    def __init__(self, html_text: str, text: str):
        self.html, self.text = html_text, text

    def _repr_html_(self) -> str:
        return self.html

    def __repr__(self) -> str:
        return self.text


def _styled(df: pd.DataFrame, caption: str | None = None, digits: int | None = None) -> str:
    # the element ids are derived from the content: stable across reruns, distinct between tables of a page;
    # content and ids at the stated precision, so that no kernel's last bits show (analysis.tables)
    df = portable_frame(df)
    uid = hashlib.sha1(df.to_csv(float_format=FLOAT_FORMAT).encode("utf-8")).hexdigest()[:10]
    styler = df.style.hide(axis="index").set_uuid(uid).format(precision=2 if digits is None else digits, na_rep="—")
    if "status" in df.columns:
        styler = styler.map(lambda s: f"background-color: {STATUS_COLOURS.get(str(s).split(':')[0], 'white')}",
                            subset=["status"])
    if caption:
        styler = styler.set_caption(html.escape(caption))
    styler = styler.set_table_styles([{"selector": "th, td", "props": "text-align: left; padding: 2px 8px;"}])
    return styler.to_html()


def status_line(view: pd.DataFrame) -> str:
    """``"12 claims: 11 match, 1 mismatch"`` for a ``paper_vs_ours`` view."""
    counts = view["status"].str.split(":").str[0].value_counts()
    parts = ", ".join(f"{counts[s]} {s.replace('_', ' ')}" for s in STATUS_COLOURS if s in counts)
    return f"{len(view)} claims: {parts}" if len(view) else "no claims"


def claims_table(view: pd.DataFrame, caption: str | None = None, *, max_rows: int = 30,
                 csv: str | None = None) -> Rendered:
    """Render a ``paper_vs_ours`` view: row, column, the paper's value, ours, coloured status, note.

    Views longer than ``max_rows`` are summarised: the rows that do not match are shown, and the
    whole view is in a collapsed ``<details>`` section (and at ``csv``, when given).
    """
    cols = [c for c in ("row", "column", "paper", "ours", "status", "note") if c in view.columns]
    shown = view[cols].copy()
    if "note" in shown:
        shown["note"] = shown["note"].where(shown["status"] != "match", "")
    summary = status_line(view)
    head = f"<p><b>{html.escape(caption)}</b> — {summary}</p>" if caption else f"<p>{summary}</p>"
    if len(shown) <= max_rows:
        body = _styled(shown)
    else:
        off = shown[shown["status"] != "match"]
        body = (_styled(off) if len(off) else "<p>every claim matches</p>") + _details(shown, csv)
    return Rendered(head + body, (f"{caption}: " if caption else "") + summary)


def _details(df: pd.DataFrame, csv: str | None, digits: int | None = None) -> str:
    link = f' (also in <a href="{html.escape(csv)}"><code>{html.escape(csv)}</code></a>)' if csv else ""
    return f"<details><summary>all {len(df)} rows{link}</summary>{_styled(df, digits=digits)}</details>"


def long_table(df: pd.DataFrame, caption: str | None = None, *, head: int = 12, csv: str | None = None,
               digits: int | None = 2) -> Rendered:
    """A table for readers: all of it when short, else its first ``head`` rows and the rest collapsed."""
    title = f"<p><b>{html.escape(caption)}</b> ({len(df)} rows)</p>" if caption else ""
    if len(df) <= head:
        body = _styled(df, digits=digits)
    else:
        body = _styled(df.head(head), digits=digits) + _details(df, csv, digits)
    return Rendered(title + body, f"{caption or 'table'}: {len(df)} rows × {df.shape[1]} columns")


class Figure:
    """A matplotlib figure shown inline as PNG (no date in its metadata), with a one-line text form."""

    def __init__(self, fig, caption: str = ""):
        self.fig, self.caption = fig, caption

    def _repr_png_(self) -> bytes:
        buf = io.BytesIO()
        self.fig.savefig(buf, format="png", dpi=110, bbox_inches="tight", metadata={"Software": None})
        return buf.getvalue()

    def __repr__(self) -> str:
        return f"[figure: {self.caption}]" if self.caption else "[figure]"


def figure(fig, caption: str = "") -> Figure:
    """Show ``fig`` inline: make it the last expression of a cell (``notebook.figure(fig, "Fig. 2")``)."""
    return Figure(fig, caption)


def save_figure(fig, name: str, folders: Folders) -> str:
    """Save ``fig`` as PNG and PDF into ``folders.figures``; returns the printed location."""
    for ext, meta in (("png", {"Software": None}), ("pdf", {"CreationDate": None, "Producer": None})):
        fig.savefig(folders.figures / f"{name}.{ext}", metadata=meta)  # no dates: reruns do not churn
    return folders.show(folders.figures / name) + ".{png,pdf}"
