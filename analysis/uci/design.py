"""The fixed design of the real-record study: inputs, category groupings, seeds, sizes, conditions
(spec PROTOCOL-uci §11.1-11.10; paper §4.7, Supplementary Note 14).

Values shared with the synthetic battery (example count, bootstrap draws, display orders) come
from :mod:`analysis.config`; everything here is specific to the UCI study.
"""
from __future__ import annotations

import math

from .. import config

# --- Inputs (spec §11.1; Supplementary Note 14) -------------------------------------------------
PANEL_NAME = "uci/diabetes130/uci_diabetes_130hosp.csv"
MAPPING_NAME = "uci/diabetes130/IDs_mapping.csv"
DATASET_DOI = "10.24432/C5230J"
DATASET_CITATION = ("Clore J, Cios K, DeShazo J, Strack B. 2014. Diabetes 130-US Hospitals for Years "
                    "1999-2008. UCI Machine Learning Repository. https://doi.org/10.24432/C5230J (CC BY 4.0).")
MODEL_DIR = "data/external_zero_info/claude-sonnet-4-5-20250929"
NEARTIE_RECORDS = "data/concurrent_checks/claude-sonnet-4-5-20250929/neartie_records.csv"
NEARTIE_LINKS = "data/concurrent_checks/links/neartie_links.csv"

# --- Panel (spec §11.2) -------------------------------------------------------------------------
RACES = {"Caucasian": 0, "AfricanAmerican": 1}  # A = 1 for Black patients
DISCHARGED_HOME = 1
PAYER_CODES = {"MC": "Medicare", "MD": "Medicaid", "SP": "Self-pay", "BC": "Blue Cross/Blue Shield"}
PAYER_OTHER, PAYER_MISSING = "Other insurer", "Not recorded"
PAYERS = ("Blue Cross/Blue Shield", "Medicaid", "Medicare", "Not recorded", "Other insurer", "Self-pay")
SOURCE_IDS = {7: "Emergency room", 1: "Referral", 2: "Referral", 3: "Referral",
              **{k: "Transfer" for k in (4, 5, 6, 10, 18, 22, 25, 26)}}
SOURCE_OTHER = "Not recorded or other"
SOURCES = ("Emergency room", "Referral", "Transfer", SOURCE_OTHER)
CATEGORY_SEP = " | "
#: nine task fields (column, displayed label) in display order; age is shown as its band
TASK_FIELDS = (
    ("num_lab_procedures", "Lab procedures this stay"),
    ("num_procedures", "Other procedures this stay"),
    ("num_medications", "Medications this stay"),
    ("number_outpatient", "Outpatient visits, prior year"),
    ("number_emergency", "Emergency visits, prior year"),
    ("number_inpatient", "Inpatient stays, prior year"),
    ("time_in_hospital", "Days in hospital"),
    ("number_diagnoses", "Number of diagnoses"),
    ("age_mid", "Age"),
)
TASK_COLUMNS = tuple(c for c, _ in TASK_FIELDS)
COUNT_COLUMNS = TASK_COLUMNS[:-1]
DISPLAY_LABELS = tuple(lbl for _, lbl in TASK_FIELDS) + ("Payer", "Admission source")
#: official labels the mapping must carry (spec §11.2 step 10; prefix match, case-insensitive)
MAPPING_GATE = {
    ("discharge_disposition_id", 1): "discharged to home",
    ("admission_source_id", 1): "physician referral",
    ("admission_source_id", 2): "clinic referral",
    ("admission_source_id", 3): "hmo referral",
    ("admission_source_id", 4): "transfer from a hospital",
    ("admission_source_id", 5): "transfer from a skilled nursing facility",
    ("admission_source_id", 6): "transfer from another health care facility",
    ("admission_source_id", 7): "emergency room",
}

# --- Design (spec §11.3-11.7; paper §4.7) ------------------------------------------------------
SEED = 20261002
SPLIT_NAMES = ("risk_train", "risk_validation", "proxy_train", "proxy_validation", "study")
SPLIT_FRACTIONS = (0.35, 0.10, 0.35, 0.10, 0.10)
SPLIT_CUTS = (0.35, 0.45, 0.80, 0.90)  # cumulative cut points, int(n * cut)
LABEL_NOISE_SD = 0.5
LABEL_SEED = SEED + 7
PERMUTED_ORDER_SEED = SEED + 77
PAIR_SHUFFLE_SEED = SEED + 3
N_EXAMPLES = config.N_EXAMPLES  # 80 examples in every prompt (paper §2.1)
N_PRIMARY = 1200
N_SENSITIVITY = 300
GAP_EDGES = (0.0, 0.3, 0.6, 1.0, 1.5, math.inf)
PER_GAP_STRATUM = 30
N_STRATIFIED = 150
NEARTIE_SEED = 20261006
N_NEARTIE = 600
NEARTIE_GAP = 0.3  # training-score SDs
CONTROL_SEED = 20261007
N_CONTROL = 300
ORDERINGS = ("fixed", "reverse", "seeded")
ARM_GROUP = {"cf_a1": 1, "cf_a0": 0}  # counterfactual arm -> group shown
ORDERS = config.ORDERS  # 0: target shown as Patient 1

# --- Analysis (spec §11.9; Supplementary Note 14) ----------------------------------------------
BOOT_DRAWS = config.BOOTSTRAP_DRAWS  # 5,000 pair resamples
BOOT_SEEDS = {"all": 7, "order0": 8, "order1": 9, "changed": 10, "learner": 11, "difference": 12}
NEARTIE_BOOT_SEED = 0
NEARTIE_DIFF_SEED = 2
MARGIN_PP = 5.0  # pre-specified meaningful overall effect (paper §2.3)
PLAN_ALPHA, PLAN_POWER = 0.05, 0.80
SUPPORT_PROPENSITY = (0.02, 0.98)
PROPENSITY_FEATURES = "task+payer+source"  # spec R2
SUPPORT_MIN_PROB = 0.01
CALIBRATION_MIN_PREVALENCE = 0.02
# positive control (paper §4.7; spec §11.10, construction UNRESOLVED -> decided in the notebook)
CONTROL_SOURCE = "Referral"
CONTROL_PAYERS = {"cf_a0": "Blue Cross/Blue Shield", "cf_a1": "Medicaid"}
CONTROL_WEIGHT = 1.0

#: Table 21 conditions: key -> (label, released records, pair set, coupling order, pair count)
CONDITIONS = {
    "primary": ("Primary fixed order", "external_zero_primary_fixed_p1200", "primary", "fixed", N_PRIMARY),
    "first300": ("Same first 300 baseline", "external_zero_primary_fixed_p1200", "primary", "fixed",
                 N_SENSITIVITY),
    "random": ("Random target", "external_zero_random_target_fixed_p300", "random", "fixed", N_SENSITIVITY),
    "reverse": ("Reversed category order", "external_zero_primary_reverse_p300", "primary", "reverse",
                N_SENSITIVITY),
    "seeded": ("Seed-permuted category order", "external_zero_primary_seeded_p300", "primary", "seeded",
               N_SENSITIVITY),
    "stratified": ("Independent gap-stratified", "external_zero_gap_stratified_fixed_p1200", "stratified",
                   "fixed", N_STRATIFIED),
}
