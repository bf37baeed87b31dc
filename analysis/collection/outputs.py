"""Outputs: the records CSV (released schema + ``prompt_sha256``) and its metadata JSON, written atomically,
and the ledger rows of an answer and its attempts."""
from __future__ import annotations

import contextlib
import functools
import hashlib
import json
import os
import re
import sys
import tempfile
from importlib import metadata
from pathlib import Path

import numpy as np
import pandas as pd

from .answers import Reply
from .errors import CollectionError
from .jobs import Job, now_utc
from .ledger import INVALID, VALID, Ledger
from .redaction import REDACT, clean_url
from .retries import Outcome
from .subjects import Subject

#: released record schema (spec §7) plus the prompt's SHA-256
RECORD_COLUMNS = ["arm", "pair_id", "i", "j", "order", "patient", "chosen", "picked_i", "prompt_sha256"]
#: added where a run has more than one sample per job (the released t1resample records' name)
SAMPLE_COLUMN = "sample_id"
#: added where answers carry log-probabilities (``--answer-format logprobs``)
LOGPROB_COLUMNS = ["p_first", "p_outside"]


def output_stem(cell: str, display: str, tag: str = "") -> str:
    """``CELL``, ``CELL_<display>`` for a category display, plus ``_<tag>`` for overridden settings."""
    stem = cell if display == "numeric" else f"{cell}_{display}"
    return f"{stem}_{tag}" if tag else stem


def safe_model_dir(model: str) -> str:
    """A folder name for a model id (``/`` and other separators replaced).

    >>> safe_model_dir("qwen/qwen3.7-max")
    'qwen__qwen3.7-max'
    """
    return re.sub(r"[^A-Za-z0-9._-]", "_", model.replace("/", "__"))


def output_paths(out: Path, provider: str, model: str, cell: str, display: str,
                 tag: str = "") -> tuple[Path, Path]:
    """Records and metadata paths: ``OUT/<provider>/<model>/<stem>_records.csv`` and ``..._metadata.json``."""
    folder = Path(out) / provider / safe_model_dir(model)
    stem = output_stem(cell, display, tag)
    return folder / f"{stem}_records.csv", folder / f"{stem}_metadata.json"


def check_writable(folder: Path) -> None:
    """Raise :class:`CollectionError` unless ``folder`` exists as a writable folder or can be created.

    Nothing is left behind: the probe file is created and removed in the nearest existing folder.
    """
    folder = Path(folder).absolute()
    probe = folder
    while not probe.exists():
        if probe.parent == probe:
            break
        probe = probe.parent
    if not probe.is_dir():
        raise CollectionError(f"output folder {folder} cannot be created: {probe} is not a folder")
    try:
        with tempfile.TemporaryFile(dir=probe):
            pass
    except OSError as exc:
        raise CollectionError(f"output folder {folder} is not writable ({exc.strerror or exc})") from None


def record_columns(jobs: list[Job], answers: pd.DataFrame) -> list[str]:
    """:data:`RECORD_COLUMNS`, plus ``sample_id`` where a job has more than one sample, plus the
    log-probability columns where any answer carries them."""
    extra = [SAMPLE_COLUMN] if any(jb.sample for jb in jobs) else []
    if not answers.empty and "p_first" in answers and answers["p_first"].notna().any():
        extra += LOGPROB_COLUMNS
    return RECORD_COLUMNS + extra


def job_records(jobs: list[Job], answers: pd.DataFrame) -> pd.DataFrame:
    """Records (released schema + ``prompt_sha256`` [+ ``sample_id``, log-probabilities]) of the jobs with a
    persisted answer, in job order."""
    frame = pd.DataFrame([{"arm": jb.arm, "pair_id": jb.pair_id, "i": jb.i, "j": jb.j, "order": jb.order,
                           "prompt_sha256": jb.prompt_sha256, SAMPLE_COLUMN: jb.sample, "_q": q}
                          for q, jb in enumerate(jobs)])
    columns = record_columns(jobs, answers)
    if answers.empty:
        return pd.DataFrame(columns=columns)
    answers = answers.assign(**{c: answers[c] if c in answers else np.nan for c in LOGPROB_COLUMNS},
                             sample=answers["sample"] if "sample" in answers else 0)
    a = answers.rename(columns={"ord": "order", "sample": SAMPLE_COLUMN})[
        ["arm", "pair_id", "order", "prompt_sha256", SAMPLE_COLUMN, "patient", *LOGPROB_COLUMNS]]
    df = frame.merge(a, on=["arm", "pair_id", "order", "prompt_sha256", SAMPLE_COLUMN], how="inner").sort_values("_q")
    patient = pd.to_numeric(df["patient"], errors="coerce").to_numpy(dtype=float)
    first = np.where(df["order"] == 0, df["i"], df["j"])
    second = np.where(df["order"] == 0, df["j"], df["i"])
    chosen = np.where(patient == 1, first, np.where(patient == 2, second, np.nan))
    picked = np.where(np.isnan(chosen), np.nan, (chosen == df["i"].to_numpy()).astype(float))
    df["patient"] = pd.array(patient, dtype="Float64").astype("Int64")
    df["chosen"] = pd.array(chosen, dtype="Float64").astype("Int64")
    df["picked_i"] = pd.array(picked, dtype="Float64").astype("Int64")
    return df[columns].reset_index(drop=True)


def atomic_write(path: Path, data: bytes) -> None:
    """Write ``data`` to ``path`` atomically (temporary file, fsync, rename).

    The file gets the permissions a plain ``open()`` would give it (``0o666`` less the umask), not
    the private ``0o600`` of the temporary file: records, metadata and report cards are meant to be shared.
    """
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=path.name, suffix=".part")
    try:
        with os.fdopen(fd, "wb") as fh:
            fh.write(data)
            fh.flush()
            os.fsync(fh.fileno())
        os.replace(tmp, path)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        raise
    umask = os.umask(0)
    os.umask(umask)
    os.chmod(path, 0o666 & ~umask)


def sdk_versions() -> dict:
    """The interpreter's and the SDKs' versions (read once per process: each look-up scans the installed
    distributions, and the replay writes 145 metadata files)."""
    return dict(_sdk_versions())


@functools.lru_cache(maxsize=1)
def _sdk_versions() -> dict:
    out = {"python": sys.version.split()[0]}
    for name in ("anthropic", "openai", "httpx2", "numpy", "pandas"):
        try:
            out[name] = metadata.version(name)
        except metadata.PackageNotFoundError:  # pragma: no cover - optional
            out[name] = None
    return out


def write_outputs(out: Path, subject: Subject, jobs: list[Job], ledger: Ledger, key: str, settings_json: str,
                  run_info: dict) -> tuple[Path, Path]:
    """Write the records CSV (atomically) and its metadata JSON beside it."""
    cell, display = jobs[0].cell, jobs[0].display
    rec_path, meta_path = output_paths(out, subject.provider, subject.model, cell, display, subject.tag(key))
    answers = ledger.answers(cell, display, key)
    current = {(jb.arm, jb.pair_id, jb.order, jb.prompt_sha256, jb.sample) for jb in jobs}
    if not answers.empty:
        mask = [k in current for k in zip(answers["arm"], answers["pair_id"], answers["ord"], answers["prompt_sha256"],
                                           answers["sample"])]
        answers = answers[mask]
    recs = job_records(jobs, answers)
    data = recs.to_csv(index=False, lineterminator="\n").encode()
    atomic_write(rec_path, data)
    valid = recs["picked_i"].notna() if len(recs) else pd.Series(dtype=bool)
    cost = answers["cost_usd"] if not answers.empty else pd.Series(dtype=float)
    served = answers["served_model"].fillna("").value_counts().to_dict() if not answers.empty else {}
    dates = sorted({str(d)[:10] for d in answers["created_utc"]}) if not answers.empty else []
    meta = {
        "cell": cell, "display": display, "provider": subject.provider,
        "model_requested": subject.model, "models_served": {str(k): int(v) for k, v in served.items()},
        "request_settings": json.loads(settings_json), "request_key": key,
        "base_url": clean_url(getattr(subject, "base_url", None)),
        "api_key_env": run_info.get("api_key_env"),
        "sdk_versions": sdk_versions(),
        "collection_dates_utc": dates,
        "first_answer_utc": str(answers["created_utc"].min()) if not answers.empty else None,
        "last_answer_utc": str(answers["created_utc"].max()) if not answers.empty else None,
        "written_utc": now_utc(),
        "n_jobs": len(jobs), "n_records": int(len(recs)), "n_valid": int(valid.sum()),
        "n_invalid": int(len(recs) - valid.sum()), "n_unanswered": len(jobs) - int(len(recs)),
        "n_reused": int(answers["reused_from"].notna().sum()) if not answers.empty else 0,
        "n_requests": int(answers["n_requests"].sum()) if not answers.empty else 0,
        "distinct_prompts": int(len({jb.prompt_sha256 for jb in jobs})),
        "samples_per_job": 1 + max((jb.sample for jb in jobs), default=0),
        "complete": len(recs) == len(jobs),
        "tokens": {"input": int(answers["input_tokens"].sum()) if not answers.empty else 0,
                   "output": int(answers["output_tokens"].sum()) if not answers.empty else 0},
        "cost_usd": None if cost.isna().any() else round(float(cost.sum()), 6),
        "price_usd_per_mtok": run_info.get("price"),
        "reuse_identical_prompts": run_info.get("reuse", False),
        "reask_attempts": run_info.get("reask", 1),
        "answer_format": run_info.get("answer_format", "tool"),
        "retry_policy": run_info.get("policy"),
        "this_run": run_info.get("this_run"),
        "ledger": str(ledger.path),
        "records_file": rec_path.name,
        "records_sha256": hashlib.sha256(data).hexdigest(),
    }
    atomic_write(meta_path, (json.dumps(meta, indent=1, default=str) + "\n").encode())
    return rec_path, meta_path


def answer_row(job: Job, key: str, reply: Reply | None, outcome: Outcome | None, reused_from: str | None) -> dict:
    """The ledger row of one job's answer."""
    return {"cell": job.cell, "display": job.display, "arm": job.arm, "pair_id": job.pair_id, "ord": job.order,
            "request_key": key, "prompt_sha256": job.prompt_sha256, "i": job.i, "j": job.j,
            "patient": None if reply is None else reply.patient,
            "status": VALID if reply is not None and reply.patient is not None else INVALID,
            "served_model": None if reply is None else reply.served_model,
            "response_id": None if reply is None else reply.response_id,
            "input_tokens": outcome.input_tokens if outcome else 0,
            "output_tokens": outcome.output_tokens if outcome else 0,
            "cost_usd": (outcome.cost if outcome else 0.0),
            "n_requests": outcome.n_requests if outcome else 0,
            "reused_from": reused_from, "raw": None if reply is None else REDACT(reply.raw)[:200],
            "created_utc": now_utc(), "sample": job.sample,
            "p_first": None if reply is None else reply.p_first,
            "p_outside": None if reply is None else reply.p_outside}


def attempt_rows(job: Job, key: str, attempts: list[dict]) -> list[dict]:
    """The ledger rows of one job's attempts."""
    return [{"cell": job.cell, "display": job.display, "arm": job.arm, "pair_id": job.pair_id, "ord": job.order,
             "request_key": key, "prompt_sha256": job.prompt_sha256, "sample": job.sample, **a} for a in attempts]
