"""Calibration of the validity battery's verdicts over known-truth subjects (issue 22; beyond the paper).

How often is each verdict the panel prints wrong? Simulated subjects with a known truth
(:mod:`analysis.validity.truth`) are judged over many seeds at the battery's own ``--pairs`` (default:
every pair), and for each verdict the table gives the **false-finding rate** where the truth is none,
the **power** at stated true effects (5, 10 and 20 pp) and the **coverage** of its interval. The
paper's own rule (the PSE interval shifted by the reference as if exact) is calibrated beside the
panel's joint bootstrap, so a rate the paper's rule cannot reach is shown with the rate it does reach.

Subjects: ``ignores-proxies`` (noisy; no proxy weight: true excess 0 under every cue, the uniform
truth), ``reads-proxies-<d>`` (numeric proxies under every vocabulary, weight tuned so the true PSE is
d pp), ``paper-vocabulary-<d>`` (numeric proxies under the paper's vocabulary only: the numeric and
narrative cues differ from the others by d pp), and the presets ``cue-specific``,
``acts-not-associates``. Goals (issue 22): every false-finding rate ≤ 5 %, coverage ≥ 93 %.
"""
from __future__ import annotations

import functools
import itertools

import numpy as np
import pandas as pd
from scipy import optimize

from .. import config, cues, intervals
from ..cells import Cell
from ..judgments import DRAW_DECIMALS
from . import heterogeneity as H
from .subjects import CueParams, CueSubject, subject
from .truth import _boot_counts, coverage, known_truth, simulate_panel

EFFECTS_PP = (5.0, 10.0, 20.0)
FALSE_FINDING_GOAL = 0.05
COVERAGE_GOAL = 0.93
#: cues on which a numeric proxy weight acts (paper, assay, opaque vocabularies; narrative)
NUMERIC_CUES = ("numeric", "numeric:assay", "numeric:opaque", "narrative")
AUC_SEED = 54321


def ignores_proxies(noise_scale: float = 1.0) -> CueSubject:
    """No proxy weight (a tiny ``noise_scale`` makes it deterministic: PSE exactly 0 on every pair)."""
    return CueSubject(CueParams(proxy_weight=0.0, level_weight=0.0, noise_scale=noise_scale), "ignores-proxies")


@functools.lru_cache(maxsize=16)
def _weight(effect_pp: float, cell: Cell, paper_only: bool) -> float:
    def f(w):
        s = _tuned(w, paper_only)
        return float(known_truth(s, cell, ["numeric"])["true_pse_pp"].iloc[0]) - effect_pp
    return float(optimize.brentq(f, 0.0, 3.0, xtol=1e-4))


def _tuned(w: float, paper_only: bool) -> CueSubject:
    if paper_only:
        return CueSubject(CueParams(proxy_weight=0.0, vocabulary_weights=((cues.PAPER_VOCABULARY, w),)),
                          f"paper-vocabulary-w{w:.4f}")
    return CueSubject(CueParams(proxy_weight=w), f"reads-proxies-w{w:.4f}")


def tuned_subject(effect_pp: float, cell: Cell, paper_only: bool = False) -> CueSubject:
    """A subject whose true PSE under the paper's numeric cue is ``effect_pp`` (proxy weight by root finding)."""
    s = _tuned(_weight(float(effect_pp), cell, paper_only), paper_only)
    s.model = f"{'paper-vocabulary' if paper_only else 'reads-proxies'}-{effect_pp:g}pp"
    return s


def _auc_varies(sim: dict, judged: list[str], draws: int) -> np.ndarray:
    """Per seed: whether the AUC differences across cues are resolved (simultaneous 95%)."""
    first = sim["cues"][judged[0]]["score"]
    K = _boot_counts(first.shape[1], draws, AUC_SEED)
    A = np.stack([np.round(sim["cues"][c]["score"] @ K, DRAW_DECIMALS) for c in judged])  # cues x seeds x draws
    out = []
    for s in range(A.shape[1]):
        D = np.stack([A[a, s] - A[b, s] for a, b in itertools.combinations(range(len(judged)), 2)])
        _, lo, hi = H.simultaneous(D, 95.0)
        out.append(bool(((lo > 0) | (hi < 0)).any()))
    return np.array(out)


def _diff_coverage(sim: dict, truth: pd.DataFrame) -> float:
    t = truth.set_index("cue")["true_excess_pp"]
    ok = []
    for h in sim["heterogeneity"]:
        ok.append(all(d["ci"][0] - 1e-9 <= t[d["a"]] - t[d["b"]] <= d["ci"][1] + 1e-9 for d in h.get("differences", [])))
    return float(np.mean(ok))


def run(cell: Cell, cue_ids: list[str], n_seeds: int = 200, draws: int = 1000, n_pairs: int | None = None,
        effects=EFFECTS_PP, progress=None) -> dict:
    """Simulate every calibration subject; returns ``{name: (sim, coverage table, truth)}``."""
    subs = {"ignores-proxies": ignores_proxies(), "cue-specific": subject("cue-specific"),
            "acts-not-associates": subject("acts-not-associates"), "associates-not-acts": subject("associates-not-acts")}
    for d in effects:
        subs[f"reads-proxies-{d:g}pp"] = tuned_subject(d, cell)
        subs[f"paper-vocabulary-{d:g}pp"] = tuned_subject(d, cell, paper_only=True)
    out = {}
    for name, s in subs.items():
        if progress:
            progress(name)
        sim = simulate_panel(s, cell, cue_ids, n_seeds, draws, "abstain", n_pairs)
        out[name] = (sim, coverage(s, cell, cue_ids, n_seeds, draws, "abstain", n_pairs, sim=sim),
                     known_truth(s, cell, cue_ids, "abstain", n_pairs))
    return out


def _judged(cov: pd.DataFrame) -> pd.DataFrame:
    return cov[~cov["control"]]


def table(res: dict, cue_ids: list[str], draws: int = 1000, effects=EFFECTS_PP) -> pd.DataFrame:
    """verdict | truth | false-finding rate | power at 5 / 10 / 20 pp | coverage, one row per verdict."""
    judged = [c for c in cue_ids if not cues.parse_cue(c).control]
    numeric = [c for c in judged if c in NUMERIC_CUES]
    null_sim, null_cov, null_truth = res["ignores-proxies"]
    all_cov = pd.concat([c for _, c, _ in res.values()])
    n_seeds, n_pairs = int(null_cov["n_seeds"].iloc[0]), int(null_cov["n_pairs"].iloc[0])
    m = config.EQUIVALENCE_MARGIN_PP

    def power(prefix, col, cues_=numeric):
        return {f"power_{d:g}pp": float(res[f"{prefix}-{d:g}pp"][1].set_index("cue").loc[cues_, col].mean())
                for d in effects}

    def het(name):
        return {k: v for k, v in _shares(res[name][0]).items()}

    nj = _judged(null_cov)
    rows = [
        {"verdict": "excess or shortfall (panel: joint bootstrap, TOST)", "truth": "no excess under any cue",
         "false_finding_rate": float((nj["share_excess"] + nj["share_shortfall"]).mean()),
         "false_finding_max_cue": float((nj["share_excess"] + nj["share_shortfall"]).max()),
         **power("reads-proxies", "share_excess"), "coverage": float(all_cov["excess_coverage"].mean()),
         "coverage_min_cue": float(all_cov["excess_coverage"].min())},
        {"verdict": "excess or shortfall (the paper's rule: PSE interval shifted by a fixed reference)",
         "truth": "no excess under any cue",
         "false_finding_rate": float((nj["paper_share_excess"] + nj["paper_share_shortfall"]).mean()),
         "false_finding_max_cue": float((nj["paper_share_excess"] + nj["paper_share_shortfall"]).max()),
         **power("reads-proxies", "paper_share_excess"), "coverage": float(all_cov["paper_coverage"].mean()),
         "coverage_min_cue": float(all_cov["paper_coverage"].min())},
        {"verdict": f"equivalent within ±{m:g} pp", "truth": f"true excess {effects[0]:g} pp (at the margin)",
         "false_finding_rate": float(res[f"reads-proxies-{effects[0]:g}pp"][1].set_index("cue")
                                     .loc[numeric, "share_equivalent"].mean()),
         "false_finding_max_cue": float(res[f"reads-proxies-{effects[0]:g}pp"][1].set_index("cue")
                                        .loc[numeric, "share_equivalent"].max()),
         "power_at_truth_0": float(nj["share_equivalent"].mean())},
        {"verdict": "cue-dependent (heterogeneity, simultaneous 95%)", "truth": "uniform excess (0 under every cue)",
         "false_finding_rate": het("ignores-proxies")["share_dependent"],
         **{f"power_{d:g}pp": het(f"paper-vocabulary-{d:g}pp")["share_dependent"] for d in effects},
         "coverage": _diff_coverage(null_sim, null_truth)},
        {"verdict": f"cue-robust within ±{m:g} pp", "truth": "cue-specific (about 22 pp under 2 cues, 0 under 4)",
         "false_finding_rate": het("cue-specific")["share_robust"],
         "power_at_truth_0": het("ignores-proxies")["share_robust"]},
        {"verdict": "association above chance (AUC interval above 0.5)", "truth": "AUC 0.5 (acts-not-associates)",
         "false_finding_rate": float(_judged(res["acts-not-associates"][1])["share_auc_above_half"].mean()),
         "coverage": float(all_cov["auc_coverage"].mean()), "coverage_min_cue": float(all_cov["auc_coverage"].min())},
        {"verdict": "association-reliance r defined (AUCs vary beyond noise)", "truth": "AUC 0.5 under every cue",
         "false_finding_rate": float(_auc_varies(res["acts-not-associates"][0], judged, draws).mean())},
        {"verdict": "abstention rate (exact 95% interval)", "truth": "known abstention rate per cue",
         "coverage": float(all_cov["abstain_coverage"].mean()),
         "coverage_min_cue": float(all_cov["abstain_coverage"].min())},
    ]
    out = pd.DataFrame(rows)
    out.insert(2, "n_seeds", n_seeds)
    out.insert(3, "n_pairs", n_pairs)
    out["false_finding_goal_met"] = out["false_finding_rate"].map(lambda x: bool(x <= FALSE_FINDING_GOAL)
                                                                   if pd.notna(x) else None)
    out["coverage_goal_met"] = out["coverage"].map(lambda x: bool(x >= COVERAGE_GOAL) if pd.notna(x) else None)
    return out


def _shares(sim: dict) -> dict:
    v = np.array([h.get("verdict", "") for h in sim["heterogeneity"]], dtype=object)
    return {"share_dependent": float((v == H.DEPENDENT).mean()),
            "share_robust": float(np.mean([H.is_robust(x) for x in v])),
            "share_too_few": float((v == intervals.TOO_FEW).mean())}
