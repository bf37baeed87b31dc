"""The claims registry and the one "paper vs ours" view (STYLE: honest numbers, never typed in).

``data/claims.csv`` holds one row per published number::

    claim_id, table, row, column, quantity, paper_value, tolerance, note

``table`` is ``Table N``, ``Main`` (main-text numbers) or ``SN N`` (numbers quoted only in a
supplementary note). ``paper_value`` is exactly as printed (``+21.2``, ``-1.5``, ``7.7×10^-9``);
``tolerance`` is half a unit of its last printed digit unless ``note`` gives another reason.

:func:`paper_vs_ours` shows registered claims beside reproduced values; every notebook table of
claims goes through it (its parameters carry the real differences between the tables: the extra
digit, the text for a claim whose inputs are not released, the sign of a zero).
"""
from __future__ import annotations

import math
import re
from decimal import Decimal

import pandas as pd

from . import config, paths
from .records import NotReleased
from .tables import number_text, portable

REGISTRY_COLUMNS = ["claim_id", "table", "row", "column", "quantity", "paper_value", "tolerance", "note"]
#: the columns of :func:`paper_vs_ours`
VIEW_COLUMNS = ["claim_id", "table", "row", "column", "paper", "ours", "status", "tolerance", "reproduced_value",
                "note"]

_MINUS = "\u2212"
_SCIENTIFIC = re.compile(r"([+-]?\d+(?:\.\d+)?)\s*[×x]\s*10\^\{?([+-]?\d+)\}?")


def _plain(printed: str) -> str:
    return str(printed).strip().replace(_MINUS, "-").replace(",", "").replace("%", "")


def parse_printed(printed: str) -> float:
    """The float value of a number as printed in the paper.

    >>> parse_printed("+21.2"), parse_printed("\u22121.5"), parse_printed("7.7×10^-9")
    (21.2, -1.5, 7.7e-09)
    """
    s = _plain(printed)
    m = _SCIENTIFIC.fullmatch(s)
    if m:
        return float(f"{m.group(1)}e{int(m.group(2))}")
    return float(s)


def half_unit(printed: str) -> float:
    """Half a unit of the last printed digit (the default tolerance).

    >>> half_unit("+21.2"), half_unit("0.0016"), half_unit("1,200"), half_unit("7.7×10^-9")
    (0.05, 5e-05, 0.5, 5e-11)
    """
    s = _plain(printed)
    m = _SCIENTIFIC.fullmatch(s)
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


def status_of(paper_value: str, tolerance: str, value: object) -> tuple[str, str]:
    """``(status, reproduced_value as text)`` of one claim.

    >>> status_of("+21.2", "0.05", 21.23), status_of("+21.2", "0.05", NotReleased("x"))
    (('match', '21.23'), ('not_released', ''))
    >>> status_of("0.00", "0.005", 1.255e-17), status_of("1.3×10^-11", "5e-13", 1.2473e-11)
    (('match', '0'), ('mismatch', '1.2473e-11'))
    """
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
    # written at the stated precision; a value far below the tolerance is float noise around 0 (config)
    return ("match" if ok else "mismatch"), number_text(v, snap=config.CLAIM_ZERO_SNAP_RATIO * tol)


def printed_decimals(printed: str) -> int:
    """Digits after the decimal point of a printed number (of the mantissa where scientific).

    >>> printed_decimals("+21.2"), printed_decimals("1,200"), printed_decimals("7.7×10^-9"), printed_decimals("2.5%")
    (1, 0, 1, 1)
    """
    s = _plain(printed).split("×")[0]
    return len(s.split(".")[1]) if "." in s else 0


def printed_like(value: object, printed: str, *, extra_digit: bool = False, not_released: str = "n/r",
                 signed_zero: bool = False) -> str:
    """``value`` printed as the paper prints ``printed`` (see :func:`paper_vs_ours` for the options).

    >>> printed_like(21.234, "+21.2"), printed_like(21.234, "+21.2", extra_digit=True)
    ('+21.2', '+21.23')
    >>> printed_like(-0.001, "0.00"), printed_like(-0.001, "0.00", signed_zero=True)
    ('0.00', '-0.00')
    >>> printed_like(-7.7e-17, "0.00", signed_zero=True), printed_like(0.125 + 2e-17, "0.00")
    ('0.00', '0.12')
    >>> printed_like(7.723e-9, "7.7×10^-9", extra_digit=True), printed_like(NotReleased("x"), "1.0")
    ('7.72e-09', 'n/r')
    """
    if isinstance(value, NotReleased):
        return not_released
    if value is None:
        return ""
    plain = _plain(printed)
    decimals = printed_decimals(printed) + (1 if extra_digit else 0)
    if _SCIENTIFIC.fullmatch(plain):  # P values: genuinely tiny, never snapped
        return f"{portable(float(value), snap=0.0):.{decimals + 1}g}"
    v = portable(float(value))  # float noise around 0 and at a rounding half decides no digit or sign
    signed = plain[:1] in "+-"
    text = f"{v:+.{decimals}f}" if signed else f"{v:.{decimals}f}"
    if not signed and not signed_zero and text.startswith("-") and float(text) == 0:
        text = text[1:]
    return text


def paper_vs_ours(values: dict, *, ids=None, table: str | None = None, prefixes=None, extra_digit: bool = False,
                  not_released: str = "n/r", signed_zero: bool = False) -> pd.DataFrame:
    """Registered claims beside our values.

    Parameters
    ----------
    values : dict
        ``claim_id -> float | NotReleased | None`` (a provider's ``claim_values()`` or a subset);
        only registered claims in ``values`` are shown.
    ids : list of str, optional
        Show only these claims, in this order (default: registry order).
    table : str, optional
        Only the claims of one table (``Table 23``, ``Main``, ``SN 14``).
    prefixes : str or tuple of str, optional
        Only claim ids starting with one of these.
    extra_digit : bool
        Print ours one digit beyond the paper's precision (scientific values with one more
        significant digit, in ``e`` notation).
    not_released : str
        What ``ours`` shows for a claim whose inputs are not released.
    signed_zero : bool
        Keep Python's ``-0.0`` where the paper prints an unsigned number; by default a value that
        rounds to zero prints unsigned there, as the paper prints it.

    Returns
    -------
    DataFrame
        Columns :data:`VIEW_COLUMNS`: ``claim_id, table, row, column, paper`` (as printed),
        ``ours`` (as described), ``status`` (:func:`status_of`), ``tolerance``,
        ``reproduced_value`` (the unrounded text of the claims check) and ``note``.
    """
    reg = registry()
    reg = reg[reg["claim_id"].isin(list(values))]
    if table is not None:
        reg = reg[reg["table"] == table]
    if prefixes is not None:
        reg = reg[reg["claim_id"].str.startswith(tuple([prefixes] if isinstance(prefixes, str) else prefixes))]
    if ids is not None:
        present = set(reg["claim_id"])
        reg = reg.set_index("claim_id").loc[[i for i in ids if i in present]].reset_index()
    rows = []
    for rec in reg.to_dict("records"):
        v = values[rec["claim_id"]]
        status, text = status_of(rec["paper_value"], rec["tolerance"], v)
        ours = printed_like(v, rec["paper_value"], extra_digit=extra_digit, not_released=not_released,
                            signed_zero=signed_zero)
        rows.append({"claim_id": rec["claim_id"], "table": rec["table"], "row": rec["row"], "column": rec["column"],
                     "paper": rec["paper_value"], "ours": ours, "status": status, "tolerance": rec["tolerance"],
                     "reproduced_value": text, "note": rec["note"]})
    return pd.DataFrame(rows, columns=VIEW_COLUMNS)


def compare(values: dict[str, object]) -> pd.DataFrame:
    """Paper value beside ours for the claims in ``values`` (in that order), without writing.

    Columns ``claim_id, table, row, column, paper_value, reproduced_value, status``: the
    :func:`paper_vs_ours` view with the check's column names.
    """
    unknown = sorted(set(values) - set(registry()["claim_id"]))
    if unknown:
        raise ValueError(f"claims missing from the registry: {unknown[:10]}")
    view = paper_vs_ours(values, ids=list(values))
    return view[["claim_id", "table", "row", "column", "paper", "reproduced_value", "status"]].rename(
        columns={"paper": "paper_value"})
