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
# # 02 · The prompts, byte for byte
#
# Every call shows two patients in one user message and forces the `choose` tool (Supplementary
# Note 17). Without examples the prompt states that higher values mean greater severity; with
# eighty examples it states no direction. The representation control shows the four proxies as
# ordered levels or arbitrary two-letter codes. This notebook renders one prompt per condition and
# checks our renderer against every `prompt_sha256` the release publishes.
#
# **Inputs:** the released encoding-control records (`data/encoding_control/…/catctl_*_records.csv`,
# fetched and verified by `analysis.data`). **Outputs** (in `output_dir`; `make paper` writes the
# tracked folder, a run by hand the git-ignored `out/notebooks/`): `data/derived/prompt_hashes.csv`.
#
# The explicit-rule boundary prompt of Supplementary Note 1 (which states the scoring weights) is
# not given verbatim in the paper or in the specification, and its records are not released, so it
# is not rendered here.

# %%
import json

import pandas as pd

from analysis import cells, data, notebook, prompts, records, tables

# %% tags=["parameters"]
cell = "k12_LH_neutral_learned_zero"
pair_id = 0
output_dir = "../out/notebooks"  # where data/derived/ goes; `make paper` passes ".." (the tracked folders)

# %%
shown = cells.parse_cell(cell)  # the ids parsed once, here: a malformed one stops with the grammar
no_examples = {names: cells.parse_cell(f"k12_LH_{names}_absent_zero") for names in ("neutral", "social")}
notebook.check_parameters(choices={"pair_id": (pair_id, tuple(range(99)))},
                          rules=[(shown.examples == "learned",
                                  f"cell={cell!r}: the example prompt below needs a cell with examples (…_learned_…)")])
folders = notebook.output_folders(output_dir)

# %% [markdown]
# ## No examples, neutral and social names
# Twelve fields, pair 0, factual arm, target shown first. The social name set renames the same
# proxy values.

# %%
print(prompts.render(no_examples["neutral"], pair_id, "factual", 0))

# %%
print(prompts.render(no_examples["social"], pair_id, "factual", 0).split("NEW PATIENTS:")[1])

# %% [markdown]
# ## Eighty examples (first three rows shown)
# The counterfactual arm `cf_a1`: only the target's proxies are regenerated with `A = 1`.

# %%
text = prompts.render(shown, pair_id, "cf_a1", 0)
head, rest = text.split("\n\nNEW PATIENTS:")
print("\n".join(head.splitlines()[:6]), "\n…\n\nNEW PATIENTS:" + rest)
# NBVAL_CHECK_OUTPUT
print(len(text), "characters; sha256", prompts.sha256(text))

# %% [markdown]
# ## Ordered levels and arbitrary codes
# The same job with the proxies binned at the population quartiles (task fields stay numeric).

# %%
for display in ("ordered", "arbitrary"):
    t = prompts.render(shown, pair_id, "cf_a1", 0, display)
    print(f"--- {display}:", t.splitlines()[3])
    print("\n".join(t.split("Patient 1:\n")[1].splitlines()[8:12]))

# %% [markdown]
# ## The forced tool

# %%
print(json.dumps(prompts.tool_spec("openai"), indent=1))

# %% [markdown]
# ## Released prompt hashes reproduced
# The representation-control records publish the SHA-256 of every prompt sent. We render the same
# job (cell, pair, arm, order, display) and compare.

# %%
display_of = {"ordinal": "ordered", "nominal": "arbitrary", "numeric_remeasure": "numeric"}
rows = []
cat = records.catalogue()
for row in cat[cat["model"] == "sonnet-20250929"].itertuples():
    tag = next(t for t in display_of if f"_zero_{t}_records" in row.name)
    rel = data.read_csv(row.name)
    ours = prompts.job_table(cells.parse_cell(row.cell), display_of[tag], arms=("cf_a1", "cf_a0"))
    m = rel.merge(ours, on=["arm", "pair_id", "i", "j", "order"], suffixes=("", "_ours"))
    rows.append({"file": row.name.split("/")[-1], "display": display_of[tag], "released": len(rel),
                 "reproduced": int((m["prompt_sha256"] == m["prompt_sha256_ours"]).sum())})
hashes = pd.DataFrame(rows)
# NBVAL_CHECK_OUTPUT
print(hashes.to_string(index=False))
print(f"total: {hashes['reproduced'].sum()} of {hashes['released'].sum()} released prompt hashes reproduced")

# %%
notebook.long_table(hashes, "Released prompt hashes reproduced", digits=None)

# %% [markdown]
# ## Products

# %%
tables.write_derived(hashes, folders.derived / "prompt_hashes.csv")
print("wrote", folders.show(folders.derived / "prompt_hashes.csv"))
