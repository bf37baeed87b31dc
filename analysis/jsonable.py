"""One JSON cleaner for every JSON the compendium writes (audit cards, references, records).

:func:`jsonable` turns a nested structure into values :func:`json.dumps` accepts without
``allow_nan``: NaN and infinities become ``None``, numpy scalars and arrays become Python
numbers and lists, tuples and sets become lists, dataclasses become dicts, paths become strings,
pandas indexes and series become lists (and dicts for series).
"""
from __future__ import annotations

import dataclasses
import math
from pathlib import PurePath

import numpy as np
import pandas as pd


def jsonable(obj):
    """A JSON-safe copy of ``obj``.

    >>> jsonable({"a": float("nan"), "b": (1, np.int64(2)), "c": np.array([0.5, np.inf])})
    {'a': None, 'b': [1, 2], 'c': [0.5, None]}
    """
    if obj is None or isinstance(obj, str):
        return obj
    if isinstance(obj, (bool, np.bool_)):
        return bool(obj)
    if isinstance(obj, (int, np.integer)):
        return int(obj)
    if isinstance(obj, (float, np.floating)):
        v = float(obj)
        return v if math.isfinite(v) else None
    if isinstance(obj, dict):
        return {str(k): jsonable(v) for k, v in obj.items()}
    if dataclasses.is_dataclass(obj) and not isinstance(obj, type):
        return {f.name: jsonable(getattr(obj, f.name)) for f in dataclasses.fields(obj)}
    if isinstance(obj, PurePath):
        return str(obj)
    if isinstance(obj, np.ndarray):
        return [jsonable(v) for v in obj.tolist()]
    if isinstance(obj, pd.Series):
        return {str(k): jsonable(v) for k, v in obj.items()}
    if isinstance(obj, (list, tuple, set, frozenset, pd.Index)):
        items = sorted(obj, key=repr) if isinstance(obj, (set, frozenset)) else obj
        return [jsonable(v) for v in items]
    if isinstance(obj, np.generic):
        return jsonable(obj.item())
    return obj
