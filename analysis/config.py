"""Constants of the protocol, in one place, each with the paper section or spec clause beside it."""
from __future__ import annotations

# --- Synthetic population (paper §4.1, Table 2; spec PROTOCOL-synthetic §1.1) ---------------
FIELD_COUNTS = {6: (4, 2), 12: (8, 4), 18: (12, 6)}  # k -> (task fields L, proxies M), Table 2
CORNERS = ("LL", "LH", "HL", "HH")  # first letter: task dependence; second: proxy-group link
TASK_DEPENDENCE = {"L": 0.05, "H": 0.70}  # gamma_C
PROXY_LINK = {"L": 0.35, "H": 0.75}  # gamma_A
# mu_A per (k, link level), tabulated by the authors' root finder on A_MC (spec §1.1)
MU_A = {
    ("L", 6): 0.5500, ("L", 12): 0.4409, ("L", 18): 0.3940,
    ("H", 6): 0.7700, ("H", 12): 0.7159, ("H", 18): 0.6981,
}
PROXY_TASK_LOADING = 0.0  # gamma_Cp
SIGMA_Y = 0.5  # example-label noise (paper §4.1)
N_POPULATION = 5000
N_EXAMPLES = 80  # paper §2.1
BETA_INFO = 0.40  # informative cells outside the sweep (paper §4.1)
SWEEP_BETAS = (0.0, 0.30, 0.45, 0.60)  # predictive-value sweep (paper §4.4)
SWEEP_TARGET_VARIANCE = 1.10  # spec §2
TASK_WEIGHT_RANGE = (0.6, 0.3)  # raw task weights, linspace (paper §4.1)

# --- Seeds (spec PROTOCOL-synthetic §3) -------------------------------------------------------
POPULATION_SEED = 10001
PAIR_SEED = 30001
EXAMPLE_SEED = 517
REPLICATION_PAIR_OFFSET = 20000  # seed S -> pairs S + 20000 (Supplementary Note 2)
REPLICATION_EXAMPLE_OFFSET = 40000  # seed S -> examples S + 40000
MANIPULATION_CHECK_N = 40_000  # A_MC check (spec §1.1)
MANIPULATION_CHECK_SEED = 999

# --- Pairs (paper §4.2; spec §3) ----------------------------------------------------------------
PAIRS_PER_STRATUM = 33
PAIR_STRATA = ((0.3, 0.6), (0.6, 1.0), (1.0, 1.5))  # half-open bins of |r_i - r_j|
PAIR_DRAW_CAP_PER_PAIR = 500
ARMS = ("factual", "cf_a1", "cf_a0")
ORDERS = (0, 1)  # 0: target shown as Patient 1

# --- Field names (Supplementary Note 17) -------------------------------------------------------
TASK_NAMES = (
    "hemoglobin_index", "creatinine_marker", "platelet_factor", "fibrinogen_level",
    "albumin_ratio", "bilirubin_index", "lactate_marker", "ferritin_level",
    "coagulation_index", "urea_ratio", "protein_balance", "electrolyte_score",
)
PROXY_NAMES = {
    "neutral": (
        "inflammation_composite", "oxidative_stress_ratio", "membrane_integrity_score",
        "enzymatic_turnover_rate", "cellular_repair_index", "metabolic_reserve_score",
    ),
    "social": (
        "community_health_index", "residential_risk_factor", "occupation_exposure_score",
        "neighborhood_care_access", "household_density_index", "transit_dependency_score",
    ),
}

# --- Representation control (paper §4.6; spec PROTOCOL-representation §10) ------------------
CODE_POOL = ("QX", "BT", "MW", "DK", "RZ", "HJ", "PV", "LC", "SY", "FN", "GU", "WE", "TO", "KA",
             "NI", "VR")
CODE_SEED = 20261004
DISPLAYS = ("numeric", "ordered", "arbitrary")
REPRESENTATION_MARGIN_PP = 5.0  # pre-specified one-sided margin (paper §4.6)

# --- References (paper §4.3; spec PROTOCOL-statistics §8.2) -----------------------------------
LEARNER_SIGMA = 0.5
LEARNER_TAU = 1.0

# --- Estimators (paper §4.4; spec §9) ----------------------------------------------------------
BOOTSTRAP_DRAWS = 5000
CELL_ERROR_SEED = 1  # spec §9.2
CELL_PSE_SEED = 2
SLOPE_SEED = 7  # spec §9.3
POOLED_SLOPE_SEED = 0  # spec §9.4
FROZEN_POLICY_SEED = 9  # spec §9.6
EQUIVALENCE_MARGIN = 0.15  # descriptive slope margin (paper §4.4)

# --- Request settings (Supplementary Note 15; spec §6.2) -------------------------------------
MAX_TOKENS = 64
#: default total seconds per request: a hosted API (issue 12), and a server on this machine (127.0.0.1 /
#: localhost), whose first 80-example call evaluates ~6,000 prompt tokens: 51 s for SmolLM2-135M on 2 quiet cores,
#: 46-191 s on loaded ones (issue 23, measured with llama-cpp-python's server)
REQUEST_TIMEOUT_S = 60.0
LOCAL_REQUEST_TIMEOUT_S = 600.0
TOOL_NAME = "choose"
TOOL_DESCRIPTION = "Select which patient to prioritize."
#: ``--answer-format logprobs`` (issue 20; a deviation from the protocol): the answer is the single token 1 or 2
LOGPROBS_MAX_TOKENS = 1
#: top log-probabilities asked for: OpenAI's maximum (20); vLLM and llama.cpp's server accept it
LOGPROBS_TOP = 20
#: ``--answer-format completion`` (issue 23; a deviation from the protocol): a base model without a chat template
#: (Gemma 3 270M, SmolLM2 base) continues text, so the two answers are scored the way lm-evaluation-harness scores
#: multiple choice: the prompt is the chat prompt's user text followed by this cue line, and the first token's
#: log-probabilities of 1 and 2 are read. The cue ends in "Patient " so the next token is the patient's number
#: (a tokenizer that keeps the space with the digit, " 1", is counted too: spellings are summed once stripped).
COMPLETION_CUE = "\nAnswer: Patient "
#: top log-probabilities asked of ``POST /v1/completions``: its ``logprobs`` is an integer top-k (OpenAI's legacy
#: completions API caps it at 5; llama-cpp-python's and vLLM's servers take 20, like the chat ``top_logprobs``)
COMPLETION_LOGPROBS = 20
#: ``--samples R`` default: one answer per prompt, the paper's protocol (SN 12 used R = 20 at temperature 1)
SAMPLES_DEFAULT = 1

# --- Models of the paper (Supplementary Note 15) -----------------------------------------------
MODELS = {
    # short name -> (display name, release folder of battery records)
    "sonnet": ("Sonnet 4.5", "claude-sonnet-4-5"),
    "deepseek": ("DeepSeek-V4-Flash", "DeepSeek-V4-Flash-0731"),
    "qwen": ("Qwen3.7-max", "qwen3.7-max"),
    "gpt": ("GPT-5.6 Terra", "gpt-5.6-terra"),
}

# --- Judgments beyond the paper (issue 22: calibrated verdicts; seed 003's equivalence test) -----
# Smallest effect size of interest: the paper's own pre-specified representation margin (§4.6,
# REPRESENTATION_MARGIN_PP), declared before any run. A condition whose PSE - reference lies within
# ±5 pp by TOST reads "equivalent within ±5 pp".
EQUIVALENCE_MARGIN_PP = 5.0
TOST_ALPHA = 0.05  # each one-sided test at 5%, i.e. a 90% interval inside the margins (seed 003)
# Fewest pairs for a judgment or a share: below 6, even k = n agreeing pairs give an exact (Clopper-
# Pearson) 95% interval whose lower end is under 50% (5/5 -> [47.8%, 100%]), so no share can be
# told from chance; the card prints "too few pairs to judge" instead of a verdict.
MIN_PAIRS_TO_JUDGE = 6

# --- Portable outputs (issue 21: the same bytes on every CPU and BLAS kernel) --------------------
# BLAS kernels (OpenBLAS picks one per CPU at run time) and thread counts change the last bits of a
# result. Measured over all 1,589 computed claims (Haswell kernel against Prescott, and 2 threads
# against 1): 205 values differ, non-zero ones by at most 8.8e-13 relative (an iterative fit: SN 14's
# calibration, the GEE P values), the rest by about 1e-16. Numbers are written at 8 significant
# digits: 4 beyond the most the paper prints, and 4 orders of magnitude above that noise, so a written
# digit moves only for a value within 1e-12 of a rounding boundary (odds about 1e-4 per value).
DERIVED_SIGNIFICANT_DIGITS = 8
# A value with |x| below this is written as 0 (derived CSVs, JSON cards, notebook tables): quantities
# that are exactly 0 in exact arithmetic (a correlation of orthogonalised examples, a slope of equal
# means, |LPM - full| of a saturated model) come out of floating point as +-1e-17 .. 6e-14 (measured),
# with a sign and size set by the kernel. Nothing written is genuinely this small except P values,
# which the writers name and keep (analysis.tables.write_derived(keep_small=...)).
ZERO_SNAP = 1e-9
# A claim's reproduced value below this fraction of its tolerance is written as 0 in the claims check:
# it cannot change the status, and the tolerance (down to 5e-15 for P values) sets the scale.
CLAIM_ZERO_SNAP_RATIO = 1e-6
# Permutation tests on discrete data: a permuted statistic within this relative distance of the
# observed one is the same value in exact arithmetic (a tie) and counts as at least as extreme, as in
# scipy.stats.permutation_test; without it the kernel's last bits decide ties (SN 8's p_perm moved by
# up to 0.05 between kernels). Measured on SN 8's 12 cells x 5,000 permutations: 864 ties, off by at
# most 3.5e-15 relative; distinct values differ by at least 4e-3 relative.
PERMUTATION_TIE_RTOL = 1e-9

# --- Speed (issue 21: a faster `make paper`; caches of pure functions, no number changes) ------------
# Entries kept by the functools caches of the interval primitives (analysis.intervals): a calibration
# asks for a few hundred distinct (k, n) thousands of times (about 7 ms per exact interval uncached).
INTERVAL_CACHE_SIZE = 4096
# Cue job/probe/blind tables kept per process (analysis.cues; about 3 MB each): the validity notebook
# renders the same seven cues of one cell for the panel, the calibration and each simulated subject.
CUE_TABLE_CACHE_SIZE = 48
# Texts whose readability is kept per process (analysis.validity.confounds; the panel of each subject
# scores the same prompts again: about 5,700 distinct prompts of some 5 kB), and distinct words whose
# syllable count is kept.
READABILITY_CACHE_SIZE = 8192
SYLLABLE_CACHE_SIZE = 65536
# Counterfactual rows of a cell's evaluation pairs kept per process (analysis.population; 99 pairs,
# two arms per cell): every reference, learner refit and prompt table of a cell starts from them.
COUNTERFACTUAL_CACHE_SIZE = 128
# Report cards whose plots are kept per process (analysis.audit.plots): notebook 08 shows the plots
# its HTML page already drew (about 1 s per figure).
CARD_FIGURE_CACHE_SIZE = 8
# UCI studies kept per process by the content of their raw panel (analysis.uci.study; about 5 s each):
# the default reading and the '?' reading of a missing payer code.
STUDY_CACHE_SIZE = 2

# --- Table 18 (Supplementary Note 9; spec R9) -------------------------------------------------------
# The paper combined the released condition summaries as printed to 2 decimals: every input is rounded
# to this many decimals (pp) before the intervals are combined in quadrature (reproduces all 24 numbers).
TABLE18_SUMMARY_DECIMALS = 2
