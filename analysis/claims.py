"""The claims registry: every published number beside ours.

``data/claims.csv`` holds one row per published number::

    claim_id, table, row, column, quantity, paper_value, tolerance, note

``table`` is ``Table N``, ``Main`` (main-text numbers) or ``SN N`` (numbers quoted only in a
supplementary note). ``paper_value`` is exactly as printed (``+21.2``, ``−1.5``, ``7.7×10^-9``);
``tolerance`` is half a unit of its last printed digit unless ``note`` gives another reason.

Reproduced values come from *providers*: modules listed in :data:`PROVIDERS`, each with a
function ``claim_values() -> dict[claim_id, float | NotReleased]`` that computes them from the
released records and our own population. Nothing here types a value in.

:func:`check` writes ``data/derived/claims_check.csv`` with the registry columns plus
``reproduced_value, status, notebook``; ``status`` is ``match``, ``mismatch``, ``not_released`` (the
inputs are not public; ``note`` names what is missing) or ``not_computed`` (a registry row no
provider computes, which the tests treat as a defect).
"""
from __future__ import annotations

import importlib
import math
import re
from decimal import Decimal

import pandas as pd

from . import paths

#: modules that compute claims (one per stage; see each module's ``claim_values``)
PROVIDERS = (
    "analysis.population",
    "analysis.battery",
    "analysis.representation",
    "analysis.uci",
    "analysis.supplement",
)

REGISTRY_COLUMNS = ["claim_id", "table", "row", "column", "quantity", "paper_value", "tolerance", "note"]
CHECK_COLUMNS = REGISTRY_COLUMNS + ["reproduced_value", "status", "notebook"]
STATUSES = ("match", "mismatch", "not_released", "not_computed")


class NotReleased:
    """A claim whose inputs are not public; ``missing`` names what is missing."""

    def __init__(self, missing: str):
        self.missing = missing

    def __repr__(self) -> str:  # pragma: no cover
        return f"NotReleased({self.missing!r})"


_MINUS = "\u2212"


def parse_printed(printed: str) -> float:
    """The float value of a number as printed in the paper.

    >>> parse_printed("+21.2"), parse_printed("\u22121.5"), parse_printed("7.7×10^-9")
    (21.2, -1.5, 7.7e-09)
    """
    s = str(printed).strip().replace(_MINUS, "-").replace(",", "").replace("%", "")
    m = re.fullmatch(r"([+-]?\d+(?:\.\d+)?)\s*[×x]\s*10\^\{?([+-]?\d+)\}?", s)
    if m:
        return float(f"{m.group(1)}e{int(m.group(2))}")
    return float(s)


def half_unit(printed: str) -> float:
    """Half a unit of the last printed digit (the default tolerance).

    >>> half_unit("+21.2"), half_unit("0.0016"), half_unit("1,200"), half_unit("7.7×10^-9")
    (0.05, 5e-05, 0.5, 5e-11)
    """
    s = str(printed).strip().replace(_MINUS, "-").replace(",", "").replace("%", "")
    m = re.fullmatch(r"([+-]?\d+(?:\.\d+)?)\s*[×x]\s*10\^\{?([+-]?\d+)\}?", s)
    exp = 0
    if m:
        s, exp = m.group(1), int(m.group(2))
    decimals = -Decimal(s).as_tuple().exponent
    return float(f"5e{exp - decimals - 1}")


def registry() -> pd.DataFrame:
    """The claims registry as a DataFrame (strings kept as printed)."""
    df = pd.read_csv(paths.CLAIMS_REGISTRY, dtype=str, keep_default_na=False)
    missing = [c for c in REGISTRY_COLUMNS if c not in df.columns]
    if missing:
        raise ValueError(f"{paths.CLAIMS_REGISTRY}: missing columns {missing}")
    dup = df["claim_id"][df["claim_id"].duplicated()].tolist()
    if dup:
        raise ValueError(f"{paths.CLAIMS_REGISTRY}: duplicated claim_id {dup[:5]}")
    return df[REGISTRY_COLUMNS]


#: the notebook that computes and shows each provider's claims
NOTEBOOK_OF = {
    "analysis.population": "01_population",
    "analysis.battery": "04_references",
    "analysis.representation": "05_representation_control",
    "analysis.uci": "06_uci_real_records",
    "analysis.supplement": "07_supplement_tables",
}
#: claim_id -> provider module, filled by :func:`compute_all`
PROVIDER_OF: dict[str, str] = {}


def compute_all(providers: tuple[str, ...] = PROVIDERS) -> dict[str, object]:
    """Call every provider's ``claim_values()`` and merge the results."""
    values: dict[str, object] = {}
    for mod_name in providers:
        mod = importlib.import_module(mod_name)
        got = mod.claim_values()
        PROVIDER_OF.update({cid: mod_name for cid in got})
        clash = set(got) & set(values)
        if clash:
            raise ValueError(f"{mod_name} computes claims already computed elsewhere: {sorted(clash)[:5]}")
        values.update(got)
    return values


def status_of(paper_value: str, tolerance: str, value: object) -> tuple[str, str]:
    """``(status, reproduced_value as text)`` of one claim."""
    if isinstance(value, NotReleased):
        return "not_released", ""
    if value is None:
        return "not_computed", ""
    v = float(value)
    if math.isnan(v):
        return "mismatch", "nan"
    target = parse_printed(paper_value)
    tol = float(tolerance)
    ok = abs(v - target) <= tol * (1 + 1e-9)  # relative slack only: tolerances reach 1e-13 for P values
    return ("match" if ok else "mismatch"), f"{v:.10g}"


def check(values: dict[str, object] | None = None, write: bool = True) -> pd.DataFrame:
    """Compare every registry row with its reproduced value; write ``claims_check.csv``."""
    reg = registry()
    values = compute_all() if values is None else values
    unknown = sorted(set(values) - set(reg["claim_id"]))
    if unknown:
        raise ValueError(f"providers computed claims missing from the registry: {unknown[:10]}")
    rows = []
    for rec in reg.to_dict("records"):
        value = values.get(rec["claim_id"])
        status, text = status_of(rec["paper_value"], rec["tolerance"], value)
        note = rec["note"]
        if isinstance(value, NotReleased) and value.missing not in note:
            note = (note + "; " if note else "") + f"not released: {value.missing}"
        notebook = NOTEBOOK_OF.get(PROVIDER_OF.get(rec["claim_id"], ""), "")
        rows.append({**rec, "note": note, "reproduced_value": text, "status": status, "notebook": notebook})
    out = pd.DataFrame(rows, columns=CHECK_COLUMNS)
    if write:
        paths.DERIVED.mkdir(parents=True, exist_ok=True)
        out.to_csv(paths.CLAIMS_CHECK, index=False)
    return out


def summary(check_df: pd.DataFrame) -> pd.Series:
    """Counts per status."""
    return check_df["status"].value_counts().reindex(list(STATUSES), fill_value=0)


def table_view(check_df: pd.DataFrame, table: str) -> pd.DataFrame:
    """The rows of one table (``Table 6``, ``Main``, ``SN 14``) for display in a notebook."""
    sub = check_df[check_df["table"] == table]
    return sub[["row", "column", "paper_value", "reproduced_value", "status", "note"]].reset_index(drop=True)


def compare(values: dict[str, object]) -> pd.DataFrame:
    """Paper value beside ours for a subset of claims (those in ``values``), without writing.

    Columns ``claim_id, table, row, column, paper_value, reproduced_value, status``; used by the
    notebooks to print each table's claims.
    """
    reg = registry().set_index("claim_id")
    unknown = sorted(set(values) - set(reg.index))
    if unknown:
        raise ValueError(f"claims missing from the registry: {unknown[:10]}")
    rows = []
    for cid, value in values.items():
        rec = reg.loc[cid]
        status, text = status_of(rec["paper_value"], rec["tolerance"], value)
        rows.append({"claim_id": cid, "table": rec["table"], "row": rec["row"], "column": rec["column"],
                     "paper_value": rec["paper_value"], "reproduced_value": text, "status": status})
    return pd.DataFrame(rows)
