"""The providers' batch APIs through the official SDKs (issue 14): request lines, result parsing, clients.

* **Anthropic Message Batches**: ``client.messages.batches.create(requests=[{custom_id, params}])``,
  ``.retrieve(id)`` (``processing_status`` ``in_progress`` / ``canceling`` / ``ended``,
  ``request_counts``), ``.results(id)`` (JSONL in any order, ``result.type`` ``succeeded`` /
  ``errored`` / ``canceled`` / ``expired``), ``.cancel(id)``, ``.list()``. Caps: 100,000
  requests or 256 MB per batch.
* **OpenAI Batch**: ``client.files.create(file=..., purpose="batch")`` with one request per line
  (``custom_id``, ``method``, ``url``, ``body``), ``client.batches.create(input_file_id,
  endpoint="/v1/chat/completions", completion_window="24h", metadata)``, ``.retrieve(id)``
  (``status`` ``validating`` ... ``completed`` / ``failed`` / ``expired`` / ``cancelled``;
  ``output_file_id``, ``error_file_id``), ``client.files.content(id)``, ``.cancel(id)``,
  ``.list()``. Caps: 50,000 requests or 200 MB per file, one model per file.

The request of a job is exactly the synchronous request of its subject (``request_kwargs`` with
``extra_body`` merged into the body); replies are read with the same tool-call / content rules.
"""
from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Iterator

import pandas as pd

from .answers import Reply, patient_from_content, patient_from_tool_calls
from .errors import CollectionError, SamplingRejected, ToolChoiceRejected
from .jobs import Job
from .redaction import REDACT
from .subjects.anthropic import AnthropicSubject
from .subjects.sampling import names_tool_choice, sampling_param_named, sampling_rejected_line, tool_choice_rejected_line
from .subjects.sdk import translate
from .subjects.openai import logprob_reply  # --answer-format logprobs (issue 20)

ANTHROPIC_CAPS = (100_000, 256 * 1024 * 1024)
OPENAI_CAPS = (50_000, 200 * 1024 * 1024)
FAILED = ("errored", "expired", "canceled")
OPENAI_ENDPOINT = "/v1/chat/completions"
OPENAI_TERMINAL = {"completed", "failed", "expired", "cancelled"}
#: what became of a request an OpenAI batch left without a result line, by the batch's final status
OPENAI_MISSING = {"expired": "expired", "cancelled": "canceled", "failed": "errored", "completed": "errored"}
#: Anthropic prompt-cache pricing relative to the input price (cache write 1.25x, read 0.1x)
CACHE_WRITE, CACHE_READ = 1.25, 0.10


# =============================================================================================
# Request bodies and replies
# =============================================================================================
def cache_blocks(prompt: str) -> list[dict] | str:
    """The prompt as two text blocks, the shared part (instructions and examples) with ``cache_control``.

    A prompt without examples is returned unchanged (nothing worth caching). The text of the two
    blocks joined is exactly the prompt.
    """
    head, sep, tail = prompt.partition("\n\nNEW PATIENTS:")
    if not sep or "TRAINING CASES" not in head:
        return prompt
    return [{"type": "text", "text": head, "cache_control": {"type": "ephemeral"}},
            {"type": "text", "text": sep + tail}]


class PromptCacheAnthropic(AnthropicSubject):
    """The Anthropic subject with ``--prompt-cache``: the shared block of each prompt carries ``cache_control``.

    A deviation from the paper's request (its structure changes, not its text): it is part of
    the request settings, so it has its own ledger key and records tag, and the card's subject
    settings show ``prompt_cache``.
    """

    def request_settings(self) -> dict:
        return {**super().request_settings(), "prompt_cache": "cache_control on the shared example block (deviation)"}

    def tag(self, key: str) -> str:
        return f"s{key[:8]}"

    def request_kwargs(self, prompt: str) -> dict:
        kw = super().request_kwargs(prompt)
        kw["messages"] = [{"role": "user", "content": cache_blocks(prompt)}]
        return kw


def with_prompt_cache(subject):
    """The same subject (client, settings) with ``--prompt-cache`` (Anthropic only)."""
    if subject.provider != "anthropic":
        raise CollectionError("--prompt-cache applies to Anthropic (cache_control); other providers cache on their own")
    new = PromptCacheAnthropic.__new__(PromptCacheAnthropic)
    new.__dict__.update(subject.__dict__)
    return new


def prompt_cache_factory(make):
    """A subject factory whose subjects carry ``--prompt-cache`` (see :func:`with_prompt_cache`)."""
    return lambda: with_prompt_cache(make())


def anthropic_params(subject, prompt: str) -> dict:
    """The Messages API body of one job (the synchronous request; ``extra_body`` merged in)."""
    kw = subject.request_kwargs(prompt)
    kw.pop("extra_headers", None)  # a pinned anthropic-version goes on the batch's create call (issue 20)
    extra = kw.pop("extra_body", None) or {}
    return {**kw, **extra}


def openai_body(subject, prompt: str) -> dict:
    """The chat-completions body of one job (the synchronous request; ``extra_body`` merged in)."""
    kw = subject.request_kwargs(prompt)
    extra = kw.pop("extra_body", None) or {}
    return {**kw, **extra}


@dataclass
class Result:
    """One batch result: ``kind`` is ``succeeded`` (with a reply) or one of :data:`FAILED`."""

    custom_id: str
    kind: str
    reply: "Reply | None" = None
    input_cost_tokens: float = 0.0  # input tokens weighted by the cache multipliers (for the cost)
    detail: str = ""


def _answer(calls: list[tuple[str, object]], text: str, answer_format: str) -> tuple[int | None, str]:
    patient, raw = patient_from_tool_calls(calls) if answer_format == "tool" else (None, "")
    if patient is None:
        patient = patient_from_content(text, answer_format)
        raw = raw or text
    return patient, raw


def reply_from_anthropic(msg: dict, answer_format: str = "tool") -> tuple[Reply, float]:
    """A :class:`Reply` from a Messages API response (dict) and its cost-weighted input tokens."""
    blocks = [b for b in msg.get("content") or [] if isinstance(b, dict)]
    calls = [(str(b.get("name", "")), b.get("input")) for b in blocks if b.get("type") == "tool_use"]
    text = "\n".join(str(b.get("text") or "") for b in blocks if b.get("type") == "text")
    patient, raw = _answer(calls, text, answer_format)
    u = msg.get("usage") or {}
    tin, write, read = (int(u.get(k) or 0) for k in ("input_tokens", "cache_creation_input_tokens",
                                                      "cache_read_input_tokens"))
    reply = Reply(patient, str(msg.get("model") or ""), str(msg.get("id") or ""), tin + write + read,
                  int(u.get("output_tokens") or 0), REDACT(raw)[:200], str(msg.get("stop_reason") or ""))
    return reply, tin + CACHE_WRITE * write + CACHE_READ * read


def reply_from_openai(body: dict, answer_format: str = "tool") -> Reply:
    """A :class:`Reply` from a chat-completions response (dict): the forced tool call, else the content."""
    choices = body.get("choices") or []
    choice = choices[0] if choices and isinstance(choices[0], dict) else {}
    message = choice.get("message") if isinstance(choice.get("message"), dict) else {}
    calls = [(str(c["function"].get("name", "")), c["function"].get("arguments"))
             for c in message.get("tool_calls") or [] if isinstance(c, dict) and isinstance(c.get("function"), dict)]
    patient, raw = _answer(calls, str(message.get("content") or ""), answer_format)
    u = body.get("usage") or {}
    reply = Reply(patient, str(body.get("model") or ""), str(body.get("id") or ""), int(u.get("prompt_tokens") or 0),
                  int(u.get("completion_tokens") or 0), REDACT(raw)[:200], str(choice.get("finish_reason") or ""))
    return logprob_reply(reply, choice, str(message.get("content") or "")) if answer_format == "logprobs" else reply


def refused_sampling(error, model: str) -> None:
    """Raise :class:`SamplingRejected` for a batch result refused for a sampling parameter, and
    :class:`ToolChoiceRejected` for one refusing the forced tool choice (issue 20)."""
    inner = error.get("error", error) if isinstance(error, dict) else None
    if isinstance(inner, dict) and inner.get("type") == "invalid_request_error":
        message = REDACT(inner.get("message", ""))[:200]
        param = sampling_param_named(message)
        if param:
            raise SamplingRejected(sampling_rejected_line(param, model, 400, message))
        if names_tool_choice(message):
            raise ToolChoiceRejected(tool_choice_rejected_line(model, 400, message))


def openai_result(line: dict, answer_format: str = "tool") -> Result:
    """One line of an OpenAI Batch output or error file, or of ``vllm run-batch`` output."""
    cid = str(line.get("custom_id") or "")
    resp, err = line.get("response"), line.get("error")
    body = resp.get("body") if isinstance(resp, dict) and "body" in resp else resp
    status = int(resp.get("status_code") or 200) if isinstance(resp, dict) and "status_code" in resp else 200
    if err or not isinstance(body, dict) or status != 200 or "choices" not in body:
        e = err or (body.get("error") if isinstance(body, dict) else None)
        detail = json.dumps(e, default=str)[:300] if e else f"status {status}"
        kind = "expired" if "expired" in detail else "errored"
        return Result(cid, kind, detail=REDACT(detail))
    reply = reply_from_openai(body, answer_format)
    return Result(cid, "succeeded", reply, reply.input_tokens)


# =============================================================================================
# Provider clients (through the subject's SDK client)
# =============================================================================================
class AnthropicBatches:
    """``client.messages.batches`` of the subject's ``anthropic`` client."""

    caps = ANTHROPIC_CAPS

    def __init__(self, subject):
        self.subject, self.client = subject, subject._client

    def line(self, cid: str, job: "Job") -> dict:
        return {"custom_id": cid, "params": anthropic_params(self.subject, self.subject.prompt_of(job))}

    def create(self, local_id: str, lines: list[dict]) -> tuple[str, str | None]:
        headers = self.subject._headers() if hasattr(self.subject, "_headers") else {}  # pinned API version
        return str(self.client.messages.batches.create(requests=lines, **headers).id), None

    def retrieve(self, batch_id: str) -> tuple[str, bool, dict]:
        b = self.client.messages.batches.retrieve(batch_id)
        counts = b.request_counts.model_dump() if b.request_counts is not None else {}
        return str(b.processing_status), b.processing_status == "ended", counts

    def results(self, batch_id: str, status: str) -> Iterator[Result]:
        for r in self.client.messages.batches.results(batch_id):
            res = r.result
            if res.type == "succeeded":
                reply, cost_in = reply_from_anthropic(res.message.model_dump(), self.subject.answer_format)
                yield Result(r.custom_id, "succeeded", reply, cost_in)
            else:
                error = res.model_dump().get("error") if res.type == "errored" else None
                refused_sampling(error, self.subject.model)  # issue 20: never retried in a new batch
                detail = json.dumps(error, default=str)[:300] if error else ""
                yield Result(r.custom_id, res.type, detail=REDACT(detail))

    def missing_kind(self, status: str) -> str:
        return "errored"

    def cancel(self, batch_id: str) -> None:
        self.client.messages.batches.cancel(batch_id)

    def find_orphan(self, local_id: str, created_utc: str, n: int, known: set[str]) -> str | None:
        """An unclaimed batch created after ``created_utc`` with ``n`` requests (exactly one, else None)."""
        since = pd.Timestamp(created_utc) - pd.Timedelta(seconds=5)
        found = []
        for b in self.client.messages.batches.list(limit=100):
            created = pd.Timestamp(b.created_at)
            if created.tzinfo is None:
                created = created.tz_localize("UTC")
            if created < since:
                break
            total = sum(int(v or 0) for v in b.request_counts.model_dump().values())
            if b.id not in known and total == n:
                found.append(str(b.id))
        return found[0] if len(found) == 1 else None


class OpenAIBatches:
    """``client.files`` + ``client.batches`` of the subject's ``openai`` client (one model per file)."""

    caps = OPENAI_CAPS

    def __init__(self, subject):
        self.subject, self.client = subject, subject._client

    def line(self, cid: str, job: "Job") -> dict:
        body = openai_body(self.subject, self.subject.prompt_of(job))
        return {"custom_id": cid, "method": "POST", "url": OPENAI_ENDPOINT, "body": body}

    def create(self, local_id: str, lines: list[dict]) -> tuple[str, str | None]:
        models = {ln["body"].get("model") for ln in lines}
        if len(models) != 1:
            raise CollectionError(f"an OpenAI batch file holds one model, not {sorted(models)}")
        data = "".join(json.dumps(ln, separators=(",", ":")) + "\n" for ln in lines).encode()
        f = self.client.files.create(file=(f"{local_id}.jsonl", data, "application/jsonl"), purpose="batch")
        b = self.client.batches.create(input_file_id=f.id, endpoint=OPENAI_ENDPOINT, completion_window="24h",
                                       metadata={"proxy_audit_local_id": local_id})
        return str(b.id), str(f.id)

    def retrieve(self, batch_id: str) -> tuple[str, bool, dict]:
        b = self.client.batches.retrieve(batch_id)
        counts = b.request_counts.model_dump() if b.request_counts is not None else {}
        self._files = getattr(self, "_files", {})
        self._files[batch_id] = (b.output_file_id, b.error_file_id)
        return str(b.status), b.status in OPENAI_TERMINAL, counts

    def results(self, batch_id: str, status: str) -> Iterator[Result]:
        files = getattr(self, "_files", {}).get(batch_id)
        if files is None:
            self.retrieve(batch_id)
            files = self._files[batch_id]
        for fid in files:
            if not fid:
                continue
            text = self.client.files.content(fid).text
            for raw in text.splitlines():
                if raw.strip():
                    yield openai_result(json.loads(raw), self.subject.answer_format)

    def missing_kind(self, status: str) -> str:
        return OPENAI_MISSING.get(status, "errored")

    def cancel(self, batch_id: str) -> None:
        self.client.batches.cancel(batch_id)

    def find_orphan(self, local_id: str, created_utc: str, n: int, known: set[str]) -> str | None:
        """The batch whose metadata names ``local_id`` (set at create), if the provider has one."""
        for b in self.client.batches.list(limit=100):
            if (b.metadata or {}).get("proxy_audit_local_id") == local_id:
                return str(b.id)
        return None


def batch_client(subject):
    if subject.provider == "anthropic":
        return AnthropicBatches(subject)
    if subject.provider == "openai":
        return OpenAIBatches(subject)
    raise CollectionError(f"--batch needs a provider with a batch API (anthropic, openai), not {subject.provider!r}")


def sdk_call(subject, fn, *args):
    """Call the SDK, turning its exceptions into :class:`Transient` / :class:`Fatal` (messages redacted)."""
    try:
        return fn(*args)
    except subject.error_base() as exc:
        raise translate(subject._sdk, exc) from None
