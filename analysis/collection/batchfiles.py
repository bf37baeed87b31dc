"""Batch files for open-weight engines (issue 14): ``collect --export-batch FILE`` / ``--import-batch FILE``.

:func:`export_batch` writes the jobs without an answer in the ledger as OpenAI-batch JSONL, one
request per line (``custom_id``, ``method`` ``POST``, ``url`` ``/v1/chat/completions``, ``body``: the
synchronous request of :class:`analysis.collection.OpenAISubject`), with the ``custom_id`` of
:func:`analysis.collection.batch.custom_id`. Any engine that reads that format answers it, e.g.
vLLM on a machine or a cluster that serves the model::

    vllm run-batch -i requests.jsonl -o results.jsonl --model Qwen/Qwen3-8B

(``--model`` is the model the requests name: give the same id as ``collect --model``). The OpenAI
Batch API takes the same file (``client.files.create(purpose="batch")``, then
``client.batches.create``). :func:`import_batch` reads the results (an OpenAI Batch output or
error file, or ``vllm run-batch`` output: one ``{"custom_id", "response": {"status_code",
"body"}, "error"}`` per line) into the ledger; then the records are written as for any run.
Answers are matched by ``custom_id`` only, so an import into the same ledger with the same
``collect`` arguments (cell, provider, model, settings) lands on the right jobs; lines of
unknown ``custom_id`` are counted and ignored.
"""
from __future__ import annotations

import json
import sqlite3
from pathlib import Path
from typing import Iterator

from .batch import custom_id
from .batchapi import OPENAI_ENDPOINT, openai_body, openai_result
from .errors import CollectionError
from .jobs import Job, now_utc
from .ledger import Ledger, answer_keys, check_ledger
from .outputs import answer_row, atomic_write
from .pricing import cost_of
from .retries import Outcome
from .subjects import request_key


def _pending(jobs: list["Job"], subject, ledger_path: Path) -> list["Job"]:
    key, _ = request_key(subject)
    if not ledger_path.exists():
        return list(jobs)
    check_ledger(ledger_path)
    con = sqlite3.connect(f"file:{ledger_path}?mode=ro", uri=True)
    try:
        done = answer_keys(con, key)
    finally:
        con.close()
    return [jb for jb in jobs if jb.ledger_key not in done]


def export_batch(path: str | Path, jobs: list["Job"], subject, ledger_path: str | Path) -> int:
    """Write the jobs without an answer in the ledger as OpenAI-batch JSONL (``custom_id``, ``method``,
    ``url``, ``body``); returns the number of lines. The file is written atomically."""
    if subject.provider != "openai":
        raise CollectionError("--export-batch writes OpenAI-batch JSONL: use --provider openai (vLLM, SGLang, "
                                "any OpenAI-compatible engine)")
    key, _ = request_key(subject)
    todo = _pending(jobs, subject, Path(ledger_path))
    lines = [{"custom_id": custom_id(jb, key), "method": "POST", "url": OPENAI_ENDPOINT,
              "body": openai_body(subject, subject.prompt_of(jb))} for jb in todo]
    data = "".join(json.dumps(ln, separators=(",", ":")) + "\n" for ln in lines).encode()
    atomic_write(Path(path), data)
    return len(lines)


def read_jsonl(path: str | Path) -> Iterator[dict]:
    p = Path(path)
    if not p.is_file():
        raise CollectionError(f"batch file {p} not found")
    with p.open(encoding="utf-8") as fh:
        for n, raw in enumerate(fh, 1):
            if not raw.strip():
                continue
            try:
                obj = json.loads(raw)
            except ValueError as exc:
                raise CollectionError(f"{p}:{n}: not JSON ({exc})") from None
            if not isinstance(obj, dict) or "custom_id" not in obj:
                raise CollectionError(f"{p}:{n}: not a batch result line (no custom_id)")
            yield obj


def import_batch(path: str | Path, jobs: list["Job"], subject, ledger: "Ledger",
                 price: tuple[float, float] | None = None) -> dict:
    """Read an OpenAI Batch output / error file or a ``vllm run-batch`` output into the ledger.

    Lines are matched to jobs by ``custom_id``; an answer already in the ledger is kept (one
    answer per job and request). Returns counts: ``lines, answers, kept_existing, errors,
    unknown``.
    """
    key, settings_json = request_key(subject)
    ledger.register_request(key, subject, settings_json)
    by_cid = {custom_id(jb, key): jb for jb in jobs}
    answers, attempts = [], []
    counts = {"lines": 0, "answers": 0, "kept_existing": 0, "errors": 0, "unknown": 0}
    for line in read_jsonl(path):
        counts["lines"] += 1
        res = openai_result(line, getattr(subject, "answer_format", "tool"))
        jb = by_cid.get(res.custom_id)
        if jb is None:
            counts["unknown"] += 1
            continue
        cost = 0.0
        if res.kind == "succeeded":
            r = res.reply
            cost = cost_of(price, r.input_tokens, r.output_tokens) if price else None
            answers.append(answer_row(jb, key, r, Outcome(r, [], r.input_tokens, r.output_tokens, cost, 1), None))
        else:
            counts["errors"] += 1
        attempts.append({"cell": jb.cell, "display": jb.display, "arm": jb.arm, "pair_id": jb.pair_id,
                         "ord": jb.order, "request_key": key, "prompt_sha256": jb.prompt_sha256,
                         "sample": jb.sample, "attempt": 1,
                         "kind": "import", "outcome": res.kind if res.reply is None else
                         ("valid" if res.reply.patient is not None else "invalid"),
                         "http_status": None, "detail": f"{Path(path).name} {res.detail}"[:300], "latency_s": None,
                         "input_tokens": res.reply.input_tokens if res.reply else 0,
                         "output_tokens": res.reply.output_tokens if res.reply else 0, "cost_usd": cost,
                         "created_utc": now_utc()})
    added = ledger.put(answers, attempts)
    counts["answers"] = added
    counts["kept_existing"] = len(answers) - added
    return counts
