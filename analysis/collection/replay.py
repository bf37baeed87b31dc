"""Replay check (regenerated records against the release) and the simulated subject's interval coverage."""
from __future__ import annotations

import os
import re
from typing import Iterable

import numpy as np
import pandas as pd

from .. import config, estimators, records
from ..cells import Cell, expect_cell, parse_cell
from .jobs import Job, job_list
from .outputs import answer_row, job_records
from .runner import collect
from .subjects import SimulatedSubject, replay_model


def compare_with_release(records_path: str | os.PathLike, model: str, cell: Cell,
                         run: str | None = None) -> dict:
    """Compare regenerated replay records with the released file of ``(model, cell)``.

    Rows are matched on ``(arm, i, j, order)``; row counts and each answer column (``patient,
    chosen, picked_i``) are compared separately, because two released Sonnet canonical files store
    something other than a population index in ``chosen`` of the factual arm (the shown number,
    or the letter ``i``/``j``), whereas the replay always derives ``chosen`` from ``patient``
    (spec §7). ``equal`` requires everything to agree.
    """
    ours = records.normalise(pd.read_csv(records_path))
    rel = records.load_records(replay_model(model), cell, run)
    key = ["arm", "i", "j", "order"]
    m = ours.merge(rel, on=key, how="outer", suffixes=("", "_rel"), indicator=True)
    both = m[m["_merge"] == "both"]

    def same(a, b):
        return (a == b) | (a.isna() & b.isna())

    eq = {c: bool(same(both[c], both[f"{c}_rel"]).all()) for c in ("patient", "chosen", "picked_i")}
    rows_equal = len(ours) == len(rel) and bool((m["_merge"] == "both").all())
    return {"cell": cell.id, "model": model, "run": run, "n_ours": int(len(ours)),
            "n_released": int(len(rel)),
            "only_ours": int((m["_merge"] == "left_only").sum()),
            "only_released": int((m["_merge"] == "right_only").sum()),
            "patient_equal": eq["patient"], "picked_i_equal": eq["picked_i"], "chosen_equal": eq["chosen"],
            "chosen_differs": int((~same(both["chosen"], both["chosen_rel"])).sum()),
            "pair_id_equal": bool((both["pair_id"] == both["pair_id_rel"]).all()),
            "missing": int(rel["picked_i"].isna().sum()),
            "equal": bool(rows_equal and all(eq.values()))}


def replay_targets(models: Iterable[str] | None = None, cells: Iterable[Cell] | None = None) -> pd.DataFrame:
    """Every released synthetic records file of the four battery models as ``model, cell, run``.

    From :func:`analysis.records.catalogue`; ``run`` is ``a``/``b`` for GPT's repeated measurement,
    else None. ``models``/``cells`` restrict the list.
    """
    cat = records.catalogue()
    rows = set()
    for r in cat.itertuples(index=False):
        if r.model not in config.MODELS:
            continue
        m = re.search(r"repeated_measurement/run_(\w)/", r.name)
        rows.add((r.model, r.cell, m.group(1) if m else None))
    df = pd.DataFrame(sorted(rows, key=lambda t: (t[0], t[1], t[2] or "")), columns=["model", "cell", "run"])
    if models is not None:
        df = df[df["model"].isin(list(models))]
    if cells is not None:
        df = df[df["cell"].isin([expect_cell(c).id for c in cells])]
    return df.reset_index(drop=True)


def replay_check(out: str | os.PathLike, targets: pd.DataFrame, progress: bool = False) -> pd.DataFrame:
    """Replay every target through :func:`collect` and compare it with its released file (one row each)."""
    rows = []
    for t in targets.itertuples(index=False):
        run = t.run if isinstance(t.run, str) else None
        cell = parse_cell(t.cell)  # an id read from the release's catalogue (data, not an argument)
        res = collect(cell, "replay", t.model, out, concurrency=1, progress=progress, run=run)
        rows.append({**compare_with_release(res.records_path, t.model, cell, run),
                     "records": str(res.records_path)})
    return pd.DataFrame(rows)


def simulate_records(subject: SimulatedSubject, jobs: list[Job]) -> pd.DataFrame:
    """Records of the simulated subject, computed in memory (same answers as the collected path)."""
    rows = [answer_row(jb, "sim", subject.ask(jb), None, None) for jb in jobs]
    return job_records(jobs, pd.DataFrame(rows))


def simulated_coverage(cell: Cell, preset: str = "numeric-reader", seeds: Iterable[int] = range(100),
                       jobs: list[Job] | None = None, draws: int = config.BOOTSTRAP_DRAWS) -> pd.DataFrame:
    """Estimated PSE and its 95 % pair-bootstrap interval for each seed, against the known expected PSE.

    Columns ``seed, pse_pp, lo, hi, expected_pp, covered``. Vectorised: the choice probabilities are
    computed once, each seed draws its keyed uniforms, and when every pair is resolved (no invalid
    answer) the bootstrap indices are drawn once for all seeds; the numbers are bit-identical to
    :func:`analysis.estimators.cell_estimates` on :func:`simulate_records` of each seed (a seed with
    invalid answers takes that path).
    """
    c = expect_cell(cell)
    jobs = job_list(c) if jobs is None else jobs
    base = SimulatedSubject.preset(preset)
    expected = base.expected_pse(jobs)
    pr = base.probabilities(jobs)
    p_first = pr["p_first"].to_numpy(dtype=float)
    order = pr["order"].to_numpy()
    # pairs sorted by (i, j) as estimators.pair_pse sorts them; each job's pair position and arm
    pair_key = list(zip(pr["i"], pr["j"]))
    pairs_sorted = sorted(set(pair_key))
    pos = {k: n for n, k in enumerate(pairs_sorted)}
    pair_pos = np.array([pos[k] for k in pair_key])
    arm = pr["arm"].to_numpy()
    n_pairs = len(pairs_sorted)
    idx = None
    rows = []
    for seed in seeds:
        subject = SimulatedSubject.preset(preset, seed=seed)
        if base.params.invalid_rate > 0 or np.isnan(p_first).any():
            pse = None
        else:
            u = np.array([subject._uniform("choice", jb.prompt_sha256) for jb in jobs])
            patient = np.where(u < p_first, 1, 2)
            picked = np.where(order == 0, patient == 1, patient == 2).astype(float)
            sums = {a: np.zeros(n_pairs) for a in ("cf_a1", "cf_a0", "factual")}
            counts = {a: np.zeros(n_pairs) for a in sums}
            for a in sums:
                m = arm == a
                np.add.at(sums[a], pair_pos[m], picked[m])
                np.add.at(counts[a], pair_pos[m], 1.0)
            if all((counts[a] > 0).all() for a in sums):
                pse = sums["cf_a1"] / counts["cf_a1"] - sums["cf_a0"] / counts["cf_a0"]
            else:
                pse = None
        if pse is None:  # the general path (invalid answers, unresolved pairs)
            recs = simulate_records(subject, jobs)
            recs["picked_i"] = recs["picked_i"].astype(float)
            est = estimators.cell_estimates(recs, draws=draws)
            pse_pp, (lo, hi) = est["pse_pp"], est["pse_ci"]
        else:
            if idx is None:  # estimators.bootstrap_means draws exactly these indices for every seed
                idx = np.random.default_rng(config.CELL_PSE_SEED).integers(0, n_pairs, size=(draws, n_pairs))
            pse_pp = 100 * float(pse.mean())
            lo, hi = (100 * x for x in estimators.percentile_ci(pse[idx].mean(axis=1)))
        rows.append({"seed": seed, "pse_pp": pse_pp, "lo": lo, "hi": hi, "expected_pp": expected,
                     "covered": bool(lo <= expected <= hi)})
    return pd.DataFrame(rows)
