"""The registered claims of the real-record study (Tables 21-22, Supplementary Note 14, §2.3/§4.7)."""
from __future__ import annotations

from ..records import NotReleased
from .design import CONDITIONS
from .pipeline import Results, default_results


_T21_KEYS = {"primary": "primary", "first300": "first300", "random": "random", "reverse": "reverse",
             "seeded": "seeded", "stratified": "stratified"}


_POSITIVE_CONTROL_MISSING = ("per-call records of the positive control (Medicaid weight 1.0) are not in the "
                             "release (released/README.md)")


def claim_values(res: Results | None = None) -> dict[str, float | object]:
    """Every registered claim of Tables 21-22, Supplementary Note 14 and the UCI numbers of §2.3/§4.7."""
    res = default_results() if res is None else res
    v: dict[str, object] = {}
    t21 = res.table21
    for key, label in ((k, CONDITIONS[k][0]) for k in _T21_KEYS):
        row = t21.loc[label]
        for col, name in (("pairs", "pairs"), ("changed", "changed"), ("pse_pp", "pse"), ("lo_pp", "lo"),
                          ("hi_pp", "hi")):
            v[f"T21.{key}.{name}"] = float(row[col])
    v["T21.unique_prompts"] = float(res.unique_prompts)
    nts = res.neartie
    for sample, key in (("neartie", "neartie"), ("wide", "control")):
        v[f"T22.{key}.pairs"] = float(nts.loc[(sample, "all"), "n"])
        v[f"T22.{key}.changed"] = float(nts.loc[(sample, "changed"), "n"])
        for part, pre in (("all", ""), ("changed", "changed_")):
            for col, name in (("pse_pp", "pse"), ("lo_pp", "lo"), ("hi_pp", "hi")):
                v[f"T22.{key}.{pre}{name}"] = float(nts.loc[(sample, part), col])
    for col, name in (("pse_pp", "pse"), ("lo_pp", "lo"), ("hi_pp", "hi")):
        v[f"T22.difference.{name}"] = float(nts.loc[("difference", "all"), col])

    pv, rv = res.proxy_validation, res.risk_validation
    v["SN14.proxy.logloss"] = pv["log_loss_group+task"]
    v["SN14.proxy.logloss_task"] = pv["log_loss_task"]
    v["SN14.proxy.logloss_group"] = pv["log_loss_group"]
    v["SN14.proxy.calibration"] = pv["max_calibration_error"]
    v["SN14.support.propensity"] = res.support["propensity_outside_pct"]
    v["SN14.support.substituted"] = res.support["substituted_below_pct"]
    v["SN14.risk.logloss"] = rv["log_loss"]
    v["SN14.risk.logloss_prevalence"] = rv["log_loss_prevalence"]
    v["SN14.risk.auc"] = rv["auc"]
    v["SN14.plan.change_fraction"] = max(res.change_fractions.values())
    v["SN14.plan.pairs"] = res.planning["pairs_needed"]
    v["SN14.plan.power"] = 100 * res.planning["power"]
    prim = res.conditions["primary"]
    for row, key in (("changed", "changed"), ("order0", "order0"), ("order1", "order1"), ("learner", "learner"),
                     ("difference", "difference")):
        for col, name in (("pse_pp", "pse"), ("lo_pp", "lo"), ("hi_pp", "hi")):
            v[f"SN14.{key}.{name}"] = float(prim.loc[row, col])
    for key in ("random", "reverse", "seeded", "stratified"):
        v[f"SN14.reference.{key}"] = float(res.conditions[key].loc["learner", "pse_pp"])
    for k, val in enumerate(res.strata["pse_pp"], start=1):
        v[f"SN14.stratum{k}.pse"] = float(val)
    v["SN14.neartie.learner"] = float(nts.loc[("neartie", "learner"), "pse_pp"])
    for col, name in (("pse_pp", "pse"), ("lo_pp", "lo"), ("hi_pp", "hi")):
        v[f"SN14.neartie.difference.{name}"] = float(nts.loc[("neartie", "difference"), col])
    pc = res.positive_control
    v["SN14.pc.same_payer"] = float(pc["same_payer_indicator"])
    v["SN14.pc.targets"] = float(pc["targets"])
    v["SN14.pc.full_information"] = pc["full_information_pp"]
    v["SN14.pc.learner"] = pc["learner_pp"]
    for name in ("pse", "lo", "hi", "excess", "order0", "order1"):
        v[f"SN14.pc.{name}"] = NotReleased(_POSITIVE_CONTROL_MISSING)

    v["Main.uci.cohort"] = float(len(res.study.panel))
    v["Main.uci.auc"] = rv["auc"]
    v["Main.uci.pairs"] = v["T21.primary.pairs"]
    v["Main.uci.pse"] = v["T21.primary.pse"]
    v["Main.uci.lo"] = v["T21.primary.lo"]
    v["Main.uci.hi"] = v["T21.primary.hi"]
    v["Main.uci.changed_pse"] = v["SN14.changed.pse"]
    v["Main.uci.changed_pairs"] = v["T21.primary.changed"]
    v["Main.uci.learner"] = v["SN14.learner.pse"]
    v["Main.uci.neartie_pairs"] = v["T22.neartie.pairs"]
    v["Main.uci.neartie_pse"] = v["T22.neartie.pse"]
    v["Main.uci.neartie_lo"] = v["T22.neartie.lo"]
    v["Main.uci.neartie_hi"] = v["T22.neartie.hi"]
    v["Main.uci.neartie_changed_pairs"] = v["T22.neartie.changed"]
    v["Main.uci.neartie_changed_hi"] = v["T22.neartie.changed_hi"]
    v["Main.uci.pc_reference"] = pc["full_information_pp"]
    v["Main.uci.pc_reference_methods"] = pc["full_information_pp"]
    for name in ("pc_pse", "pc_lo", "pc_hi", "pc_excess"):
        v[f"Main.uci.{name}"] = NotReleased(_POSITIVE_CONTROL_MISSING)
    return v
