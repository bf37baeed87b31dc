"""The UCI panel and the study cohort (spec §11.2): mapping gate, payer and admission-source groups,
cohort flow, one row per patient."""
from __future__ import annotations

import pandas as pd

from .. import data
from .design import (CATEGORY_SEP, COUNT_COLUMNS, DISCHARGED_HOME, MAPPING_GATE, MAPPING_NAME, PANEL_NAME,
                     PAYER_CODES, PAYER_MISSING, PAYER_OTHER, RACES, SOURCE_IDS, SOURCE_OTHER)


def read_raw_panel() -> pd.DataFrame:
    """The hashed UCI panel (101,766 encounters x 50 columns; missing fields are null)."""
    return pd.read_csv(data.fetch(PANEL_NAME), low_memory=False)


def read_id_mapping() -> dict[str, pd.Series]:
    """The official ID mapping: one Series (id -> stripped label) per section of ``IDs_mapping.csv``."""
    text = data.fetch(MAPPING_NAME).read_text()
    sections: dict[str, pd.Series] = {}
    for block in text.replace("\r\n", "\n").strip().split("\n,\n"):
        lines = [ln for ln in block.strip().split("\n") if ln.strip(",")]
        key = lines[0].split(",")[0]
        rows = [ln.split(",", 1) for ln in lines[1:]]
        sections[key] = pd.Series({int(i): lbl.strip().strip('"').strip() for i, lbl in rows if i.strip()})
    return sections


def check_mapping(mapping: dict[str, pd.Series]) -> None:
    """Stop with ``ValueError`` unless the official labels match the grouping (spec §11.2 step 10)."""
    for (section, key), prefix in MAPPING_GATE.items():
        got = str(mapping.get(section, pd.Series(dtype=str)).get(key, ""))
        if not got.lower().startswith(prefix):
            raise ValueError(f"IDs_mapping: {section} {key} is {got!r}, expected a label starting {prefix!r}")


def payer_group(codes: pd.Series, missing_payer: str = "null") -> pd.Series:
    """Six payer groups from ``payer_code``.

    ``missing_payer="null"``: a null code is *Not recorded* (the hashed panel's encoding).
    ``missing_payer="?"``: missing codes are read as the literal ``?`` of the archive file, a
    non-null code, hence *Other insurer* (the alternative the spec leaves UNRESOLVED).

    >>> payer_group(pd.Series(["MC", "HM", None])).tolist()
    ['Medicare', 'Other insurer', 'Not recorded']
    """
    if missing_payer == "?":
        codes = codes.fillna("?")
    elif missing_payer != "null":
        raise ValueError(f"missing_payer must be 'null' or '?', not {missing_payer!r}")
    out = codes.map(PAYER_CODES).fillna(PAYER_OTHER)
    return out.where(codes.notna(), PAYER_MISSING)


def source_group(ids: pd.Series) -> pd.Series:
    """Four admission-source groups from ``admission_source_id`` (null and unlisted ids: other).

    >>> source_group(pd.Series([7, 2, 22, 17, None])).tolist()
    ['Emergency room', 'Referral', 'Transfer', 'Not recorded or other', 'Not recorded or other']
    """
    return ids.map(SOURCE_IDS).fillna(SOURCE_OTHER)


def cohort_flow(raw: pd.DataFrame) -> pd.DataFrame:
    """Records -> filters -> cohort: encounters and distinct patients after each step."""
    steps = [("All encounters in the panel", raw)]
    race = raw[raw["race"].isin(list(RACES))]
    steps.append(("Race recorded as Black (AfricanAmerican) or white (Caucasian)", race))
    home = race[race["discharge_disposition_id"] == DISCHARGED_HOME]
    steps.append(("Discharged to home (discharge id 1)", home))
    first = home.sort_values("encounter_id").drop_duplicates("patient_nbr")
    steps.append(("First eligible encounter per patient", first))
    return pd.DataFrame({"step": [s for s, _ in steps],
                         "encounters": [len(d) for _, d in steps],
                         "patients": [d["patient_nbr"].nunique() for _, d in steps]})


def build_panel(raw: pd.DataFrame, missing_payer: str = "null") -> pd.DataFrame:
    """The study cohort, one row per patient (row position = patient index of the records).

    Columns: ``encounter_id, patient_nbr, A, age_band, payer, source, category, readmitted_30``
    and the nine task columns (``age_mid`` = lower bound of the age decade + 5).
    """
    keep = raw["race"].isin(list(RACES)) & (raw["discharge_disposition_id"] == DISCHARGED_HOME)
    df = (raw[keep].sort_values("encounter_id", kind="mergesort")
          .drop_duplicates("patient_nbr").reset_index(drop=True))
    lo = df["age"].str.extract(r"\[(\d+)-", expand=False).astype(int)
    out = pd.DataFrame({
        "encounter_id": df["encounter_id"].to_numpy(),
        "patient_nbr": df["patient_nbr"].to_numpy(),
        "A": df["race"].map(RACES).astype(int).to_numpy(),
        "age_band": (lo.astype(str) + "-" + (lo + 9).astype(str)).to_numpy(),
    })
    for col in COUNT_COLUMNS:
        out[col] = df[col].astype(int).to_numpy()
    out["age_mid"] = (lo + 5).to_numpy()
    out["payer"] = payer_group(df["payer_code"], missing_payer).to_numpy()
    out["source"] = source_group(df["admission_source_id"]).to_numpy()
    out["category"] = out["payer"] + CATEGORY_SEP + out["source"]
    out["readmitted_30"] = (df["readmitted"] == "<30").astype(int).to_numpy()
    return out
