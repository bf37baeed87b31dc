"""Numbers as the compendium writes them: the same bytes on every CPU, BLAS kernel and thread count.

Every tracked derived file goes through :func:`write_derived`, every number written as text through
:func:`number_text`: floats are rounded to ``config.DERIVED_SIGNIFICANT_DIGITS`` significant digits
and values with ``|x| < config.ZERO_SNAP`` are written as 0 (float noise around an exact zero has a
sign and a size that depend on the kernel). P values, which are genuinely tiny, are kept where a
writer names their columns (``keep_small``). The reasons are beside the constants in
:mod:`analysis.config`.
"""
from __future__ import annotations

import math
from pathlib import Path

import numpy as np
import pandas as pd

from . import config

#: the ``float_format`` of every derived CSV
FLOAT_FORMAT = f"%.{config.DERIVED_SIGNIFICANT_DIGITS}g"


def portable(value: float, *, snap: float = config.ZERO_SNAP,
             digits: int = config.DERIVED_SIGNIFICANT_DIGITS) -> float:
    """``value`` at ``digits`` significant digits, 0.0 where ``|value| < snap`` (NaN and inf kept).

    >>> portable(1.2554309e-17), portable(-7.7e-17), portable(22.222222222222221), portable(2.67e-13, snap=0)
    (0.0, 0.0, 22.222222, 2.67e-13)
    """
    v = float(value)
    if not math.isfinite(v):
        return v
    if abs(v) < snap:
        return 0.0
    return float(f"{v:.{digits}g}") + 0.0  # + 0.0: no "-0"


def number_text(value: float, *, snap: float = config.ZERO_SNAP) -> str:
    """A float as text at the stated precision (``-0`` written ``0``).

    >>> number_text(1.01010101010101), number_text(-3.29e-17), number_text(float("nan")), number_text(1.2473e-11, snap=0)
    ('1.010101', '0', 'nan', '1.2473e-11')
    """
    return f"{portable(value, snap=snap):.{config.DERIVED_SIGNIFICANT_DIGITS}g}"


def portable_frame(df: pd.DataFrame, keep_small: tuple[str, ...] = ()) -> pd.DataFrame:
    """A copy of ``df`` whose float columns are :func:`portable` (``keep_small`` columns not snapped).

    >>> portable_frame(pd.DataFrame({"r": [1.255e-17, 0.4], "p": [2.7e-13, 0.5]}), keep_small=("p",)).to_dict("list")
    {'r': [0.0, 0.4], 'p': [2.7e-13, 0.5]}
    """
    unknown = set(keep_small) - set(df.columns)
    if unknown:
        raise KeyError(f"keep_small names columns the table lacks: {sorted(unknown)}")
    out = df.copy()
    for col in out.columns:
        if pd.api.types.is_float_dtype(out[col].dtype):
            snap = 0.0 if col in keep_small else config.ZERO_SNAP
            out[col] = np.array([portable(v, snap=snap) for v in out[col].to_numpy()], dtype=float)
        elif out[col].dtype == object:
            snap = 0.0 if col in keep_small else config.ZERO_SNAP
            out[col] = [portable(v, snap=snap) if isinstance(v, (float, np.floating)) else v for v in out[col]]
    return out


def portable_tree(obj, keep_small: tuple[str, ...] = ()):
    """A JSON-like tree (dicts, lists, numbers; :func:`analysis.jsonable.jsonable` output) with every
    float :func:`portable`; floats under a key in ``keep_small`` (P values) are rounded, not snapped.

    >>> portable_tree({"alpha": 21.500032170000004, "r": [1e-17, 0.4], "p_value": 3e-15}, keep_small=("p_value",))
    {'alpha': 21.500032, 'r': [0.0, 0.4], 'p_value': 3e-15}
    """
    def walk(x, small: bool):
        if isinstance(x, dict):
            return {k: walk(v, small or k in keep_small) for k, v in x.items()}
        if isinstance(x, list):
            return [walk(v, small) for v in x]
        if isinstance(x, float):
            return portable(x, snap=0.0 if small else config.ZERO_SNAP)
        return x

    return walk(obj, False)


def write_derived(df: pd.DataFrame, path: str | Path, *, keep_small: tuple[str, ...] = (),
                  index: bool = False) -> None:
    """Write ``df`` as a portable CSV: :func:`portable_frame`, ``FLOAT_FORMAT``, ``\\n`` line ends.

    Returns nothing, so that a notebook cell ending in this call shows no path of the machine it ran on.
    """
    table = portable_frame(df, keep_small)
    table.to_csv(Path(path), index=index, float_format=FLOAT_FORMAT, lineterminator="\n")
