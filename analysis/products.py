"""The claims each notebook computed, as it computed them (issue 21: each number made once).

A notebook that computes claims (:data:`NOTEBOOK_OF`) ends its claims cell with
``products.write(study, values, output_dir)``: one tidy CSV per study,
``<output_dir>/.cache/products/<study>.csv``, with the columns :data:`COLUMNS`, one row per claim:

* ``value``: the float as Python writes it back exactly (``repr``), empty when there is none;
* ``not_released``: what is missing when the claim's inputs are not public;
* ``key``: the content key of the notebook run that made it (:func:`analysis.stamps.notebook_key`,
  handed to the kernel by the build in :data:`KEY_VARIABLE`; empty for a notebook run by hand).

The claims check (:mod:`analysis.claims`) reads a product when its key equals the key of the
notebook at its default parameters, and recomputes that study otherwise. The products are
git-ignored: they hold every bit of each float, which depends on the BLAS kernel; what is tracked
is the claims check, written at the paper's precision.
"""
from __future__ import annotations

import csv
import io
import math
import os
from pathlib import Path

from . import paths
from .notebook import TRACKED
from .records import NotReleased

#: study -> the notebook that computes and shows its claims
NOTEBOOK_OF = {
    "population": "01_population",
    "battery": "04_references",
    "representation": "05_representation_control",
    "uci": "06_uci_real_records",
    "supplement": "07_supplement_tables",
}
#: the environment variable through which the build gives a notebook's kernel the key of its run
KEY_VARIABLE = "PROXY_AUDIT_PRODUCT_KEY"
COLUMNS = ["claim_id", "value", "not_released", "key"]


class ProductError(ValueError):
    """A product that cannot be read back (wrong columns, two keys, an unreadable value)."""


def folder(output_dir: str | Path = TRACKED) -> Path:
    """Where the products of ``output_dir`` go (relative paths are relative to ``notebooks/``)."""
    return (paths.NOTEBOOKS / output_dir).resolve() / ".cache" / "products"


def path_of(study: str, output_dir: str | Path = TRACKED) -> Path:
    if study not in NOTEBOOK_OF:
        raise ProductError(f"unknown study {study!r}; the studies are {', '.join(NOTEBOOK_OF)}")
    return folder(output_dir) / f"{study}.csv"


def _value_text(value: object) -> tuple[str, str]:
    if isinstance(value, NotReleased):
        return "", value.missing or " "
    if value is None:
        return "", ""
    return repr(float(value)), ""


def to_csv(values: dict[str, object], key: str) -> str:
    """The product's text.

    >>> print(to_csv({"T1.a": 0.1 + 0.2, "T1.b": NotReleased("the records")}, "k"), end="")
    claim_id,value,not_released,key
    T1.a,0.30000000000000004,,k
    T1.b,,the records,k
    """
    out = io.StringIO()
    w = csv.writer(out, lineterminator="\n")
    w.writerow(COLUMNS)
    for claim_id, value in values.items():
        w.writerow([claim_id, *_value_text(value), key])
    return out.getvalue()


def from_csv(text: str) -> tuple[str, dict[str, object]]:
    """``(key, values)`` of a product's text; the inverse of :func:`to_csv` (floats bit for bit)."""
    rows = list(csv.reader(io.StringIO(text)))
    if not rows or rows[0] != COLUMNS:
        raise ProductError(f"a claims product has the columns {', '.join(COLUMNS)}")
    keys = {r[3] for r in rows[1:]}
    if len(keys) > 1:
        raise ProductError("a claims product has one key")
    values: dict[str, object] = {}
    for claim_id, value, missing, _ in rows[1:]:
        if missing:
            values[claim_id] = NotReleased(missing.strip())
        elif value:
            values[claim_id] = float(value)
        else:
            values[claim_id] = None
    return (keys.pop() if keys else ""), values


def write(study: str, values: dict[str, object], output_dir: str | Path = TRACKED, key: str | None = None) -> None:
    """Write the product of ``study`` (atomically); ``key`` defaults to the build's :data:`KEY_VARIABLE`.

    Returns nothing, so that a notebook cell ending with it shows no output (no path)."""
    key = os.environ.get(KEY_VARIABLE, "") if key is None else key
    target = path_of(study, output_dir)
    target.parent.mkdir(parents=True, exist_ok=True)
    tmp = target.with_suffix(".part")
    tmp.write_text(to_csv(values, key), encoding="utf-8")
    os.replace(tmp, target)


def read(study: str, output_dir: str | Path = TRACKED) -> tuple[str, dict[str, object]] | None:
    """``(key, values)`` of the product of ``study``, or ``None`` when there is none or it is unreadable."""
    try:
        return from_csv(path_of(study, output_dir).read_text(encoding="utf-8"))
    except (OSError, ProductError, ValueError):
        return None


def same_value(a: object, b: object) -> bool:
    """Equal claim values (NaN equals NaN; not-released values by what is missing)."""
    if isinstance(a, NotReleased) or isinstance(b, NotReleased):
        return isinstance(a, NotReleased) and isinstance(b, NotReleased) and a.missing == b.missing
    if a is None or b is None:
        return a is None and b is None
    return float(a) == float(b) or (math.isnan(float(a)) and math.isnan(float(b)))
