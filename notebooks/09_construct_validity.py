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
# Issue 22 makes the panel readable and its verdicts calibrated: the reference's own sampling variability
# enters every judgment (the learner refitted on resampled examples, jointly with the pair bootstrap), each
# cue reads *excess*, *shortfall*, *equivalent within ±5 pp* (TOST) or *inconclusive*, a heterogeneity
# test across cues replaces the "5 of 6 agree" count, correlations are read against their reliability
# ceiling, a blind (no-cue) arm gives each group's deviation, and association–reliance coupling takes the
# cues as its unit. Section 3 measures how often each verdict is wrong over known-truth subjects.
#
# **Inputs**: our own population (`analysis.population`); Sonnet's released representation-control records
# (`data/encoding_control/…`, through `analysis.representation`). **Outputs** (in `output_dir`; `make paper`
# writes the tracked folders, a run by hand the git-ignored `out/notebooks/`):
# `data/derived/calibration_validity.csv` (the validity battery's calibration table); figures inline.

# %%
import pandas as pd
from IPython.display import Markdown, display

from analysis import config, cues, estimators, notebook
from analysis.tables import write_derived
from analysis.cells import parse_cell
from analysis.validity import calibration, card, confounds, plots, released, reliability, run, subjects, truth

pd.set_option("display.width", 200, "display.max_colwidth", 70, "display.max_columns", 30)

# %% tags=["parameters"]
n_seeds = 200  # seeds of the known-truth calibration (issue 22: at least 200)
coverage_draws = 1000  # pair-bootstrap resamples per seed in the calibration
bootstrap_draws = 5000  # pair-bootstrap resamples of the panels (paper: 5,000)
subject_seed = 0  # seed of the simulated subjects' panel run
model = "sonnet"  # whose released display records (the release has them for Sonnet only)
output_dir = "../out/notebooks"  # where data/derived/ goes; `make paper` passes ".." (the tracked folders)

# %%
notebook.check_parameters(choices={"model": (model, tuple(config.MODELS))},
                          counts={"n_seeds": n_seeds, "coverage_draws": coverage_draws,
                                  "bootstrap_draws": bootstrap_draws})
folders = notebook.output_folders(output_dir)
CELL = "k12_LH_neutral_learned_zero"
cell = parse_cell(CELL)  # the notebook is the boundary: the cell id is parsed once, here


def tidy(df: pd.DataFrame, digits: int = 3) -> str:
    """A table's text, rounded, with no negative zeros (portable printed output)."""
    out = df.round(digits)
    num = out.select_dtypes("float").columns
    out[num] = out[num] + 0.0
    return out.to_string(index=False)

# %% [markdown]
# ## 1 · The cues
#
# Three vocabularies per name set (`data/cues/*.csv`; the first is the paper's, verbatim).

# %%
vocab = pd.DataFrame([{"name set": s, "vocabulary": v, "proxy names (first four shown at k = 12)": ", ".join(ns[:4])}
                      for s in config.PROXY_NAMES for v, ns in cues.vocabularies(s).items()])
display(vocab)

# %% [markdown]
# The panel of a name set: six judged cues and the positive control, plus the blind arm (the task fields
# only: the no-cue baseline). The new patients of pair 0 (arm `cf_a1`, order 0) under three of them — the
# paper's lines, the narrative sentence, the explicit label — and in the blind arm:

# %%
panel_cues = [q.id for q in cues.panel_cues("neutral")]
print("cues:", ", ".join(panel_cues), "+", cues.BLIND)
for cid in ("numeric", "narrative", "label", cues.BLIND):
    t = cues.blind_table(cell) if cid == cues.BLIND else cues.job_table(cell, cid)
    row = t[(t["arm"].isin(["cf_a1", cues.BLIND_ARM])) & (t["pair_id"] == 0) & (t["order"] == 0)].iloc[0]
    print(f"--- {cid} ---" + row["prompt"].rpartition("NEW PATIENTS:")[1] + row["prompt"].rpartition("NEW PATIENTS:")[2])

# %% [markdown]
# The association probe (abstention variant) of the same pair: its head, and the two new patients (the
# target with A = 1 as Patient 1, with A = 0 as Patient 2; task values identical).

# %%
probe = cues.probe_table(cell, "numeric", "abstain").iloc[0]["prompt"]
print(probe.split("\n\n")[0])
print("..." + probe.rpartition("NEW PATIENTS:")[1] + probe.rpartition("NEW PATIENTS:")[2])

# %% [markdown]
# Confounders carried by the renderings (related paper 002): prompt length and Flesch–Kincaid grade per
# cue (syllables counted as vowel groups). Ordered levels add words ("level 3"); the narrative raises the
# grade; the blind arm is the shortest.

# %%
# NBVAL_CHECK_OUTPUT
tables = {cid: cues.job_table(cell, cid) for cid in panel_cues}
tables[cues.BLIND] = cues.blind_table(cell)
print(tidy(confounds.rendering_features(tables), 2))

# %% [markdown]
# ## 2 · Known truth first: simulated subjects
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
# 99 pairs are computed, not simulated. The true excess is against the reference's estimand, the
# full-information reference (exactly 0 at zero information; any learner's expected PSE over example
# draws is 0 there too): the category learner's −5.05 pp on these 80 examples is a finite-sample artefact.

# %%
# NBVAL_CHECK_OUTPUT
truths = pd.concat([truth.known_truth(s, cell, panel_cues, "abstain") for s in subjects.SUBJECTS])
print(tidy(truths.drop(columns=["variant"]), 3))

# %% [markdown]
# ## 3 · Calibration: how often is each verdict wrong?
#
# Every subject below is judged over `n_seeds` independent seeds exactly as the panel judges one
# collection (`analysis.validity.truth.simulate_panel`): one set of pair-resampling indices shared by every
# cue, the reference learners refitted on the matching example resample, the four-way verdict with the
# TOST against ±`config.EQUIVALENCE_MARGIN_PP`, the heterogeneity test across cues, and the paper's rule
# beside it. Besides the three presets: `ignores-proxies` (no proxy weight; the uniform truth) and subjects
# tuned to a true PSE of 5, 10 and 20 pp (under every numeric vocabulary, or under the paper's vocabulary
# only, for the power of the heterogeneity test). At the battery's default `--pairs` (every pair: 99).

# %%
cal = calibration.run(cell, panel_cues, n_seeds=n_seeds, draws=coverage_draws)
cal_table = calibration.table(cal, panel_cues, coverage_draws)
write_derived(cal_table, folders.derived / "calibration_validity.csv")  # 8 significant digits (portable)

# %% [markdown]
# The validity battery's calibration table (`data/derived/calibration_validity.csv`). Goals (issue 22):
# every false-finding rate ≤ 5 %, coverage ≥ 93 %.

# %%
# NBVAL_CHECK_OUTPUT
cols = ["verdict", "truth", "false_finding_rate", "power_5pp", "power_10pp", "power_20pp", "coverage",
        "power_at_truth_0"]
print(f"{n_seeds} seeds, {int(cal_table['n_pairs'].iloc[0])} pairs per cue")
print(tidy(cal_table[cols], 3))

# %% [markdown]
# Per subject and cue: coverage of the true excess (the panel's joint interval and the paper's rule),
# of the AUC and of the abstention rate (exact interval), and the share of seeds giving each verdict.

# %%
# NBVAL_CHECK_OUTPUT
show = ["cue", "true_excess_pp", "excess_coverage", "paper_coverage", "auc_coverage", "abstain_coverage",
        "share_excess", "share_shortfall", "share_equivalent", "share_inconclusive", "paper_share_excess"]
for s in list(subjects.SUBJECTS) + ["ignores-proxies"]:
    print(f"--- {s} ---")
    print(tidy(cal[s][1][show], 3))

# %% [markdown]
# The heterogeneity verdict over seeds, at every pair and at a cheaper pass of 10 pairs. The former
# "cue-robust if 5 of 6 agree" called `cue-specific` cue-robust in a third of the seeds at 10 pairs;
# the test never does (a 10-pair pass cannot show equivalence within ±5 pp, so it reads cue-dependent or
# inconclusive).

# %%
# NBVAL_CHECK_OUTPUT
het = []
for s in ("ignores-proxies", "cue-specific", "acts-not-associates", "associates-not-acts"):
    het.append({"subject": s, "pairs": 99, **truth.heterogeneity_shares(cal[s][0])})
ten = truth.simulate_panel("cue-specific", cell, panel_cues, n_seeds=n_seeds, draws=coverage_draws, n_pairs=10)
het.append({"subject": "cue-specific", "pairs": 10, **truth.heterogeneity_shares(ten)})
print(tidy(pd.DataFrame(het), 3))

# %% [markdown]
# Reading. The panel's joint interval covers the true excess in at least 93 % of seeds for every subject
# and cue, and calls a subject that ignores the proxies "excess" or "shortfall" well under 5 % of the
# time; the paper's rule, which takes the learner's PSE as exact, does so far more often under the ordered
# and arbitrary displays (the −5.05 pp artefact; `false_finding_max_cue` in the CSV), and it is kept only
# labelled as the paper's.
# The cost is power: a true 5 pp excess is found in a minority of seeds at 99 pairs, 10 pp in most, 20 pp
# nearly always, because the reference learner of 80 examples varies by a few pp itself. The same variability
# means **equivalence within ±5 pp is never shown at 99 pairs** (power at truth 0 is 0): the TOST's 90 %
# interval is wider than the margin, so every null cue reads "inconclusive", which is what the data
# support. The coupling of association and reliance is "undefined" for `acts-not-associates` (its AUCs
# are all 0.5) except in the share of seeds the table gives.

# %% [markdown]
# ## 4 · The panel of each simulated subject (one collection, both name sets)
#
# The whole validity battery, offline: every cue, the blind arm, the probe in both variants, and the
# paper's cue on the seed replications 20001 and 20002. Its cost for a real model, and the plan's
# fingerprint (written before collection by `python -m analysis.validity`):

# %%
plan = run.ValidityPlan()
print(run.describe_plan(plan))
print("plan fingerprint:", run.fingerprint(plan)["sha256"])
results = {s: run.run(subjects.subject(s, subject_seed), plan, draws=bootstrap_draws) for s in subjects.SUBJECTS}
cards = {s: card.section(r) for s, r in results.items()}

# %%
# NBVAL_CHECK_OUTPUT
for s, c in cards.items():
    print(f"--- {s} ---")
    print("\n".join(f"- {line}" for line in c["validity_statements"]))

# %%
notebook.figure(plots.panel_figure({s: [r for r in c["cue_panel"] if r["cell"] == CELL] for s, c in cards.items()},
                                   "Simulated subjects, k12 LH neutral, 80 examples: PSE − reference per cue"))

# %% [markdown]
# Each cue's two judgments: the panel's (joint bootstrap over pairs and example resamples, TOST) and the
# paper's (the PSE interval shifted by the reference as if exact), with the split-half reliability of the
# cue's per-pair shifts.

# %%
# NBVAL_CHECK_OUTPUT
for s, c in cards.items():
    df = pd.DataFrame([r for r in c["cue_panel"] if r["cell"] == CELL])
    df["excess_ci"] = [f"[{a:+.1f}, {b:+.1f}]" for a, b in df["excess_ci"]]
    df["paper_excess_ci"] = [f"[{a:+.1f}, {b:+.1f}]" for a, b in df["paper_excess_ci"]]
    print(f"--- {s} ---")
    print(tidy(df[["cue", "pse_pp", "reference_kind", "reference_pp", "excess_pp", "excess_ci", "verdict",
              "paper_excess_ci", "paper_verdict", "reliability"]], 2))

# %% [markdown]
# ### Convergence against its reliability ceiling
#
# `cue-specific` has the same true per-pair PSE under `numeric` and `narrative` (true r = 1). With four
# calls a pair the raw r is low; so is the split-half reliability of each cue's shifts (over presentation
# orders, stepped up by Spearman–Brown), and the ceiling `sqrt(rel_a rel_b)` says how high r could be.
# The same cue collected twice (subject seeds 0 and 1) gives the test–retest reliability.

# %%
# NBVAL_CHECK_OUTPUT
conv = results["cue-specific"]["cells"][0]["convergence"]
pr = pd.DataFrame(conv["pairwise_r"])
print(tidy(pr[["a", "b", "r", "ceiling", "r_disattenuated", "n_pairs"]], 2))
again = run.collect(subjects.subject("cue-specific", subject_seed + 1),
                    run.ValidityPlan(cells=(CELL,), seeds=(), variants=(), cue_ids=("numeric",), blind=False))
first = run.collect(subjects.subject("cue-specific", subject_seed),
                    run.ValidityPlan(cells=(CELL,), seeds=(), variants=(), cue_ids=("numeric",), blind=False))
rr = reliability.test_retest(estimators.pair_pse(first["panel"][CELL]["numeric"]),
                             estimators.pair_pse(again["panel"][CELL]["numeric"]))
print(f"numeric, test-retest over subject seeds {subject_seed} and {subject_seed + 1}: "
      f"r = {rr['reliability']:.2f} on {rr['n_pairs']} pairs")

# %% [markdown]
# ### Association and reliance
#
# Cues are the unit: Pearson r with a Fisher-z interval and Spearman ρ, exact permutation p-values, the
# power at six cues, and pair-level coupling; "undefined" where the AUCs do not vary beyond noise.

# %%
pts = {}
for s, c in cards.items():
    ex = {r["cue"]: r["excess_pp"] for r in c["cue_panel"] if r["cell"] == CELL}
    pts[s] = [(a["cue"], a["association_auc"], a["auc_ci"], ex[a["cue"]]) for a in c["association"]
              if a["cell"] == CELL and a["variant"] == "forced"]
notebook.figure(plots.association_figure(pts))

# %%
# NBVAL_CHECK_OUTPUT
for s, c in cards.items():
    for r in c["association_vs_reliance_by_cell"]:
        print(f"{s}, {r['cell']}, {r['variant']}: {r['statement']}")

# %% [markdown]
# ### Blind baseline, discriminant validity, competence, confounders
#
# Per cue: each group's deviation from the blind arm, their difference (the PSE) and the cross-group
# correlation of the deviations (near 1: the cue moves both groups alike), and ranking accuracy against
# the true risk of the arm shown; then the per-pair model of the choice on the cued group, the
# probe-inferred group and the prompt length, with pair fixed effects.

# %%
# NBVAL_CHECK_OUTPUT
c = cards["cue-specific"]
b = pd.DataFrame([r for r in c["baseline"] if r["cell"] == CELL])
print(tidy(b[["cue", "deviation_a1_pp", "deviation_a0_pp", "group_difference_pp", "cross_group_r",
              "competence_accuracy"]], 2))
for t in c["confounds"][0]["model"]["terms"]:
    print(f"{t['term']}: {t['coef_pp']:+.1f} pp [{t['ci_pp'][0]:+.1f}, {t['ci_pp'][1]:+.1f}]")

# %% [markdown]
# ## 5 · Sonnet's released records: numeric, ordered and arbitrary displays
#
# The only model whose released records hold one condition under more than one cue is Sonnet 4.5, in the
# representation control (`k12_LH_neutral_learned_zero`, 99 pairs): the numeric battery cell (August
# 2026), ordered levels and arbitrary codes, and a second numeric measurement collected with the category
# displays (October 2026), which serves as a replication of the numeric cue. The other cues, the blind arm
# and the probe were never collected: they are not released.

# %%
# NBVAL_CHECK_OUTPUT
try:
    son = released.released_panel(model, draws=bootstrap_draws)
except released.NotReleased as exc:
    son = None
    print(f"Not released: {exc.args[0]}")
if son is not None:
    sdf = pd.DataFrame(son["rows"])
    for k in ("pse_ci", "excess_ci", "paper_excess_ci"):
        sdf[k] = [f"[{a:+.1f}, {b:+.1f}]" for a, b in sdf[k]]
    print(tidy(sdf[["cue", "n_pairs", "pse_pp", "pse_ci", "reference_kind", "reference_pp", "excess_pp",
                    "excess_ci", "verdict", "paper_excess_ci", "paper_verdict", "reliability"]], 2))
    conv = son["convergence"]
    print(conv["statement"])
    for o in son["replication"]:
        print(f"numeric cue over two collections: {o['replication']} ({', '.join(o['verdicts'])})")
    pr = pd.DataFrame(conv["pairwise_r"])
    print(tidy(pr[["a", "b", "r", "ceiling", "r_disattenuated", "n_pairs"]], 2))

# %%
if son is not None:
    notebook.figure(plots.panel_figure({"Sonnet 4.5 (released records)": son["rows"]},
                                       "Sonnet 4.5, k12 LH neutral, 80 examples: PSE − reference per display"))

# %% [markdown]
# Reading (descriptive; the panel was not pre-specified by the paper): under the paper's rule Sonnet's
# excess is resolved under the numeric display and ordered levels and not under arbitrary codes; the
# panel's own judgment, with the reference's variability, is printed beside it, and the heterogeneity test
# says whether the displays' excesses differ beyond noise. The two numeric collections are compared as a
# replication (Supplementary Note 9's caution).
#
# **Where this goes beyond the paper.** The vocabularies, the narrative, the explicit label, the blind arm,
# the probe, the joint bootstrap with refitted learners, the TOST margin (±5 pp, `config.EQUIVALENCE_MARGIN_PP`)
# and the coupling margin (±0.50, `analysis.validity.coupling.MARGIN`), both declared before any run, and
# the heterogeneity test are ours; the paper's protocol has one vocabulary per name set and no probe.
# `python -m analysis.validity` runs the battery on a model (its plan and fingerprint print first;
# `--pairs N` gives a cheaper pass, marked as such in the card).
