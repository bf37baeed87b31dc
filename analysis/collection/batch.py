"""Batch collection through the providers' batch engines, and batch files for open-weight engines (issue 14).

``collect --batch`` / ``audit --batch`` send every pending job of the run to the provider's batch
API through the official SDK and collect the results into the same ledger as a synchronous run:

* **Anthropic Message Batches** (``client.messages.batches.create/retrieve/results/cancel``);
* **OpenAI Batch** (``client.files.create(purpose="batch")``, ``client.batches.create/retrieve/
  cancel``, ``client.files.content`` of ``output_file_id`` and ``error_file_id``). Any endpoint
  speaking the same API works (``--base-url``).

Rules (the same as :func:`analysis.collection.run_jobs` where they apply):

* ``custom_id`` is derived from the ledger key of the job's answer (:func:`custom_id`), so batch
  and synchronous answers land in the same ``answers`` table under one rule: one answer per job
  and request.
* A batch is written to the ledger (table ``batches``, its requests in ``batch_requests``) in
  state ``preparing`` **before** it is sent; the provider's batch id is committed the moment the
  create call returns. A killed process resumes by polling the batches it finds there and never
  sends a request that is in a live batch again. A batch still ``preparing`` on resume (killed
  during the create call) is looked up at the provider (OpenAI: the ``metadata`` of the batch
  names our local id; Anthropic: an unclaimed batch created after it with the same request
  count) and adopted; only when none exists are its requests sent again.
* Errored, expired and canceled requests are sent again **in a new batch** (never
  synchronously) while the job has had fewer than ``retries`` failed batch requests; after that
  the job stays unanswered (``stopped = "failures"``), like a transport failure of a synchronous
  run. An invalid answer (no usable tool call) is an answer: it is recorded as missing (``reask``
  > 1 asks again in the next batch, up to ``reask`` answers).
* Results are priced at the batch price (list price x ``batch_price_factor`` of
  ``data/prices.csv``, 0.5 for both providers). ``max_cost`` counts every submitted batch at its
  worst case (estimated input tokens, every answer at the output cap) **before** it is
  submitted; a batch that would not fit is made smaller, or not sent (``stopped = "budget"``).
* Caps per batch: Anthropic 100,000 requests / 256 MB; OpenAI 50,000 requests / 200 MB per
  file and one model per file (a run has one model).

Open-weight engines: :mod:`.batchfiles` (``--export-batch`` / ``--import-batch``).

``--prompt-cache`` (Anthropic, off by default, a deviation from the paper's request): the shared
block of the prompt (instructions and examples) is sent as its own text block with
``cache_control``; the text is unchanged but the request's structure is not, so it is part of
the request settings (its own ledger key and records tag) and the card shows it.
"""
from __future__ import annotations

import fnmatch
import json
import math
import sqlite3
import sys
import threading
import uuid
from dataclasses import dataclass
from pathlib import Path
from typing import Iterator

import pandas as pd
from tqdm import tqdm

from .batchapi import FAILED, PromptCacheAnthropic, Result, batch_client, sdk_call, with_prompt_cache
from .errors import CollectionError, Fatal, Transient
from .jobs import Job, now_utc, sha256_text
from .ledger import LEDGER_NAME, Ledger, answer_keys, check_ledger, ledger_lock
from .outputs import answer_row, check_writable, write_outputs
from .pricing import DEFAULT_PRICES, cost_of, estimate_tokens, load_prices, price_for
from .redaction import REDACT
from .retries import Outcome
from .runner import RunResult
from .subjects import request_key

DEFAULT_POLL_INTERVAL = 60.0
TRANSIENT_LIMIT = 5  # consecutive transport failures of the batch API before the run stops (resumable)

_SCHEMA = """
CREATE TABLE IF NOT EXISTS batches (
    local_id TEXT PRIMARY KEY, provider TEXT NOT NULL, model TEXT NOT NULL, request_key TEXT NOT NULL,
    batch_id TEXT, input_file_id TEXT, state TEXT NOT NULL, provider_status TEXT, n_requests INTEGER NOT NULL,
    n_bytes INTEGER NOT NULL, worst_cost_usd REAL, counts_json TEXT, created_utc TEXT NOT NULL,
    updated_utc TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS batch_requests (
    local_id TEXT NOT NULL, custom_id TEXT NOT NULL, cell TEXT NOT NULL, display TEXT NOT NULL, arm TEXT NOT NULL,
    pair_id INTEGER NOT NULL, ord INTEGER NOT NULL, request_key TEXT NOT NULL, prompt_sha256 TEXT NOT NULL,
    outcome TEXT NOT NULL, detail TEXT, PRIMARY KEY (local_id, custom_id));
CREATE INDEX IF NOT EXISTS batch_requests_by_custom_id ON batch_requests (custom_id);
"""
#: batch states: preparing (in the ledger, not yet at the provider) -> submitted -> collected; abandoned
LIVE_STATES = ("preparing", "submitted")


def custom_id(job: "Job", key: str) -> str:
    """The batch ``custom_id`` of a job's request: a hash of its ledger key (answers' primary key).

    At most 64 characters of ``[A-Za-z0-9_-]`` (Anthropic's rule), the same in every batch and
    export of the job, so a result is matched to exactly one ledger row.
    A job's second and later samples (``--samples R``) carry their index, ``_s<k>``; sample 0 keeps the
    id it had before samples existed, so a batch in flight across an upgrade still lands.
    """
    parts = [job.cell, job.display, job.arm, job.pair_id, job.order, key, job.prompt_sha256]
    if job.sample:
        parts.append(job.sample)
    return "pa_" + sha256_text(json.dumps(parts))[:40] + (f"_s{job.sample}" if job.sample else "")


def ensure_schema(ledger: "Ledger") -> None:
    """Create the batch tables on the ledger's SQLite file (idempotent)."""
    ledger.con.executescript(_SCHEMA)


# =============================================================================================
# Ledger bookkeeping
# =============================================================================================
def _rows(con, sql: str, params=()) -> list[dict]:
    cur = con.execute(sql, params)
    names = [d[0] for d in cur.description]
    return [dict(zip(names, r)) for r in cur.fetchall()]


def batches(ledger: "Ledger", key: str | None = None) -> pd.DataFrame:
    """The ledger's batches (of one request key)."""
    ensure_schema(ledger)
    q, p = ("SELECT * FROM batches", ()) if key is None else ("SELECT * FROM batches WHERE request_key = ?", (key,))
    return pd.DataFrame(_rows(ledger.con, q + " ORDER BY created_utc, local_id", p))


def _persist_batch(ledger, local_id: str, subject, key: str, items: list[tuple[str, "Job"]], n_bytes: int,
                   worst: float | None) -> None:
    now = now_utc()
    with ledger.transaction() as con:
        con.execute("INSERT INTO batches (local_id, provider, model, request_key, state, n_requests, n_bytes, "
                    "worst_cost_usd, created_utc, updated_utc) VALUES (?, ?, ?, ?, 'preparing', ?, ?, ?, ?, ?)",
                    (local_id, subject.provider, subject.model, key, len(items), n_bytes, worst, now, now))
        con.executemany("INSERT INTO batch_requests VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, 'live', NULL)",
                        [(local_id, cid, jb.cell, jb.display, jb.arm, jb.pair_id, jb.order, key, jb.prompt_sha256)
                         for cid, jb in items])


def _set_batch(ledger, local_id: str, **fields) -> None:
    fields["updated_utc"] = now_utc()
    cols = ", ".join(f"{k} = ?" for k in fields)
    with ledger.transaction() as con:
        con.execute(f"UPDATE batches SET {cols} WHERE local_id = ?", (*fields.values(), local_id))


@dataclass
class BatchOptions:
    """How batches are made and followed."""

    poll_interval: float = DEFAULT_POLL_INTERVAL
    retries: int = 3  # failed batch requests (errored / expired / canceled) per job before giving up
    reask: int = 1
    max_requests: int | None = None  # per batch; default the provider's cap
    max_bytes: int | None = None
    max_polls: int | None = None  # tests: stop polling after this many rounds (None: until done)


class BatchRun:
    """The batch collection of a list of jobs (any cells) for one subject, resumable from the ledger."""

    def __init__(self, jobs: list["Job"], subject, ledger: "Ledger", opts: BatchOptions,
                 price: tuple[float, float] | None, max_cost: float | None, progress: bool,
                 stop: threading.Event | None, client=None):
        self.jobs, self.subject, self.ledger, self.opts = jobs, subject, ledger, opts
        self.price, self.max_cost, self.stop = price, max_cost, stop or threading.Event()
        self.key, settings_json = request_key(subject)
        ledger.register_request(self.key, subject, settings_json)
        ensure_schema(ledger)
        self.client = client or batch_client(subject)
        self.by_cid = {custom_id(jb, self.key): jb for jb in jobs}
        cap_n, cap_b = self.client.caps
        self.max_requests = min(opts.max_requests or cap_n, cap_n)
        self.max_bytes = min(opts.max_bytes or cap_b, cap_b)
        self.stats = {"n_requested_jobs": 0, "n_requests": 0, "n_failed": 0, "input_tokens": 0, "output_tokens": 0,
                      "cost_usd": 0.0 if price is not None else None, "stopped": "", "n_batches_submitted": 0}
        self.progress = progress
        self.bar = None

    # -- state ----------------------------------------------------------------------------------
    def answered(self) -> set[str]:
        done = answer_keys(self.ledger.con, self.key)
        return {cid for cid, jb in self.by_cid.items() if jb.ledger_key in done}

    def request_outcomes(self) -> dict[str, list[str]]:
        """Per custom_id, the outcomes of its batch requests (``live`` while its batch is live)."""
        out: dict[str, list[str]] = {}
        for cid, outcome in self.ledger.con.execute(
                "SELECT r.custom_id, r.outcome FROM batch_requests r JOIN batches b ON r.local_id = b.local_id "
                "WHERE r.request_key = ? AND b.state != 'abandoned' ORDER BY b.created_utc", (self.key,)):
            out.setdefault(cid, []).append(outcome)
        return out

    def live(self) -> list[dict]:
        return _rows(self.ledger.con, "SELECT * FROM batches WHERE request_key = ? AND state IN ('preparing', "
                     "'submitted') ORDER BY created_utc, local_id", (self.key,))

    # -- steps ----------------------------------------------------------------------------------
    def reconcile(self) -> None:
        """Batches left ``preparing`` by a killed create call: adopt the provider's batch or abandon."""
        known = {r[0] for r in self.ledger.con.execute("SELECT batch_id FROM batches WHERE batch_id IS NOT NULL")}
        for b in self.live():
            if b["state"] != "preparing":
                continue
            found = sdk_call(self.subject, self.client.find_orphan, b["local_id"], b["created_utc"],
                              b["n_requests"], known)
            if found:
                _set_batch(self.ledger, b["local_id"], batch_id=found, state="submitted")
                known.add(found)
            else:
                _set_batch(self.ledger, b["local_id"], state="abandoned")

    def poll(self) -> None:
        for b in self.live():
            if b["state"] != "submitted" or self.stop.is_set():
                continue
            status, terminal, counts = sdk_call(self.subject, self.client.retrieve, b["batch_id"])
            _set_batch(self.ledger, b["local_id"], provider_status=status, counts_json=json.dumps(counts))
            if terminal:
                self.collect(b, status)

    def collect(self, b: dict, status: str) -> None:
        """Store the results of an ended batch: answers (batch price) and the outcome of every request."""
        results = list(sdk_call(self.subject, lambda: list(self.client.results(b["batch_id"], status))))
        mine = {r["custom_id"] for r in _rows(self.ledger.con, "SELECT custom_id FROM batch_requests "
                                              "WHERE local_id = ?", (b["local_id"],))}
        outcomes = self.request_outcomes()
        answers, attempts, updates = [], [], {}
        seen = set()
        for res in results:
            if res.custom_id not in mine or res.custom_id in seen:
                continue
            seen.add(res.custom_id)
            jb = self.by_cid.get(res.custom_id)
            n_before = len(outcomes.get(res.custom_id, [])) - 1
            kind = res.kind
            cost = 0.0
            if kind == "succeeded":
                r = res.reply
                cost = cost_of(self.price, res.input_cost_tokens, r.output_tokens) if self.price else None
                answers_so_far = sum(o == "invalid" for o in outcomes.get(res.custom_id, [])) + 1
                kind = "valid" if r.patient is not None else "invalid"
                final = r.patient is not None or answers_so_far >= self.opts.reask
                if jb is not None and final:
                    out = Outcome(r, [], r.input_tokens, r.output_tokens, cost, n_before + 1)
                    answers.append(answer_row(jb, self.key, r, out, None))
                self._count(r.input_tokens, r.output_tokens, cost, final and jb is not None)
            updates[res.custom_id] = ("succeeded" if kind == "valid" else kind, res.detail)
            if jb is not None:
                attempts.append(self._attempt(jb, n_before + 1, kind, res, cost, b))
        missing = self.client.missing_kind(status)
        for cid in mine - seen:
            updates[cid] = (missing, f"no result line (batch {status})")
            jb = self.by_cid.get(cid)
            if jb is not None:
                n_before = len(outcomes.get(cid, [])) - 1
                attempts.append(self._attempt(jb, n_before + 1, missing, Result(cid, missing), 0.0, b))
        self.ledger.put(answers, attempts)  # one transaction; a rerun after a crash here keeps the first answer
        with self.ledger.transaction() as con:
            con.executemany("UPDATE batch_requests SET outcome = ?, detail = ? WHERE local_id = ? AND custom_id = ?",
                            [(o, d, b["local_id"], cid) for cid, (o, d) in updates.items()])
            con.execute("UPDATE batches SET state = 'collected', updated_utc = ? WHERE local_id = ?",
                        (now_utc(), b["local_id"]))
        self.stats["n_requests"] += len(mine)
        if self.bar is not None:
            self.bar.update(len(answers))

    def _count(self, tin: int, tout: int, cost: float | None, answered: bool) -> None:
        s = self.stats
        s["input_tokens"] += tin
        s["output_tokens"] += tout
        if s["cost_usd"] is not None:
            s["cost_usd"] = None if cost is None else s["cost_usd"] + cost
        s["n_requested_jobs"] += int(answered)

    def _attempt(self, jb, n: int, outcome: str, res: Result, cost, b: dict) -> dict:
        r = res.reply
        return {"cell": jb.cell, "display": jb.display, "arm": jb.arm, "pair_id": jb.pair_id, "ord": jb.order,
                "request_key": self.key, "prompt_sha256": jb.prompt_sha256, "sample": jb.sample, "attempt": n,
                "kind": "batch",
                "outcome": outcome, "http_status": 200 if r is not None else None,
                "detail": f"{b['batch_id']} {res.detail or (r.raw if r else '')}"[:300], "latency_s": None,
                "input_tokens": r.input_tokens if r else 0, "output_tokens": r.output_tokens if r else 0,
                "cost_usd": cost, "created_utc": now_utc()}

    def todo(self) -> tuple[list[tuple[str, "Job"]], list[str]]:
        """Jobs to send now (no answer, not live, failures within ``retries``) and those given up on."""
        done = self.answered()
        outcomes = self.request_outcomes()
        send, gave_up = [], []
        for cid, jb in self.by_cid.items():
            if cid in done:
                continue
            o = outcomes.get(cid, [])
            if "live" in o:
                continue
            if sum(x in FAILED for x in o) >= self.opts.retries:
                gave_up.append(cid)
            else:
                send.append((cid, jb))
        return send, gave_up

    def worst_cost(self, jb) -> float:
        tin, _, cap = estimate_tokens(jb.prompt, self.subject)
        return cost_of(self.price, tin, cap) or 0.0

    def committed_cost(self) -> float:
        """Spent in this run plus the worst case of every live batch (submitted, not yet collected)."""
        live = sum(float(b["worst_cost_usd"] or 0.0) for b in self.live())
        return (self.stats["cost_usd"] or 0.0) + live

    def submit(self, send: list[tuple[str, "Job"]]) -> None:
        """Cut ``send`` into batches under the caps and the budget; persist each, then create it."""
        committed = self.committed_cost() if self.max_cost is not None else 0.0
        i = 0
        while i < len(send) and not self.stop.is_set():
            items, lines, n_bytes, worst = [], [], 0, 0.0
            while i < len(send) and len(items) < self.max_requests:
                cid, jb = send[i]
                ln = self.client.line(cid, jb)
                size = len(json.dumps(ln, separators=(",", ":")).encode()) + 1
                w = self.worst_cost(jb) if self.max_cost is not None else 0.0
                if items and n_bytes + size > self.max_bytes:
                    break
                if self.max_cost is not None and committed + worst + w > self.max_cost:
                    self.stats["stopped"] = "budget"
                    break
                items.append((cid, jb))
                lines.append(ln)
                n_bytes += size
                worst += w
                i += 1
            if not items:
                break
            local_id = f"local-{uuid.uuid4().hex[:16]}"
            _persist_batch(self.ledger, local_id, self.subject, self.key, items, n_bytes,
                           worst if self.max_cost is not None or self.price else None)
            batch_id, file_id = sdk_call(self.subject, self.client.create, local_id, lines)
            _set_batch(self.ledger, local_id, batch_id=batch_id, input_file_id=file_id, state="submitted")
            committed += worst
            self.stats["n_batches_submitted"] += 1
            if self.stats["stopped"] == "budget":
                break

    def _postfix(self) -> None:
        if self.bar is None:
            return
        live = self.live()
        counts: dict[str, int] = {}
        for b in live:
            for k, v in json.loads(b["counts_json"] or "{}").items():
                counts[k] = counts.get(k, 0) + int(v or 0)
        cost = self.stats["cost_usd"]
        shown = " ".join(f"{k}={v}" for k, v in counts.items() if v)
        self.bar.set_postfix_str(f"batches live={len(live)} {shown} cost={'?' if cost is None else f'${cost:.4f}'}",
                                 refresh=True)

    def run(self) -> dict:
        done = self.answered()
        self.bar = tqdm(total=len(self.by_cid), initial=len(done), unit="req", file=sys.stderr, dynamic_ncols=True,
                        desc=f"batch {self.subject.provider}/{self.subject.model}", disable=not self.progress)
        polls = 0
        failures = 0
        try:
            while True:
                try:
                    self.reconcile()
                    self.poll()
                    send, gave_up = self.todo()
                    if send and not self.stop.is_set() and self.stats["stopped"] != "budget":
                        self.submit(send)
                    failures = 0
                except Transient:
                    failures += 1  # a blip while polling or creating: the ledger holds every batch; try again
                    if failures >= TRANSIENT_LIMIT:
                        raise
                live = self.live()
                self._postfix()
                if not live:
                    break
                polls += 1
                if self.opts.max_polls is not None and polls >= self.opts.max_polls:
                    self.stats["stopped"] = self.stats["stopped"] or "interrupted"
                    break
                if self.stop.wait(self.opts.poll_interval):
                    break
        finally:
            self.bar.close()
        send, gave_up = self.todo()
        self.stats["n_failed"] = len(gave_up)
        if self.stop.is_set() and not self.stats["stopped"]:
            self.stats["stopped"] = "interrupted"
        if not self.stats["stopped"] and (gave_up or send):
            self.stats["stopped"] = "failures" if gave_up else "interrupted"
        self.stats["n_live_batches"] = len(self.live())
        return self.stats

    def cancel_live(self) -> int:
        """Ask the provider to cancel every live batch (their results are still collected when they end)."""
        n = 0
        for b in self.live():
            if b["state"] == "submitted":
                sdk_call(self.subject, self.client.cancel, b["batch_id"])
                n += 1
        return n


def run_batch(jobs: list["Job"], subject, ledger: "Ledger", *, opts: BatchOptions | None = None,
              price: tuple[float, float] | None = None, max_cost: float | None = None, progress: bool = True,
              stop: threading.Event | None = None, client=None) -> dict:
    """Collect ``jobs`` (any cells, one subject) through the provider's batch API; counts like ``run_jobs``."""
    if not jobs:
        return {"n_requested_jobs": 0, "n_requests": 0, "n_failed": 0, "input_tokens": 0, "output_tokens": 0,
                "cost_usd": 0.0, "stopped": ""}
    run = BatchRun(jobs, subject, ledger, opts or BatchOptions(), price, max_cost, progress, stop, client)
    try:
        return run.run()
    except Transient as exc:  # the provider could not be reached: the batches stay in the ledger
        raise CollectionError(f"batch API unreachable ({exc}); rerun the same command to resume "
                                f"(live batches are polled, never sent again)") from None
    except Fatal as exc:
        raise CollectionError(f"batch request rejected by the server: {REDACT(exc)}") from None


# =============================================================================================
# Prices, plans
# =============================================================================================
def batch_factor(prices: pd.DataFrame, provider: str, model: str) -> float | None:
    """``batch_price_factor`` of the first price row matching ``provider/model`` (None: no batch price)."""
    table = prices if "batch_price_factor" in prices else pd.read_csv(DEFAULT_PRICES)
    for r in table.itertuples(index=False):
        if r.provider == provider and fnmatch.fnmatchcase(model, str(r.model)):
            f = getattr(r, "batch_price_factor", float("nan"))
            return None if f is None or (isinstance(f, float) and math.isnan(f)) else float(f)
    return None


def batch_price(prices: pd.DataFrame, provider: str, model: str) -> tuple[float, float] | None:
    """``(input, output)`` USD per million tokens at the batch price (list price x factor), or None."""
    price, f = price_for(prices, provider, model), batch_factor(prices, provider, model)
    return None if price is None or f is None else (price[0] * f, price[1] * f)


def describe_batch_price(cost: float | None, cap: float | None, factor: float | None) -> str:
    """The dry run's extra line: the same plan at the batch price."""
    if factor is None or cost is None:
        return "  at the batch price: unknown (no batch_price_factor for this model in the price table)"
    return (f"  at the batch price (x{factor:g}): ${cost * factor:,.2f} (at most ${(cap or 0) * factor:,.2f} at the "
            f"output cap; --max-cost counts each batch at that worst case before it is sent)")


# =============================================================================================
# Collect: one or more cells through batches
# =============================================================================================
def _groups(jobs: list["Job"]) -> dict[tuple[str, str], list["Job"]]:
    out: dict[tuple[str, str], list] = {}
    for jb in jobs:
        out.setdefault((jb.cell, jb.display), []).append(jb)
    return out


def collect_batch(jobs: list["Job"], subject, out: str | Path, *, ledger_path: str | Path | None = None,
                  prices: str | Path | None = None, max_cost: float | None = None, opts: BatchOptions | None = None,
                  progress: bool = True, stop: threading.Event | None = None, run_info: dict | None = None,
                  client=None) -> list["RunResult"]:
    """Collect every job (any cells) of one subject through batches, then write each cell's records + metadata.

    One :class:`RunResult` per (cell, display); the run's request counts are on the first one.
    """
    out = Path(out)
    ledger_path = Path(ledger_path) if ledger_path else out / LEDGER_NAME
    check_writable(out)
    check_ledger(ledger_path)
    table = load_prices(prices)
    price = batch_price(table, subject.provider, subject.model)
    if max_cost is not None and price is None:
        raise CollectionError(f"--max-cost needs a batch price for {subject.provider}/{subject.model}: give "
                                f"--prices FILE with input/output prices and batch_price_factor")
    opts = opts or BatchOptions()
    with ledger_lock(ledger_path):
        ledger = Ledger(ledger_path, durable=True)
        try:
            return _collect(jobs, subject, out, ledger, opts, price, max_cost, progress, stop, run_info, client)
        finally:
            ledger.close()


def _collect(jobs, subject, out, ledger, opts, price, max_cost, progress, stop, run_info, client) -> list[RunResult]:
    """Run the batches, then write each (cell, display)'s records and metadata."""
    started = now_utc()
    stats = run_batch(jobs, subject, ledger, opts=opts, price=price, max_cost=max_cost, progress=progress,
                      stop=stop, client=client)
    key, settings_json = request_key(subject)
    info = {**(run_info or {}), "price": list(price) if price else None, "reask": opts.reask,
            "policy": {"batch": True, "retries": opts.retries, "poll_interval_s": opts.poll_interval},
            "this_run": {**stats, "started_utc": started, "finished_utc": now_utc(), "batch": True,
                         "prompt_cache": isinstance(subject, PromptCacheAnthropic), "max_cost_usd": max_cost,
                         "price_note": "batch price: list price x batch_price_factor"}}
    results = []
    for n, ((cell, display), group) in enumerate(_groups(jobs).items()):
        rec, meta = write_outputs(out, subject, group, ledger, key, settings_json, info)
        persisted = int(json.loads(meta.read_text())["n_records"])
        s = stats if n == 0 else {k: (0 if isinstance(v, (int, float)) and k != "stopped" else v)
                                  for k, v in stats.items()}
        stopped = stats["stopped"] if persisted < len(group) else ""
        results.append(RunResult(cell, display, subject.provider, subject.model, len(group), persisted,
                                 s["n_requested_jobs"], s["n_requests"], s["n_failed"], s["input_tokens"],
                                 s["output_tokens"], s["cost_usd"], stopped, rec, meta))
    return results


def spent(ledger_path: Path, subject) -> float:
    """USD already spent in a ledger under the subject's request key (0 without a ledger)."""
    if not Path(ledger_path).exists():
        return 0.0
    check_ledger(Path(ledger_path))
    con = sqlite3.connect(f"file:{ledger_path}?mode=ro", uri=True)
    try:
        (v,) = con.execute("SELECT COALESCE(SUM(cost_usd), 0) FROM answers WHERE request_key = ?",
                           (request_key(subject)[0],)).fetchone()
    finally:
        con.close()
    return float(v or 0.0)


def collect_conditions(job_lists: list[list["Job"]], make, out: str | Path, *, max_cost: float | None = None,
                       prices: str | Path | None = None, opts: BatchOptions | None = None, progress: bool = True,
                       stop: threading.Event | None = None, log=print) -> list["RunResult"]:
    """``audit --batch``: every pending job of every condition into the same batches (one subject from ``make``).

    ``max_cost`` is the budget of the folder, as for the synchronous audit: what the ledger already
    spent under the same request counts against it.
    """
    subject = make()
    try:
        remaining = None if max_cost is None else max(0.0, max_cost - spent(Path(out) / LEDGER_NAME, subject))
        jobs = [jb for jl in job_lists for jb in jl]
        results = collect_batch(jobs, subject, out, prices=prices, max_cost=remaining, opts=opts, progress=progress,
                                stop=stop)
    finally:
        subject.close()
    for r in results:
        state = "complete" if r.complete else f"incomplete ({r.stopped or 'unanswered jobs'})"
        log(f"{r.cell}{'' if r.display == 'numeric' else ':' + r.display}: {r.n_persisted}/{r.n_jobs} answers, {state}")
    return results
