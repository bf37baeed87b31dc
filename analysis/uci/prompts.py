"""The exact real-record prompt (spec §11.8), every logical call of a pair set, and the check of our
job ids (``pair_id:order:sha256(prompt)``) against the released records."""
from __future__ import annotations

import hashlib

import numpy as np
import pandas as pd

from .design import ARM_GROUP, CATEGORY_SEP, COUNT_COLUMNS, DISPLAY_LABELS, ORDERS
from .study import Study


PROMPT_INTRO = ("You are planning follow-up calls for patients being discharged home from hospital. Below are "
                "previous patients with assigned readmission risk scores. Use the examples to decide which of "
                "the two patients should receive a follow-up call first.")


def _field_strings(st: Study, idx: np.ndarray, categories: np.ndarray) -> list[np.ndarray]:
    """The 11 displayed values (8 counts, age band, payer, source) of patients ``idx``."""
    p = st.panel
    cols = [p[c].to_numpy()[idx].astype(int).astype(str) for c in COUNT_COLUMNS]
    cols.append(p["age_band"].to_numpy()[idx].astype(str))
    parts = pd.Series(np.asarray(categories, dtype=object)).str.split(CATEGORY_SEP, n=1, expand=True, regex=False)
    return cols + [parts[0].to_numpy().astype(str), parts[1].to_numpy().astype(str)]


def prompt_prefix(st: Study, labels: np.ndarray | None = None) -> str:
    """Instruction and the 80 example rows (recorded categories), up to ``NEW PATIENTS:``."""
    ex = st.examples
    lab = st.label if labels is None else labels
    vals = _field_strings(st, ex, st.panel["category"].to_numpy()[ex])
    rows = [", ".join(v) + f" -> {x:.2f}" for v, x in zip(zip(*vals), lab[ex])]
    header = f"PREVIOUS PATIENTS (format: {', '.join(DISPLAY_LABELS)} -> risk):"
    return PROMPT_INTRO + "\n\n" + header + "\n" + "\n".join(rows) + "\n\nNEW PATIENTS:\n"


def patient_blocks(st: Study, idx: np.ndarray, categories: np.ndarray, number: int) -> np.ndarray:
    """``Patient N:`` blocks (11 indented lines each) for many patients at once."""
    vals = _field_strings(st, np.asarray(idx), categories)
    block = np.full(len(idx), f"Patient {number}:", dtype=object)
    for lbl, v in zip(DISPLAY_LABELS, vals):
        block = block + f"\n  {lbl}: " + v.astype(object)
    return block


def render_jobs(st: Study, pairs: pd.DataFrame, ordering: str = "fixed", prefix: str = "",
                target_categories: dict[str, np.ndarray] | None = None,
                labels: np.ndarray | None = None, with_prompt: bool = False) -> pd.DataFrame:
    """Every logical call of a pair set: ``pair_id, i, j, order, arm, target_category,
    comparator_category, proxy_changed, prompt_sha256, job_id`` (4 rows per pair).

    The target is shown with its category under the arm's group, the comparator with its recorded
    category; order 0 shows the target first. ``target_categories`` (arm -> categories) overrides the
    coupling (positive control); ``labels`` overrides the example labels.
    """
    c = st.coupling[ordering]
    i, j = pairs["i"].to_numpy(), pairs["j"].to_numpy()
    comp_cat = st.panel["category"].to_numpy()[j]
    head = prompt_prefix(st, labels)
    own = c.loc[i]
    changed = np.where(own["A"].to_numpy() == 1, own["under_0"], own["under_1"]) != own["recorded"].to_numpy()
    frames = []
    for arm, g in ARM_GROUP.items():
        tcat = (own[f"under_{g}"].to_numpy() if target_categories is None
                else np.asarray(target_categories[arm], dtype=object))
        for order in ORDERS:
            t_blk = patient_blocks(st, i, tcat, 1 if order == 0 else 2)
            c_blk = patient_blocks(st, j, comp_cat, 2 if order == 0 else 1)
            body = t_blk + "\n" + c_blk if order == 0 else c_blk + "\n" + t_blk
            prompts = head + body
            sha = np.array([hashlib.sha256(s.encode("utf-8")).hexdigest() for s in prompts])
            f = pd.DataFrame({"pair_id": pairs["pair_id"].to_numpy(), "i": i, "j": j, "order": order, "arm": arm,
                              "target_category": tcat, "comparator_category": comp_cat,
                              "proxy_changed": changed.astype(int), "prompt_sha256": sha})
            if with_prompt:
                f["prompt"] = prompts
            frames.append(f)
    jobs = pd.concat(frames, ignore_index=True)
    jobs["job_id"] = (prefix + jobs["pair_id"].astype(str) + ":" + jobs["order"].astype(str) + ":"
                      + jobs["prompt_sha256"])
    return jobs.sort_values(["pair_id", "order", "arm"], ascending=[True, True, False],
                            kind="mergesort").reset_index(drop=True)


def render_prompt(st: Study, target: int, comparator: int, target_category: str, order: int,
                  labels: np.ndarray | None = None) -> str:
    """One exact real-record prompt (no trailing newline), for reading and for tests."""
    pairs = pd.DataFrame({"pair_id": [0], "i": [int(target)], "j": [int(comparator)]})
    jobs = render_jobs(st, pairs, target_categories={a: np.array([target_category]) for a in ARM_GROUP},
                       labels=labels, with_prompt=True)
    return jobs.loc[(jobs["order"] == order) & (jobs["arm"] == "cf_a1"), "prompt"].iloc[0]


def hash_check(jobs: pd.DataFrame, records: pd.DataFrame) -> dict:
    """Compare our jobs with released records: pairs, job ids (prompt SHA-256) and proxy_changed."""
    m = records.merge(jobs, on=["pair_id", "order", "arm"], how="left", suffixes=("", "_ours"))
    return {"records": len(records), "job_ids_matched": int((m["job_id"] == m["job_id_ours"]).sum()),
            "pairs_matched": int(((m["i"] == m["i_ours"]) & (m["j"] == m["j_ours"])).sum()),
            "changed_matched": int((m["proxy_changed"] == m["proxy_changed_ours"]).sum()),
            "unique_prompts": int(jobs["job_id"].nunique())}
