"""One JSON cleaner (analysis.jsonable)."""
from __future__ import annotations

import dataclasses
import json
from pathlib import Path

import numpy as np
import pandas as pd

from analysis.jsonable import jsonable


@dataclasses.dataclass(frozen=True)
class _Row:
    x: float
    ci: tuple


def test_everything_becomes_strict_json():
    obj = {"nan": float("nan"), "inf": np.float64(np.inf), "-inf": -np.inf, "i": np.int64(3), "b": np.bool_(True),
           "t": (1, 2.5), "arr": np.array([[1.0, np.nan]]), "path": Path("/tmp/x"), "row": _Row(np.float32(0.5), (1,)),
           3: {"nested": [np.float64(1.25), None, "s"]}, "idx": pd.Index([1, 2]), "s": pd.Series({"a": 1.0}),
           "set": {2, 1}}
    out = jsonable(obj)
    text = json.dumps(out, allow_nan=False)  # raises on any NaN/inf left
    assert json.loads(text) == {
        "nan": None, "inf": None, "-inf": None, "i": 3, "b": True, "t": [1, 2.5], "arr": [[1.0, None]],
        "path": "/tmp/x", "row": {"x": 0.5, "ci": [1]}, "3": {"nested": [1.25, None, "s"]}, "idx": [1, 2],
        "s": {"a": 1.0}, "set": [1, 2]}
    assert type(out["i"]) is int and type(out["b"]) is bool and type(out["row"]["x"]) is float


def test_plain_values_pass_through():
    assert jsonable("x") == "x" and jsonable(None) is None and jsonable(2) == 2 and jsonable([True]) == [True]
