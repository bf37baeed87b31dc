"""Released per-call records: where each (model, cell) lives in the release, and loading it.

Records use the released schema ``arm, pair_id, i, j, order, patient, chosen, picked_i``
(spec PROTOCOL-synthetic §7). Missing answers are NaN. Sonnet per-arm files are concatenated
with the arm taken from the file name; Sonnet first-generation no-example files (``expK_g1_*``)
have no ``patient``/``chosen`` columns, which are then derived from ``picked_i``.
"""
from __future__ import annotations

import functools
import re

import numpy as np
import pandas as pd

from . import config, data
from .cells import Cell, expect_cell, parse_cell
from .population import pairs

RECORD_COLUMNS = ["arm", "pair_id", "i", "j", "order", "patient", "chosen", "picked_i"]
SONNET_DIR = "data/raw_records/claude-sonnet-4-5"


class NotReleased(LookupError):
    """Inputs that are not in the release; ``missing`` says what is missing.

    Raised when released files are absent, and also used as a value: a claim whose inputs are
    not public is ``NotReleased(missing)`` in a provider's ``claim_values()`` (the claims check
    gives it the status ``not_released`` and adds ``missing`` to the note).

    >>> v = NotReleased("the Sonnet regeneration records")
    >>> v.missing, str(v), isinstance(v, LookupError)
    ('the Sonnet regeneration records', 'the Sonnet regeneration records', True)
    """

    def __init__(self, missing: str):
        super().__init__(missing)
        self.missing = str(missing)

    def __str__(self) -> str:
        return self.missing

    def __repr__(self) -> str:
        return f"NotReleased({self.missing!r})"

    def __eq__(self, other: object) -> bool:
        return isinstance(other, NotReleased) and other.missing == self.missing

    def __hash__(self) -> int:
        return hash(("NotReleased", self.missing))


def _exists(name: str) -> bool:
    return name in data.registry().index


def _per_arm(prefix: str) -> list[str]:
    return [f"{prefix}_{arm}_records.csv" for arm in config.ARMS]


def record_files(model: str, cell: Cell, run: str | None = None) -> list[str]:
    """Registry names of the released records of ``model`` (sonnet/deepseek/qwen/gpt) in ``cell``.

    ``run`` selects GPT's repeated measurement (``"a"`` or ``"b"``). Raises :class:`NotReleased`.
    """
    cell = expect_cell(cell)
    if model not in config.MODELS:
        raise KeyError(f"unknown model {model!r}; expected one of {sorted(config.MODELS)}")
    folder = config.MODELS[model][1]
    candidates: list[list[str]] = []
    if run is not None:
        candidates.append([f"data/raw_records/{folder}/repeated_measurement/run_{run}/{cell.id}_records.csv"])
    elif model == "sonnet":
        base = Cell(cell.k, cell.corner, cell.names, cell.examples, cell.proxies, cell.sweep_beta, cell.seed)
        if cell.example_corner and cell.example_corner != cell.corner:
            candidates.append(_per_arm(f"{SONNET_DIR}/coupling/expK_cpl_k{cell.k}_{cell.example_corner}"))
        elif cell.n_examples != config.N_EXAMPLES:
            candidates.append(_per_arm(f"{SONNET_DIR}/dcal_sweep/expK_dcal_n{cell.n_examples}"))
        elif cell.example_corr is not None:
            tag = f"r{round(cell.example_corr * 100):02d}"
            candidates.append(_per_arm(f"{SONNET_DIR}/mechanism/expK_mech_{tag}_{cell.names}"))
        else:
            candidates.append([f"data/canonical/claude-sonnet-4-5/{base.id}_records.csv"])
            if cell.corner == "HH":
                candidates.append(_per_arm(f"{SONNET_DIR}/dimension_by_structure/expK_xstr_k{cell.k}_HH_"
                                           f"{cell.names}_{cell.examples}"))
            if not cell.has_examples:
                candidates.append([f"{SONNET_DIR}/expK_g1_k{cell.k}_{cell.proxies}_{cell.names}_records.csv"])
    else:
        sub = "seed_replication/" if cell.seed is not None else ""
        candidates.append([f"data/raw_records/{folder}/{sub}{cell.id}_records.csv"])
    for names in candidates:
        if all(_exists(n) for n in names):
            return names
    what = f"run {run} of " if run else ""
    raise NotReleased(f"per-call records of {what}{config.MODELS[model][0]} in cell {cell.id} are not in the release "
                      f"(looked for {candidates[0][0]}{' and others' if len(candidates) > 1 else ''})")


def _read(name: str, arm_from_name: str | None) -> pd.DataFrame:
    df = data.read_csv(name)
    if arm_from_name is not None:
        df["arm"] = arm_from_name
    return df


def _pair_ids(df: pd.DataFrame, cell: "Cell | None" = None) -> pd.Series:
    """Integer pair ids. Some released files write ``pair_id`` as ``i_j`` or ``p_i_j`` for part of
    their rows (the ``p`` there is the stratum, not the pair); those take the id that the same ``(i, j)``
    has in the file's numeric rows, or else (given ``cell``) its id among our pairs of that cell."""
    raw = df["pair_id"].astype(str).str.strip()
    numeric = pd.to_numeric(raw, errors="coerce")
    if numeric.isna().any():
        known = pd.Series(numeric.to_numpy(), index=pd.MultiIndex.from_arrays([df["i"], df["j"]]))
        known = known.dropna().groupby(level=[0, 1]).first()
        keys = pd.MultiIndex.from_arrays([df["i"], df["j"]])
        numeric = numeric.fillna(pd.Series(known.reindex(keys).to_numpy(), index=df.index))
    if numeric.isna().any() and cell is not None:
        ours = pairs(cell).set_index(["i", "j"])["pair_id"]
        keys = pd.MultiIndex.from_arrays([df["i"], df["j"]])
        numeric = numeric.fillna(pd.Series(ours.reindex(keys).to_numpy(dtype=float), index=df.index))
    if numeric.isna().any():
        bad = raw[numeric.isna()].iloc[0]
        raise ValueError(f"pair_id {bad!r} cannot be resolved to a numeric pair id")
    return numeric.astype(int)


def normalise(df: pd.DataFrame, cell: "Cell | None" = None) -> pd.DataFrame:
    """Bring a records frame to the released schema with numeric (float, NaN = missing) answers."""
    df = df.copy()
    order = df["order"].astype(str).str.strip()
    codes = {"0": 0, "1": 1, "0.0": 0, "1.0": 1, "ij": 0, "ji": 1}
    if set(order.unique()) <= {"1", "2"}:
        codes = {"1": 0, "2": 1}
    df["order"] = order.map(codes).astype(int)
    for col in ("i", "j"):
        df[col] = df[col].astype(int)
    df["pair_id"] = _pair_ids(df, cell)
    for col in ("patient", "chosen", "picked_i"):
        if col in df:
            df[col] = pd.to_numeric(df[col], errors="coerce").astype(float)
    if "patient" not in df:  # first-generation files: derive the shown answer from picked_i
        first = np.where(df["order"] == 0, df["i"], df["j"])
        chosen = np.where(df["picked_i"] == 1, df["i"], np.where(df["picked_i"] == 0, df["j"], np.nan))
        df["chosen"] = chosen.astype(float)
        df["patient"] = np.where(np.isnan(chosen), np.nan, np.where(chosen == first, 1.0, 2.0))
    extra = [c for c in df.columns if c not in RECORD_COLUMNS]
    return df[RECORD_COLUMNS + extra].reset_index(drop=True)


@functools.lru_cache(maxsize=512)
def _load(model: str, cell: Cell, run: str | None) -> pd.DataFrame:
    names = record_files(model, cell, run)
    if len(names) == 1:
        df = _read(names[0], None)
    else:
        df = pd.concat([_read(n, arm) for n, arm in zip(names, config.ARMS)], ignore_index=True)
    return normalise(df, cell)


def load_records(model: str, cell: Cell, run: str | None = None) -> pd.DataFrame:
    """The released per-call records of ``model`` in ``cell`` (a fresh copy)."""
    return _load(model, expect_cell(cell), run).copy()


def released_cells(model: str) -> list[str]:
    """Every synthetic battery cell id (release grammar) with per-call records for ``model``."""
    folder = config.MODELS[model][1]
    out = []
    for name in data.registry().index:
        for prefix in (f"data/raw_records/{folder}/", f"data/raw_records/{folder}/seed_replication/",
                       "data/canonical/claude-sonnet-4-5/" if model == "sonnet" else None):
            if prefix and name.startswith(prefix) and name.endswith("_records.csv"):
                tag = name[len(prefix):-len("_records.csv")]
                if "/" in tag:
                    continue
                try:
                    out.append(parse_cell(tag).id)
                except ValueError:
                    pass
    return sorted(set(out))


_CATALOGUE_RULES = (
    # (regex on the registry name, model, cell template); named groups fill the template
    (r"data/canonical/claude-sonnet-4-5/(?P<cell>k\w+?)_records\.csv", "sonnet", "{cell}"),
    (r"data/raw_records/claude-sonnet-4-5/expK_g1_k(?P<k>\d+)_(?P<p>zero|info)_(?P<n>neutral|social)_records\.csv",
     "sonnet", "k{k}_LH_{n}_absent_{p}"),
    (r"data/raw_records/claude-sonnet-4-5/gate2/expK_g2\w*?_k(?P<k>\d+)_(?P<p>zero|info)_(?P<n>neutral|social)\w*_records\.csv",
     "sonnet", "k{k}_LH_{n}_learned_{p}"),
    (r"data/raw_records/claude-sonnet-4-5/beta_sweep/expK_beta_b(?P<b>\d+)_(?P<n>neutral|social)_\w+_records\.csv",
     "sonnet", "k12_LH_{n}_learned_info_b{b}"),
    (r"data/raw_records/claude-sonnet-4-5/coupling/expK_cpl_k(?P<k>\d+)_(?P<x>LL|HL|HH)_\w+_records\.csv",
     "sonnet", "k{k}_LH_neutral_learned_zero_x{x}"),
    (r"data/raw_records/claude-sonnet-4-5/dcal_sweep/expK_dcal_n(?P<m>\d+)_\w+_records\.csv",
     "sonnet", "k12_LH_neutral_learned_zero_n{m}"),
    (r"data/raw_records/claude-sonnet-4-5/dimension_by_structure/expK_xstr_k(?P<k>\d+)_HH_(?P<n>neutral|social)_"
     r"(?P<e>absent|learned)_\w+_records\.csv", "sonnet", "k{k}_HH_{n}_{e}_zero"),
    (r"data/raw_records/claude-sonnet-4-5/mechanism/expK_mech_r(?P<r>\d+)_(?P<n>neutral|social)_\w+_records\.csv",
     "sonnet", "k12_LH_{n}_learned_zero_r{r}"),
    (r"data/raw_records/claude-sonnet-4-5/stochastic_regeneration/(?P<cell>k\w+?)_(?:frozenbaseline|stochregen)_records\.csv",
     "sonnet", "{cell}"),
    (r"data/raw_records/deepseek-flash/(?P<cell>k\w+?)_(?:frozenbaseline|stochregen)_records\.csv",
     "deepseek-flash", "{cell}"),
    (r"data/raw_records/(?P<folder>DeepSeek-V4-Flash-0731|qwen3\.7-max|gpt-5\.6-terra)/(?:seed_replication/|"
     r"repeated_measurement/run_\w/)?(?P<cell>k\w+?)_records\.csv", "{folder}", "{cell}"),
    (r"data/encoding_control/\S*catctl_(?P<cell>k\w+?_zero)_\w+_records\.csv", "sonnet-20250929", "{cell}"),
    (r"data/encoding_control/reference/sonnet_(?P<cell>k\w+?)_records\.csv", "sonnet", "{cell}"),
)


def catalogue() -> pd.DataFrame:
    """Every released synthetic records file with the model and cell it belongs to.

    Columns ``name, model, cell``; ``model`` is the short name where the file is a battery
    model's (sonnet/deepseek/qwen/gpt), else the release folder's serving id.
    """
    folder_to_model = {v[1]: k for k, v in config.MODELS.items()}
    rows = []
    for name in data.registry().index:
        for rx, model, tmpl in _CATALOGUE_RULES:
            m = re.fullmatch(rx, name)
            if m:
                g = m.groupdict()
                mdl = model.format(**g)
                rows.append({"name": name, "model": folder_to_model.get(mdl, mdl), "cell": tmpl.format(**g)})
                break
    return pd.DataFrame(rows)
