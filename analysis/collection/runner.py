"""The runner: ask every job without a persisted answer, persist each answer as it arrives.

:class:`RunSettings` (frozen) carries everything but the jobs, the subject and the ledger. The
runner keeps at most ``concurrency`` jobs in flight on daemon worker threads (a second interrupt
never waits for a hanging request), reserves each in-flight job at its worst case (input estimate +
output cap) against ``max_cost``, commits finished answers in one transaction per wake-up (group
commit; batches of :attr:`RunSettings.commit_every` for the free subjects), and stops on a fatal
reply, a prompt longer than the context, a streak of connection failures or a stop event.
"""
from __future__ import annotations

import dataclasses
import json
import os
import queue
import random
import sys
import threading
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable

from tqdm import tqdm

from .. import config
from ..cells import Cell, expect_cell
from .answers import ANSWER_FORMATS, Reply
from .errors import Abort, CollectionError, ContextTooLong, Fatal, StorageFault, Transient, Unreachable
from .jobs import Job, now_utc
from .jobs import job_list, with_samples
from .ledger import INVALID, INVALID_TRANSPORT, LEDGER_NAME, Ledger, check_ledger, ledger_lock
from .outputs import answer_row, attempt_rows, check_writable, write_outputs
from .plan import Plan, plan
from . import ratelimit  # adaptive concurrency on sustained 429s (issue 14)
from .pricing import PRICES_ENV, TokenModel, check_max_cost, cost_of, load_prices, price_for
from .redaction import REDACT, clean_url
from .retries import UNREACHABLE_STREAK, Controller, Health, Outcome, RetryPolicy, ask_with_retries
from .subjects import DEFAULT_KEY_ENV, PROVIDERS, Subject, make_subject, request_key

#: characters per token assumed when checking prompts against a reported context (a lower bound on tokens)
CONTEXT_CHARS_PER_TOKEN = 4.0


def check_samples(samples: object) -> int:
    """``--samples R``: a whole number of at least 1 (one line otherwise)."""
    if isinstance(samples, bool) or not isinstance(samples, int) or samples < 1:
        raise CollectionError(f"--samples must be a whole number of at least 1, not {samples!r}")
    return samples


def _stderr(msg: str) -> None:
    tqdm.write(REDACT(msg), file=sys.stderr)


@dataclass(frozen=True)
class RunSettings:
    """How a run asks: concurrency, retries, re-asking, reuse, budget, progress and the hooks."""

    concurrency: int = 8
    policy: RetryPolicy = RetryPolicy()
    reask: int = 1
    reuse: bool = False
    max_cost: float | None = None
    price: tuple[float, float] | None = None
    progress: bool = True
    #: a concurrency / rate controller (see :class:`analysis.collection.retries.Controller`)
    controller: Controller | None = None
    streak_limit: int = UNREACHABLE_STREAK
    preflight: bool = True
    commit_every: int = 1000
    notify: Callable[[str], None] | None = field(default=_stderr, compare=False)


def _key(job: Job) -> tuple:
    return (job.arm, job.pair_id, job.order, job.prompt_sha256, job.sample)


def todo_jobs(jobs: list[Job], subject: Subject, ledger: Ledger, key: str, reask: int) -> tuple[list[Job], dict]:
    """Jobs to ask and the answers each already received: those without an answer, those whose stored
    answer is invalid because of the transport (asked again), and model-invalid answers asked fewer than
    ``reask`` times."""
    cell, display = jobs[0].cell, jobs[0].display
    have = ledger.answers(cell, display, key)
    if have.empty:
        return list(jobs), {}
    asked = ledger.answer_attempts(cell, display, key) if reask > 1 else {}
    done, before = set(), {}
    for r in have[["arm", "pair_id", "ord", "prompt_sha256", "sample", "status", "raw",
                   "response_id"]].itertuples(index=False):
        k = (r.arm, int(r.pair_id), int(r.ord), r.prompt_sha256, int(r.sample))
        if r.status == INVALID_TRANSPORT or (subject.paid and r.status == INVALID and not r.raw and not r.response_id):
            continue  # an envelope or transport problem stored by an older collector: ask again
        if r.status == INVALID and reask > asked.get(k, 1):
            before[k] = asked.get(k, 1)
            continue
        done.add(k)
    return [jb for jb in jobs if _key(jb) not in done], before


class Runner:
    """One run over the jobs of one cell (see the module docstring)."""

    def __init__(self, jobs: list[Job], subject: Subject, ledger: Ledger, settings: RunSettings,
                 stop: threading.Event | None = None):
        if not jobs:
            raise CollectionError("no jobs to run")
        self.jobs, self.subject, self.ledger, self.s = jobs, subject, ledger, settings
        self.stop = stop or threading.Event()
        self.key, self.settings_json = request_key(subject)
        self.tokens = TokenModel(subject)
        self.health = Health(settings.streak_limit, notify=settings.notify)
        self.cost_known = settings.price is not None or not subject.paid
        self.stats = {"n_requested_jobs": 0, "n_requests": 0, "n_failed": 0, "input_tokens": 0, "output_tokens": 0,
                      "cost_usd": 0.0 if self.cost_known else None, "stopped": "",
                      "tokens_estimated": {"input": 0, "output": 0}, "imported_from_side_file": ledger.imported}
        self.fatal: BaseException | None = None
        self.bar = None

    # -- work units ------------------------------------------------------------------------------
    def units(self) -> tuple[list[list[Job]], dict]:
        """One job each, or every job sharing a prompt when identical prompts are reused."""
        todo, before = todo_jobs(self.jobs, self.subject, self.ledger, self.key, self.s.reask)
        if not self.s.reuse:
            return [[jb] for jb in todo], before
        by_sha: dict[tuple[str, int], list[Job]] = {}
        for jb in todo:  # sample s of a prompt is reused only as sample s: R answers stay R independent draws
            by_sha.setdefault((jb.prompt_sha256, jb.sample), []).append(jb)
        units, copies = [], []
        for (sha, sample), group in by_sha.items():
            src = self.ledger.answer_for_prompt(self.key, sha, sample)
            if src is None:
                units.append(group)
                continue
            tag = f"{src['cell']}/{src['display']}/{src['arm']}/{src['pair_id']}/{src['ord']}" + (
                f"/s{sample}" if sample else "")
            reply = Reply(src["patient"], src["served_model"] or "", src["response_id"] or "", raw=src["raw"] or "",
                          p_first=src.get("p_first"), p_outside=src.get("p_outside"))
            copies += [answer_row(jb, self.key, reply, None, tag) for jb in group]
        if copies:
            self.ledger.put(copies, [])
        return units, before

    def worst_cost(self, unit: list[Job]) -> float:
        """What an in-flight unit is reserved at: input estimate + output cap, for every answer it may take."""
        tin, cap = self.tokens.worst(self.subject.prompt_of(unit[0]) if hasattr(self.subject, "prompt_of")
                                     else unit[0].prompt)
        return (cost_of(self.s.price, tin, cap) or 0.0) * self.s.reask

    # -- persisting --------------------------------------------------------------------------------
    def persist(self, batch: list[tuple[list[Job], Outcome]]) -> None:
        """Commit the answers and attempt logs of finished units in one transaction (group commit).

        The run's counts change only after the commit, so a batch whose commit was interrupted
        can be persisted again without counting twice."""
        if not batch:
            return
        rows: list[dict] = []
        logs: list[dict] = []
        for unit, outcome in batch:
            first = unit[0]
            if outcome.reply is not None:
                rows.append(answer_row(first, self.key, outcome.reply, outcome, None))
                rows += [answer_row(jb, self.key, outcome.reply, None, first.tag) for jb in unit[1:]]
            log = list(outcome.attempts)
            if outcome.reply is None and outcome.error:
                log.append({"attempt": outcome.n_requests, "kind": "gave_up", "outcome": outcome.error,
                            "http_status": None, "detail": "", "latency_s": 0.0, "input_tokens": 0,
                            "output_tokens": 0, "cost_usd": 0.0, "created_utc": now_utc()})
            logs += attempt_rows(first, self.key, log)
        self.ledger.put(rows, logs)
        st = self.stats
        for unit, outcome in batch:
            st["n_requests"] += outcome.n_requests
            st["input_tokens"] += outcome.input_tokens
            st["output_tokens"] += outcome.output_tokens
            if st["cost_usd"] is not None:
                st["cost_usd"] = None if outcome.cost is None else st["cost_usd"] + outcome.cost
            if outcome.reply is not None:
                st["n_requested_jobs"] += len(unit)
                if self.subject.paid:
                    a, b, _ = self.tokens.estimate(unit[0].prompt)
                    st["tokens_estimated"]["input"] += a
                    st["tokens_estimated"]["output"] += b
                    self.tokens.observe(unit[0].prompt, outcome.reply.input_tokens, outcome.reply.output_tokens)
            elif outcome.error != "stopped before an answer":
                st["n_failed"] += len(unit)
        if self.bar is not None:
            self.bar.update(len(batch))
            cost = st["cost_usd"]
            conc = self.s.controller.describe() + " " if hasattr(self.s.controller, "describe") else ""
            self.bar.set_postfix_str(f"{conc}tok={_human(st['input_tokens'] + st['output_tokens'])} "
                                     f"cost={'?' if cost is None else f'${cost:.4f}'}", refresh=False)

    # -- before the first paid request ---------------------------------------------------------------
    def check_endpoint(self, units: list[list[Job]]) -> None:
        """The preflight request (endpoint, key, model) and the context check where the server reports one."""
        if not (self.subject.paid and units and self.s.preflight):
            return
        last: Exception | None = None
        for attempt in range(1, 4):
            try:
                self.subject.preflight()
                last = None
                break
            except Fatal as exc:
                raise CollectionError(f"preflight request failed: {REDACT(exc)}") from None
            except Transient as exc:
                last = exc
                if exc.kind not in ("connection", "timeout") or self.stop.wait(self.s.policy.delay(attempt, _RNG)):
                    break
        if isinstance(last, Transient) and last.kind in ("connection", "timeout"):
            raise Unreachable(f"endpoint {clean_url(getattr(self.subject, 'base_url', None)) or 'of the provider'} "
                              f"unreachable ({last.kind}: {REDACT(last.detail)[:200]}); nothing was asked; "
                              f"rerun when it is up")
        ctx = self.subject.context_tokens()
        if ctx:
            prompt_of = getattr(self.subject, "prompt_of", lambda jb: jb.prompt)
            longest = max(len(prompt_of(u[0])) for u in units)
            if longest / CONTEXT_CHARS_PER_TOKEN > ctx:
                raise ContextTooLong(f"the longest prompt ({longest:,} characters, at least "
                                     f"{int(longest / CONTEXT_CHARS_PER_TOKEN):,} tokens) is longer than the model's "
                                     f"context of {ctx:,} tokens reported by the server; nothing was asked")

    # -- the run -----------------------------------------------------------------------------------
    def run(self) -> dict:
        self.ledger.register_request(self.key, self.subject, self.settings_json)
        units, before = self.units()
        self.check_endpoint(units)
        cell = self.jobs[0].cell
        self.bar = tqdm(total=len(units), desc=f"{cell} {self.subject.provider}/{self.subject.model}", unit="call",
                        disable=not self.s.progress, file=sys.stderr, dynamic_ncols=True, mininterval=0.5)
        try:
            if self.subject.paid or self.s.concurrency > 1:
                self._threaded(units, before)
            else:
                self._inline(units, before)
        finally:
            self.bar.close()
        if isinstance(self.fatal, Fatal):
            raise CollectionError(f"request rejected by the server, run stopped: {REDACT(self.fatal)}")
        if isinstance(self.fatal, BaseException):
            raise self.fatal
        st = self.stats
        if self.health.streak >= self.s.streak_limit:
            st["stopped"] = "unreachable"
            st["last_error"] = REDACT(self.health.last_error)[:300]
        if self.stop.is_set() and not st["stopped"]:
            st["stopped"] = "interrupted"
        if not st["stopped"] and st["n_failed"]:
            st["stopped"] = "failures"
        st["capped_retry_after_waits"] = self.health.capped_waits
        st["token_reestimate"] = self.tokens.summary()
        return st

    def _ask(self, unit: list[Job], before: dict) -> Outcome:
        return ask_with_retries(self.subject, unit[0], self.s.policy, self.s.reask, self.s.price, self.stop,
                                self.health, self.s.controller, before.get(_key(unit[0]), 0))

    def _inline(self, units: list[list[Job]], before: dict) -> None:
        """Free subjects without concurrency: ask in this thread, commit every ``commit_every`` answers."""
        batch: list = []
        try:
            for u in units:
                if self.stop.is_set():
                    break
                batch.append((u, self._ask(u, before)))
                if len(batch) >= self.s.commit_every:
                    self.persist(batch)
                    batch = []
            self.persist(batch)
            batch = []
        except BaseException:
            if batch:
                self.persist(batch)
            raise

    def _over_budget(self, unit: list[Job], reserved: float) -> bool:
        if self.s.max_cost is None:
            return False
        spent = self.stats["cost_usd"] or 0.0
        return spent + reserved + self.worst_cost(unit) > self.s.max_cost

    def _threaded(self, units: list[list[Job]], before: dict) -> None:
        inbox: queue.Queue = queue.Queue()
        outbox: queue.Queue = queue.Queue()

        def work() -> None:
            while True:
                u = inbox.get()
                if u is None:
                    return
                try:
                    res: object = self._ask(u, before)
                except BaseException as exc:  # noqa: BLE001 - handed to the main thread
                    res = exc
                outbox.put((u, res))

        workers = [threading.Thread(target=work, daemon=True, name=f"collect-{n}") for n in range(self.s.concurrency)]
        for w in workers:
            w.start()
        pending = list(reversed(units))
        reserve: dict[int, float] = {}
        in_flight = 0
        batch: list = []

        def take(item) -> None:
            nonlocal in_flight
            u, res = item
            in_flight -= 1
            reserve.pop(id(u), None)
            if isinstance(res, BaseException):
                if not isinstance(res, (Fatal, CollectionError)):
                    res = CollectionError(f"collector failed: {type(res).__name__}: {REDACT(res)[:200]}")
                self.fatal = self.fatal or res
                self.stop.set()
            else:
                batch.append((u, res))

        try:
            while True:
                limit = self.s.concurrency
                if self.s.controller is not None:
                    limit = max(1, min(limit, int(self.s.controller.limit())))
                while pending and in_flight < limit and not self.stop.is_set() and not self.stats["stopped"]:
                    u = pending[-1]
                    if self._over_budget(u, sum(reserve.values())):
                        self.stats["stopped"] = "budget"
                        break
                    pending.pop()
                    reserve[id(u)] = self.worst_cost(u)
                    inbox.put(u)
                    in_flight += 1
                if in_flight == 0:
                    break
                try:
                    take(outbox.get(timeout=0.2))
                except queue.Empty:
                    continue
                while True:
                    try:
                        take(outbox.get_nowait())
                    except queue.Empty:
                        break
                self.persist(batch)
                batch = []
        except Abort:
            self.stop.set()
            self._save_quietly(batch)
            raise
        except StorageFault:
            self.stop.set()
            self._drain(outbox, in_flight, take, batch)
            raise
        except BaseException:  # KeyboardInterrupt from Python's own handler, or a failed commit
            self.stop.set()
            self._save_quietly(batch)
            self._drain(outbox, in_flight, take, batch)
            raise
        finally:
            for _ in workers:
                inbox.put(None)

    def _save_quietly(self, batch: list) -> None:
        if batch:
            try:
                self.persist(batch)
            except StorageFault:
                pass
            batch.clear()

    def _drain(self, outbox: queue.Queue, in_flight: int, take_fn, batch: list) -> None:
        """After an interrupt or a storage fault: collect and save what the requests in flight bring back
        (they stop retrying at once); a second interrupt (:class:`Abort`/KeyboardInterrupt) ends this at once."""
        left = in_flight
        while left > 0:
            item = outbox.get()
            left -= 1
            take_fn(item)
            self._save_quietly(batch)


_RNG = random.Random(0)  # preflight backoff jitter


def _human(n: int) -> str:
    for unit, div in (("M", 1e6), ("k", 1e3)):
        if n >= div:
            return f"{n / div:.1f}{unit}"
    return str(n)


def run_jobs(jobs: list[Job], subject: Subject, ledger: Ledger, settings: RunSettings = RunSettings(),
             stop: threading.Event | None = None) -> dict:
    """Ask every job that has no persisted answer; persist each answer as it arrives (see :class:`Runner`).

    Returns counts of this run: ``n_requested_jobs, n_requests, n_failed, input_tokens,
    output_tokens, cost_usd, stopped`` and the token re-estimate."""
    return Runner(jobs, subject, ledger, settings, stop).run()




@dataclass
class RunResult:
    """Summary of one :func:`collect` call."""

    cell: str
    display: str
    provider: str
    model: str
    n_jobs: int
    n_persisted: int
    n_requested_jobs: int
    n_requests: int
    n_failed: int
    input_tokens: int
    output_tokens: int
    cost_usd: float | None
    stopped: str  # "" (complete), "budget", "failures", "interrupted"
    records_path: Path | None = None
    metadata_path: Path | None = None

    @property
    def complete(self) -> bool:
        return self.n_persisted == self.n_jobs


def collect(cell: Cell, provider: str, model: str, out: str | os.PathLike, *, display: str = "numeric",
            base_url: str | None = None, concurrency: int = 8, max_cost: float | None = None,
            dry_run: bool = False, reuse_identical_prompts: bool = False, reask: int = 1,
            policy: RetryPolicy = RetryPolicy(), timeout: float = 60.0, settings: dict | None = None,
            prices: str | os.PathLike | None = None, api_key_env: str | None = None,
            ledger_path: str | os.PathLike | None = None, sim_seed: int = 0, run: str | None = None,
            progress: bool = True, jobs: list[Job] | None = None, subject: Subject | None = None,
            stop: threading.Event | None = None, price: tuple[float, float] | None = None,
            answer_format: str = "tool", controller: Controller | None = None,
            preflight: bool = True, samples: int = config.SAMPLES_DEFAULT) -> "RunResult | Plan":
    """Collect one cell: check everything, then ask every unanswered job, then write records + metadata.

    Every check that can fail (provider, cell, display, model, key, output folder, ledger and its
    lock, price for a budget) runs before anything is written. ``dry_run`` returns a :class:`Plan` and
    writes nothing. ``price`` (``--price-in/--price-out``) overrides the price table (``(0, 0)`` for a
    local model). ``samples`` (``--samples R``) asks every job R times, each answer its own ledger row
    (sample 0 .. R-1; the dry run prices all R). Raises :class:`CollectionError` (one line) on a problem the
    user must fix, and
    :class:`Unreachable` (after writing the records) when the endpoint stopped answering.
    """
    if provider not in PROVIDERS:
        raise CollectionError(f"unknown provider {provider!r}; expected one of {', '.join(PROVIDERS)}")
    c = expect_cell(cell)
    if display not in config.DISPLAYS:
        raise CollectionError(f"unknown display {display!r}; expected one of {', '.join(config.DISPLAYS)}")
    if provider == "replay" and display != "numeric":
        raise CollectionError(f"replay serves the battery records (display 'numeric'), not display {display!r}")
    if concurrency < 1 or reask < 1 or policy.max_attempts < 1:
        raise CollectionError("concurrency, reask and retries must be at least 1")
    check_samples(samples)
    if answer_format not in ANSWER_FORMATS:
        raise CollectionError(f"unknown answer format {answer_format!r}; expected one of {', '.join(ANSWER_FORMATS)}")
    max_cost = check_max_cost(max_cost)
    out = Path(out)
    ledger_path = Path(ledger_path) if ledger_path else out / LEDGER_NAME
    if not dry_run:
        check_writable(out)
        check_writable(ledger_path.parent)
    price_table = load_prices(prices)
    if subject is None:
        subject = make_subject(provider, model, c, base_url=base_url, api_key_env=api_key_env, timeout=timeout,
                               settings=settings, sim_seed=sim_seed, run=run, require_key=not dry_run,
                               answer_format=answer_format)
    price = price if price is not None else price_for(price_table, subject.provider, subject.model)
    try:
        if max_cost is not None and price is None and subject.paid:
            raise CollectionError(f"--max-cost needs a price for {subject.provider}/{subject.model}: "
                                  f"give --price-in/--price-out (0 0 for a local model) or --prices FILE "
                                  f"(or set {PRICES_ENV})")
        jobs = with_samples(job_list(c, display) if jobs is None else jobs, samples)
        if not jobs:
            raise CollectionError(f"cell {c.id} has no jobs")
        check_ledger(ledger_path)  # a corrupted ledger is refused before anything (even the lock file) is written
        if dry_run:
            return plan(jobs, subject, ledger_path, reuse=reuse_identical_prompts, price=price)
        with ledger_lock(ledger_path):
            ledger = Ledger(ledger_path, durable=subject.paid)
            try:
                started = now_utc()
                if controller is None and subject.paid and concurrency > 1:  # AIMD on sustained 429s (issue 14)
                    controller = ratelimit.AdaptiveConcurrency(concurrency)
                    ratelimit.attach(subject, controller)
                rs = RunSettings(concurrency=concurrency, policy=policy, reask=reask, reuse=reuse_identical_prompts,
                                 max_cost=max_cost, price=price, progress=progress, controller=controller,
                                 preflight=preflight)
                stats = run_jobs(jobs, subject, ledger, rs, stop)
                key, settings_json = request_key(subject)
                info = {"api_key_env": (api_key_env or DEFAULT_KEY_ENV.get(provider)) if subject.paid else None,
                        "price": list(price) if price else None, "reuse": reuse_identical_prompts, "reask": reask,
                        "samples": samples,
                        "policy": dataclasses.asdict(policy), "answer_format": answer_format,
                        "this_run": {**stats, "started_utc": started, "finished_utc": now_utc(),
                                     "concurrency": concurrency, "max_cost_usd": max_cost}}
                rec, meta = write_outputs(out, subject, jobs, ledger, key, settings_json, info)
                n_persisted = int(json.loads(meta.read_text())["n_records"])
            finally:
                ledger.close()
    finally:
        subject.close()
    if stats["stopped"] == "unreachable":
        raise Unreachable(f"{c.id}: the endpoint failed on the last {UNREACHABLE_STREAK} attempts (connection "
                          f"errors; last: {stats.get('last_error', '')}); {n_persisted}/{len(jobs)} records saved; "
                          f"rerun the same command to resume")
    return RunResult(c.id, display, subject.provider, subject.model, len(jobs), n_persisted,
                     stats["n_requested_jobs"], stats["n_requests"], stats["n_failed"], stats["input_tokens"],
                     stats["output_tokens"], stats["cost_usd"], stats["stopped"], rec, meta)
