"""Benchmark (not a test): the cell bootstrap of every released synthetic cell, vectorised vs loop.

For every released per-call cell of the four models (battery, seed replications, the Sonnet
manipulations and HH cells, GPT's repeated runs) the per-pair PSE and error vectors are built
first (not timed); then the 5,000-draw pair bootstrap of each vector runs once in loop form
(``rng.choice`` per draw, spec §9.2) and once vectorised (one ``integers`` call), side by side.
Both must give bit-identical draws and intervals. Target: vectorised >= 10x faster (issue 4).
Runs on at most 2 cores. Usage: ``python benchmarks/bench_bootstrap.py``.
"""
from __future__ import annotations

import os

for var in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(var, "2")
if hasattr(os, "sched_setaffinity"):
    os.sched_setaffinity(0, sorted(os.sched_getaffinity(0))[:2])

import time  # noqa: E402

import numpy as np  # noqa: E402

TARGET_SPEEDUP = 10.0


def released_cell_vectors() -> list[tuple[str, str, np.ndarray, int]]:
    """(model/cell, quantity, per-pair values, seed) for every released cell's PSE and error."""
    from analysis import battery, config, estimators, records
    from analysis.cells import parse_cell
    from analysis.population import truth

    jobs = []
    cells = {m: records.released_cells(m) for m in battery.MODELS}
    cells["sonnet"] = sorted(set(cells["sonnet"]) | set(battery.dimension_table_cells())
                             | {battery.structure_cell(k, c) for k in (6, 12, 18) for c in ("LL", "HL", "HH")}
                             | {"k12_LH_neutral_learned_zero_n12", "k12_LH_neutral_learned_zero_n20"}
                             | {f"k12_LH_{n}_learned_zero_r{r}" for r in ("00", "40", "70") for n in ("neutral", "social")}
                             | {f"k{k}_LH_{n}_absent_{p}" for k in (6, 12, 18) for n in ("neutral", "social")
                                for p in ("zero", "info")})
    runs = [(m, c, None) for m, cs in cells.items() for c in cs]
    runs += [("gpt", battery.sweep_cell("neutral", lv), r) for r in "ab" for lv in battery.LEVELS]
    for model, cell, run in runs:
        c = parse_cell(cell)  # a benchmark is a boundary: each id parsed here
        try:
            rec = records.load_records(model, c, run=run)
        except records.NotReleased:
            continue
        eff = estimators.pair_effects(rec, truth(c)).dropna()
        tag = f"{model}/{cell}" + (f"/run_{run}" if run else "")
        jobs.append((tag, "pse", eff["pse"].to_numpy(), config.CELL_PSE_SEED))
        jobs.append((tag, "error", eff["error"].to_numpy(), config.CELL_ERROR_SEED))
    return jobs


def main() -> int:
    from analysis import estimators

    jobs = released_cell_vectors()
    t = time.perf_counter()
    loop = [estimators.bootstrap_means_loop(v, seed) for _, _, v, seed in jobs]
    t_loop = time.perf_counter() - t
    t = time.perf_counter()
    vec = [estimators.bootstrap_means(v, seed) for _, _, v, seed in jobs]
    t_vec = time.perf_counter() - t
    identical = all(np.array_equal(a, b) for a, b in zip(loop, vec))
    same_ci = all(estimators.percentile_ci(a) == estimators.percentile_ci(b) for a, b in zip(loop, vec))
    n_cells = len({tag for tag, *_ in jobs})
    speedup = t_loop / t_vec
    print(f"cells: {n_cells} released cells, {len(jobs)} bootstraps (PSE and error), 5,000 draws each")
    print(f"loop form (rng.choice per draw): {t_loop:8.2f} s")
    print(f"vectorised (one integers call):  {t_vec:8.2f} s")
    print(f"speed-up: {speedup:.1f}x (target >= {TARGET_SPEEDUP:.0f}x)")
    print(f"draws bit-identical: {identical}; intervals identical: {same_ci}")
    ok = identical and same_ci and speedup >= TARGET_SPEEDUP
    print("OK" if ok else "FAILED")
    return 0 if ok else 1


if __name__ == "__main__":
    raise SystemExit(main())
