"""Adaptive concurrency (issue 14): additive increase, multiplicative decrease on sustained 429s.

:class:`AdaptiveConcurrency` is the runner's controller (the protocol
:class:`analysis.collection.retries.Controller`): the runner keeps at most :meth:`limit` jobs in
flight, every worker calls :meth:`acquire` before a request and :meth:`observe` after it.

* **Decrease.** ``sustained`` rate-limit answers (429) within ``window_s`` seconds halve the limit
  (``decrease``, never below ``minimum``); the next decrease waits for another ``sustained``.
  A single 429 is left to the retry policy (it honours ``retry-after``).
* **Increase.** After ``limit`` answers in a row without a 429 the limit rises by ``increase``
  (at most ``maximum``, the ``--concurrency`` asked for).
* **Headers.** :meth:`observe_headers` reads the providers' rate-limit headers where a reply
  carries them (``anthropic-ratelimit-requests-remaining`` / ``-tokens-remaining`` / ``-reset``;
  ``x-ratelimit-remaining-requests`` / ``-tokens`` / ``x-ratelimit-reset-requests``): with no
  requests or tokens left the workers wait until the reset; with fewer requests left than the
  limit, the limit follows the remaining count. :func:`attach` feeds them from the subject's
  HTTP client (an ``httpx`` response hook); nothing else of the request is read.

:meth:`describe` gives the progress bar's ``conc=N``.
"""
from __future__ import annotations

import datetime as _dt
import re
import threading
import time
from collections import deque
from typing import Callable

#: header names, per provider family: (requests remaining, tokens remaining, reset)
ANTHROPIC_HEADERS = ("anthropic-ratelimit-requests-remaining", "anthropic-ratelimit-tokens-remaining",
                     "anthropic-ratelimit-requests-reset")
OPENAI_HEADERS = ("x-ratelimit-remaining-requests", "x-ratelimit-remaining-tokens", "x-ratelimit-reset-requests")
MAX_PAUSE_S = 60.0  # a reset further away than this is waited in steps (the retry policy handles the rest)
_DURATION = re.compile(r"(\d+(?:\.\d+)?)(ms|s|m|h)")


def parse_reset(value: str | None, now: float | None = None) -> float | None:
    """Seconds until a rate-limit reset: an RFC 3339 time (Anthropic) or a duration like ``6m0s`` / ``20ms``
    (OpenAI) or plain seconds.

    >>> parse_reset("1s"), parse_reset("6m0s"), parse_reset("20ms"), parse_reset("2.5")
    (1.0, 360.0, 0.02, 2.5)
    >>> parse_reset("2030-01-01T00:00:10Z", now=_dt.datetime(2030, 1, 1, tzinfo=_dt.timezone.utc).timestamp())
    10.0
    >>> parse_reset("soon") is None
    True
    """
    if not value:
        return None
    v = value.strip()
    try:
        return max(0.0, float(v))
    except ValueError:
        pass
    parts = _DURATION.findall(v)
    if parts and "".join(n + u for n, u in parts) == v:
        scale = {"ms": 0.001, "s": 1.0, "m": 60.0, "h": 3600.0}
        return sum(float(n) * scale[u] for n, u in parts)
    try:
        when = _dt.datetime.fromisoformat(v.replace("Z", "+00:00"))
    except ValueError:
        return None
    if when.tzinfo is None:
        when = when.replace(tzinfo=_dt.timezone.utc)
    now = time.time() if now is None else now
    return max(0.0, when.timestamp() - now)


def _int(value) -> int | None:
    try:
        return int(float(value))
    except (TypeError, ValueError):
        return None


class AdaptiveConcurrency:
    """AIMD concurrency limit shared by the workers of one run (thread-safe)."""

    def __init__(self, maximum: int, *, minimum: int = 1, start: int | None = None, increase: int = 1,
                 decrease: float = 0.5, sustained: int = 3, window_s: float = 10.0,
                 clock: Callable[[], float] = time.monotonic):
        if maximum < 1 or minimum < 1 or minimum > maximum:
            raise ValueError(f"need 1 <= minimum <= maximum, got {minimum}, {maximum}")
        self.maximum, self.minimum = int(maximum), int(minimum)
        self._limit = float(min(self.maximum, max(self.minimum, start or self.maximum)))
        self.increase, self.decrease = increase, decrease
        self.sustained, self.window_s = sustained, window_s
        self.clock = clock
        self._lock = threading.Lock()
        self._recent: deque[float] = deque()
        self._good = 0
        self._header_cap: int | None = None
        self._pause_until = 0.0
        self.n_decreases = self.n_increases = self.n_rate_limited = 0

    # -- the Controller protocol ----------------------------------------------------------------------
    def limit(self) -> int:
        with self._lock:
            lim = int(self._limit)
            if self._header_cap is not None:
                lim = min(lim, max(self.minimum, self._header_cap))
            return max(self.minimum, lim)

    def acquire(self, stop: threading.Event) -> None:
        """Wait while the headers said nothing is left until a reset (or until ``stop``)."""
        while not stop.is_set():
            with self._lock:
                wait = self._pause_until - self.clock()
            if wait <= 0:
                return
            stop.wait(min(wait, MAX_PAUSE_S))

    def observe(self, kind: str, retry_after: float | None = None) -> None:
        """One request's outcome: ``answer``, ``rate_limit`` (a 429) or another transport fault's kind."""
        with self._lock:
            now = self.clock()
            if kind == "rate_limit":
                self.n_rate_limited += 1
                self._good = 0
                self._recent.append(now)
                while self._recent and now - self._recent[0] > self.window_s:
                    self._recent.popleft()
                if len(self._recent) >= self.sustained:
                    new = max(float(self.minimum), self._limit * self.decrease)
                    if int(new) < int(self._limit):
                        self.n_decreases += 1
                    self._limit = new
                    self._recent.clear()
                # retry-after itself is the retry policy's (it waits in the worker, within --retry-after-cap)
            elif kind == "answer":
                self._good += 1
                if self._good >= max(1, int(self._limit)) and self._limit < self.maximum:
                    self._limit = min(float(self.maximum), float(int(self._limit) + self.increase))
                    self._good = 0
                    self.n_increases += 1

    # -- headers --------------------------------------------------------------------------------------
    def observe_headers(self, headers) -> None:
        """Read the rate-limit headers of one reply (any mapping with ``get``; names case-insensitive)."""
        if headers is None:
            return
        get = headers.get
        for req_h, tok_h, reset_h in (ANTHROPIC_HEADERS, OPENAI_HEADERS):
            req, tok = _int(get(req_h)), _int(get(tok_h))
            if req is None and tok is None:
                continue
            with self._lock:
                self._header_cap = req if req is not None and req < self.maximum else None
                if (req is not None and req <= 0) or (tok is not None and tok <= 0):
                    reset = parse_reset(get(reset_h) or get(reset_h.replace("requests", "tokens")))
                    if reset:
                        self._pause_until = max(self._pause_until, self.clock() + min(reset, MAX_PAUSE_S))
            return

    def on_response(self, response) -> None:
        """An ``httpx`` response hook (see :func:`attach`)."""
        self.observe_headers(getattr(response, "headers", None))

    def describe(self) -> str:
        return f"conc={self.limit()}"


def attach(subject, controller: AdaptiveConcurrency) -> bool:
    """Feed ``controller`` the rate-limit headers of every reply the subject's HTTP client receives.

    Returns False when the subject has no ``httpx`` client (offline subjects)."""
    http = getattr(subject, "_http", None)
    hooks = getattr(http, "event_hooks", None)
    if hooks is None:
        return False
    http.event_hooks = {**hooks, "response": [*hooks.get("response", []), controller.on_response]}
    return True
