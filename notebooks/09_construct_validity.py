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
# # 09 · Construct validity: a cue panel and an association probe (beyond the paper's protocol)
#
# **This notebook is an extension, not a reproduction.** The paper's audit judges reliance on one
# operationalisation of the group-linked signal: one naming vocabulary per name set, in one display. Its
# own limitations name this ("the naming experiment uses one vocabulary") and warn that condition-level
# judgments can depend on the collection (Supplementary Note 9). Two related papers
# (`../shared/related/`) show why this matters: cues meant to signal the same group give disparities of
# different size and sign (*demographic probing lacks construct validity*), and whether a model encodes an
# association says little about whether its decisions use it (*status association does not reliably
# predict decision leakage*).
#
# So the same pairs and references are judged under several **cues** (`analysis.cues`; vocabularies with
# their rationale in `data/cues/`): three field-name vocabularies per name set, the ordered and arbitrary
# displays, a narrative rendering (one sentence per patient), and an explicit `group` field as a positive
# control. An **association probe** asks, under each cue, which of two patients (the pair's target with
# A = 1 and with A = 0) belongs to group A, the group defined by labelled in-context examples. Nothing
# here changes the paper's prompts (their released hashes keep reproducing; `tests/test_cues.py`).
#
# Order: known truth first (simulated subjects whose association and reliance are set independently, and
# the coverage of the intervals over many seeds), then the panel of each simulated subject, then the one
# model whose released records hold more than one cue (Sonnet: numeric, ordered, arbitrary).
#
# **Inputs**: our own population (`analysis.population`); Sonnet's released representation-control records
# (`data/encoding_control/…`, through `analysis.representation`). **Outputs**: none written; figures inline.

# %%
import pandas as pd
from IPython.display import Markdown, display

from analysis import config, cues, notebook
from analysis.validity import card, plots, released, run, subjects, truth

pd.set_option("display.width", 180, "display.max_colwidth", 70)

# %% tags=["parameters"]
n_seeds = 200  # seeds of the known-truth coverage run (issue 15: at least 100)
coverage_draws = 1000  # pair-bootstrap resamples per seed in the coverage run
bootstrap_draws = 5000  # pair-bootstrap resamples of the panels (paper: 5,000)
subject_seed = 0  # seed of the simulated subjects' panel run
model = "sonnet"  # whose released display records (the release has them for Sonnet only)

# %%
notebook.check_parameters(choices={"model": (model, tuple(config.MODELS))},
                          counts={"n_seeds": n_seeds, "coverage_draws": coverage_draws,
                                  "bootstrap_draws": bootstrap_draws})
CELL = "k12_LH_neutral_learned_zero"

# %% [markdown]
# ## 1 · The cues
#
# Three vocabularies per name set (`data/cues/*.csv`; the first is the paper's, verbatim).

# %%
vocab = pd.DataFrame([{"name set": s, "vocabulary": v, "proxy names (first four shown at k = 12)": ", ".join(ns[:4])}
                      for s in config.PROXY_NAMES for v, ns in cues.vocabularies(s).items()])
display(vocab)

# %% [markdown]
# The panel of a name set: six judged cues and the positive control. The new patients of pair 0 (arm
# `cf_a1`, order 0) under three of them — the paper's lines, the narrative sentence, the explicit label:

# %%
panel_cues = [q.id for q in cues.panel_cues("neutral")]
print("cues:", ", ".join(panel_cues))
for cid in ("numeric", "narrative", "label"):
    t = cues.job_table(CELL, cid)
    row = t[(t["arm"] == "cf_a1") & (t["pair_id"] == 0) & (t["order"] == 0)].iloc[0]
    print(f"--- {cid} ---" + row["prompt"].rpartition("NEW PATIENTS:")[1] + row["prompt"].rpartition("NEW PATIENTS:")[2])

# %% [markdown]
# The association probe (abstention variant) of the same pair: its head, and the two new patients (the
# target with A = 1 as Patient 1, with A = 0 as Patient 2; task values identical).

# %%
probe = cues.probe_table(CELL, "numeric", "abstain").iloc[0]["prompt"]
print(probe.split("\n\n")[0])
print("..." + probe.rpartition("NEW PATIENTS:")[1] + probe.rpartition("NEW PATIENTS:")[2])

# %% [markdown]
# ## 2 · Known truth first: three simulated subjects
#
# `analysis.validity.subjects` extends the collection's simulated subject (seeded logistic choice keyed
# by the prompt's SHA-256) with two independent settings, reliance and association:
#
# | subject | reliance (triage decision) | association (probe) |
# |---|---|---|
# | `associates-not-acts` | none | reads the group from numeric values and levels |
# | `acts-not-associates` | ordered labels read as severity (the paper's display finding) | none: chance, abstains often |
# | `cue-specific` | numeric proxies under the paper's vocabulary only, not under synonyms | moderate, every cue |
#
# Their answer probabilities are exact, so the true PSE, AUC and abstention rate of every cue on these
# 99 pairs are computed, not simulated:

# %%
truths = pd.concat([truth.known_truth(s, CELL, panel_cues, "abstain") for s in subjects.SUBJECTS])
display(truths.round(3))

# %% [markdown]
# Coverage of the 95% intervals over `n_seeds` independent seeds of each subject (each seed and cue draws
# its own answers; one shared set of bootstrap indices per cue, `coverage_draws` resamples). Pooled over
# the seven cues, then per cue with the share of seeds giving each verdict.

# %%
cov = {s: truth.coverage(s, CELL, panel_cues, n_seeds=n_seeds, draws=coverage_draws, variant="abstain")
       for s in subjects.SUBJECTS}
pooled = pd.DataFrame([{"subject": s, "seeds": n_seeds,
                        "PSE coverage": c["pse_coverage"].mean(), "PSE coverage (min over cues)": c["pse_coverage"].min(),
                        "AUC coverage": c["auc_coverage"].mean(), "AUC coverage (min over cues)": c["auc_coverage"].min(),
                        "abstention coverage": c["abstain_coverage"].mean(),
                        "called cue-dependent": truth.robustness_shares(c)["share_dependent"]}
                       for s, c in cov.items()])
display(pooled.round(3))

# %%
for s, c in cov.items():
    display(Markdown(f"**{s}**"))
    display(c.drop(columns=["_verdicts", "subject", "n_seeds"]).round(3))

# %% [markdown]
# Reading: the intervals cover the truth at about the nominal rate for every subject. The panel tells the
# three apart: `associates-not-acts` shows an association above chance under every cue that carries a rank
# (all but the arbitrary codes) and no excess under the numeric cues; `acts-not-associates` shows a large
# excess under ordered levels only and no association anywhere; `cue-specific` shows an excess under the
# paper's vocabulary (lines and narrative) and none under the synonyms, so the panel calls it cue-dependent.
# Note what "no resolved difference" means under the category displays: the reference there is the
# category-indicator learner (−5.05 pp), so a subject that ignores the proxies has a true excess of +5.05 pp,
# which 99 pairs resolve in only about 40% of seeds.

# %% [markdown]
# ## 3 · The panel of each simulated subject (one collection, both name sets)
#
# The whole validity battery, offline: every cue, the probe in both variants, and the paper's cue on the
# seed replications 20001 and 20002. Its cost for a real model:

# %%
print(run.describe_plan(run.ValidityPlan()))
results = {s: run.run(subjects.subject(s, subject_seed), run.ValidityPlan(), draws=bootstrap_draws)
           for s in subjects.SUBJECTS}
cards = {s: card.section(r) for s, r in results.items()}

# %%
for s, c in cards.items():
    display(Markdown(f"**{s}**\n\n" + "\n".join(f"- {line}" for line in c["validity_statements"])))

# %%
notebook.figure(plots.panel_figure({s: [r for r in c["cue_panel"] if r["cell"] == CELL] for s, c in cards.items()},
                                   "Simulated subjects, k12 LH neutral, 80 examples: PSE − reference per cue"))

# %%
pts = {}
for s, c in cards.items():
    ex = {r["cue"]: r["excess_pp"] for r in c["cue_panel"] if r["cell"] == CELL}
    pts[s] = [(a["cue"], a["association_auc"], a["auc_ci"], ex[a["cue"]]) for a in c["association"]
              if a["cell"] == CELL and a["variant"] == "forced"]
notebook.figure(plots.association_figure(pts))

# %%
def fmt_ci(ci, d=2):
    return "—" if ci is None or ci[0] is None else f"[{ci[0]:+.{d}f}, {ci[1]:+.{d}f}]"


rel = pd.DataFrame([{"subject": s, "cell": r["cell"], "variant": r["variant"], "r": r["r"], "95% CI": fmt_ci(r["ci"]),
                     "TOST margin": r["tost"]["margin"], "90% lo": r["tost"]["lo"], "90% hi": r["tost"]["hi"],
                     "equivalent": r["tost"]["equivalent"]}
                    for s, c in cards.items() for r in c["association_vs_reliance_by_cell"]])
display(rel.round(3))

# %% [markdown]
# Reading: with six cues, the association–reliance correlation is loose. For `acts-not-associates`
# every AUC is at chance, so its correlation fits noise in the AUCs against the single ordered-level
# excess. Its interval is wide, and the TOST never shows equivalence there. Under a 5-of-6 rule a
# subject that relies under one cue only (`acts-not-associates`: ordered levels) still comes out
# "cue-robust: no resolved difference", so the card names the dissenting cue beside the statement.

# %% [markdown]
# ## 4 · Sonnet's released records: numeric, ordered and arbitrary displays
#
# The only model whose released records hold one condition under more than one cue is Sonnet 4.5, in the
# representation control (`k12_LH_neutral_learned_zero`, 99 pairs): the numeric battery cell (August
# 2026), ordered levels and arbitrary codes, and a second numeric measurement collected with the category
# displays (October 2026), which serves as a replication of the numeric cue. The other cues and the probe
# were never collected: they are not released.

# %%
try:
    son = released.released_panel(model, draws=bootstrap_draws)
except released.NotReleased as exc:
    son = None
    display(Markdown(f"**Not released:** {exc.args[0]}"))
if son is not None:
    sdf = pd.DataFrame(son["rows"])
    sdf["pse_ci"] = [fmt_ci(c) for c in sdf["pse_ci"]]
    sdf["excess_ci"] = [fmt_ci(c) for c in sdf["excess_ci"]]
    display(sdf[["cue", "n_pairs", "pse_pp", "pse_ci", "reference", "reference_pp", "excess_pp", "excess_ci",
                 "verdict"]].round(2))
    conv = son["convergence"]
    display(Markdown(f"- {conv['statement']}; excess ranges from {conv['excess_range'][0]:+.1f} to "
                     f"{conv['excess_range'][1]:+.1f} pp; signs: {conv['sign_agreement']}\n"
                     + "\n".join(f"- numeric cue over two collections: {o['replication']} ({', '.join(o['verdicts'])})"
                                 for o in son["replication"])
                     + f"\n- not released: {son['not_released']}"))
    pr = pd.DataFrame(conv["pairwise_r"])
    pr["ci"] = [fmt_ci(c) for c in pr["ci"]]
    display(pr.round(3))

# %%
if son is not None:
    notebook.figure(plots.panel_figure({"Sonnet 4.5 (released records)": son["rows"]},
                                       "Sonnet 4.5, k12 LH neutral, 80 examples: PSE − reference per display"))

# %% [markdown]
# Reading (descriptive; the panel was not pre-specified by the paper): Sonnet's excess over its reference
# is resolved under the numeric display and ordered levels and not under arbitrary codes, so across these
# three cues its verdict is cue-dependent — the paper's own display finding, restated as a construct-validity
# statement. The per-pair shifts of the three displays are not correlated (convergent validity in the sense
# of the related paper is not shown on pairs). The two numeric collections agree in verdict (stable).
#
# **Where this goes beyond the paper.** The vocabularies, the narrative, the explicit label, the probe, the
# TOST margin (±0.50 on the association–reliance correlation, declared in `analysis.validity.probe`) and
# the robustness rule (five of six cues) are ours; the paper's protocol has one vocabulary per name set and
# no probe. `python -m analysis audit --battery validity` runs the battery on a model (its plan prints the
# cost first; `--pairs N` gives a cheaper pass, marked as such in the card).
