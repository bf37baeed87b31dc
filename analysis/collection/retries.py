"""Asking one job: transport retries with backoff and jitter, a capped ``retry-after``, the re-ask rule,
and the streak of connection failures that stops a run whose endpoint is gone."""
from __future__ import annotations

import random
import threading
import time
from dataclasses import dataclass, field
from typing import Callable, Protocol

from .answers import Reply
from .errors import Transient
from .jobs import Job, now_utc
from .pricing import cost_of
from .redaction import REDACT
from .subjects import Subject

#: default cap on a server's ``retry-after`` (seconds); a longer wait is capped and reported
RETRY_AFTER_CAP = 120.0
#: consecutive connection failures (all workers together) after which a run stops (exit 3, resumable)
UNREACHABLE_STREAK = 20


@dataclass(frozen=True)
class RetryPolicy:
    """Transport retries: ``max_attempts`` requests per answer, backoff ``min(cap, base * 2^n)`` after failure n
    scaled by a jitter factor in [0.5, 1]; a ``retry-after`` header is honoured up to ``retry_after_cap`` s."""

    max_attempts: int = 5  # spec §6.2: up to 5 attempts
    base: float = 1.0
    cap: float = 30.0
    retry_after_cap: float = RETRY_AFTER_CAP

    def delay(self, attempt: int, rng: random.Random, retry_after: float | None = None) -> float:
        backoff = min(self.cap, self.base * 2 ** attempt) * rng.uniform(0.5, 1.0)
        if retry_after is not None:
            return min(max(retry_after * (1 + 0.1 * rng.random()), 0.0), self.retry_after_cap)
        return backoff


class Controller(Protocol):
    """Hook for a concurrency / rate controller (``analysis.collection.ratelimit``): the runner asks
    :meth:`limit` how many jobs may be in flight, each worker calls :meth:`acquire` before every request
    and :meth:`observe` after it (``kind`` is ``answer`` or the transport fault's kind)."""

    def limit(self) -> int: ...

    def acquire(self, stop: threading.Event) -> None: ...

    def observe(self, kind: str, retry_after: float | None) -> None: ...


@dataclass
class Health:
    """Shared by the workers of a run: the streak of connection failures and the capped waits."""

    streak_limit: int = UNREACHABLE_STREAK
    streak: int = 0
    last_error: str = ""
    capped_waits: int = 0
    timeouts: int = 0
    notify: Callable[[str], None] | None = None
    _lock: threading.Lock = field(default_factory=threading.Lock)
    _last_note: float = 0.0

    def record(self, kind: str, detail: str = "") -> bool:
        """Count an attempt; True when the streak of connection failures reached the limit."""
        with self._lock:
            if kind == "connection":
                self.streak += 1
                self.last_error = detail
            else:
                self.streak = 0
            return self.streak >= self.streak_limit

    def capped(self, asked: float, waited: float) -> None:
        with self._lock:
            self.capped_waits += 1
            now = time.monotonic()
            say = self.notify is not None and (self.capped_waits == 1 or now - self._last_note > 30)
            if say:
                self._last_note = now
        if say:
            self.notify(f"the server asked to wait {asked:g} s (retry-after); waiting {waited:g} s "
                        f"(the cap, --retry-after-cap)")


    def timed_out(self, seconds: float | None) -> None:
        """Say once which flag to raise when a request got no complete reply within ``--timeout``."""
        with self._lock:
            self.timeouts += 1
            first = self.timeouts == 1
        if first and self.notify is not None:
            limit = "the --timeout" if seconds is None else f"--timeout {seconds:g} s"
            self.notify(f"a request got no complete reply within {limit}; it is retried. A local server evaluating "
                        f"a long prompt (an 80-example prompt is ~6,000 tokens) can take minutes: raise --timeout "
                        f"(e.g. --timeout 600)")


@dataclass
class Outcome:
    """What a worker brings back for one job: the reply (None if every transport attempt failed)."""

    reply: Reply | None
    attempts: list[dict]
    input_tokens: int = 0
    output_tokens: int = 0
    cost: float | None = 0.0
    n_requests: int = 0
    error: str = ""


def ask_with_retries(subject: Subject, job: Job, policy: RetryPolicy, reask: int, price, stop: threading.Event,
                     health: Health | None = None, controller: Controller | None = None,
                     answers_before: int = 0) -> Outcome:
    """Ask one job: transport retries per :class:`RetryPolicy`; re-ask an invalid answer up to ``reask``
    answers in total (``answers_before`` were received by earlier runs). Every request is logged in
    ``Outcome.attempts``. :class:`Fatal` and :class:`ContextTooLong` propagate."""
    rng = random.Random(job.prompt_sha256 + job.arm + str(job.pair_id) + str(job.order))
    out = Outcome(None, [])
    answers = answers_before
    transport = 0
    while True:
        if controller is not None:
            controller.acquire(stop)
        if stop.is_set() and out.n_requests == 0:
            out.error = "stopped before an answer"
            return out
        t0 = time.monotonic()
        out.n_requests += 1
        base = {"attempt": out.n_requests, "created_utc": now_utc()}
        try:
            reply = subject.ask(job)
        except Transient as exc:
            transport += 1
            detail = REDACT(exc.detail)[:300]
            out.attempts.append({**base, "kind": "transport", "outcome": exc.kind, "http_status": exc.status,
                                 "detail": detail, "latency_s": time.monotonic() - t0,
                                 "input_tokens": 0, "output_tokens": 0, "cost_usd": 0.0})
            if controller is not None:
                controller.observe(exc.kind, exc.retry_after)
            if exc.kind == "timeout" and health is not None:
                health.timed_out(getattr(subject, "timeout", None))
            if health is not None and health.record(exc.kind, f"{exc.kind}: {detail}"):
                stop.set()
            if transport >= policy.max_attempts:
                out.error = f"no answer after {transport} attempts (last: {exc.kind} {exc.status or ''})".strip()
                return out
            wait = policy.delay(transport, rng, exc.retry_after)
            if exc.retry_after is not None and exc.retry_after > policy.retry_after_cap and health is not None:
                health.capped(exc.retry_after, wait)
            if stop.wait(wait):
                out.error = "stopped before an answer"
                return out
            continue
        if health is not None:
            health.record("answer")
        if controller is not None:
            controller.observe("answer", None)
        transport = 0
        answers += 1
        cost = cost_of(price, reply.input_tokens, reply.output_tokens)
        out.input_tokens += reply.input_tokens
        out.output_tokens += reply.output_tokens
        out.cost = None if cost is None or out.cost is None else out.cost + cost
        out.attempts.append({**base, "kind": "answer", "outcome": "valid" if reply.patient else "invalid",
                             "http_status": 200, "detail": reply.raw[:200], "latency_s": time.monotonic() - t0,
                             "input_tokens": reply.input_tokens, "output_tokens": reply.output_tokens,
                             "cost_usd": cost})
        out.reply = reply
        if reply.patient is not None or answers >= reask or stop.is_set():
            return out
