# ---
# jupyter:
#   jupytext:
#     formats: ipynb,py:percent
#     text_representation:
#       extension: .py
#       format_name: percent
#   kernelspec:
#     display_name: Python 3
#     language: python
#     name: python3
# ---

# %% [markdown]
# # 04 · References and the main comparison, number by number
#
# Every model's reliance (PSE) is set against two references computed on the same replacements:
# the **full-information reference**, which ranks by true risk and is exactly zero when the
# proxies predict nothing, and the **reference learner**, a Bayesian linear regression
# (σ = 0.5, τ = 1, intercept) fitted to the same labelled examples the prompt shows (paper §2.1,
# §4.3; spec PROTOCOL-statistics §8). This notebook computes both references for every cell,
# the four-model battery's cell tables (Supplementary Tables 23-26), the predictive-value sweep
# and tracking slopes (Tables 3-5, Fig. 2), the excess judgments (Fig. 1B), the Sonnet
# manipulations of dependence, example structure, count and correlation (Tables 16, 17, 27, 28,
# Fig. 4B-C) and the main-text numbers of §2.2, §2.4 and §2.5 — each printed beside the paper's
# value with a status. All logic lives in `analysis.references`, `analysis.estimators` and
# `analysis.battery`.
#
# **Inputs** (through `analysis.data`, verified by SHA-256): the per-call records
# `data/canonical/claude-sonnet-4-5/*`, `data/raw_records/claude-sonnet-4-5/{expK_g1_*, coupling,
# dcal_sweep, mechanism, dimension_by_structure}/*`, `data/raw_records/{DeepSeek-V4-Flash-0731,
# qwen3.7-max, gpt-5.6-terra}/*` (with `seed_replication/` and GPT's `repeated_measurement/`), and
# the condition summary `data/summaries/gate_summaries/expK_gate1_summary.csv` for the six Sonnet
# no-example cells released only as summaries. Populations, pairs and example sets are our own
# (`analysis.population`).
#
# **Outputs** (in `output_dir`; `make paper` writes the tracked folders, a run by hand the
# git-ignored `out/notebooks/`): `figures/fig1b_excess.{png,pdf}`, `figures/fig2_tracking.{png,pdf}`,
# `figures/fig4bc_fields.{png,pdf}`; `data/derived/references.csv`, `battery_cells.csv`,
# `tracking_slopes.csv`, `seed_replication_fits.csv`, `gpt_repeated_measurement.csv`,
# `frozen_policy.csv`, `dimension_by_dependence.csv`, `example_structure.csv`, `example_count.csv`,
# `example_correlation.csv`, `excess_judgments.csv`.

# %%
import pandas as pd
from IPython.display import display

from analysis import battery, cells, figures, notebook, products, references, registry, tables

TEXT_COLUMNS = ["row", "column", "paper", "ours", "status"]  # the short text form that nbval checks

pd.set_option("display.width", 250, "display.max_columns", 30, "display.max_colwidth", 40,
              "display.max_rows", 400)

# %% tags=["parameters"]
output_dir = "../out/notebooks"  # where figures/ and data/derived/ go; `make paper` passes ".." (the tracked folders)

# %% [markdown]
# Every interval here uses the release's 5,000 pair-bootstrap draws and seeds (paper §4.4), so this
# notebook has no draws parameter: other draws would not reproduce the printed intervals.

# %%
folders = notebook.output_folders(output_dir)
reference_cells = [cells.parse_cell(c) for c in battery.reference_cells()]  # the ids parsed once, here
values = battery.claim_values()  # every claim of this notebook, computed once (cached tables)
products.write("battery", values, output_dir)  # what the claims check reads (issue 21)

# %% [markdown]
# ## References for every cell
# Both references of every cell the battery and the manipulations use, seed replications
# included. The full-information PSE is exactly 0 in every zero-information cell; without
# examples there is no learner. `learner_error_pct` is R_Ideal, the learner's factual ranking
# error over all 99 pairs. The same numbers come from `python -m analysis reference --cell CELL`.

# %%
# NBVAL_CHECK_OUTPUT
ref = references.reference_table(reference_cells)
cols = ["cell", "fullinfo_pse_pp", "learner_pse_pp", "learner_error_pct"]
print(ref[cols].round(2).to_string(index=False))
zero = ref[ref["beta"] == 0]
print(f"\n{len(ref)} cells; full-information PSE exactly 0 in all {len(zero)} zero-information cells:",
      bool((zero["fullinfo_pse_pp"] == 0).all()))

# %%
notebook.long_table(ref[cols], "References for every cell", csv="../data/derived/references.csv")

# %% [markdown]
# ## The predictive-value sweep
# The sweep raises the proxies' contribution to true risk in four steps (β = 0, 0.30, 0.45,
# 0.60) with the total risk variance held near 1.1; pairs are drawn once at β = 0. The learner's
# reference rises from 0 to 23 pp (checkpoint C7), the full-information reference from 0 to 27 pp
# (C8). Seed replications (S = 20001, 20002) redraw the population, pairs and examples, so their
# learner references differ.

# %%
# NBVAL_CHECK_OUTPUT
print(battery.sweep_references().round(2).to_string(index=False))

# %% [markdown]
# ## Cell tables (Supplementary Tables 23-26)
# Per cell: factual error, regret (model error minus learner error), PSE with its 95%
# pair-bootstrap interval (5,000 draws, seed 2: the released cell script), the learner PSE and
# the excess over the full-information reference. Each entry reads `paper | ours`. Sonnet's
# social sweep cells use the 97 pairs resolved at every level (Table 23 caption). Six Sonnet
# no-example cells are reproduced at summary level from `expK_gate1_summary.csv` (their per-call
# records are not released).
#
# **Seeds (UNRESOLVED, spec §9.2).** No single seed reproduces every printed Sonnet interval (the
# release's intervals come from several scripts). We use seed 2 throughout; where a printed
# Sonnet bound differs, it is by one bootstrap grid step (50/n pp), which is the tolerance of
# those bounds in the registry. Seed 2 reproduces every interval of Tables 24-26.

# %%
# NBVAL_CHECK_OUTPUT
print(registry.paper_vs_ours(values, table="Table 23").query("row != 'caption'")[TEXT_COLUMNS].to_string(index=False))

# %%
notebook.claims_table(registry.paper_vs_ours(values, table="Table 23"), "Table 23 (Sonnet)")

# %%
# NBVAL_CHECK_OUTPUT
for tn in (24, 25, 26):
    print(f"Table {tn}")
    print(registry.paper_vs_ours(values, table=f"Table {tn}").query("row != 'caption'")[TEXT_COLUMNS].to_string(index=False), "\n")

# %%
for tn, model in ((24, "DeepSeek"), (25, "Qwen"), (26, "GPT")):
    display(notebook.claims_table(registry.paper_vs_ours(values, table=f"Table {tn}"), f"Table {tn} ({model})"))

# %% [markdown]
# The captions state the full-information references. The β = 0.30 reference is 6.06 pp:
# Table 23 prints 6.1, Tables 24-26 print 6.0 (a discrepancy of the paper, noted in the registry).

# %%
# NBVAL_CHECK_OUTPUT
caps = pd.concat([registry.paper_vs_ours(values, table=f"Table {tn}") for tn in (23, 24, 25, 26)])
print(caps[caps["row"] == "caption"][["claim_id", "paper", "ours", "status"]].to_string(index=False))

# %% [markdown]
# ## Tracking slopes (Table 4, Fig. 2)
# `PSE_model = α + γ · PSE_learner` over the four levels, on the pairs resolved at every level.
# Table 4 resamples the shared pairs once per draw for all eight fits (seed 0) with the
# two-decimal learner values as x (spec §9.4); the simultaneous one-sided bound uses the maximum
# standardised deviation over the fits; pooled slopes are unweighted means with one-sided 95%
# bounds (the 90% interval). A slope of 1 means the model adjusts as much as the learner.

# %%
# NBVAL_CHECK_OUTPUT
t4 = battery.tracking_table()
print(t4.round(3).to_string(index=False))
print()
print(registry.paper_vs_ours(values, table="Table 4").query("row != 'caption'")[TEXT_COLUMNS].to_string(index=False))

# %%
notebook.claims_table(registry.paper_vs_ours(values, table="Table 4"), "Table 4")

# %%
points = battery.sweep_points()
fig2 = figures.fig2_tracking(points, battery.tracking_table())
notebook.figure(fig2, "Fig. 2")

# %% [markdown]
# **Fig. 2.** Each model's PSE (pp) at the four sweep levels against the reference learner's PSE,
# with the fitted tracking line per name set and the identity line (full adjustment). Made by the
# cell above (`battery.sweep_points` → `figures.fig2_tracking`) from the released records
# `data/canonical/claude-sonnet-4-5/k12_LH_{neutral,social}_learned_{zero,info_b030,info_b045,info_b060}_records.csv`
# and `data/raw_records/{DeepSeek-V4-Flash-0731,qwen3.7-max,gpt-5.6-terra}/` (same cells), with the
# learner PSE from our population (`references.cell_references`). Saved as `figures/fig2_tracking.{png,pdf}`.


# %% [markdown]
# ## Seed replication (Table 3) and GPT's repeated measurement (Table 5)
# Both use the single-fit bootstrap (5,000 draws, seed 7, exact learner x; spec §9.3, §9.5). The
# seed replications recompute the learner per draw. GPT's two runs are averaged within pair
# before fitting; choosing one run per level gives 16 curves.

# %%
# NBVAL_CHECK_OUTPUT
t3 = battery.seed_replication_fits()
print(t3.round(3).to_string(index=False))
print()
print(registry.paper_vs_ours(values, table="Table 3").query("row != 'caption'")[TEXT_COLUMNS].to_string(index=False))
rep = battery.repeated_measurement()
print()
print(registry.paper_vs_ours(values, table="Table 5").query("row != 'caption'")[TEXT_COLUMNS].to_string(index=False))
fit = rep["fit"]
print(f"\nmean curve: gamma {fit['gamma']:+.3f} [{fit['gamma_ci'][0]:+.3f}, {fit['gamma_ci'][1]:+.3f}], "
      f"alpha {fit['alpha']:+.2f} [{fit['alpha_ci'][0]:+.2f}, {fit['alpha_ci'][1]:+.2f}] pp; "
      f"16 one-run curves: gamma {rep['curves']['gamma'].min():+.3f} to {rep['curves']['gamma'].max():+.3f}")

# %%
display(notebook.claims_table(registry.paper_vs_ours(values, table="Table 3"), "Table 3"))
notebook.claims_table(registry.paper_vs_ours(values, table="Table 5"), "Table 5")

# %% [markdown]
# ## Accuracy does not track reliance (§2.2, §2.5)
# **Frozen policy** (spec §9.6): most of the accuracy gain from β = 0 to 0.60 comes from the
# changed truth (the β = 0 choices scored against the β = 0.60 truth); the residual is the gain
# from changed choices (one bootstrap generator, seed 9, shared in the release's order).

# %%
# NBVAL_CHECK_OUTPUT
print(battery.frozen_policy_table().round(2).to_string(index=False))

# %%
notebook.long_table(battery.frozen_policy_table(), "Frozen policy")

# %% [markdown]
# **Dimension by dependence** (Table 16, Fig. 4B-C; Supplementary Note 8). Evaluated patients and
# examples share the configuration. HH intervals: the assembly of the Sonnet HH cells is
# UNRESOLVED (spec UNRESOLVED 8); we read the per-arm `dimension_by_structure` files.

# %%
# NBVAL_CHECK_OUTPUT
print(registry.paper_vs_ours(values, table="Table 16").query("row != 'caption'")[TEXT_COLUMNS].to_string(index=False))
inter = battery.dimension_interaction()
print("\nreversal [PSE(18,HH)-PSE(6,HH)]-[PSE(18,LH)-PSE(6,LH)] per model:",
      {m: float(round(v, 2)) for m, v in inter["per_model"].items()})
print(f"pooled {inter['pooled']:+.2f} pp [{inter['lo']:+.2f}, {inter['hi']:+.2f}] (paper -15.1 [-22.4, -7.9])")

# %%
notebook.claims_table(registry.paper_vs_ours(values, table="Table 16"), "Table 16")

# %%
dim = battery.dimension_table()
fig4 = figures.fig4bc_fields(dim)
notebook.figure(fig4, "Fig. 4B-C")

# %% [markdown]
# **Fig. 4B-C.** Sonnet against the number of displayed fields, zero-information proxies, low (LH) and
# high (HH) task dependence. B: factual ranking error with neutral names, with eighty examples and
# without examples. C: PSE with eighty examples, neutral and social names, with 95% intervals. Made by the cell above (`battery.dimension_table` → `figures.fig4bc_fields`)
# from `data/canonical/claude-sonnet-4-5/k{6,12,18}_LH_*_learned_zero_records.csv` and
# `data/raw_records/claude-sonnet-4-5/dimension_by_structure/expK_xstr_k{6,18}_HH_*_records.csv`.
# Saved as `figures/fig4bc_fields.{png,pdf}`.


# %% [markdown]
# **Example structure only** (Table 17): LH pairs, examples from each configuration. Across these
# cells, regret and PSE are only weakly related once k is accounted for (partial correlation,
# bootstrap seed 101 with the shared pairs of each k resampled once per draw; spec §9.10).
# Within cells, misranked pairs respond more to the replacement (two-sided permutation p,
# seed 202).

# %%
# NBVAL_CHECK_OUTPUT
print(registry.paper_vs_ours(values, table="Table 17").query("row != 'caption'")[TEXT_COLUMNS].to_string(index=False))
pc, pc_all = battery.coupling_partial_correlation(), battery.coupling_partial_correlation(include_k18_hh=True)
print(f"\npartial r(regret, PSE | k), k=18 HH excluded: {pc['partial_r']:+.3f} [{pc['lo']:+.3f}, {pc['hi']:+.3f}]; "
      f"all 12 cells: {pc_all['partial_r']:+.3f}")
pl = battery.pair_level_covariation()
print(pl.round(4).to_string(index=False))
print(f"mean r {pl['r'].mean():+.3f}; controlling the task-risk gap {pl['r_given_gap'].mean():+.3f}; "
      f"p < 0.05 in {(pl['p_perm'] < 0.05).sum()} of {len(pl)}; Stouffer p = {battery.stouffer_p(pl['p_perm']):.1e}")

# %%
notebook.claims_table(registry.paper_vs_ours(values, table="Table 17"), "Table 17")

# %% [markdown]
# ## Example count and example correlation (Tables 27, 28; Supplementary Note 18)
# Table 27's intervals are those of the released summary `data/summaries/dcal_sweep_summary.csv`,
# whose seed is not given (spec R10): the claims read them there, and the table below puts our own
# intervals with the cell seed 2 beside them (n = 12's upper bound differs). The summary's errors and
# PSEs equal ours. Table 28's intervals use the cell seed 2 (tolerance one grid step where needed).
# The example-correlation construction is reconstructed (spec §4.4, UNRESOLVED 2); it reproduces the
# learner references exactly (checkpoint C16).

# %%
# NBVAL_CHECK_OUTPUT
t27 = battery.example_count_table()
print(t27[["n_examples", "pse_pp", "summary_pse_lo", "summary_pse_hi", "pse_lo", "pse_hi"]]
      .rename(columns={"pse_lo": "seed2_pse_lo", "pse_hi": "seed2_pse_hi"}).round(2).to_string(index=False))

# %%
# NBVAL_CHECK_OUTPUT
print(registry.paper_vs_ours(values, table="Table 27").query("row != 'caption'")[TEXT_COLUMNS].to_string(index=False))
print()
print(registry.paper_vs_ours(values, table="Table 28").query("row != 'caption'")[TEXT_COLUMNS].to_string(index=False))

# %%
display(notebook.claims_table(registry.paper_vs_ours(values, table="Table 27"), "Table 27"))
notebook.claims_table(registry.paper_vs_ours(values, table="Table 28"), "Table 28")

# %% [markdown]
# ## Judgments (Fig. 1B)
# The difference from the reference with its 95% interval: excess when the interval lies above
# zero, shortfall below, otherwise no resolved difference. Left: without examples, against the
# full-information reference; right: eighty examples, zero information, neutral names, against
# the reference learner.

# %%
# NBVAL_CHECK_OUTPUT
judg = battery.excess_judgments()
print(judg[["panel", "row", "names", "proxies", "excess_pp", "lo", "hi", "verdict", "source"]]
      .round(2).to_string(index=False))
print()
print(judg.groupby(["panel", "verdict"]).size().to_string())

# %%
fig1b = figures.fig1b_excess(judg)
notebook.figure(fig1b, "Fig. 1B")

# %% [markdown]
# **Fig. 1B.** PSE minus the reference (pp) with 95% pair-bootstrap intervals; filled circles excess,
# open circles no resolved difference, filled squares shortfall. Left: no examples, zero-information
# and informative proxies, against the full-information reference; right: eighty examples,
# zero-information proxies, neutral names, against the reference learner. Made by the cell above
# (`battery.excess_judgments` → `figures.fig1b_excess`) from the battery records of the four models
# (`data/canonical/…`, `data/raw_records/…/k*_LH_*_{absent,learned}_{zero,info}_records.csv`; Sonnet's
# six summary-only no-example cells from `data/summaries/gate_summaries/expK_gate1_summary.csv`).
# Saved as `figures/fig1b_excess.{png,pdf}`.


# %% [markdown]
# ## Main-text and Supplementary Note numbers
# §2.2, §2.4 and §2.5 (table `Main`, ids `Main.s22.*`, `Main.s24.*`, `Main.s25.*`) and the prose of
# Supplementary Notes 2, 3, 8 and 18. Supplementary Note 16 has no prose numbers beyond its
# tables' captions (above).

# %%
# NBVAL_CHECK_OUTPUT
for table in ("Main", "SN 2", "SN 3", "SN 8", "SN 18"):
    pv = registry.paper_vs_ours(values, table=table).assign(note=lambda d: d["note"].str[:60])
    print(table)
    print(pv[["claim_id", "paper", "ours", "status", "note"]].to_string(index=False), "\n")

# %%
for table in ("Main", "SN 2", "SN 3", "SN 8", "SN 18"):
    display(notebook.claims_table(registry.paper_vs_ours(values, table=table), table))

# %% [markdown]
# ## Status of every claim of this notebook
# The mismatches are explained in the registry's notes: the β = 0.30 reference printed 6.0 in
# Tables 24-26 (it is 6.06), the pooled reversal printed −15.1 (the mean of −21.21, −15.15 and
# −9.09 is −15.15) and the pair-level correlation "controlling for pair difficulty" (+0.223),
# whose difficulty measure is not specified (controlling the task-risk gap gives +0.219).

# %%
# NBVAL_CHECK_OUTPUT
view = registry.paper_vs_ours(values)
counts = pd.crosstab(view["table"], view["status"]).reindex(columns=["match", "mismatch", "not_released"], fill_value=0)
print(counts.to_string())
print("\ntotal:", counts.sum().to_dict())

# %% [markdown]
# ## Products

# %%
saved = [notebook.save_figure(f, name, folders)
         for f, name in ((fig1b, "fig1b_excess"), (fig2, "fig2_tracking"), (fig4, "fig4bc_fields"))]
products = {
    "references.csv": ref,
    "battery_cells.csv": battery.all_cell_results(),
    "tracking_slopes.csv": t4,
    "sweep_points.csv": points,
    "seed_replication_fits.csv": t3,
    "gpt_repeated_measurement.csv": rep["table"],
    "frozen_policy.csv": battery.frozen_policy_table(),
    "dimension_by_dependence.csv": dim,
    "example_structure.csv": battery.example_structure_table(),
    "example_count.csv": battery.example_count_table(),
    "example_correlation.csv": battery.example_correlation_table(),
    "excess_judgments.csv": judg,
}
for name, df in products.items():
    assert len(df) and not df.empty, name
    tables.write_derived(df, folders.derived / name)
print("wrote", ", ".join(saved), "and in", folders.show(folders.derived) + ":", ", ".join(sorted(products)))
