"""Known truth of the simulated validity subjects, and what the panel's verdicts do over seeds (beyond the paper).

A simulated subject's answer probabilities are exact (:mod:`analysis.validity.subjects`), so the true
PSE of every cue, the true probe AUC and the true abstention rate on the panel's pairs are
expectations computed from them, not simulations. The reference's estimand is the full-information
reference (:func:`analysis.validity.reference.true_reference_pp`: exactly 0 at zero information, where
any learner's expected PSE over example draws is 0 too), so the true excess of a subject that ignores
the proxies is 0 under every cue, whatever finite-sample PSE the learner of these 80 examples shows.

:func:`simulate_panel` draws the answers of many seeds at once (one ``default_rng`` stream of
uniforms per seed and cue, in the role of the subject's keyed draws) and judges every seed as the
panel does: one set of pair-resampling indices shared by every cue, the reference refitted on the
matching example resample (:mod:`analysis.validity.reference`), the four-way verdict with the TOST,
the heterogeneity test across cues, and, for comparison, the paper's rule (the PSE interval shifted by
the reference as if exact). A few hundred seeds of a whole panel take seconds.
"""
from __future__ import annotations

import functools
import zlib

import numpy as np
import pandas as pd

from .. import cues, intervals
from ..cells import Cell
from ..judgments import DRAW_DECIMALS
from ..judgments import verdict as paper_verdict
from . import heterogeneity as H
from . import reference as RF
from .panel import cue_reference
from .subjects import CueSubject, subject

#: seeds of the known-truth runs: 0..n-1 offset, so no seed is shared with a default run
COVERAGE_SEED_OFFSET = 1000
COVERAGE_BOOT_SEED = 12345


def _subject(s) -> CueSubject:
    return s if isinstance(s, CueSubject) else subject(s)


@functools.lru_cache(maxsize=128)
def _tables(cell: Cell, cue_id: str, variant: str, n_pairs: int | None = None) -> tuple[pd.DataFrame, pd.DataFrame]:
    jobs, probe = cues.job_table(cell, cue_id), cues.probe_table(cell, cue_id, variant)
    if n_pairs is not None:
        jobs = jobs[jobs["pair_id"] < n_pairs].reset_index(drop=True)
        probe = probe[probe["pair_id"] < n_pairs].reset_index(drop=True)
    return jobs, probe


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


@functools.lru_cache(maxsize=256)
def _probabilities(params, cell: Cell, cue_id: str, variant: str, n_pairs: int | None):
    subj = CueSubject(params)
    jobs, probe = _tables(cell, cue_id, variant, n_pairs)
    return decision_probabilities(subj, jobs), probe_probabilities(subj, probe)


def probabilities(subj: CueSubject, cell: Cell, cue_id: str, variant: str, n_pairs: int | None = None):
    """``(P(picked_i), (P(named A), P(abstain)))`` of a subject's jobs, cached by its parameters."""
    return _probabilities(subj.params, cell, cue_id, variant, n_pairs)


def known_truth(name, cell: Cell, cue_ids: list[str], variant: str = "forced", n_pairs: int | None = None) -> pd.DataFrame:
    """True PSE, reference, excess, probe AUC and abstention rate of a subject (preset name or
    :class:`CueSubject`) under each cue; ``true_excess_pp`` is against the reference's estimand."""
    subj = _subject(name)
    true_ref = RF.true_reference_pp(cell)
    rows = []
    for cid in cue_ids:
        jobs, probe = _tables(cell, cid, variant, n_pairs)
        W, _ = decision_design(jobs)
        p, (pa_named, pa) = probabilities(subj, cell, cid, variant, n_pairs)
        pse = 100 * float((p @ W).mean())
        Wp, _ = probe_design(probe)
        ref = cue_reference(cell, cid)
        rows.append({"subject": subj.model, "cue": cid, "variant": variant, "true_pse_pp": pse,
                     "reference_pp": ref["reference_pp"], "true_reference_pp": true_ref,
                     "true_excess_pp": pse - true_ref,
                     "true_auc": float(((pa_named + 0.5 * pa) @ Wp).mean()), "true_abstain": float(pa.mean())})
    return pd.DataFrame(rows)


def _boot_counts(n: int, draws: int, seed: int) -> np.ndarray:
    """pairs x draws matrix of resampling counts / n (a mean of resampled values = values @ K)."""
    idx = np.random.default_rng(seed).integers(0, n, size=(draws, n))
    K = np.zeros((n, draws))
    np.add.at(K, (idx, np.arange(draws)[:, None]), 1.0)
    return K / n


def _stream(seed: int, cue_id: str) -> np.random.Generator:
    return np.random.default_rng([COVERAGE_SEED_OFFSET + int(seed), zlib.crc32(cue_id.encode())])


def _covers(lo, hi, t, tol: float = 1e-9) -> np.ndarray:
    return (lo - tol <= t) & (t <= hi + tol)


def simulate_panel(name, cell: Cell, cue_ids: list[str], n_seeds: int = 200, draws: int = 1000,
                   variant: str = "forced", n_pairs: int | None = None) -> dict:
    """Per cue (arrays over seeds): ``excess`` point, ``lo, hi`` (joint 95%), ``verdict``, ``paper_lo,
    paper_hi, paper_verdict``, ``auc_lo, auc_hi``, ``abstain_lo, abstain_hi`` (exact), ``draws`` (seeds x
    draws); and ``heterogeneity`` (per seed, over the judged cues)."""
    subj = _subject(name)
    out: dict = {"cues": {}}
    ref_index = RF.pair_index(cell)
    K = None
    for cid in cue_ids:
        jobs, probe = _tables(cell, cid, variant, n_pairs)
        W, pairs = decision_design(jobs)
        Wp, _ = probe_design(probe)
        if K is None:
            K = _boot_counts(len(pairs), draws, COVERAGE_BOOT_SEED)
        R = RF.shift_draws(cell, cid, draws)[:, ref_index.get_indexer(pairs)]  # draws x pairs
        ref_means = np.round(100 * (R * K.T).sum(axis=1), DRAW_DECIMALS)
        p, (pn, pa) = probabilities(subj, cell, cid, variant, n_pairs)
        U = np.stack([_stream(s, cid).random(len(jobs) + len(probe)) for s in range(n_seeds)])
        picked = (U[:, : len(jobs)] < p).astype(float)
        Up = U[:, len(jobs):]
        abstained = Up < pa
        named = (Up >= pa) & (Up < pa + pn)
        # matrix products end in BLAS-kernel-dependent last bits; rounded (as judgments.joint_draws) so that
        # a tie with 0 or the margin reads the same on every CPU
        per_pair = np.round(100 * (picked @ W), DRAW_DECIMALS)  # seeds x pairs
        boot = np.round(per_pair @ K, DRAW_DECIMALS)  # seeds x draws
        ref_pp = cue_reference(cell, cid)["reference_pp"]
        d = boot - ref_means
        lo, hi = np.percentile(d, [2.5, 97.5], axis=1)
        plo, phi = np.percentile(boot, [2.5, 97.5], axis=1)
        excess = per_pair.mean(axis=1) - ref_pp
        p_tost = np.array([intervals.tost(row) for row in d])
        n = len(pairs)
        verdict = np.array([intervals.equivalence_verdict(a, b, t, n_pairs=n) for a, b, t in zip(lo, hi, p_tost)])
        score = np.round(np.where(abstained, 0.5, named.astype(float)) @ Wp, DRAW_DECIMALS)
        alo, ahi = np.percentile(np.round(score @ K, DRAW_DECIMALS), [2.5, 97.5], axis=1)
        k_abs = abstained.sum(axis=1)
        ab = np.array([intervals.exact_binomial(int(k), len(probe)) for k in k_abs])
        out["cues"][cid] = {"excess": excess, "lo": lo, "hi": hi, "verdict": verdict, "draws": d,
                            "paper_lo": plo - ref_pp, "paper_hi": phi - ref_pp,
                            "paper_verdict": np.array([paper_verdict(a - ref_pp, b - ref_pp) for a, b in zip(plo, phi)]),
                            "auc_lo": alo, "auc_hi": ahi, "abstain_lo": ab[:, 0], "abstain_hi": ab[:, 1],
                            "score": score, "n_pairs": n}
    judged = [c for c in cue_ids if not cues.parse_cue(c).control]
    out["heterogeneity"] = [H.heterogeneity({c: out["cues"][c]["draws"][s] for c in judged},
                                            n_pairs=out["cues"][judged[0]]["n_pairs"]) if judged else {}
                            for s in range(n_seeds)]
    out["pairs"] = pairs
    return out


def coverage(name, cell: Cell, cue_ids: list[str], n_seeds: int = 200, draws: int = 1000,
             variant: str = "forced", n_pairs: int | None = None, sim: dict | None = None) -> pd.DataFrame:
    """Per cue: coverage of the true excess, PSE-free AUC and abstention rate by their 95% intervals, and the
    share of seeds giving each verdict (the panel's and the paper's rule)."""
    truth = known_truth(name, cell, cue_ids, variant, n_pairs).set_index("cue")
    sim = sim or simulate_panel(name, cell, cue_ids, n_seeds, draws, variant, n_pairs)
    rows = []
    for cid in cue_ids:
        s, t = sim["cues"][cid], truth.loc[cid]
        v, pv = s["verdict"], s["paper_verdict"]
        rows.append({"subject": str(truth["subject"].iloc[0]), "cue": cid, "control": cues.parse_cue(cid).control,
                     "n_seeds": n_seeds, "n_pairs": s["n_pairs"], "true_pse_pp": t["true_pse_pp"],
                     "true_excess_pp": t["true_excess_pp"], "true_auc": t["true_auc"],
                     "true_abstain": t["true_abstain"],
                     "excess_coverage": float(_covers(s["lo"], s["hi"], t["true_excess_pp"]).mean()),
                     "paper_coverage": float(_covers(s["paper_lo"], s["paper_hi"], t["true_excess_pp"]).mean()),
                     "auc_coverage": float(_covers(s["auc_lo"], s["auc_hi"], t["true_auc"]).mean()),
                     "abstain_coverage": (float(_covers(s["abstain_lo"], s["abstain_hi"], t["true_abstain"]).mean())
                                          if variant == "abstain" else np.nan),
                     "share_excess": float((v == "excess").mean()), "share_shortfall": float((v == "shortfall").mean()),
                     "share_equivalent": float(np.char.startswith(v.astype(str), "equivalent").mean()),
                     "share_inconclusive": float((v == intervals.INCONCLUSIVE).mean()),
                     "paper_share_excess": float((pv == "excess").mean()),
                     "paper_share_shortfall": float((pv == "shortfall").mean()),
                     "share_auc_above_half": float((s["auc_lo"] > 0.5).mean()),
                     "_verdicts": v})
    return pd.DataFrame(rows)


def heterogeneity_shares(sim: dict) -> dict:
    """Share of seeds whose heterogeneity verdict is cue-dependent, cue-robust, inconclusive."""
    v = np.array([h.get("verdict", "") for h in sim["heterogeneity"]], dtype=object)
    return {"share_dependent": float((v == H.DEPENDENT).mean()),
            "share_robust": float(np.mean([H.is_robust(x) for x in v])),
            "share_inconclusive": float((v == H.INCONCLUSIVE).mean()), "n_seeds": int(len(v))}


def summary(name, cell: Cell, cue_ids: list[str], n_seeds: int = 200, draws: int = 1000) -> dict:
    """Pooled coverage of one subject over cues and seeds (abstention variant: AUC and abstention too)."""
    sim = simulate_panel(name, cell, cue_ids, n_seeds, draws, "abstain")
    cov = coverage(name, cell, cue_ids, n_seeds, draws, "abstain", sim=sim)
    return {"subject": str(cov["subject"].iloc[0]), "n_seeds": n_seeds, "n_cues": len(cue_ids),
            "excess_coverage": float(cov["excess_coverage"].mean()),
            "excess_coverage_min": float(cov["excess_coverage"].min()),
            "auc_coverage": float(cov["auc_coverage"].mean()), "auc_coverage_min": float(cov["auc_coverage"].min()),
            "abstain_coverage": float(cov["abstain_coverage"].mean()), **heterogeneity_shares(sim)}


