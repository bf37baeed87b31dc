"""The pipeline from the cached panel to Tables 21 and 22, and the notebook's comparisons of the
UNRESOLVED decisions (missing payer, positive-control construction)."""
from __future__ import annotations

import functools
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pandas as pd

from .design import (CONDITIONS, N_CONTROL, N_NEARTIE, N_PRIMARY, N_SENSITIVITY, N_STRATIFIED, PAYER_MISSING,
                     PAYER_OTHER)
from .estimation import condition_summary, neartie_records, neartie_summary, read_condition_records, stratum_estimates
from .pairs import change_fractions, design_pairs, planning
from .panel import cohort_flow, read_raw_panel
from .prompts import hash_check, render_jobs
from .references import ControlRule, learner_pair_effects, positive_control_references, same_payer_indicator
from .study import Study, build_study, default_study
from .support import support_checks
from .validation import proxy_validation, risk_validation


@dataclass
class Results:
    """Everything the notebook, the claims and the benchmark read."""

    study: Study
    flow: pd.DataFrame
    pairs: dict[str, pd.DataFrame]
    jobs: dict[str, pd.DataFrame]
    hash_check: pd.DataFrame
    conditions: dict[str, pd.DataFrame]
    table21: pd.DataFrame
    neartie: pd.DataFrame
    table22: pd.DataFrame
    strata: pd.DataFrame
    risk_validation: dict
    proxy_validation: dict
    support: dict
    change_fractions: dict
    planning: dict
    positive_control: dict
    unique_prompts: int


def _records(subject: str, stem: str) -> pd.DataFrame:
    """Records of one run: released (``replay``) or from a folder with the released file names."""
    if subject == "replay":
        return read_condition_records(stem) if stem != "neartie" else neartie_records()
    path = Path(subject) / (f"{stem}_records.csv")
    df = pd.read_csv(path)
    return df.rename(columns={"picked_target": "picked_i"}) if stem == "neartie" else df


def condition_pairs(pairs: dict[str, pd.DataFrame], key: str) -> pd.DataFrame:
    """Pair set of a Table 21 condition (first ``n`` of the primary or random-orientation pairs)."""
    _, _, which, _, n = CONDITIONS[key]
    return pairs[which].iloc[:n]


def run_pipeline(subject: str = "replay", n_primary: int = N_PRIMARY, n_sensitivity: int = N_SENSITIVITY,
                 n_neartie: int = N_NEARTIE, n_control: int = N_CONTROL, study: Study | None = None) -> Results:
    """Panel -> design -> prompts -> estimates -> Tables 21 and 22.

    ``subject="replay"`` analyses the released Sonnet records; another value is a folder holding
    records with the released file names (a new collection). The pair counts truncate the analysed
    pair sets (the design itself is fixed at the paper's sizes, as the released samples were built).
    """
    st = default_study() if study is None else study
    flow = cohort_flow(read_raw_panel()) if study is None else cohort_flow_from_study(st)
    pairs = design_pairs(st)
    sizes = {"primary": n_primary, "first300": min(n_sensitivity, n_primary), "random": n_sensitivity,
             "reverse": n_sensitivity, "seeded": n_sensitivity, "stratified": N_STRATIFIED}
    jobs, checks, conds, rows = {}, {}, {}, []
    for key, (label, stem, which, ordering, _) in CONDITIONS.items():
        p = condition_pairs(pairs, key).iloc[:sizes[key]]
        jobs[key] = render_jobs(st, p, ordering)
        rec = _records(subject, stem)
        rec = rec[rec["pair_id"] < len(p)]
        checks[key] = hash_check(jobs[key], rec)
        learner = learner_pair_effects(st, p, ordering)
        conds[key] = condition_summary(rec, learner)
        a = conds[key].loc["all"]
        rows.append({"condition": label, "pairs": int(a["n"]), "changed": int(jobs[key].groupby("pair_id")
                     ["proxy_changed"].max().sum()), "pse_pp": a["pse_pp"], "lo_pp": a["lo_pp"], "hi_pp": a["hi_pp"],
                     "learner_pp": conds[key].loc["learner", "pse_pp"]})
    table21 = pd.DataFrame(rows).set_index("condition")
    nt_pairs = {"neartie": pairs["neartie"].iloc[:n_neartie], "wide": pairs["control"].iloc[:n_control]}
    nt_rec = _records(subject, "neartie")
    nt_rec = nt_rec[((nt_rec["sample"] == "neartie") & (nt_rec["pair_id"] < n_neartie))
                    | ((nt_rec["sample"] == "wide") & (nt_rec["pair_id"] < n_control))]
    for sample, prefix in (("neartie", "nt:"), ("wide", "wd:")):
        jobs[sample] = render_jobs(st, nt_pairs[sample], "fixed", prefix=prefix)
        checks[sample] = hash_check(jobs[sample], nt_rec[nt_rec["sample"] == sample])
    learners = {s: learner_pair_effects(st, p) for s, p in nt_pairs.items()}
    nts = neartie_summary(nt_rec, learners)
    table22 = pd.DataFrame({
        "group": ["Near tie, gap <0.3", "Wide-gap control", "Near tie minus control"],
        "pairs": [int(nts.loc[("neartie", "all"), "n"]), int(nts.loc[("wide", "all"), "n"]), np.nan],
        "changed": [int(nts.loc[("neartie", "changed"), "n"]), int(nts.loc[("wide", "changed"), "n"]), np.nan],
        "pse_pp": [nts.loc[(s, "all"), "pse_pp"] for s in ("neartie", "wide", "difference")],
        "lo_pp": [nts.loc[(s, "all"), "lo_pp"] for s in ("neartie", "wide", "difference")],
        "hi_pp": [nts.loc[(s, "all"), "hi_pp"] for s in ("neartie", "wide", "difference")],
        "changed_pse_pp": [nts.loc[("neartie", "changed"), "pse_pp"], nts.loc[("wide", "changed"), "pse_pp"], np.nan],
        "changed_lo_pp": [nts.loc[("neartie", "changed"), "lo_pp"], nts.loc[("wide", "changed"), "lo_pp"], np.nan],
        "changed_hi_pp": [nts.loc[("neartie", "changed"), "hi_pp"], nts.loc[("wide", "changed"), "hi_pp"], np.nan],
    }).set_index("group")
    strata = stratum_estimates(_records(subject, CONDITIONS["stratified"][1]), pairs["stratified"])
    primary = pairs["primary"].iloc[:n_primary]
    cf = change_fractions(st, primary)
    pc = positive_control_references(st, primary)
    pc = {"full_information_pp": pc["full_information_pp"], "learner_pp": pc["learner_pp"],
          "same_payer_indicator": same_payer_indicator(st, primary), "targets": len(primary)}
    runs = ("primary", "random", "reverse", "seeded", "stratified")
    return Results(
        study=st, flow=flow, pairs=pairs, jobs=jobs, hash_check=pd.DataFrame(checks).T, conditions=conds,
        table21=table21, neartie=nts, table22=table22, strata=strata,
        risk_validation=risk_validation(st), proxy_validation=proxy_validation(st),
        support=support_checks(st, primary["i"].to_numpy()), change_fractions=cf,
        planning=planning(round(max(cf.values()), 3), n_pairs=len(primary)), positive_control=pc,
        unique_prompts=int(sum(jobs[k]["job_id"].nunique() for k in runs)))


def cohort_flow_from_study(st: Study) -> pd.DataFrame:
    """Cohort flow of a study built from a given raw panel (the last step only)."""
    return pd.DataFrame({"step": ["First eligible encounter per patient"], "encounters": [len(st.panel)],
                         "patients": [st.panel["patient_nbr"].nunique()]})


@functools.lru_cache(maxsize=1)
def default_results() -> Results:
    """:func:`run_pipeline` with the paper's settings (cached per process)."""
    return run_pipeline()


def missing_payer_comparison(raw: pd.DataFrame | None = None) -> pd.DataFrame:
    """Both readings of a missing payer code against the released counts and prompt hashes."""
    raw = read_raw_panel() if raw is None else raw
    rows = []
    for mp in ("null", "?"):
        st = default_study() if mp == "null" else build_study(raw, missing_payer=mp)
        pairs = design_pairs(st)
        p = pairs["primary"]
        jobs = render_jobs(st, p, "fixed")
        chk = hash_check(jobs, read_condition_records(CONDITIONS["primary"][1]))
        counts = st.panel["payer"].value_counts()
        rows.append({"missing payer read as": "null -> Not recorded" if mp == "null" else "'?' -> Other insurer",
                     "cohort": len(st.panel), "Not recorded": int(counts.get(PAYER_MISSING, 0)),
                     "Other insurer": int(counts.get(PAYER_OTHER, 0)),
                     "changed primary targets": int(st.coupling["fixed"].loc[p["i"], "changed"].sum()),
                     "job ids matched (of 4,800)": chk["job_ids_matched"]})
    return pd.DataFrame(rows).set_index("missing payer read as")


def positive_control_variants(st: Study, primary: pd.DataFrame) -> pd.DataFrame:
    """Positive-control references under the UNRESOLVED choices (indicator, standardisation)."""
    rows = []
    for ind in ("medicaid", "medicaid_or_selfpay"):
        for pop in ("risk_train", "all"):
            r = positive_control_references(st, primary, ControlRule(ind, pop))
            rows.append({"indicator": ind, "standardised on": pop,
                         "same indicator (of 1,200)": same_payer_indicator(st, primary, ind),
                         "full-information pp": round(r["full_information_pp"], 2),
                         "learner pp": round(r["learner_pp"], 2)})
    return pd.DataFrame(rows)
