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
# # 05 · Ordered levels versus arbitrary codes: the representation control
#
# The same category information, shown as `level 1`–`level 4` or as fixed two-letter codes, draws
# different reliance (paper §2.3, §4.6, Table 1, Supplementary Note 4 with Table 6). Patients, the 99
# pairs, the replacements, the names and the eighty examples are those of the numeric cell
# `k12_LH_neutral_learned_zero`; only the four proxies are rendered differently. Everything is
# computed by `analysis.representation` (spec PROTOCOL-representation §10).
#
# **Inputs** (through `analysis.data`, verified by SHA-256): the Sonnet encoding-control records
# `data/encoding_control/claude-sonnet-4-5-20250929/catctl_k12_LH_neutral_{learned,absent}_zero_{ordinal,nominal}_records.csv`,
# the second numeric measurement `…_learned_zero_numeric_remeasure_records.csv`, the battery
# reference `data/encoding_control/reference/sonnet_k12_LH_neutral_{learned,absent}_zero_records.csv`,
# the post-hoc refusal-as-missing files `data/encoding_control/posthoc_refusal_excluded/…`, and GPT's
# battery cell `data/raw_records/gpt-5.6-terra/k12_LH_neutral_learned_zero_records.csv`.
# Or, with `records_source` set to a folder written by `python -m analysis collect … --display
# ordered|arbitrary`, the records of a new model.
#
# **Outputs** (in `output_dir`; `make paper` writes the tracked folders, a run by hand the
# git-ignored `out/notebooks/`): `figures/fig3a_representation.{png,pdf}`,
# `data/derived/representation_effects.csv`.

# %%
from pathlib import Path

import pandas as pd
from IPython.display import display

from analysis import config, encoding, figures, notebook, products, prompts, references, registry, representation, tables

TEXT_COLUMNS = ["row", "column", "paper", "ours", "status"]  # the short text form that nbval checks

pd.set_option("display.width", 160, "display.max_colwidth", 60)

# %% tags=["parameters"]
model = "sonnet"  # whose records (the release has the control for Sonnet only)
records_source = "released"  # "released", or a folder <out>/<provider>/<model> written by `collect`
bootstrap_draws = 5000  # pair-bootstrap resamples (paper: 5,000)
pair_id = 0  # the pair of the worked example
output_dir = "../out/notebooks"  # where figures/ and data/derived/ go; `make paper` passes ".." (the tracked folders)

# %%
notebook.check_parameters(
    choices={"model": (model, tuple(config.MODELS)), "pair_id": (pair_id, tuple(range(99)))},
    counts={"bootstrap_draws": bootstrap_draws},
    rules=[(records_source != "released" or model == "sonnet",
            f"model={model!r} with records_source='released': the release has the representation control "
            "for Sonnet only; give records_source a folder written by `python -m analysis collect --display …`"),
           (records_source == "released" or Path(records_source).is_dir(),
            f"records_source={records_source!r} is neither 'released' nor a folder")])
folders = notebook.output_folders(output_dir)
released = records_source == "released" and model == "sonnet" and bootstrap_draws == config.BOOTSTRAP_DRAWS
cell = representation.CELL

# %% [markdown]
# ## Bins and labels
# Each proxy is cut at the quartiles of the factual 5,000-patient population; the same cut points
# apply to the counterfactual samples and to the eighty example rows. Ordered labels name the bin;
# the arbitrary codes (checkpoint C11) are drawn so that no field's codes rise or fall
# alphabetically with the bin.

# %%
# NBVAL_CHECK_OUTPUT
edges = encoding.quartile_edges(cell)
names = prompts.field_names(cell)[8:]
codes = encoding.code_table()[:4]
print(pd.DataFrame({"proxy": names, "q25": edges[:, 0], "q50": edges[:, 1], "q75": edges[:, 2],
                    "codes (bins 1-4)": [", ".join(c) for c in codes]}).round(6).to_string(index=False))

# %% [markdown]
# ## One patient, three renderings
# The target of pair 0 in both counterfactual arms (`A = 1` and `A = 0`), as the prompts show it.
# Task fields stay numeric; only the four proxies change rendering. The replacement moves every
# target's displayed bins, so all 396 prompts of each category rendering are distinct.

# %%
# NBVAL_CHECK_OUTPUT
print(representation.worked_example(pair_id).to_string(index=False))

# %%
text = prompts.render(cell, pair_id, "cf_a1", 0, "arbitrary")
print(text.splitlines()[2], "\n", text.splitlines()[3], "\n…\n" + text.split("\n\nNEW PATIENTS:")[1])

# %% [markdown]
# ## References
# The full-information reference is zero (the proxies carry no information). The reference learner
# of this control is a Bayesian linear regression on the eight numeric task values and indicators of
# bins 1–3 of each proxy (20 columns), fitted on the eighty examples; its coding depends only on the
# bin, so both renderings share it.

# %%
# NBVAL_CHECK_OUTPUT
tb = representation.target_bins(cell)
learner_pp = references.indicator_learner_pse(cell)
print(f"targets whose displayed bins change: {tb['proxy_changed'].sum()} of {len(tb)}")
print(f"distinct prompts per rendering: ordered {representation.distinct_prompts('ordered')}, "
      f"arbitrary {representation.distinct_prompts('arbitrary')}")
print(f"full-information reference: {representation.full_information_pse(cell):+.2f} pp")
print(f"category-indicator learner: {learner_pp:+.4f} pp")

# %% [markdown]
# ## Table 6: Sonnet, eighty examples, 99 shared pairs
# Per pair, the mean choice of the target in `cf_a1` minus `cf_a0`; pairs missing an arm are dropped.
# Each quantity gets its own generator seeded 0, 5,000 resamples of pairs. A contrast subtracts the
# two per-pair series on their shared pairs and bootstraps the difference, so one pair draw serves
# both renderings.

# %%
t6 = representation.table6(records_source, bootstrap_draws, model)
notebook.long_table(t6, "Effects per rendering (pp)")

# %%
# NBVAL_CHECK_OUTPUT
if released:
    values = representation.claim_values()
    products.write("representation", values, output_dir)  # what the claims check reads (issue 21)
    print(registry.paper_vs_ours(values, table="Table 6", not_released="not released", signed_zero=True)[TEXT_COLUMNS].to_string(index=False))

# %%
if released:
    display(notebook.claims_table(registry.paper_vs_ours(values, table="Table 6"), "Table 6"))

# %% [markdown]
# ## The pre-specified margin
# Paper §4.6: a meaningful positive effect is five points or more, chosen before analysis; an
# interval for arbitrary codes ending below five points excludes such an effect (one-sided).

# %%
# NBVAL_CHECK_OUTPUT
arb = t6.set_index("quantity").loc["arbitrary"]
print(f"arbitrary codes: upper bound {arb['hi_pp']:+.2f} pp; below the {config.REPRESENTATION_MARGIN_PP:.0f}-pp "
      f"margin: {representation.excludes_margin(arb['hi_pp'])}")

# %% [markdown]
# ## Table 1: the four models
# Only Sonnet's per-call records of this control are in the release. The GPT, Qwen and DeepSeek rows
# are listed as not released, with what is missing; their printed values are never used as ours.

# %%
# NBVAL_CHECK_OUTPUT
if released:
    print(registry.paper_vs_ours(values, table="Table 1", not_released="not released", signed_zero=True)[TEXT_COLUMNS].to_string(index=False))
    print()
    for m, why in representation.MISSING_MODELS.items():
        print(f"{config.MODELS[m][0]}: {why}")

# %%
if released:
    display(notebook.claims_table(registry.paper_vs_ours(values, table="Table 1"), "Table 1"))

# %% [markdown]
# ## Supplementary Note 4: the second numeric measurement, the no-example secondary and refusals
# The second numeric measurement repeats the battery's numeric prompts on the day of the category
# conditions; its answers agree with the August battery on most calls. Without examples the prompt
# says that higher values mean greater severity, which codes cannot express. In the no-example code
# condition 124 accepted answers ended with a refusal stop after a valid choice; the primary rule
# counts them, the post-hoc variant treats them as missing.

# %%
if records_source == "released" and model == "sonnet":
    print(representation.no_example_table("released", bootstrap_draws).round(2).to_string(index=False))
    print("\nrefusal-stopped answers as missing (post hoc):")
    print(representation.no_example_table("posthoc", bootstrap_draws).round(2).to_string(index=False))

# %%
# NBVAL_CHECK_OUTPUT
if released:
    view = pd.concat([registry.paper_vs_ours(values, table=t, not_released="not released", signed_zero=True)
                      for t in ("SN 4", "SN 15", "Main")])[["claim_id"] + TEXT_COLUMNS]
    print(view.to_string(index=False))
    print()
    print(view["status"].value_counts().to_string())

# %%
if released:
    for t in ("SN 4", "SN 15", "Main"):
        display(notebook.claims_table(registry.paper_vs_ours(values, table=t), t))

# %% [markdown]
# **Decisions where the spec is silent.** (1) GPT's two runs are pooled by averaging each run's
# per-pair effect within pair (with no missing call this equals pooling the calls); the GPT records
# are not released, so this choice does not touch a reproduced number. (2) Supplementary Note 15's
# "317 of 394" agreement with the battery is, per the authors' printed output, the agreement of the
# October *frozen regeneration* choices, whose records are not released; the identical numbers of
# Supplementary Note 4 (second numeric measurement versus battery) are computed from released records.
# (3) The retry loop (spec §10.3, UNRESOLVED) does not enter the analysis: released records keep only
# the accepted answer, so the 12 prompts resolved by retry and the 24 repeated requests are not
# recomputable.

# %% [markdown]
# ## Figure 3A
# Effects per rendering with 95% intervals, the full-information reference (0), the category learner
# and the five-point margin.

# %%
fig = figures.fig3a_representation(t6, learner_pp)
notebook.figure(fig, "Fig. 3A")

# %% [markdown]
# **Fig. 3A.** Sonnet's PSE (pp) per display — continuous numeric (battery and second measurement),
# ordered levels, arbitrary codes — with 95% pair-bootstrap intervals, the full-information reference
# (0), the category-indicator learner (−5.05 pp) and the pre-specified 5-pp margin. Made by the cell
# above (`figures.fig3a_representation`) from
# `data/encoding_control/claude-sonnet-4-5-20250929/catctl_k12_LH_neutral_learned_zero_{ordinal,nominal,numeric_remeasure}_records.csv`
# and `data/encoding_control/reference/sonnet_k12_LH_neutral_learned_zero_records.csv`.
# Saved as `figures/fig3a_representation.{png,pdf}`.


# %% [markdown]
# ## Products

# %%
tables.write_derived(t6.assign(model=model, examples="learned", rule="primary"),
                     folders.derived / "representation_effects.csv")
print("wrote", notebook.save_figure(fig, "fig3a_representation", folders), "and",
      folders.show(folders.derived / "representation_effects.csv"))
