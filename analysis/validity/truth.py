"""Known truth of the simulated validity subjects, and the coverage of the panel's intervals (beyond the paper).

A simulated subject's answer probabilities are exact (:mod:`analysis.validity.subjects`), so the
true PSE of every cue, the true probe AUC and the true abstention rate on the panel's pairs are
expectations computed from them, not simulations. :func:`coverage` then draws the answers of many
seeds at once (one ``default_rng(seed)`` stream of uniforms per seed, in the role of the subject's
keyed draws) and bootstraps every seed's pairs with one shared set of resampling indices, so a
few hundred seeds of a whole panel take seconds. The intervals are the panel's: 95% pair-bootstrap
percentile intervals of the per-pair means (``draws`` resamples; the panel itself uses 5,000).
"""
from __future__ import annotations

import functools
import zlib

import numpy as np
import pandas as pd

from .. import cues
from .panel import cue_reference, is_robust
from .subjects import CueSubject, subject

#: seeds of the known-truth runs: 0..n-1 offset, so no seed is shared with a default run
COVERAGE_SEED_OFFSET = 1000
COVERAGE_BOOT_SEED = 12345


@functools.lru_cache(maxsize=64)
def _tables(cell_id: str, cue_id: str, variant: str) -> tuple[pd.DataFrame, pd.DataFrame]:
    return cues.job_table(cell_id, cue_id), cues.probe_table(cell_id, cue_id, variant)


def _pair_matrix(table: pd.DataFrame, weights: np.ndarray) -> tuple[np.ndarray, pd.Index]:
    """Jobs x pairs matrix placing each job's weight in its pair's column (pairs sorted by (i, j))."""
    keys = pd.MultiIndex.from_frame(table[["i", "j"]])
    pairs = keys.unique().sort_values()
    col = pairs.get_indexer(keys)
    W = np.zeros((len(table), len(pairs)))
    W[np.arange(len(table)), col] = weights
    return W, pairs


def decision_design(table: pd.DataFrame) -> tuple[np.ndarray, pd.Index]:
    """Per-pair PSE = picked_i @ W: +1/(n orders) in cf_a1, -1/(n orders) in cf_a0, 0 for factual jobs."""
    w = np.where(table["arm"] == "cf_a1", 0.5, np.where(table["arm"] == "cf_a0", -0.5, 0.0))
    return _pair_matrix(table, w)


def probe_design(table: pd.DataFrame) -> tuple[np.ndarray, pd.Index]:
    """Per-pair probe score = job score @ W (mean over the two orders)."""
    return _pair_matrix(table, np.full(len(table), 0.5))


def decision_probabilities(subj: CueSubject, table: pd.DataFrame) -> np.ndarray:
    """P(picked_i = 1) of every job (order 0 shows the target as Patient 1)."""
    p1 = np.array([subj.probability_first(t) for t in table["prompt"]])
    return np.where(table["order"].to_numpy() == 0, p1, 1 - p1)


def probe_probabilities(subj: CueSubject, table: pd.DataFrame) -> tuple[np.ndarray, np.ndarray]:
    """Per probe job: P(naming the A = 1 version), P(abstaining)."""
    pr = np.array([subj.probe_probabilities(t) for t in table["prompt"]])
    p1, pa = pr[:, 0], pr[:, 1]
    first_is_a = table["group_a_patient"].to_numpy() == 1
    return np.where(first_is_a, p1, 1 - pa - p1), pa


def known_truth(name: str, cell: str, cue_ids: list[str], variant: str = "forced") -> pd.DataFrame:
    """True PSE, reference, excess, probe AUC and abstention rate of a preset under each cue."""
    subj = subject(name)
    rows = []
    for cid in cue_ids:
        jobs, probe = _tables(cell, cid, variant)
        W, _ = decision_design(jobs)
        pse = 100 * float((decision_probabilities(subj, jobs) @ W).mean())
        pa_named, pa = probe_probabilities(subj, probe)
        Wp, _ = probe_design(probe)
        ref = cue_reference(cell, cid)
        rows.append({"subject": name, "cue": cid, "variant": variant, "true_pse_pp": pse,
                     "reference_pp": ref["reference_pp"], "true_excess_pp": pse - ref["reference_pp"],
                     "true_auc": float(((pa_named + 0.5 * pa) @ Wp).mean()), "true_abstain": float(pa.mean())})
    return pd.DataFrame(rows)


def _boot_counts(n: int, draws: int, seed: int) -> np.ndarray:
    """pairs x draws matrix of resampling counts / n (a mean of resampled values = values @ K)."""
    idx = np.random.default_rng(seed).integers(0, n, size=(draws, n))
    K = np.zeros((n, draws))
    np.add.at(K, (idx, np.arange(draws)[:, None]), 1.0)
    return K / n


def _intervals(per_pair: np.ndarray, K: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    means = per_pair @ K  # seeds x draws
    lo, hi = np.percentile(means, [2.5, 97.5], axis=1)
    return lo, hi


def _stream(seed: int, cue_id: str) -> np.random.Generator:
    return np.random.default_rng([COVERAGE_SEED_OFFSET + int(seed), zlib.crc32(cue_id.encode())])


def _covers(lo, hi, t, tol: float = 1e-9) -> np.ndarray:
    return (lo - tol <= t) & (t <= hi + tol)


def simulate(name: str, cell: str, cue_id: str, n_seeds: int = 200, draws: int = 1000,
             variant: str = "forced") -> dict:
    """Per seed: the cue's PSE interval (pp), verdict, probe AUC and abstention intervals (arrays of n_seeds)."""
    subj = subject(name)
    jobs, probe = _tables(cell, cue_id, variant)
    W, pairs = decision_design(jobs)
    Wp, _ = probe_design(probe)
    K = _boot_counts(len(pairs), draws, COVERAGE_BOOT_SEED)
    p = decision_probabilities(subj, jobs)
    pn, pa = probe_probabilities(subj, probe)
    U = np.stack([_stream(s, cue_id).random(len(jobs) + len(probe)) for s in range(n_seeds)])
    picked = (U[:, : len(jobs)] < p).astype(float)
    Up = U[:, len(jobs):]
    abstained = Up < pa
    named = (Up >= pa) & (Up < pa + pn)
    score = np.where(abstained, 0.5, named.astype(float))
    lo, hi = _intervals(picked @ W, K)
    alo, ahi = _intervals(score @ Wp, K)
    blo, bhi = _intervals(abstained.astype(float) @ Wp, K)
    ref = cue_reference(cell, cue_id)["reference_pp"]
    lo, hi = 100 * lo, 100 * hi
    verdict = np.where(lo - ref > 0, "excess", np.where(hi - ref < 0, "shortfall", "no resolved difference"))
    return {"lo": lo, "hi": hi, "verdict": verdict, "auc_lo": alo, "auc_hi": ahi, "abstain_lo": blo,
            "abstain_hi": bhi}


def coverage(name: str, cell: str, cue_ids: list[str], n_seeds: int = 200, draws: int = 1000,
             variant: str = "forced") -> pd.DataFrame:
    """Per cue: the share of ``n_seeds`` seeds whose 95% interval covers the true PSE, AUC and abstention
    rate, plus the share of seeds giving each verdict. Each seed and cue draws its own uniforms."""
    truth = known_truth(name, cell, cue_ids, variant).set_index("cue")
    rows = []
    for cid in cue_ids:
        sim = simulate(name, cell, cid, n_seeds, draws, variant)
        t = truth.loc[cid]
        v = sim["verdict"]
        rows.append({"subject": name, "cue": cid, "control": cues.parse_cue(cid).control, "n_seeds": n_seeds,
                     "true_pse_pp": t["true_pse_pp"], "true_excess_pp": t["true_excess_pp"],
                     "true_auc": t["true_auc"], "true_abstain": t["true_abstain"],
                     "pse_coverage": float(_covers(sim["lo"], sim["hi"], t["true_pse_pp"]).mean()),
                     "auc_coverage": float(_covers(sim["auc_lo"], sim["auc_hi"], t["true_auc"]).mean()),
                     "abstain_coverage": (float(_covers(sim["abstain_lo"], sim["abstain_hi"], t["true_abstain"]).mean())
                                          if variant == "abstain" else np.nan),
                     "share_excess": float((v == "excess").mean()),
                     "share_no_difference": float((v == "no resolved difference").mean()),
                     "share_shortfall": float((v == "shortfall").mean()),
                     "share_auc_above_half": float((sim["auc_lo"] > 0.5).mean()),
                     "_verdicts": v})
    return pd.DataFrame(rows)


def robustness_shares(cov: pd.DataFrame) -> dict:
    """Share of seeds whose judged cues (positive control left out) the panel calls cue-robust."""
    judged = cov[~cov["control"]]
    V = np.stack(list(judged["_verdicts"]))  # cues x seeds
    n = V.shape[0]
    modal = np.array([max((V[:, s] == v).sum() for v in set(V[:, s])) for s in range(V.shape[1])])
    robust = np.array([is_robust(int(m), n) for m in modal])
    return {"subject": str(cov["subject"].iloc[0]), "n_cues": int(n), "share_robust": float(robust.mean()),
            "share_dependent": float(1 - robust.mean())}


def summary(name: str, cell: str, cue_ids: list[str], n_seeds: int = 200, draws: int = 1000) -> dict:
    """Pooled coverage of one subject over cues and seeds (abstention variant: AUC and abstention too)."""
    cov = coverage(name, cell, cue_ids, n_seeds, draws, "abstain")
    return {"subject": name, "n_seeds": n_seeds, "n_cues": len(cue_ids),
            "pse_coverage": float(cov["pse_coverage"].mean()), "pse_coverage_min": float(cov["pse_coverage"].min()),
            "auc_coverage": float(cov["auc_coverage"].mean()), "auc_coverage_min": float(cov["auc_coverage"].min()),
            "abstain_coverage": float(cov["abstain_coverage"].mean()), **robustness_shares(cov)}
