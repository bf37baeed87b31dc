"""Every registered claim of Tables 7-15 and 18-20, Supplementary Notes 6-7 and 9-12 and the Fig. 4A text."""
from __future__ import annotations

from ..cells import parse_cell
from ..estimators import pair_pse
from ..records import NotReleased, load_records
from .anchors import proxy_anchors, structure_anchors
from .decomposition import audit_decomposition
from .logistic import GEE_DRAWS, TABLE8_ROWS, logistic_table
from .naming import sonnet_k12_naming_summary
from .order import TABLE9_MODELS, table9, table11, table12, table13, table20
from .regeneration import REGEN_CELLS, frozen_baseline_checks, table19, v41_difference
from .scaling import comparator_moves, scaling_sensitivity
from .temperature import temperature_table

T7_MISSING = ("per-call records of the separate Sonnet k=6 difficulty-stratum sample (60 pairs, strata "
              "[0,0.3), [0.3,0.6), [0.6,1.0)) and any condition summary by stratum; data/summaries/acore/* "
              "hold a different 99-pair audit-input sample without strata")
_T8_COLS = {"effect": "effect_pp", "lo": "lo", "hi": "hi", "p": "p", "order": "order_coef", "order_p": "order_p"}
_T9_COLS = {"pos_fact": "pos_first_factual", "pos_a1": "pos_first_cf_a1", "pos_a0": "pos_first_cf_a0",
            "dcons_med": "d_consistent_median", "dcons_max": "d_consistent_max", "ncons": "n_consistent_median",
            "dlpm_max": "d_lpm_max", "sign_changes": "sign_changes"}
_T20_COLS = {"fact": "inconsistency_factual", "a1": "inconsistency_cf_a1", "a0": "inconsistency_cf_a0"}


def claim_values(draws: int = GEE_DRAWS) -> dict[str, object]:
    """Every registered claim of Tables 7-15, 18-20, Supplementary Notes 6-7 and 9-12 and the Fig. 4A text."""
    out: dict[str, object] = {}
    # Table 8 / 10 and Supplementary Note 6
    lt = logistic_table(draws)
    for key in list(TABLE8_ROWS)[:10]:
        for col, field in _T8_COLS.items():
            out[f"T8.{key}.{col}"] = lt[key][field]
    for tag in ("s20001", "s20002"):
        out[f"SN6.deepseek.{tag}.effect"] = lt[f"sup.deepseek.{tag}"]["effect_pp"]
        out[f"SN6.deepseek.{tag}.p"] = lt[f"sup.deepseek.{tag}"]["p"]
    for key in ("rep.sonnet12", "rep.sonnet18", "rep.deepseek", "rep.qwen", "rep.gpt"):
        row = key.split(".")[1]
        for o, name in ((0, "first"), (1, "second")):
            eff, lo, hi = lt[key]["per_order"][o]
            out[f"T10.{row}.{name}"], out[f"T10.{row}.{name}.lo"], out[f"T10.{row}.{name}.hi"] = eff, lo, hi
        out[f"T10.{row}.p"] = lt[key]["interaction_p"]
    for key in ("sup.sonnet18", "sup.gpt", "sup.qwen", "sup.deepseek"):
        for o, name in ((0, "first"), (1, "second")):
            out[f"SN6.contrast.{key.split('.')[1]}.{name}"] = lt[key]["per_order"][o][0]
    out["SN6.interaction.significant"] = sum(lt[k]["p"] < 0.05 for k in ("sup.sonnet18", "sup.deepseek", "sup.qwen",
                                                                         "sup.gpt"))
    replacement_rows = ("rep.sonnet12", "rep.sonnet18", "rep.deepseek", "rep.qwen", "rep.gpt")
    out["SN6.order_interaction.significant"] = sum(lt[k]["interaction_p"] < 0.05 for k in replacement_rows)
    out["SN6.contrast.reach_zero"] = sum(lt[key]["per_order"][o][2] >= 0 for o in (0, 1)
                                         for key in ("sup.sonnet18", "sup.gpt", "sup.qwen", "sup.deepseek"))
    # Table 9, Table 20
    t9 = table9()
    for m in TABLE9_MODELS:
        for col, field in _T9_COLS.items():
            out[f"T9.{m}.{col}"] = float(t9.at[m, field])
    t20 = table20()
    for m in TABLE9_MODELS:
        for scope in ("dose", "all"):
            if m == "sonnet" and scope == "all":
                continue
            for col, field in _T20_COLS.items():
                out[f"T20.{m}.{scope}.{col}"] = float(t20.at[m, f"{scope}_{field}"])
    # Tables 11-13
    for r in table11().itertuples():
        out.update({f"T11.{r.row}.full": r.full_pp, f"T11.{r.row}.cons": r.consistent_pp,
                    f"T11.{r.row}.cons.lo": r.lo_pp, f"T11.{r.row}.cons.hi": r.hi_pp,
                    f"T11.{r.row}.ncons": r.n_consistent, f"T11.{r.row}.lpm": r.position_adjusted_pp})
    for r in table12().itertuples():
        out.update({f"T12.{r.row}.full": r.full_pp, f"T12.{r.row}.joint": r.joint_pp,
                    f"T12.{r.row}.joint.lo": r.lo_pp, f"T12.{r.row}.joint.hi": r.hi_pp,
                    f"T12.{r.row}.njoint": r.n_joint})
    for r in table13().itertuples():
        p = f"T13.{r.model}.{r.names}"
        out.update({f"{p}.full": r.full_slope, f"{p}.joint": r.joint_slope, f"{p}.lo": r.lo, f"{p}.hi": r.hi,
                    f"{p}.njoint": r.n_joint})
    # Tables 14-15, Supplementary Note 7
    sa = structure_anchors()
    for r in sa.itertuples():
        out.update({f"T14.{r.panel}.k": r.k, f"T14.{r.panel}.n": r.n, f"T14.{r.panel}.c": r.c_norm,
                    f"T14.{r.panel}.lo": r.lo, f"T14.{r.panel}.hi": r.hi})
    out["SN7.inside"] = int(sa["inside_band"].sum())
    for r in proxy_anchors().itertuples():
        out.update({f"T15.{r.row}.k": r.k, f"T15.{r.row}.n": r.n, f"T15.{r.row}.r2": r.r2})
    # Table 18, Supplementary Note 9 (summary-level)
    decomposition = audit_decomposition()
    full = decomposition.attrs["full_panel"]
    ad = decomposition.set_index(["row", "names"])
    for (row, names), r in ad.iterrows():
        key = {"full_omission": "full", "partial_omission": "partial", "distribution_shift": "shift",
               "label_mismatch": "label"}[row]
        p = f"T18.{key}" if key == "label" else f"T18.{key}.{names}"
        out[f"{p}.gap"] = r["gap_pp"]
        if key != "label":
            out.update({f"{p}.gap.lo": r["gap_lo"], f"{p}.gap.hi": r["gap_hi"], f"{p}.iw": r["iw_gap_pp"],
                        f"{p}.iw.lo": r["iw_lo"], f"{p}.iw.hi": r["iw_hi"]})
    for names in ("neutral", "social"):
        out[f"SN9.full.{names}"], out[f"SN9.full.{names}.lo"], out[f"SN9.full.{names}.hi"] = full[names]
    shift = ad.loc[("distribution_shift", "neutral"), "gap_pp"]
    out["SN9.ratio.omission"] = ad.loc[("full_omission", "neutral"), "gap_pp"] / shift
    out["SN9.ratio.label"] = ad.loc[("label_mismatch", "neutral vs social"), "gap_pp"] / shift
    # Table 7 (not released)
    for s in ("s0", "s1", "s2", "overall"):
        for col in ("n", "social", "neutral", "contrast", "lo", "hi"):
            out[f"T7.{s}.{col}"] = NotReleased(T7_MISSING)
    # Table 19 (Sonnet concurrent check), Supplementary Notes 11-12
    t19 = table19().set_index(["cell", "quantity"])
    for level in ("zero", "b060"):
        for col, q in (("frozen", "frozen"), ("stoch", "stochastic"), ("diff", "difference")):
            r = t19.loc[(level, q)]
            out[f"T19.{level}.{col}"], out[f"T19.{level}.{col}.lo"], out[f"T19.{level}.{col}.hi"] = (
                r["effect"], r["lo"], r["hi"])
    r = t19.loc[("pooled", "difference")]
    out.update({"T19.pooled.diff": r["effect"], "T19.pooled.diff.lo": r["lo"], "T19.pooled.diff.hi": r["hi"],
                "T19.pooled.diff.lo90": r["lo90"], "T19.pooled.diff.hi90": r["hi90"]})
    for scheme, tag in (("frozen", "frozen"), ("stochastic", "stoch")):
        r = t19.loc[("pooled", f"slope.{scheme}")]
        out[f"T19.pooled.slope.{tag}"], out[f"T19.pooled.slope.{tag}.lo"], out[f"T19.pooled.slope.{tag}.hi"] = (
            r["effect"], r["lo"], r["hi"])
    for level, cell_id in REGEN_CELLS.items():
        cell = parse_cell(cell_id)
        out[f"SN11.sonnet.battery.{level}"] = 100 * pair_pse(load_records("sonnet", cell)).mean()
        out[f"SN11.deepseek.battery.{level}"] = 100 * pair_pse(load_records("deepseek", cell)).mean()
    for level in REGEN_CELLS:
        v = v41_difference(level)
        out[f"SN11.v41.{level}.frozen"] = v["frozen_pp"]
        out[f"SN11.v41.{level}.stoch"] = v["stochastic_pp"]
        out[f"SN11.v41.{level}.diff"], out[f"SN11.v41.{level}.diff.lo"], out[f"SN11.v41.{level}.diff.hi"] = (
            v["diff_pp"], v["lo_pp"], v["hi_pp"])
    fb = frozen_baseline_checks()
    for level in REGEN_CELLS:
        out[f"SN12.{level}.inc.factual"] = fb.at[level, "inconsistency_factual"]
        out[f"SN12.{level}.inc.a1"] = fb.at[level, "inconsistency_cf_a1"]
        out[f"SN12.{level}.inc.a0"] = fb.at[level, "inconsistency_cf_a0"]
    out["SN12.b060.single"] = fb.at["b060", "frozen_pse_pp"]
    out["SN12.slope.t0"] = fb.attrs["two_point_slope"]
    tt = temperature_table()
    out["SN12.calls"] = tt.at["zero", "calls"]  # 7,920 in each cell
    out["SN12.unparseable"] = tt.at["zero", "unparseable"]  # 2 in each cell
    for level in REGEN_CELLS:
        out[f"SN12.outside.{level}"] = tt.at[level, "outside"]
        out[f"SN12.corr.{level}"] = tt.at[level, "corr"]
        for col, key in (("prob", "prob"), ("diff", "diff")):
            out[f"SN12.{col}.{level}"] = tt.at[level, f"{key}_pp"]
            out[f"SN12.{col}.{level}.lo"] = tt.at[level, f"{key}_lo"]
            out[f"SN12.{col}.{level}.hi"] = tt.at[level, f"{key}_hi"]
    out["SN12.slope.t1"] = tt.attrs["slope_t1"]
    # Supplementary Note 10
    out["SN10.moved"] = len(comparator_moves())
    ss = scaling_sensitivity().set_index("model")
    for m in ("deepseek", "qwen", "gpt"):
        out[f"SN10.{m}.full"] = ss.at[m, "pse_pp"]
        out[f"SN10.{m}.excl"] = ss.at[m, "pse_excluding_pp"]
    # main text, Fig. 4A: reliance lowered by social names (neutral minus social, pp)
    out["Main.naming.sonnet"] = -sonnet_k12_naming_summary()
    for m in ("gpt", "qwen", "deepseek"):
        out[f"Main.naming.{m}"] = -lt[f"sup.{m}"]["effect_pp"]
    return {k: (v if isinstance(v, NotReleased) else float(v)) for k, v in out.items()}
