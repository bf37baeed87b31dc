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
# # 08 · Audit your own model: a report card of judgments against the evidence
#
# The paper's audit, run on a model of your choice (issue 8; paper §2.1-§2.5, §4.3-§4.6, Fig. 1).
# The notebook is a thin wrapper around `analysis.audit.run_audit`, the same code as
# `python -m analysis audit --provider P --model M --out DIR`. It plans the battery (calls, tokens,
# cost), collects the answers through the collection stage (SQLite ledger: resumable, a persisted
# answer is never requested again), estimates every condition's proxy-specific effect (PSE) with its
# 95% pair-bootstrap interval, judges it against the full-information reference and the reference
# learner (excess, no resolved difference, shortfall), and writes the report card.
#
# **Inputs:** the model (parameters below). The default is the offline simulated subject
# `reads-everything` (it reads numeric proxies and ordered labels alike), so the notebook runs with no
# key and no network. For a real model set `provider` to `anthropic` or `openai` (any
# OpenAI-compatible endpoint through `base_url`) and put the key in `ANTHROPIC_API_KEY` /
# `OPENAI_API_KEY`. The reference rows of the paper's four models come from the released per-call
# records through `analysis.data` (SHA-256 verified).
#
# **Outputs** (in `out`): `report_card.html` (one self-contained file, plots embedded),
# `report_card.json` (the same numbers), `conditions.csv` (one row per condition), the ledger and the
# per-call records. By default `out` is a fresh temporary folder, so the notebook shows the same
# output on every run; give a folder (for example `-p out ../audit_out/sonnet`) to keep the ledger
# and resume an interrupted audit.

# %%
import base64
import contextlib
import io
import tempfile
from pathlib import Path

import pandas as pd
from IPython.display import Image, display

from analysis import audit, notebook

pd.set_option("display.width", 200, "display.max_colwidth", 70)

# %% tags=["parameters"]
provider = "simulated"  # "anthropic" | "openai" | "simulated"
model = "reads-everything"  # serving model id; for "simulated" a preset (see audit.AUDIT_PRESETS)
base_url = None  # OpenAI-compatible endpoint (OpenRouter, vLLM, Ollama), or None for the provider's default
battery = "core"  # "core" (6,732 calls) or "full" (9,108 calls: adds field count and dependence)
max_cost = None  # USD budget of the output folder (None: no budget)
out = None  # output folder (ledger, records, report card); None: a fresh temporary folder
seed = 0  # seed of the simulated subject's noise
bootstrap_draws = 5000  # pair-bootstrap draws (paper: 5,000)
dry_run = False  # True: only print the plan (calls, tokens, cost)
output_dir = "../out/notebooks"  # unused here (the card goes to `out`); the parameter every notebook has

# %%
notebook.check_parameters(
    choices={"provider": (provider, ("simulated", "anthropic", "openai")), "battery": (battery, tuple(audit.BATTERY_NAMES)),
             "dry_run": (dry_run, (True, False))},
    counts={"bootstrap_draws": bootstrap_draws},
    rules=[(isinstance(seed, int) and not isinstance(seed, bool) and seed >= 0, f"seed={seed!r} must be an integer >= 0"),
           (provider != "simulated" or model in audit.AUDIT_PRESETS,
            f"model={model!r}: the simulated subject takes a preset, one of {', '.join(audit.AUDIT_PRESETS)}"),
           (base_url is None or provider == "openai", "base_url is for the openai provider (OpenAI-compatible endpoints)"),
           (max_cost is None or (isinstance(max_cost, (int, float)) and max_cost > 0),
            f"max_cost={max_cost!r} must be a positive number of USD or None")])
out = Path(tempfile.mkdtemp(prefix="audit_")) if out is None else Path(out)

# %% [markdown]
# ## Plan, collection and report card
# The plan comes first: how many calls the battery needs, how many the ledger already holds, the
# estimated tokens and cost (prices from `data/prices.csv`). Interrupting this cell and running it
# again resumes where it stopped.

# %%
with contextlib.redirect_stdout(io.StringIO()) as log:
    result = audit.run_audit(provider, model, out, battery=battery, base_url=base_url, max_cost=max_cost, seed=seed,
                             draws=bootstrap_draws, dry_run=dry_run, progress=False)
print(log.getvalue().replace(str(out), "<out>"))  # the same lines as the command line, the folder named <out>
card = result.card
print("complete:", result.complete, "| report card:", Path(result.html_path).name if result.html_path else None)

# %% [markdown]
# ## Battery size
# Calls per battery: 99 pairs x 3 versions (factual and two counterfactual) x 2 presentation orders per
# numeric cell; 99 x 2 x 2 per category display (the representation control has no factual version).

# %%
# NBVAL_CHECK_OUTPUT
for name in audit.BATTERY_NAMES:
    conds = audit.battery_conditions(name)
    print(f"{name}: {len(conds)} conditions, {audit.battery_calls(name):,} calls")

# %% [markdown]
# ## Judgments per condition
# With examples the primary reference is the reference learner fitted to the same 80 examples; without
# examples it is the full-information reference (paper §4.2). The verdict reads the 95% interval of PSE
# minus that reference; ranking error stands beside it.

# %%
# NBVAL_CHECK_OUTPUT
if card is not None:
    table = pd.DataFrame([{
        "condition": r["key"], "PSE": round(r["pse_pp"], 1),
        "CI": f"[{r['pse_ci'][0]:+.1f}, {r['pse_ci'][1]:+.1f}]",
        "full-info": round(r["fullinfo_pse_pp"], 1),
        "learner": None if r["learner_pse_pp"] is None else round(r["learner_pse_pp"], 2),
        "against": r["reference"], "verdict": r["verdict"],
        "error %": None if r["error_pct"] is None else round(r["error_pct"], 1),
    } for r in card["conditions"]])
    print(table.to_string(index=False))

# %%
if card is not None:
    display(notebook.long_table(table, "Judgments per condition", head=30, digits=None))

# %%
if card is not None:
    display(Image(data=base64.b64decode(audit.card_figures(card)["conditions"])))

# %% [markdown]
# ## Tracking slope, display control, naming
# The slope regresses the model's PSE on the learner's across the four proxy strengths (1: adjusts as
# much as the learner; 0: not at all). The display control compares ordered and arbitrary labels of the
# same categories against the pre-specified 5-pp margin. Naming compares social and neutral field names
# on the same values.

# %%
# NBVAL_CHECK_OUTPUT
if card is not None:
    for sentence in card["summary"]:
        print("-", sentence)

# %%
if card is not None:
    figs = audit.card_figures(card)
    for name in ("tracking", "display"):
        if name in figs:
            display(Image(data=base64.b64decode(figs[name])))

# %% [markdown]
# ## The paper's four models on the same conditions
# Computed with the same code from the authors' released per-call records (the release lacks the
# representation-control records of GPT, Qwen and DeepSeek and one Sonnet no-example cell, which is
# available as a condition summary).

# %%
# NBVAL_CHECK_OUTPUT
if card is not None and "reference_models" in card:
    ref = pd.DataFrame([{"condition": r["key"], **{
        m: ("not released" if v["status"] != "computed" else f"{v['pse_pp']:+.1f} {v['verdict']}")
        for m, v in r["reference_models"].items()}} for r in card["conditions"]])
    print(ref.to_string(index=False))

# %% [markdown]
# ## Products
# The report card (HTML and JSON) is already in `out`; a tidy table of the conditions goes beside it.

# %%
if card is not None:
    rows = [{k: v for k, v in r.items() if k not in ("reference_models", "statement")} for r in card["conditions"]]
    pd.DataFrame(rows).to_csv(Path(out) / "conditions.csv", index=False)
    print("written:", sorted(p.name for p in Path(out).glob("*") if p.is_file()))
