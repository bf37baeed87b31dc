"""Collection: prompts in, per-call records out (paper §4.8, Supplementary Notes 4 and 15; spec
PROTOCOL-synthetic §6-§7).

One interface, four *subjects*:

``replay``     serves the released answers of a (model, cell); regenerates the released records.
``anthropic``  the official ``anthropic`` SDK with the paper's request: one user message, no system
               message, ``max_tokens`` 64, temperature 0 (sent in ``extra_body``: SDK 2.x has no
               ``temperature`` argument), the forced ``choose`` tool.
``openai``     the ``openai`` SDK against any OpenAI-compatible endpoint (GPT, OpenRouter, vLLM,
               Ollama) with a forced function tool; per-model settings in :data:`OPENAI_SETTINGS`.
``simulated``  an offline reader of the prompt text whose choice probabilities are known exactly
               (:class:`SimulatedSubject`), for tests and a key-free demo.

Answers go through a :class:`Ledger` (SQLite, WAL, ``synchronous=FULL`` for paid subjects) keyed by
the job ``(cell, display, arm, pair_id, order)`` and the request ``(provider, model, settings,
prompt SHA-256)``. An answer is committed as soon as it arrives, so ``kill -9`` loses nothing that
was persisted and a rerun never requests a persisted answer again. Identical prompts in different
jobs are requested separately unless ``reuse_identical_prompts`` is set (the real-record study's
rule: one response per distinct prompt).

Transport failures (429 with ``retry-after``, 5xx/529, timeouts, connection resets) are retried
with exponential backoff and jitter (:class:`RetryPolicy`); the SDKs' own retries are switched
off. An invalid answer (no usable tool call, patient outside {1, 2}) is recorded as missing and
never substituted; the optional re-ask rule asks again up to ``reask`` times in total
(Supplementary Note 4: "up to five attempts"), and every attempt is logged in the ledger.

Records (``<out>/<provider>/<model>/<CELL>_records.csv``, ``<CELL>_<display>_records.csv`` for a
category display) use the released schema plus ``prompt_sha256``; a metadata JSON beside each
file records requested and served model ids, request settings, SDK versions, dates, counts,
tokens and cost. The API key is read from an environment variable, handed to the SDK only, and
redacted from every message this module writes.
"""
from __future__ import annotations

import argparse
import concurrent.futures as cf
import contextlib
import dataclasses
import datetime as _dt
import fnmatch
import hashlib
import json
import math
import os
import random
import re
import sqlite3
import sys
import tempfile
import threading
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Iterable
from urllib.parse import urlsplit, urlunsplit

import numpy as np
import pandas as pd

from . import config, paths
from .cells import Cell, CellError, parse_cell

PROVIDERS = ("replay", "anthropic", "openai", "simulated")
PAID = ("anthropic", "openai")
#: released record schema (spec §7) plus the prompt's SHA-256
RECORD_COLUMNS = ["arm", "pair_id", "i", "j", "order", "patient", "chosen", "picked_i", "prompt_sha256"]
LEDGER_NAME = "ledger.sqlite"
LEDGER_SCHEMA = 1
DEFAULT_KEY_ENV = {"anthropic": "ANTHROPIC_API_KEY", "openai": "OPENAI_API_KEY"}
PRICES_ENV = "PROXY_AUDIT_PRICES"
DEFAULT_PRICES = paths.DATA / "prices.csv"

# --- Request settings (Supplementary Note 15; spec §6.2) ---------------------------------------
#: Anthropic: one user message, no system message, temperature 0, 64-token cap, forced tool.
ANTHROPIC_SETTINGS = [("*", {"max_tokens": config.MAX_TOKENS, "temperature": 0})]
#: OpenAI-compatible endpoints, first matching ``fnmatch`` pattern on the requested model id wins.
OPENAI_SETTINGS = [
    # GPT-5.6 Terra: temperature is rejected -> default sampling; cap max(64, 2048); no reasoning effort
    ("gpt-5.6-terra*", {"max_completion_tokens": max(config.MAX_TOKENS, 2048)}),
    # Qwen through OpenRouter (representation control): default sampling with a reasoning budget.
    # UNRESOLVED in the spec (exact budget); we send default sampling and a 2048-token cap.
    ("qwen/qwen3.7-max*", {"max_tokens": 2048}),
    # Qwen3.7-max battery: temperature 0, thinking disabled through the extra body
    ("qwen3.7-max*", {"temperature": 0, "max_tokens": config.MAX_TOKENS,
                      "extra_body": {"enable_thinking": False}}),
    # DeepSeek through OpenRouter: temperature 0, forced tool, no cap stated
    ("deepseek/deepseek-v4-flash*", {"temperature": 0}),
    # DeepSeek-V4-Flash battery and any other endpoint: temperature 0, 64-token cap
    ("*", {"temperature": 0, "max_tokens": config.MAX_TOKENS}),
]
#: rough output-token expectation per call for the dry-run estimate (forced tool call, no reasoning),
#: and for models that reason before the tool call (default medium effort): ASSUMED figures
EST_OUTPUT_TOKENS = {"anthropic": 40, "openai": 25}
EST_REASONING_OUTPUT_TOKENS = 600
#: tokens the API adds to every request for the forced tool (definition + tool-use preamble): ASSUMED
EST_TOOL_OVERHEAD = {"anthropic": 400, "openai": 80}
CHARS_PER_TOKEN = 3.0  # numbers-heavy prompts tokenise densely


class CollectionError(RuntimeError):
    """A problem the user must fix (bad argument, unwritable folder, corrupted ledger): one line, exit 2."""


class Transient(Exception):
    """A transport failure worth retrying (429, 5xx/529, timeout, connection reset)."""

    def __init__(self, kind: str, status: int | None = None, retry_after: float | None = None, detail: str = ""):
        super().__init__(f"{kind} {status or ''} {detail}".strip())
        self.kind, self.status, self.retry_after, self.detail = kind, status, retry_after, detail


class Fatal(Exception):
    """A failure no retry can fix (authentication, unknown model, rejected request)."""


# =============================================================================================
# Redaction
# =============================================================================================
_SECRET_PATTERNS = re.compile(r"(?i)(bearer\s+|x-api-key\W+|sk-[a-z]*-?)[A-Za-z0-9_\-\.]{4,}")


class Redactor:
    """Removes API keys from text: the exact keys registered plus anything that looks like one."""

    def __init__(self):
        self._secrets: set[str] = set()

    def add(self, secret: str | None) -> None:
        if secret and len(secret) >= 4:
            self._secrets.add(secret)

    def __call__(self, text: object) -> str:
        s = str(text)
        for secret in self._secrets:
            s = s.replace(secret, "[redacted]")
        return _SECRET_PATTERNS.sub(lambda m: m.group(1) + "[redacted]", s)


REDACT = Redactor()


def clean_url(url: str | None) -> str | None:
    """A base URL without user info, query or fragment (they can carry credentials).

    >>> clean_url("https://user:pw@example.org/v1?key=abc")
    'https://example.org/v1'
    """
    if not url:
        return None
    u = urlsplit(url)
    host = u.hostname or ""
    netloc = host + (f":{u.port}" if u.port else "")
    return urlunsplit((u.scheme, netloc, u.path, "", ""))


# =============================================================================================
# Jobs and answers
# =============================================================================================
@dataclass(frozen=True)
class Job:
    """One call of the battery: a cell, display, arm, pair and presentation order, with its prompt."""

    cell: str
    display: str
    arm: str
    pair_id: int
    i: int
    j: int
    order: int
    prompt: str
    prompt_sha256: str

    @property
    def key(self) -> tuple[str, int, int]:
        return (self.arm, self.pair_id, self.order)

    @property
    def first(self) -> int:
        """Population index shown as Patient 1."""
        return self.i if self.order == 0 else self.j


@dataclass
class Reply:
    """One answered request: the parsed patient (None = invalid) and its accounting."""

    patient: int | None
    served_model: str = ""
    response_id: str = ""
    input_tokens: int = 0
    output_tokens: int = 0
    raw: str = ""
    finish: str = ""


def sha256_text(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def jobs_from_table(cell: "str | Cell", display: str, table: pd.DataFrame) -> list[Job]:
    """Jobs from a job table (``arm, pair_id, i, j, order, prompt[, prompt_sha256]``)."""
    c = parse_cell(cell)
    shas = table["prompt_sha256"] if "prompt_sha256" in table else table["prompt"].map(sha256_text)
    return [Job(c.id, display, str(r.arm), int(r.pair_id), int(r.i), int(r.j), int(r.order), str(r.prompt), str(s))
            for r, s in zip(table.itertuples(index=False), shas)]


def job_list(cell: "str | Cell", display: str = "numeric") -> list[Job]:
    """Every job of a cell in queue order (``analysis.prompts.job_table``)."""
    from . import prompts

    c = parse_cell(cell)
    return jobs_from_table(c, display, prompts.job_table(c, display=display))


_STANDALONE_12 = re.compile(r"(?<![\w.])([12])(?!\w|\.\d)")


def patient_from_args(args: object) -> int | None:
    """``patient`` from a tool call's arguments (a dict or its JSON), if it is 1 or 2.

    >>> patient_from_args({"patient": 2}), patient_from_args('{"patient": 1}'), patient_from_args({"patient": 3})
    (2, 1, None)
    >>> patient_from_args('{"patient": 1'), patient_from_args({"patient": "first"}), patient_from_args({"patient": True})
    (None, None, None)
    """
    if isinstance(args, str):
        try:
            args = json.loads(args)
        except ValueError:
            return None
    if not isinstance(args, dict):
        return None
    v = args.get("patient")
    if isinstance(v, bool):
        return None
    if isinstance(v, (int, float)) and v in (1, 2):
        return int(v)
    if isinstance(v, str) and v.strip() in ("1", "2"):
        return int(v.strip())
    return None


def patient_from_text(text: str | None) -> int | None:
    """The first standalone ``1`` or ``2`` in a text answer (spec §6.2 fallback).

    >>> patient_from_text("Patient 2."), patient_from_text("I cannot decide."), patient_from_text("12 or 1.5")
    (2, None, None)
    """
    m = _STANDALONE_12.search(text or "")
    return int(m.group(1)) if m else None


# =============================================================================================
# Subjects
# =============================================================================================
class Subject:
    """Base class. ``ask(job)`` returns a :class:`Reply` or raises :class:`Transient` / :class:`Fatal`."""

    provider = ""
    paid = False

    def __init__(self, model: str):
        self.model = model

    #: settings given by the user on top of the defaults (None: the defaults)
    overrides: dict | None = None

    def request_settings(self) -> dict:
        """Everything but the prompt that determines the request (part of the ledger key)."""
        return {}

    def tag(self, key: str) -> str:
        """File-name tag: empty with the default settings, else ``s`` + the request key's first 8 characters,
        so a run with other settings (e.g. temperature 1) never overwrites the default records."""
        return f"s{key[:8]}" if self.overrides else ""

    def ask(self, job: Job) -> Reply:
        raise NotImplementedError

    def close(self) -> None:
        pass


# --- replay ------------------------------------------------------------------------------------
def _replay_model(model: str) -> str:
    if model in config.MODELS:
        return model
    by_folder = {v[1]: k for k, v in config.MODELS.items()}
    if model in by_folder:
        return by_folder[model]
    raise CollectionError(f"unknown replay model {model!r}; expected one of {sorted(config.MODELS)} "
                          f"(or a release folder: {sorted(by_folder)})")


class ReplaySubject(Subject):
    """Serves the released answer of each job, looked up by ``(arm, i, j, order)``."""

    provider = "replay"

    def __init__(self, model: str, cell: "str | Cell", run: str | None = None):
        from . import records

        self.release_model = _replay_model(model)
        super().__init__(self.release_model if run is None else f"{self.release_model}_run_{run}")
        self.cell = parse_cell(cell)
        self.run = run
        try:
            df = records.load_records(self.release_model, self.cell, run)
        except records.NotReleased as exc:
            raise CollectionError(str(exc)) from None
        self.released = df
        self._answers = {(str(r.arm), int(r.i), int(r.j), int(r.order)): r.patient
                         for r in df[["arm", "i", "j", "order", "patient"]].itertuples(index=False)}

    def request_settings(self) -> dict:
        return {"source": "released records", "run": self.run}

    def ask(self, job: Job) -> Reply:
        key = (job.arm, job.i, job.j, job.order)
        if key not in self._answers:
            return Reply(None, self.model, raw="job not in the released records", finish="absent")
        p = self._answers[key]
        patient = None if p is None or (isinstance(p, float) and math.isnan(p)) else int(p)
        return Reply(patient, self.model, raw="" if patient is None else str(patient), finish="released")


# --- simulated ---------------------------------------------------------------------------------
@dataclass(frozen=True)
class SimulatedParams:
    """Reliance of the simulated subject (scores are on the logit scale).

    Each patient's score is ``task_weight * sum(task values) + proxy_weight * sum(numeric proxy
    values) + level_weight * sum(rank - 2.5 of 'level N' proxy labels)``; two-letter codes carry
    no rank. Patient 1 is chosen with probability ``expit((s1 - s2 + position_bias) / noise_scale)``,
    decided by a uniform draw keyed by ``(seed, prompt SHA-256)``, i.e. seeded logistic noise.
    ``invalid_rate`` makes a keyed share of answers invalid (no tool call).
    """

    task_weight: float = 1.0
    proxy_weight: float = 0.5
    level_weight: float = 0.0
    position_bias: float = 0.2
    noise_scale: float = 1.0
    invalid_rate: float = 0.0
    seed: int = 0


#: named presets; more (e.g. one that tracks the reference learner) can be added by the audit
SIMULATED_PRESETS = {
    "numeric-reader": SimulatedParams(proxy_weight=0.5, level_weight=0.0),
    "ignores-proxies": SimulatedParams(proxy_weight=0.0, level_weight=0.0),
    "over-reads-ordered": SimulatedParams(proxy_weight=0.0, level_weight=0.5),
    "reads-everything": SimulatedParams(proxy_weight=0.5, level_weight=0.5),
}

_LEVEL = re.compile(r"^level\s+(\d+)$")
_PROXY_NAMES = frozenset(n for names in config.PROXY_NAMES.values() for n in names)
_TASK_NAMES = frozenset(config.TASK_NAMES)


def read_patients(prompt: str) -> tuple[list[tuple[str, str]], list[tuple[str, str]]] | None:
    """The displayed ``(name, value)`` lines of Patient 1 and Patient 2, or None if absent."""
    head, sep, tail = prompt.rpartition("NEW PATIENTS:\n")
    if not sep:
        return None
    part1, sep2, part2 = tail.partition("\nPatient 2:\n")
    if not sep2 or not part1.startswith("Patient 1:\n"):
        return None

    def lines(block: str) -> list[tuple[str, str]]:
        out = []
        for line in block.splitlines():
            name, colon, value = line.strip().partition(": ")
            if colon:
                out.append((name, value.strip()))
        return out

    return lines(part1[len("Patient 1:\n"):]), lines(part2)


class SimulatedSubject(Subject):
    """Offline reader of the prompt text with known reliance (see :class:`SimulatedParams`).

    >>> s = SimulatedSubject(SimulatedParams(position_bias=0.0))
    >>> p = "NEW PATIENTS:\\nPatient 1:\\n  hemoglobin_index: 1.00\\nPatient 2:\\n  hemoglobin_index: 0.00\\n"
    >>> round(s.probability_first(p), 4)
    0.7311
    """

    provider = "simulated"

    def __init__(self, params: SimulatedParams = SimulatedParams(), name: str = "custom"):
        super().__init__(name)
        self.params = params

    @classmethod
    def preset(cls, name: str, seed: int = 0, **overrides) -> "SimulatedSubject":
        if name not in SIMULATED_PRESETS:
            raise CollectionError(f"unknown simulated model {name!r}; expected one of {sorted(SIMULATED_PRESETS)}")
        try:
            params = dataclasses.replace(SIMULATED_PRESETS[name], seed=seed, **overrides)
        except TypeError as exc:
            raise CollectionError(f"bad simulated settings {overrides}: {exc}") from None
        subject = cls(params, name)
        subject.overrides = overrides or None
        return subject

    def request_settings(self) -> dict:
        return {"params": dataclasses.asdict(self.params)}

    def tag(self, key: str) -> str:
        """``seed<N>`` for a non-zero seed, ``s<key>`` for overridden parameters (see :meth:`Subject.tag`)."""
        if self.overrides:
            return f"s{key[:8]}"
        return f"seed{self.params.seed}" if self.params.seed else ""

    def score(self, fields: list[tuple[str, str]]) -> float:
        """Score of one patient from its displayed ``(name, value)`` lines."""
        p = self.params
        s = 0.0
        for name, value in fields:
            if name in _TASK_NAMES:
                s += p.task_weight * float(value)
            elif name in _PROXY_NAMES:
                m = _LEVEL.match(value)
                if m:
                    s += p.level_weight * (int(m.group(1)) - 2.5)
                else:
                    try:
                        s += p.proxy_weight * float(value)
                    except ValueError:  # an arbitrary code: no rank to read
                        pass
        return s

    def probability_first(self, prompt: str) -> float:
        """Probability of answering Patient 1 (NaN if the prompt shows no two patients)."""
        pts = read_patients(prompt)
        if pts is None:
            return float("nan")
        z = (self.score(pts[0]) - self.score(pts[1]) + self.params.position_bias) / self.params.noise_scale
        return float(1.0 / (1.0 + math.exp(-z))) if z > -700 else 0.0

    def _uniform(self, tag: str, prompt_sha: str) -> float:
        h = hashlib.sha256(f"{tag}:{self.params.seed}:{prompt_sha}".encode()).digest()
        return int.from_bytes(h[:8], "big") / 2.0**64

    def choose(self, prompt: str, prompt_sha: str | None = None) -> int | None:
        """The answer to a prompt: 1, 2, or None (invalid)."""
        sha = prompt_sha or sha256_text(prompt)
        p1 = self.probability_first(prompt)
        if math.isnan(p1):
            return None
        if self.params.invalid_rate > 0 and self._uniform("invalid", sha) < self.params.invalid_rate:
            return None
        return 1 if self._uniform("choice", sha) < p1 else 2

    def ask(self, job: Job) -> Reply:
        patient = self.choose(job.prompt, job.prompt_sha256)
        return Reply(patient, self.model, raw="" if patient is None else json.dumps({"patient": patient}),
                     finish="simulated")

    # -- known answers --------------------------------------------------------------------------
    def probabilities(self, jobs: Iterable[Job]) -> pd.DataFrame:
        """Per job: ``arm, pair_id, i, j, order, p_first, p_pick_i`` (exact choice probabilities)."""
        rows = []
        for job in jobs:
            p1 = self.probability_first(job.prompt)
            rows.append({"arm": job.arm, "pair_id": job.pair_id, "i": job.i, "j": job.j, "order": job.order,
                         "p_first": p1, "p_pick_i": p1 if job.order == 0 else 1 - p1})
        return pd.DataFrame(rows)

    def expected_pse(self, jobs: Iterable[Job]) -> float:
        """Expected PSE (pp) over its own noise: ``100 * mean_pairs[mean_o P(i | cf_a1) - mean_o P(i | cf_a0)]``."""
        pr = self.probabilities(jobs)
        m = pr.pivot_table(index=["i", "j"], columns="arm", values="p_pick_i", aggfunc="mean")
        return float(100 * (m["cf_a1"] - m["cf_a0"]).mean())

    def expected_error(self, jobs: Iterable[Job], truth: pd.Series | None = None) -> float:
        """Expected factual ranking error (%) against ``truth`` (1 where the target is truly riskier)."""
        pr = self.probabilities(jobs)
        m = pr[pr["arm"] == "factual"].groupby(["i", "j"])["p_pick_i"].mean()
        t = pd.Series(1.0, index=m.index) if truth is None else truth.reindex(m.index).astype(float)
        return float(100 * (t * (1 - m) + (1 - t) * m).mean())


# --- Anthropic ---------------------------------------------------------------------------------
def _retry_after(headers) -> float | None:
    """Seconds to wait from ``retry-after-ms`` / ``retry-after`` (seconds or an HTTP date)."""
    if headers is None:
        return None
    ms = headers.get("retry-after-ms")
    if ms:
        with contextlib.suppress(ValueError):
            return max(0.0, float(ms) / 1000)
    ra = headers.get("retry-after")
    if not ra:
        return None
    try:
        return max(0.0, float(ra))
    except ValueError:
        from email.utils import parsedate_to_datetime

        with contextlib.suppress(TypeError, ValueError):
            when = parsedate_to_datetime(ra)
            return max(0.0, (when - _dt.datetime.now(when.tzinfo)).total_seconds())
    return None


def _translate(sdk, exc: Exception) -> Exception:
    """Map an SDK exception to :class:`Transient` or :class:`Fatal` (messages redacted)."""
    msg = REDACT(exc)[:300]
    if isinstance(exc, sdk.APITimeoutError):
        return Transient("timeout", detail=msg)
    if isinstance(exc, sdk.APIConnectionError):
        return Transient("connection", detail=msg)
    if isinstance(exc, sdk.APIStatusError):
        status = int(exc.status_code)
        if status == 429:
            return Transient("rate_limit", status, _retry_after(exc.response.headers), msg)
        if status >= 500 or status in (408, 409):
            return Transient("server", status, _retry_after(exc.response.headers), msg)
        return Fatal(f"{type(exc).__name__} ({status}): {msg}")
    if isinstance(exc, (ValueError, getattr(sdk, "APIResponseValidationError", ValueError))):
        return Transient("bad_response", detail=msg)
    return Fatal(f"{type(exc).__name__}: {msg}")  # e.g. missing credentials: no retry can help


def _settings_for(table: list[tuple[str, dict]], model: str) -> dict:
    for pattern, settings in table:
        if fnmatch.fnmatchcase(model, pattern):
            return json.loads(json.dumps(settings))
    return {}


def _merge(base: dict, override: dict | None) -> dict:
    out = json.loads(json.dumps(base))
    for k, v in (override or {}).items():
        if v is None:
            out.pop(k, None)
        elif isinstance(v, dict) and isinstance(out.get(k), dict):
            out[k] = _merge(out[k], v)
        else:
            out[k] = v
    return out


class SDKSubject(Subject):
    """A live provider reached through its official SDK, with the forced ``choose`` tool.

    Subclasses name the ``provider`` (which selects the tool format and the per-model settings
    table) and build the client; the SDK's own retries are off: :func:`ask_with_retries` retries.
    """

    paid = True
    settings_table: list[tuple[str, dict]] = []

    def __init__(self, model: str, api_key: str, base_url: str | None = None, timeout: float = 60.0,
                 settings: dict | None = None):
        from . import prompts

        super().__init__(model)
        REDACT.add(api_key)
        self.overrides = settings or None
        self.settings = _merge(_settings_for(self.settings_table, model), settings)
        self.tool = prompts.tool_spec(self.provider)
        self.tool_choice = prompts.tool_choice(self.provider)
        self.base_url = base_url
        self._sdk, self._client = self.make_client(api_key, base_url, timeout)

    def make_client(self, api_key: str, base_url: str | None, timeout: float):
        raise NotImplementedError

    def request_settings(self) -> dict:
        return {"settings": self.settings, "tools": [self.tool], "tool_choice": self.tool_choice,
                "system": None, "messages": "one user message"}

    def close(self) -> None:
        self._client.close()


class AnthropicSubject(SDKSubject):
    """Claude through the official SDK (Messages API, forced ``choose`` tool)."""

    provider = "anthropic"
    settings_table = ANTHROPIC_SETTINGS

    def make_client(self, api_key, base_url, timeout):
        import anthropic

        return anthropic, anthropic.Anthropic(api_key=api_key, base_url=base_url, max_retries=0, timeout=timeout)

    def request_kwargs(self, prompt: str) -> dict:
        s = dict(self.settings)
        extra = dict(s.pop("extra_body", {}) or {})
        if "temperature" in s:  # SDK 2.x has no temperature argument: send it in the body
            extra["temperature"] = s.pop("temperature")
        kw = {"model": self.model, "max_tokens": s.pop("max_tokens", config.MAX_TOKENS),
              "messages": [{"role": "user", "content": prompt}],
              "tools": [self.tool], "tool_choice": self.tool_choice, **s}
        if extra:
            kw["extra_body"] = extra
        return kw

    def ask(self, job: Job) -> Reply:
        try:
            msg = self._client.messages.create(**self.request_kwargs(job.prompt))
        except self._sdk.AnthropicError as exc:
            raise _translate(self._sdk, exc) from None
        patient, raw, texts = None, "", []
        for block in msg.content or []:
            if getattr(block, "type", "") == "tool_use" and patient is None:
                raw = json.dumps(getattr(block, "input", None), default=str)
                patient = patient_from_args(getattr(block, "input", None))
            elif getattr(block, "type", "") == "text":
                texts.append(block.text or "")
        if patient is None:
            text = "\n".join(texts)
            patient = patient_from_text(text)
            raw = raw or text
        usage = msg.usage
        return Reply(patient, str(msg.model or ""), str(msg.id or ""), int(getattr(usage, "input_tokens", 0) or 0),
                     int(getattr(usage, "output_tokens", 0) or 0), REDACT(raw)[:200], str(msg.stop_reason or ""))


# --- OpenAI-compatible -------------------------------------------------------------------------
class OpenAISubject(SDKSubject):
    """Any OpenAI-compatible chat-completions endpoint with a forced function tool."""

    provider = "openai"
    settings_table = OPENAI_SETTINGS

    def make_client(self, api_key, base_url, timeout):
        import openai

        return openai, openai.OpenAI(api_key=api_key, base_url=base_url, max_retries=0, timeout=timeout)

    def request_kwargs(self, prompt: str) -> dict:
        s = dict(self.settings)
        kw = {"model": self.model, "messages": [{"role": "user", "content": prompt}],
              "tools": [self.tool], "tool_choice": self.tool_choice, **s}
        return kw

    def ask(self, job: Job) -> Reply:
        try:
            resp = self._client.chat.completions.create(**self.request_kwargs(job.prompt))
        except self._sdk.OpenAIError as exc:
            raise _translate(self._sdk, exc) from None
        patient, raw, finish, text = None, "", "", ""
        if resp.choices:
            choice = resp.choices[0]
            finish = str(choice.finish_reason or "")
            message = choice.message
            for call in getattr(message, "tool_calls", None) or []:
                fn = getattr(call, "function", None)
                args = getattr(fn, "arguments", None)
                raw = raw or str(args)
                patient = patient_from_args(args)
                if patient is not None:
                    raw = str(args)
                    break
            text = message.content or ""
            if patient is None:
                patient = patient_from_text(text)
                raw = raw or text
        usage = resp.usage
        return Reply(patient, str(resp.model or ""), str(resp.id or ""),
                     int(getattr(usage, "prompt_tokens", 0) or 0), int(getattr(usage, "completion_tokens", 0) or 0),
                     REDACT(raw)[:200], finish)


def _is_loopback(url: str | None) -> bool:
    host = urlsplit(url).hostname if url else None
    return host in ("127.0.0.1", "localhost", "::1") or bool(host and host.startswith("127."))


def make_subject(provider: str, model: str, cell: "str | Cell", *, base_url: str | None = None,
                 api_key_env: str | None = None, timeout: float = 60.0, settings: dict | None = None,
                 sim_seed: int = 0, run: str | None = None, require_key: bool = True) -> Subject:
    """Build the subject of a provider (reads the API key from ``api_key_env``; a dry run needs none)."""
    if provider == "replay":
        return ReplaySubject(model, cell, run)
    if provider == "simulated":
        return SimulatedSubject.preset(model, seed=sim_seed, **(settings or {}))
    if provider not in PAID:
        raise CollectionError(f"unknown provider {provider!r}; expected one of {', '.join(PROVIDERS)}")
    env = api_key_env or DEFAULT_KEY_ENV[provider]
    key = os.environ.get(env, "")
    if not key:
        if require_key and not _is_loopback(base_url):
            raise CollectionError(f"no API key: set the environment variable {env} "
                                  f"(or name another variable with --api-key-env)")
        key = "not-needed"  # a dry run, or a local server (vLLM, Ollama) that ignores the key
    cls = AnthropicSubject if provider == "anthropic" else OpenAISubject
    return cls(model, key, base_url=base_url, timeout=timeout, settings=settings)


# =============================================================================================
# Prices and estimates
# =============================================================================================
def load_prices(override: str | os.PathLike | None = None) -> pd.DataFrame:
    """The price table: override rows (``--prices`` file or ``$PROXY_AUDIT_PRICES``) first, then
    ``data/prices.csv``. Columns ``provider, model, input_usd_per_mtok, output_usd_per_mtok, note``;
    ``model`` may be an ``fnmatch`` pattern. An override may be CSV with those columns or JSON:
    ``{"provider/model": [input, output]}`` or a list of row objects.
    """
    cols = ["provider", "model", "input_usd_per_mtok", "output_usd_per_mtok", "note"]
    frames = []
    override = override or os.environ.get(PRICES_ENV) or None
    if override:
        path = Path(override)
        if not path.is_file():
            raise CollectionError(f"price table {path} not found")
        try:
            if path.suffix.lower() == ".json":
                obj = json.loads(path.read_text())
                if isinstance(obj, dict):
                    rows = []
                    for k, v in obj.items():
                        prov, _, model = k.partition("/")
                        rows.append({"provider": prov, "model": model, "input_usd_per_mtok": float(v[0]),
                                     "output_usd_per_mtok": float(v[1]), "note": f"override {path.name}"})
                    obj = rows
                frames.append(pd.DataFrame(obj))
            else:
                frames.append(pd.read_csv(path))
        except (ValueError, KeyError, IndexError, TypeError) as exc:
            raise CollectionError(f"price table {path} unreadable: {exc}") from None
    frames.append(pd.read_csv(DEFAULT_PRICES))
    df = pd.concat(frames, ignore_index=True)
    if "note" not in df:
        df["note"] = ""
    missing = [c for c in cols[:4] if c not in df]
    if missing:
        raise CollectionError(f"price table lacks columns {missing}; expected {cols}")
    return df[cols]


def price_for(prices: pd.DataFrame, provider: str, model: str) -> tuple[float, float] | None:
    """``(input, output)`` USD per million tokens of the first matching row, or None."""
    for r in prices.itertuples(index=False):
        if r.provider == provider and fnmatch.fnmatchcase(model, str(r.model)):
            return float(r.input_usd_per_mtok), float(r.output_usd_per_mtok)
    return None


def cost_of(price: tuple[float, float] | None, input_tokens: int, output_tokens: int) -> float | None:
    if price is None:
        return None
    return (input_tokens * price[0] + output_tokens * price[1]) / 1e6


def token_cap(subject: Subject) -> int | None:
    s = getattr(subject, "settings", {}) or {}
    return s.get("max_completion_tokens") or s.get("max_tokens")


def estimate_tokens(prompt: str, subject: Subject) -> tuple[int, int, int]:
    """Rough ``(input, expected output, output cap)`` tokens of one call (dry run and budget)."""
    if not subject.paid:
        return 0, 0, 0
    tin = int(math.ceil(len(prompt) / CHARS_PER_TOKEN)) + EST_TOOL_OVERHEAD[subject.provider]
    cap = token_cap(subject) or 4096
    expected = EST_OUTPUT_TOKENS[subject.provider]
    if cap > 256:  # a reasoning model: the cap leaves room for reasoning tokens
        expected = min(cap, EST_REASONING_OUTPUT_TOKENS)
    return tin, min(expected, cap), cap


# =============================================================================================
# Ledger
# =============================================================================================
_SCHEMA = """
CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS requests (request_key TEXT PRIMARY KEY, provider TEXT NOT NULL, model TEXT NOT NULL,
    settings_json TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS answers (
    cell TEXT NOT NULL, display TEXT NOT NULL, arm TEXT NOT NULL, pair_id INTEGER NOT NULL, ord INTEGER NOT NULL,
    request_key TEXT NOT NULL, prompt_sha256 TEXT NOT NULL,
    i INTEGER NOT NULL, j INTEGER NOT NULL, patient INTEGER, status TEXT NOT NULL,
    served_model TEXT, response_id TEXT, input_tokens INTEGER NOT NULL DEFAULT 0,
    output_tokens INTEGER NOT NULL DEFAULT 0, cost_usd REAL, n_requests INTEGER NOT NULL DEFAULT 1,
    reused_from TEXT, raw TEXT, created_utc TEXT NOT NULL,
    PRIMARY KEY (cell, display, arm, pair_id, ord, request_key, prompt_sha256));
CREATE INDEX IF NOT EXISTS answers_by_prompt ON answers (request_key, prompt_sha256);
CREATE TABLE IF NOT EXISTS attempts (
    id INTEGER PRIMARY KEY AUTOINCREMENT, cell TEXT, display TEXT, arm TEXT, pair_id INTEGER, ord INTEGER,
    request_key TEXT, prompt_sha256 TEXT, attempt INTEGER, kind TEXT, outcome TEXT, http_status INTEGER,
    detail TEXT, latency_s REAL, input_tokens INTEGER, output_tokens INTEGER, cost_usd REAL, created_utc TEXT);
"""


def request_key(subject: Subject) -> tuple[str, str]:
    """``(key, settings JSON)`` of a subject's request: provider, model and settings, hashed."""
    settings = json.dumps(subject.request_settings(), sort_keys=True, default=str)
    key = sha256_text(json.dumps([subject.provider, subject.model, settings]))[:20]
    return key, settings


def now_utc() -> str:
    return _dt.datetime.now(_dt.timezone.utc).isoformat(timespec="seconds")


def check_ledger(path: Path) -> None:
    """Raise :class:`CollectionError` unless ``path`` is absent or a healthy ledger (opened read-only)."""
    if not path.exists():
        return
    if not path.is_file():
        raise CollectionError(f"ledger {path} is not a file")
    try:
        con = sqlite3.connect(f"file:{path}?mode=ro", uri=True)
        try:
            ok = con.execute("PRAGMA quick_check").fetchone()[0]
            version = con.execute("SELECT value FROM meta WHERE key = 'schema'").fetchone()
        finally:
            con.close()
    except sqlite3.Error as exc:
        raise CollectionError(f"ledger {path} is corrupted or not a collection ledger ({exc}); "
                              f"move it aside to start a new one") from None
    if ok != "ok" or version is None or int(version[0]) != LEDGER_SCHEMA:
        raise CollectionError(f"ledger {path} is corrupted or not a collection ledger "
                              f"(check: {ok}, schema: {version}); move it aside to start a new one")


class Ledger:
    """Persisted answers and the log of every request attempt (SQLite in WAL mode).

    Only the thread that opened the ledger writes to it; each :meth:`put` is one transaction,
    committed before it returns (``synchronous=FULL`` when ``durable``).
    """

    def __init__(self, path: str | os.PathLike, durable: bool = True):
        self.path = Path(path)
        check_ledger(self.path)
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self.con = sqlite3.connect(self.path, timeout=30, isolation_level=None, check_same_thread=False)
        self.con.execute("PRAGMA journal_mode=WAL")
        self.con.execute(f"PRAGMA synchronous={'FULL' if durable else 'NORMAL'}")
        self.con.executescript(_SCHEMA)  # idempotent (CREATE ... IF NOT EXISTS)
        with self.transaction():
            self.con.execute("INSERT OR IGNORE INTO meta VALUES ('schema', ?)", (str(LEDGER_SCHEMA),))

    @contextlib.contextmanager
    def transaction(self):
        self.con.execute("BEGIN IMMEDIATE")
        try:
            yield self.con
        except BaseException:
            self.con.execute("ROLLBACK")
            raise
        self.con.execute("COMMIT")

    def close(self) -> None:
        self.con.close()

    def register_request(self, key: str, subject: Subject, settings_json: str) -> None:
        with self.transaction():
            self.con.execute("INSERT OR IGNORE INTO requests VALUES (?, ?, ?, ?)",
                             (key, subject.provider, subject.model, settings_json))

    def answers(self, cell: str, display: str, key: str) -> pd.DataFrame:
        """Persisted answers of one cell and request key (every prompt SHA)."""
        return pd.read_sql_query(
            "SELECT * FROM answers WHERE cell = ? AND display = ? AND request_key = ?", self.con,
            params=(cell, display, key))

    def answer_for_prompt(self, key: str, sha: str) -> dict | None:
        """Any persisted answer to this exact prompt under this request key (for reuse)."""
        cur = self.con.execute("SELECT * FROM answers WHERE request_key = ? AND prompt_sha256 = ? "
                               "AND reused_from IS NULL ORDER BY created_utc LIMIT 1", (key, sha))
        row = cur.fetchone()
        return None if row is None else dict(zip([d[0] for d in cur.description], row))

    def put(self, answers: list[dict], attempts: list[dict]) -> int:
        """Persist answers (one per job: an existing answer is kept) and attempt logs; returns rows added."""
        added = 0
        with self.transaction():
            for a in answers:
                cur = self.con.execute(
                    "INSERT OR IGNORE INTO answers (cell, display, arm, pair_id, ord, request_key, prompt_sha256, i, j, "
                    "patient, status, served_model, response_id, input_tokens, output_tokens, cost_usd, n_requests, "
                    "reused_from, raw, created_utc) VALUES (:cell, :display, :arm, :pair_id, :ord, :request_key, "
                    ":prompt_sha256, :i, :j, :patient, :status, :served_model, :response_id, :input_tokens, "
                    ":output_tokens, :cost_usd, :n_requests, :reused_from, :raw, :created_utc)", a)
                added += cur.rowcount
            for t in attempts:
                self.con.execute(
                    "INSERT INTO attempts (cell, display, arm, pair_id, ord, request_key, prompt_sha256, attempt, kind, "
                    "outcome, http_status, detail, latency_s, input_tokens, output_tokens, cost_usd, created_utc) "
                    "VALUES (:cell, :display, :arm, :pair_id, :ord, :request_key, :prompt_sha256, :attempt, :kind, "
                    ":outcome, :http_status, :detail, :latency_s, :input_tokens, :output_tokens, :cost_usd, "
                    ":created_utc)", t)
        return added

    def attempts(self, cell: str | None = None) -> pd.DataFrame:
        q, params = "SELECT * FROM attempts", ()
        if cell is not None:
            q, params = q + " WHERE cell = ?", (cell,)
        return pd.read_sql_query(q, self.con, params=params)


# =============================================================================================
# Running
# =============================================================================================
@dataclass(frozen=True)
class RetryPolicy:
    """Transport retries: ``max_attempts`` requests per answer, backoff ``min(cap, base * 2^n)`` after failure n
    scaled by a jitter factor in [0.5, 1]; a ``retry-after`` header is honoured (waited at least)."""

    max_attempts: int = 5  # spec §6.2: up to 5 attempts
    base: float = 1.0
    cap: float = 30.0

    def delay(self, attempt: int, rng: random.Random, retry_after: float | None = None) -> float:
        backoff = min(self.cap, self.base * 2 ** attempt) * rng.uniform(0.5, 1.0)
        if retry_after is not None:
            return max(retry_after * (1 + 0.1 * rng.random()), 0.0)
        return backoff


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
                     ) -> Outcome:
    """Ask one job: transport retries per :class:`RetryPolicy`; re-ask an invalid answer up to ``reask``
    answers in total. Every request is logged in ``Outcome.attempts``. :class:`Fatal` propagates."""
    rng = random.Random(job.prompt_sha256 + job.arm + str(job.pair_id) + str(job.order))
    out = Outcome(None, [])
    answers = 0
    transport = 0
    while True:
        t0 = time.monotonic()
        out.n_requests += 1
        base = {"attempt": out.n_requests, "created_utc": now_utc()}
        try:
            reply = subject.ask(job)
        except Transient as exc:
            transport += 1
            out.attempts.append({**base, "kind": "transport", "outcome": exc.kind, "http_status": exc.status,
                                 "detail": REDACT(exc.detail)[:300], "latency_s": time.monotonic() - t0,
                                 "input_tokens": 0, "output_tokens": 0, "cost_usd": 0.0})
            if transport >= policy.max_attempts:
                out.error = f"no answer after {transport} attempts (last: {exc.kind} {exc.status or ''})".strip()
                return out
            if stop.wait(policy.delay(transport, rng, exc.retry_after)):
                out.error = "stopped before an answer"
                return out
            continue
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


@dataclass
class Plan:
    """What a run would do (the dry run): counts, tokens and cost."""

    cell: str
    display: str
    provider: str
    model: str
    n_jobs: int
    n_persisted: int
    n_reusable: int
    n_calls: int
    input_tokens: int
    output_tokens: int
    output_cap_tokens: int
    price: tuple[float, float] | None
    cost_usd: float | None
    cost_cap_usd: float | None

    def describe(self) -> str:
        def usd(x):
            return "unknown (no price for this model; give --prices)" if x is None else f"${x:,.2f}"

        price = "no price" if self.price is None else f"${self.price[0]:g} / ${self.price[1]:g} per million tokens"
        return "\n".join([
            f"dry run: {self.cell} ({self.display}) with {self.provider}/{self.model}",
            f"  jobs {self.n_jobs}, already in the ledger {self.n_persisted}, reusable identical prompts "
            f"{self.n_reusable}, calls to make {self.n_calls}",
            f"  estimated tokens: input {self.input_tokens:,}, output {self.output_tokens:,} "
            f"(at most {self.output_cap_tokens:,} at the output cap)",
            f"  estimated cost: {usd(self.cost_usd)} (at most {usd(self.cost_cap_usd)} at the output cap); "
            f"prices: {price}",
        ])


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


def _job_records(jobs: list[Job], answers: pd.DataFrame) -> pd.DataFrame:
    """Records (released schema + ``prompt_sha256``) of the jobs with a persisted answer, in job order."""
    frame = pd.DataFrame([{"arm": jb.arm, "pair_id": jb.pair_id, "i": jb.i, "j": jb.j, "order": jb.order,
                           "prompt_sha256": jb.prompt_sha256, "_q": q} for q, jb in enumerate(jobs)])
    if answers.empty:
        return pd.DataFrame(columns=RECORD_COLUMNS)
    a = answers.rename(columns={"ord": "order"})[["arm", "pair_id", "order", "prompt_sha256", "patient"]]
    df = frame.merge(a, on=["arm", "pair_id", "order", "prompt_sha256"], how="inner").sort_values("_q")
    patient = pd.to_numeric(df["patient"], errors="coerce").to_numpy(dtype=float)
    first = np.where(df["order"] == 0, df["i"], df["j"])
    second = np.where(df["order"] == 0, df["j"], df["i"])
    chosen = np.where(patient == 1, first, np.where(patient == 2, second, np.nan))
    picked = np.where(np.isnan(chosen), np.nan, (chosen == df["i"].to_numpy()).astype(float))
    df["patient"] = pd.array(patient, dtype="Float64").astype("Int64")
    df["chosen"] = pd.array(chosen, dtype="Float64").astype("Int64")
    df["picked_i"] = pd.array(picked, dtype="Float64").astype("Int64")
    return df[RECORD_COLUMNS].reset_index(drop=True)


def _atomic_write(path: Path, data: bytes) -> None:
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


def sdk_versions() -> dict:
    from importlib import metadata

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
    current = {(jb.arm, jb.pair_id, jb.order, jb.prompt_sha256) for jb in jobs}
    if not answers.empty:
        mask = [k in current for k in zip(answers["arm"], answers["pair_id"], answers["ord"], answers["prompt_sha256"])]
        answers = answers[mask]
    recs = _job_records(jobs, answers)
    data = recs.to_csv(index=False, lineterminator="\n").encode()
    _atomic_write(rec_path, data)
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
        "complete": len(recs) == len(jobs),
        "tokens": {"input": int(answers["input_tokens"].sum()) if not answers.empty else 0,
                   "output": int(answers["output_tokens"].sum()) if not answers.empty else 0},
        "cost_usd": None if cost.isna().any() else round(float(cost.sum()), 6),
        "price_usd_per_mtok": run_info.get("price"),
        "reuse_identical_prompts": run_info.get("reuse", False),
        "reask_attempts": run_info.get("reask", 1),
        "retry_policy": run_info.get("policy"),
        "this_run": run_info.get("this_run"),
        "ledger": str(ledger.path),
        "records_file": rec_path.name,
        "records_sha256": hashlib.sha256(data).hexdigest(),
    }
    _atomic_write(meta_path, (json.dumps(meta, indent=1, default=str) + "\n").encode())
    return rec_path, meta_path


def _answer_row(job: Job, key: str, reply: Reply | None, outcome: Outcome | None, reused_from: str | None) -> dict:
    return {"cell": job.cell, "display": job.display, "arm": job.arm, "pair_id": job.pair_id, "ord": job.order,
            "request_key": key, "prompt_sha256": job.prompt_sha256, "i": job.i, "j": job.j,
            "patient": None if reply is None else reply.patient,
            "status": "valid" if reply is not None and reply.patient is not None else "invalid",
            "served_model": None if reply is None else reply.served_model,
            "response_id": None if reply is None else reply.response_id,
            "input_tokens": outcome.input_tokens if outcome else 0,
            "output_tokens": outcome.output_tokens if outcome else 0,
            "cost_usd": (outcome.cost if outcome else 0.0),
            "n_requests": outcome.n_requests if outcome else 0,
            "reused_from": reused_from, "raw": None if reply is None else REDACT(reply.raw)[:200],
            "created_utc": now_utc()}


def _attempt_rows(job: Job, key: str, attempts: list[dict]) -> list[dict]:
    return [{"cell": job.cell, "display": job.display, "arm": job.arm, "pair_id": job.pair_id, "ord": job.order,
             "request_key": key, "prompt_sha256": job.prompt_sha256, **a} for a in attempts]


def _job_tag(job: Job) -> str:
    return f"{job.cell}/{job.display}/{job.arm}/{job.pair_id}/{job.order}"


def plan(jobs: list[Job], subject: Subject, ledger_path: Path | None, *, reuse: bool = False,
         prices: pd.DataFrame | None = None) -> Plan:
    """The dry run: how many calls a run would make, their tokens and cost (reads the ledger, writes nothing)."""
    key, _ = request_key(subject)
    done: set = set()
    shas_done: set = set()
    if ledger_path is not None and Path(ledger_path).exists():
        check_ledger(Path(ledger_path))
        con = sqlite3.connect(f"file:{ledger_path}?mode=ro", uri=True)
        try:
            rows = con.execute("SELECT cell, display, arm, pair_id, ord, prompt_sha256 FROM answers "
                               "WHERE request_key = ?", (key,)).fetchall()
        finally:
            con.close()
        done = {r for r in rows}
        shas_done = {r[5] for r in rows}
    todo = [jb for jb in jobs if (jb.cell, jb.display, jb.arm, jb.pair_id, jb.order, jb.prompt_sha256) not in done]
    reusable = 0
    calls = todo
    if reuse:
        seen: dict[str, Job] = {}
        for jb in todo:
            if jb.prompt_sha256 in shas_done or jb.prompt_sha256 in seen:
                reusable += 1
            else:
                seen[jb.prompt_sha256] = jb
        calls = list(seen.values())
    prices = load_prices() if prices is None else prices
    price = price_for(prices, subject.provider, subject.model)
    tin = tout = tcap = 0
    for jb in calls:
        a, b, c = estimate_tokens(jb.prompt, subject)
        tin, tout, tcap = tin + a, tout + b, tcap + c
    return Plan(jobs[0].cell, jobs[0].display, subject.provider, subject.model, len(jobs), len(jobs) - len(todo),
                reusable, len(calls), tin, tout, tcap, price, cost_of(price, tin, tout), cost_of(price, tin, tcap))


def run_jobs(jobs: list[Job], subject: Subject, ledger: Ledger, *, concurrency: int = 8,
             policy: RetryPolicy = RetryPolicy(), reask: int = 1, reuse: bool = False,
             max_cost: float | None = None, price: tuple[float, float] | None = None,
             progress: bool = True, stop: threading.Event | None = None) -> dict:
    """Ask every job that has no persisted answer; persist each answer as it arrives.

    Returns counts of this run: ``n_requested_jobs, n_requests, n_failed, input_tokens,
    output_tokens, cost_usd, stopped``.
    """
    from tqdm import tqdm

    key, settings_json = request_key(subject)
    ledger.register_request(key, subject, settings_json)
    stop = stop or threading.Event()
    cell, display = jobs[0].cell, jobs[0].display
    have = ledger.answers(cell, display, key)
    done = set(zip(have["arm"], have["pair_id"], have["ord"], have["prompt_sha256"])) if not have.empty else set()
    todo = [jb for jb in jobs if (jb.arm, jb.pair_id, jb.order, jb.prompt_sha256) not in done]

    # work units: one job each, or every job sharing a prompt when identical prompts are reused
    units: list[list[Job]]
    if reuse:
        by_sha: dict[str, list[Job]] = {}
        for jb in todo:
            by_sha.setdefault(jb.prompt_sha256, []).append(jb)
        units = []
        copies = []
        for sha, group in by_sha.items():
            src = ledger.answer_for_prompt(key, sha)
            if src is None:
                units.append(group)
                continue
            tag = f"{src['cell']}/{src['display']}/{src['arm']}/{src['pair_id']}/{src['ord']}"
            reply = Reply(src["patient"], src["served_model"] or "", src["response_id"] or "", raw=src["raw"] or "")
            copies += [_answer_row(jb, key, reply, None, tag) for jb in group]
        if copies:
            ledger.put(copies, [])
    else:
        units = [[jb] for jb in todo]

    est = {}
    for u in units:
        a, b, _ = estimate_tokens(u[0].prompt, subject)
        est[id(u)] = cost_of(price, a, b) or 0.0
    stats = {"n_requested_jobs": 0, "n_requests": 0, "n_failed": 0, "input_tokens": 0, "output_tokens": 0,
             "cost_usd": 0.0 if price is not None or not subject.paid else None, "stopped": ""}
    bar = tqdm(total=len(units), desc=f"{cell} {subject.provider}/{subject.model}", unit="call",
               disable=not progress, file=sys.stderr, dynamic_ncols=True, mininterval=0.5)

    def persist(batch: list[tuple[list[Job], Outcome]]) -> None:
        """Commit the answers and attempt logs of finished units in one transaction (group commit).

        The run's counts change only after the commit, so a batch whose commit was interrupted
        can be persisted again without counting twice.
        """
        rows: list[dict] = []
        logs: list[dict] = []
        for unit, outcome in batch:
            first = unit[0]
            if outcome.reply is not None:
                rows.append(_answer_row(first, key, outcome.reply, outcome, None))
                rows += [_answer_row(jb, key, outcome.reply, None, _job_tag(first)) for jb in unit[1:]]
            log = list(outcome.attempts)
            if outcome.reply is None and outcome.error:
                log.append({"attempt": outcome.n_requests, "kind": "gave_up", "outcome": outcome.error,
                            "http_status": None, "detail": "", "latency_s": 0.0, "input_tokens": 0,
                            "output_tokens": 0, "cost_usd": 0.0, "created_utc": now_utc()})
            logs += _attempt_rows(first, key, log)
        ledger.put(rows, logs)
        for unit, outcome in batch:
            stats["n_requests"] += outcome.n_requests
            stats["input_tokens"] += outcome.input_tokens
            stats["output_tokens"] += outcome.output_tokens
            if stats["cost_usd"] is not None:
                stats["cost_usd"] = None if outcome.cost is None else stats["cost_usd"] + outcome.cost
            if outcome.reply is not None:
                stats["n_requested_jobs"] += len(unit)
            else:
                stats["n_failed"] += len(unit)
        bar.update(len(batch))
        cost = stats["cost_usd"]
        bar.set_postfix_str(f"tok={_human(stats['input_tokens'] + stats['output_tokens'])} "
                            f"cost={'?' if cost is None else f'${cost:.4f}'}", refresh=False)

    fatal: BaseException | None = None
    try:
        if concurrency <= 1:
            for u in units:
                if stop.is_set():
                    stats["stopped"] = stats["stopped"] or "interrupted"
                    break
                if max_cost is not None and (stats["cost_usd"] or 0.0) + est[id(u)] > max_cost:
                    stats["stopped"] = "budget"
                    break
                persist([(u, ask_with_retries(subject, u[0], policy, reask, price, stop))])
        else:
            with cf.ThreadPoolExecutor(max_workers=concurrency, thread_name_prefix="collect") as pool:
                pending: dict[cf.Future, list[Job]] = {}
                queue = list(reversed(units))
                reserved = 0.0
                batch: list = []  # answers received but not yet committed
                try:
                    while queue or pending:
                        while queue and len(pending) < concurrency and not stop.is_set() and not stats["stopped"]:
                            u = queue[-1]
                            if max_cost is not None and (stats["cost_usd"] or 0.0) + reserved + est[id(u)] > max_cost:
                                stats["stopped"] = "budget"
                                break
                            queue.pop()
                            reserved += est[id(u)]
                            pending[pool.submit(ask_with_retries, subject, u[0], policy, reask, price, stop)] = u
                        if not pending:
                            break
                        finished, _ = cf.wait(list(pending), return_when=cf.FIRST_COMPLETED)
                        batch = []
                        for fut in finished:
                            u = pending.pop(fut)
                            reserved -= est[id(u)]
                            try:
                                batch.append((u, fut.result()))
                            except Fatal as exc:
                                fatal = fatal or exc
                                stop.set()
                        if batch:
                            persist(batch)
                            batch = []
                        if fatal is not None:
                            queue.clear()
                except BaseException:
                    stop.set()
                    if batch:  # answers in hand whose commit was interrupted (e.g. Ctrl-C inside persist)
                        with contextlib.suppress(BaseException):
                            persist(batch)
                    for fut, u in list(pending.items()):  # persist whatever comes back
                        with contextlib.suppress(BaseException):
                            persist([(u, fut.result())])
                    raise
    except Fatal as exc:
        fatal = exc
    finally:
        bar.close()
    if fatal is not None:
        raise CollectionError(f"request rejected by the server, run stopped: {REDACT(fatal)}")
    if stop.is_set() and not stats["stopped"]:
        stats["stopped"] = "interrupted"
    if not stats["stopped"] and stats["n_failed"]:
        stats["stopped"] = "failures"
    return stats


def _human(n: int) -> str:
    for unit, div in (("M", 1e6), ("k", 1e3)):
        if n >= div:
            return f"{n / div:.1f}{unit}"
    return str(n)


def collect(cell: "str | Cell", provider: str, model: str, out: str | os.PathLike, *, display: str = "numeric",
            base_url: str | None = None, concurrency: int = 8, max_cost: float | None = None,
            dry_run: bool = False, reuse_identical_prompts: bool = False, reask: int = 1,
            policy: RetryPolicy = RetryPolicy(), timeout: float = 60.0, settings: dict | None = None,
            prices: str | os.PathLike | None = None, api_key_env: str | None = None,
            ledger_path: str | os.PathLike | None = None, sim_seed: int = 0, run: str | None = None,
            progress: bool = True, jobs: list[Job] | None = None, subject: Subject | None = None,
            stop: threading.Event | None = None) -> "RunResult | Plan":
    """Collect one cell: check everything, then ask every unanswered job, then write records + metadata.

    Every check that can fail (provider, cell, display, model, key, output folder, ledger, price
    for a budget) runs before anything is written. ``dry_run`` returns a :class:`Plan` and writes
    nothing. Raises :class:`CollectionError` (one line) on a problem the user must fix.
    """
    if provider not in PROVIDERS:
        raise CollectionError(f"unknown provider {provider!r}; expected one of {', '.join(PROVIDERS)}")
    c = parse_cell(cell)
    if display not in config.DISPLAYS:
        raise CollectionError(f"unknown display {display!r}; expected one of {', '.join(config.DISPLAYS)}")
    if provider == "replay" and display != "numeric":
        raise CollectionError(f"replay serves the battery records (display 'numeric'), not display {display!r}")
    if concurrency < 1 or reask < 1 or policy.max_attempts < 1:
        raise CollectionError("concurrency, reask and retries must be at least 1")
    out = Path(out)
    ledger_path = Path(ledger_path) if ledger_path else out / LEDGER_NAME
    if not dry_run:
        check_writable(out)
        check_writable(ledger_path.parent)
    check_ledger(ledger_path)
    price_table = load_prices(prices)
    if subject is None:
        subject = make_subject(provider, model, c, base_url=base_url, api_key_env=api_key_env, timeout=timeout,
                               settings=settings, sim_seed=sim_seed, run=run, require_key=not dry_run)
    price = price_for(price_table, subject.provider, subject.model)
    if max_cost is not None and price is None and subject.paid:
        raise CollectionError(f"--max-cost needs a price for {subject.provider}/{subject.model}: "
                              f"give --prices FILE (or set {PRICES_ENV})")
    try:
        jobs = job_list(c, display) if jobs is None else jobs
        if not jobs:
            raise CollectionError(f"cell {c.id} has no jobs")
        if dry_run:
            return plan(jobs, subject, ledger_path, reuse=reuse_identical_prompts, prices=price_table)
        ledger = Ledger(ledger_path, durable=subject.paid)
        try:
            started = now_utc()
            stats = run_jobs(jobs, subject, ledger, concurrency=concurrency, policy=policy, reask=reask,
                             reuse=reuse_identical_prompts, max_cost=max_cost, price=price, progress=progress,
                             stop=stop)
            key, settings_json = request_key(subject)
            info = {"api_key_env": (api_key_env or DEFAULT_KEY_ENV.get(provider)) if subject.paid else None,
                    "price": list(price) if price else None, "reuse": reuse_identical_prompts, "reask": reask,
                    "policy": dataclasses.asdict(policy),
                    "this_run": {**stats, "started_utc": started, "finished_utc": now_utc(),
                                 "concurrency": concurrency, "max_cost_usd": max_cost}}
            rec, meta = write_outputs(out, subject, jobs, ledger, key, settings_json, info)
            n_persisted = int(json.loads(meta.read_text())["n_records"])
        finally:
            ledger.close()
    finally:
        subject.close()
    return RunResult(c.id, display, subject.provider, subject.model, len(jobs), n_persisted,
                     stats["n_requested_jobs"], stats["n_requests"], stats["n_failed"], stats["input_tokens"],
                     stats["output_tokens"], stats["cost_usd"], stats["stopped"], rec, meta)


# =============================================================================================
# Replay check and the simulated subject's coverage
# =============================================================================================
def compare_with_release(records_path: str | os.PathLike, model: str, cell: "str | Cell",
                         run: str | None = None) -> dict:
    """Compare regenerated replay records with the released file of ``(model, cell)``.

    Rows are matched on ``(arm, i, j, order)``; row counts and each answer column (``patient,
    chosen, picked_i``) are compared separately, because two released Sonnet canonical files store
    something other than a population index in ``chosen`` of the factual arm (the shown number,
    or the letter ``i``/``j``), whereas the replay always derives ``chosen`` from ``patient``
    (spec §7). ``equal`` requires everything to agree.
    """
    from . import records

    ours = records.normalise(pd.read_csv(records_path))
    rel = records.load_records(_replay_model(model), cell, run)
    key = ["arm", "i", "j", "order"]
    m = ours.merge(rel, on=key, how="outer", suffixes=("", "_rel"), indicator=True)
    both = m[m["_merge"] == "both"]

    def same(a, b):
        return (a == b) | (a.isna() & b.isna())

    eq = {c: bool(same(both[c], both[f"{c}_rel"]).all()) for c in ("patient", "chosen", "picked_i")}
    rows_equal = len(ours) == len(rel) and bool((m["_merge"] == "both").all())
    return {"cell": parse_cell(cell).id, "model": model, "run": run, "n_ours": int(len(ours)),
            "n_released": int(len(rel)),
            "only_ours": int((m["_merge"] == "left_only").sum()),
            "only_released": int((m["_merge"] == "right_only").sum()),
            "patient_equal": eq["patient"], "picked_i_equal": eq["picked_i"], "chosen_equal": eq["chosen"],
            "chosen_differs": int((~same(both["chosen"], both["chosen_rel"])).sum()),
            "pair_id_equal": bool((both["pair_id"] == both["pair_id_rel"]).all()),
            "missing": int(rel["picked_i"].isna().sum()),
            "equal": bool(rows_equal and all(eq.values()))}


def replay_targets(models: Iterable[str] | None = None, cells: Iterable[str] | None = None) -> pd.DataFrame:
    """Every released synthetic records file of the four battery models as ``model, cell, run``.

    From :func:`analysis.records.catalogue`; ``run`` is ``a``/``b`` for GPT's repeated measurement,
    else None. ``models``/``cells`` restrict the list.
    """
    from . import records

    cat = records.catalogue()
    rows = set()
    for r in cat.itertuples(index=False):
        if r.model not in config.MODELS:
            continue
        m = re.search(r"repeated_measurement/run_(\w)/", r.name)
        rows.add((r.model, r.cell, m.group(1) if m else None))
    df = pd.DataFrame(sorted(rows, key=lambda t: (t[0], t[1], t[2] or "")), columns=["model", "cell", "run"])
    if models is not None:
        df = df[df["model"].isin(list(models))]
    if cells is not None:
        df = df[df["cell"].isin([parse_cell(c).id for c in cells])]
    return df.reset_index(drop=True)


def replay_check(out: str | os.PathLike, targets: pd.DataFrame, progress: bool = False) -> pd.DataFrame:
    """Replay every target through :func:`collect` and compare it with its released file (one row each)."""
    rows = []
    for t in targets.itertuples(index=False):
        run = t.run if isinstance(t.run, str) else None
        res = collect(t.cell, "replay", t.model, out, concurrency=1, progress=progress, run=run)
        rows.append({**compare_with_release(res.records_path, t.model, t.cell, run),
                     "records": str(res.records_path)})
    return pd.DataFrame(rows)


def simulate_records(subject: SimulatedSubject, jobs: list[Job]) -> pd.DataFrame:
    """Records of the simulated subject, computed in memory (same answers as the collected path)."""
    rows = [_answer_row(jb, "sim", subject.ask(jb), None, None) for jb in jobs]
    return _job_records(jobs, pd.DataFrame(rows))


def simulated_coverage(cell: "str | Cell", preset: str = "numeric-reader", seeds: Iterable[int] = range(100),
                       jobs: list[Job] | None = None, draws: int = config.BOOTSTRAP_DRAWS) -> pd.DataFrame:
    """Estimated PSE and its 95 % pair-bootstrap interval for each seed, against the known expected PSE.

    Columns ``seed, pse_pp, lo, hi, expected_pp, covered``.
    """
    from . import estimators

    c = parse_cell(cell)
    jobs = job_list(c) if jobs is None else jobs
    expected = SimulatedSubject.preset(preset).expected_pse(jobs)
    rows = []
    for seed in seeds:
        recs = simulate_records(SimulatedSubject.preset(preset, seed=seed), jobs)
        recs["picked_i"] = recs["picked_i"].astype(float)
        est = estimators.cell_estimates(recs, draws=draws)
        lo, hi = est["pse_ci"]
        rows.append({"seed": seed, "pse_pp": est["pse_pp"], "lo": lo, "hi": hi, "expected_pp": expected,
                     "covered": bool(lo <= expected <= hi)})
    return pd.DataFrame(rows)


# =============================================================================================
# Command line
# =============================================================================================
def _fail(msg: str) -> int:
    print(f"error: {REDACT(msg)}", file=sys.stderr)
    return 2


class _Parser(argparse.ArgumentParser):
    """argparse that reports a usage error as one line (exit 2)."""

    def error(self, message):  # noqa: D401
        raise CollectionError(f"{self.prog}: {message}")


def _collect_parser() -> argparse.ArgumentParser:
    ap = _Parser(prog="python -m analysis collect",
                 description="Collect per-call records of one or more cells (resumable; never pays twice).")
    ap.add_argument("--cell", required=True, nargs="+", help="cell id(s), e.g. k12_LH_neutral_learned_zero")
    ap.add_argument("--provider", required=True, help="replay | anthropic | openai | simulated")
    ap.add_argument("--model", required=True,
                    help="replay: sonnet/deepseek/qwen/gpt; simulated: " + "/".join(SIMULATED_PRESETS)
                    + "; otherwise the serving model id")
    ap.add_argument("--display", default="numeric", help="numeric | ordered | arbitrary")
    ap.add_argument("--base-url", help="endpoint (OpenRouter, vLLM, Ollama, a fake server)")
    ap.add_argument("--out", required=True, help="output folder (records, metadata, ledger)")
    ap.add_argument("--concurrency", type=int, default=8)
    ap.add_argument("--max-cost", type=float, help="stop cleanly at this budget (USD, this invocation)")
    ap.add_argument("--dry-run", action="store_true", help="print calls, tokens and cost; call nothing")
    ap.add_argument("--reuse-identical-prompts", action="store_true",
                    help="one response per distinct prompt (real-record rule); default: one per job")
    ap.add_argument("--reask", type=int, default=1,
                    help="answers per job when invalid (paper's optional rule: 5); default 1 = never re-ask")
    ap.add_argument("--retries", type=int, default=RetryPolicy.max_attempts, help="transport attempts per answer")
    ap.add_argument("--backoff", type=float, default=RetryPolicy.base, help="first backoff (s), doubled each retry")
    ap.add_argument("--backoff-cap", type=float, default=RetryPolicy.cap)
    ap.add_argument("--timeout", type=float, default=60.0, help="seconds per request")
    ap.add_argument("--settings", help="JSON merged into the request settings (null removes a setting)")
    ap.add_argument("--prices", help=f"price table override (CSV or JSON; default ${PRICES_ENV} then data/prices.csv)")
    ap.add_argument("--api-key-env", help="environment variable holding the API key")
    ap.add_argument("--ledger", help=f"ledger file (default OUT/{LEDGER_NAME})")
    ap.add_argument("--sim-seed", type=int, default=0, help="seed of the simulated subject's noise")
    ap.add_argument("--run", help="replay: GPT repeated-measurement run (a or b)")
    ap.add_argument("--no-progress", action="store_true")
    return ap


def cli_collect(argv: list[str]) -> int:
    """``python -m analysis collect``: exit 0 complete, 3 incomplete (resumable), 2 error, 130 interrupted."""
    try:
        a = _collect_parser().parse_args(argv)
        if a.provider not in PROVIDERS:
            raise CollectionError(f"unknown provider {a.provider!r}; expected one of {', '.join(PROVIDERS)}")
        cells = [parse_cell(c) for c in a.cell]
        try:
            settings = json.loads(a.settings) if a.settings else None
        except ValueError as exc:
            raise CollectionError(f"--settings is not valid JSON: {exc}") from None
        policy = RetryPolicy(a.retries, a.backoff, a.backoff_cap)
        status = 0
        for c in cells:
            res = collect(c, a.provider, a.model, a.out, display=a.display, base_url=a.base_url,
                          concurrency=a.concurrency, max_cost=a.max_cost, dry_run=a.dry_run,
                          reuse_identical_prompts=a.reuse_identical_prompts, reask=a.reask, policy=policy,
                          timeout=a.timeout, settings=settings, prices=a.prices, api_key_env=a.api_key_env,
                          ledger_path=a.ledger, sim_seed=a.sim_seed, run=a.run, progress=not a.no_progress)
            if isinstance(res, Plan):
                print(res.describe())
                continue
            cost = "unknown" if res.cost_usd is None else f"${res.cost_usd:.4f}"
            print(f"{res.cell}: {res.n_persisted}/{res.n_jobs} records -> {res.records_path} "
                  f"({res.n_requests} requests this run, cost {cost})")
            if res.stopped:
                why = {"budget": "stopped at the budget", "failures": f"{res.n_failed} jobs got no answer",
                       "interrupted": "interrupted"}[res.stopped]
                print(f"{res.cell}: incomplete ({why}); rerun the same command to resume", file=sys.stderr)
                status = 3
                if res.stopped == "budget":
                    break
        return status
    except KeyboardInterrupt:
        print("error: interrupted; answers received so far are in the ledger, rerun to resume", file=sys.stderr)
        return 130
    except (CollectionError, CellError) as exc:
        return _fail(str(exc))


def _estimate(records: pd.DataFrame, cell: Cell, display: str = "numeric") -> dict:
    from . import estimators

    return dict(estimators.cell_summary(records, cell, display=display))


def estimate_records(path: str | os.PathLike, cell: "str | Cell", display: str = "numeric") -> dict:
    """Cell summary of a records CSV (released schema): ``pse_pp, pse_ci, error_pct, n_pairs, missing_rate, ...``."""
    from . import records as rec_mod

    cell = parse_cell(cell)
    path = Path(path)
    if not path.is_file():
        raise CollectionError(f"records file {path} not found")
    try:
        raw = pd.read_csv(path)
        missing = [c for c in ("arm", "pair_id", "i", "j", "order", "picked_i") if c not in raw]
        if missing:
            raise CollectionError(f"records file {path} lacks columns {missing}")
        df = rec_mod.normalise(raw, cell)
    except (ValueError, KeyError, pd.errors.ParserError) as exc:
        raise CollectionError(f"records file {path} unreadable: {exc}") from None
    return {"cell": cell.id, "display": display, "records": str(path), **_estimate(df, cell, display)}


def _json_clean(v):
    if isinstance(v, (list, tuple)):
        return [_json_clean(x) for x in v]
    if isinstance(v, (float, np.floating)):
        return None if math.isnan(v) else round(float(v), 6)
    if isinstance(v, np.integer):
        return int(v)
    return v


def cli_estimate(argv: list[str]) -> int:
    """``python -m analysis estimate --cell CELL --records FILE``: print one JSON object."""
    ap = _Parser(prog="python -m analysis estimate",
                 description="PSE, error and interval of a records file (JSON on stdout).")
    ap.add_argument("--cell", required=True)
    ap.add_argument("--records", required=True, help="a records CSV (released schema)")
    ap.add_argument("--display", default="numeric", choices=config.DISPLAYS,
                    help="display of the records (ordered/arbitrary use the category-indicator learner)")
    try:
        a = ap.parse_args(argv)
        out = estimate_records(a.records, a.cell, a.display)
    except (CollectionError, CellError) as exc:
        return _fail(str(exc))
    print(json.dumps({k: _json_clean(v) for k, v in out.items()}))
    return 0


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    commands = {"collect": cli_collect, "estimate": cli_estimate}
    if not argv or argv[0] not in commands:
        return _fail(f"expected a command: {' | '.join(commands)}")
    return commands[argv[0]](argv[1:])


if __name__ == "__main__":
    sys.exit(main())
