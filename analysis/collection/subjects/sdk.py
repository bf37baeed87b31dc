"""Live providers through their official SDKs: shared request settings, error translation, the total
per-request deadline, malformed-reply detection, the preflight request and the answer formats.

The SDK's own retries are off (:func:`analysis.collection.retries.ask_with_retries` retries). Each
request goes through ``with_raw_response`` and the body is parsed here, so a 200 reply that is not
the API's JSON (an HTML page of a proxy, an empty body, a JSON error envelope) is a transient fault,
never an answer.
"""
from __future__ import annotations

import contextlib
import datetime as _dt
import fnmatch
import json
import math
import re
import sys
import time
from email.utils import parsedate_to_datetime
from urllib.parse import parse_qsl, urlsplit

import httpx2 as httpx  # the HTTP library of the anthropic and openai SDKs (a fork of httpx)

from ... import config, prompts
from ..answers import ANSWER_FORMATS, Reply
from ..errors import (CollectionError, ContextTooLong, Fatal, ModelNotServed, SamplingRejected, ToolChoiceRejected,
                      Transient)
from ..jobs import Job
from ..redaction import REDACT
from .base import Subject
from .sampling import (forced_tool_choice_accepted, names_tool_choice, sampling_param_named, sampling_rejected_line,
                       sampling_settings, tool_choice_rejected_line, tool_choice_settings)

#: appended to the prompt for ``--answer-format json`` (our wording: the protocol has no JSON variant)
JSON_INSTRUCTION = '\nRespond with a JSON object only: {"patient": 1} or {"patient": 2}.'
#: phrases of the context-length errors of OpenAI, Anthropic, vLLM, llama.cpp, Ollama and OpenRouter
_CONTEXT_ERROR = re.compile(r"(?i)context[ _-]?(length|window|size)|maximum context|prompt is too long|"
                            r"too many tokens|n_ctx|exceeds? the (model'?s? )?(context|maximum)")
#: keys of a ``/models`` entry that give the context window (vLLM, llama.cpp, OpenRouter, LM Studio)
_CONTEXT_KEYS = ("max_model_len", "context_length", "context_window", "n_ctx", "n_ctx_train", "max_context_length")


def retry_after(headers) -> float | None:
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
        v = float(ra)
        return max(0.0, v) if math.isfinite(v) else None
    except ValueError:
        with contextlib.suppress(TypeError, ValueError):
            when = parsedate_to_datetime(ra)
            return max(0.0, (when - _dt.datetime.now(when.tzinfo)).total_seconds())
    return None


def error_body(exc: Exception) -> tuple[str, str, str]:
    """``(type, message, code)`` of an API error's body: Anthropic's ``{"type": "error", "error": {...}}``
    or OpenAI's ``{"error": {...}}`` (the openai SDK keeps only the inner object); empty strings when
    the body is not one (an HTML page, plain text, nothing)."""
    body = getattr(exc, "body", None)
    err = body.get("error", body) if isinstance(body, dict) else None
    if not isinstance(err, dict):
        return "", "", ""
    return str(err.get("type") or ""), str(err.get("message") or ""), str(err.get("code") or "")


def not_served_line(model: str, detail: str = "") -> str:
    """The one line of a model the server does not serve (issue 20)."""
    return f"model {model} is not served (retired or misspelled)" + (f": {detail}" if detail else "")


def model_error(exc: Exception, model: str | None) -> bool:
    """Whether a 404 body says the model is unknown (Anthropic ``not_found_error`` naming a model, OpenAI
    ``model_not_found``), as opposed to a route the server lacks (an HTML page, another body)."""
    kind, message, code = error_body(exc)
    low = message.lower()
    if code == "model_not_found" or ("model" in low and ("not exist" in low or "not found" in low)):
        return True  # OpenAI, vLLM ("The model `x` does not exist."), Ollama ("model 'x' not found")
    return kind == "not_found_error" and ("model" in low or bool(model and model in message))


def translate(sdk, exc: Exception, model: str | None = None) -> Exception:
    """Map an SDK exception to :class:`Transient`, :class:`Fatal` or :class:`ContextTooLong` (redacted).

    A 400 naming a sampling parameter is :class:`SamplingRejected`, one refusing the forced tool choice
    :class:`ToolChoiceRejected` and a 404 for the model :class:`ModelNotServed` (each one line that says what
    to do; never retried)."""
    msg = REDACT(exc)[:300]
    if isinstance(exc, sdk.APITimeoutError):
        return Transient("timeout", detail=msg)
    if isinstance(exc, sdk.APIConnectionError):
        return Transient("connection", detail=msg)
    if isinstance(exc, sdk.APIStatusError):
        status = int(exc.status_code)
        if status == 429:
            return Transient("rate_limit", status, retry_after(exc.response.headers), msg)
        if status >= 500 or status in (408, 409):
            return Transient("server", status, retry_after(exc.response.headers), msg)
        if status in (400, 413, 422) and _CONTEXT_ERROR.search(msg):
            return ContextTooLong(f"the prompt is longer than the model's context ({status}): {msg}")
        _, message, _ = error_body(exc)
        param = sampling_param_named(message) if status in (400, 422) else None
        if param:
            return SamplingRejected(sampling_rejected_line(param, model or "?", status, REDACT(message)[:200]))
        if status in (400, 422) and names_tool_choice(message):
            return ToolChoiceRejected(tool_choice_rejected_line(model or "?", status, REDACT(message)[:200]))
        if status == 404 and model_error(exc, model):
            return ModelNotServed(not_served_line(model or "?", REDACT(message)[:200]))
        return Fatal(f"{type(exc).__name__} ({status}): {msg}")
    if isinstance(exc, (ValueError, getattr(sdk, "APIResponseValidationError", ValueError))):
        return Transient("bad_response", detail=msg)
    return Fatal(f"{type(exc).__name__}: {msg}")  # e.g. missing credentials: no retry can help


def settings_for(table: list[tuple[str, dict]], model: str) -> dict:
    """The first matching ``fnmatch`` row of a settings table."""
    for pattern, settings in table:
        if fnmatch.fnmatchcase(model, pattern):
            return json.loads(json.dumps(settings))
    return {}


def merge(base: dict, override: dict | None) -> dict:
    """``base`` updated by ``override`` recursively (``None`` removes a setting)."""
    out = json.loads(json.dumps(base))
    for k, v in (override or {}).items():
        if v is None:
            out.pop(k, None)
        elif isinstance(v, dict) and isinstance(out.get(k), dict):
            out[k] = merge(out[k], v)
        else:
            out[k] = v
    return out


def redact_headers(settings: dict) -> dict:
    """A copy with every value under a ``*headers`` key replaced by ``[redacted]`` (and registered with
    the redactor), so a key given in ``--settings`` never reaches the ledger, metadata or stderr."""
    out = {}
    for k, v in settings.items():
        if "headers" in str(k).lower() and isinstance(v, dict):
            for hv in v.values():
                REDACT.add(str(hv))
            out[k] = {hk: "[redacted]" for hk in v}
        elif isinstance(v, dict):
            out[k] = redact_headers(v)
        else:
            out[k] = v
    return out


def check_base_url(url: str | None) -> None:
    """Refuse credentials in ``--base-url`` (httpx would send them as Basic auth in place of the key);
    query values are registered with the redactor."""
    if not url:
        return
    u = urlsplit(url)
    if u.username or u.password or "@" in u.netloc:
        raise CollectionError("--base-url must not carry credentials (user:password@host); "
                              "give the key in an environment variable (--api-key-env)")
    if u.scheme not in ("http", "https"):
        raise CollectionError(f"--base-url must start with http:// or https://, not {u.scheme or 'nothing'}")
    for _, v in parse_qsl(u.query):
        REDACT.add(v)


def is_loopback(url: str | None) -> bool:
    host = urlsplit(url).hostname if url else None
    return host in ("127.0.0.1", "localhost", "::1") or bool(host and host.startswith("127."))


def default_timeout(base_url: str | None) -> float:
    """``--timeout`` when none is given: longer for a server on this machine, which evaluates a long prompt itself.

    >>> default_timeout(None), default_timeout("http://127.0.0.1:8080/v1"), default_timeout("http://localhost/v1")
    (60.0, 600.0, 600.0)
    """
    return config.LOCAL_REQUEST_TIMEOUT_S if is_loopback(base_url) else config.REQUEST_TIMEOUT_S


class _DeadlineStream(httpx.SyncByteStream):
    """A response body that raises :class:`httpx.ReadTimeout` once the request's total deadline passes."""

    def __init__(self, stream, deadline: float, total: float):
        self._stream, self._deadline, self._total = stream, deadline, total

    def __iter__(self):
        for chunk in self._stream:
            if time.monotonic() > self._deadline:
                raise httpx.ReadTimeout(f"no complete reply within the total deadline of {self._total:g} s")
            yield chunk

    def close(self) -> None:
        self._stream.close()


class DeadlineTransport(httpx.HTTPTransport):
    """HTTP transport with a total per-request deadline (connect + headers + whole body): httpx's own
    timeouts apply per read, so a server trickling its body byte by byte would never time out."""

    def __init__(self, total: float, **kwargs):
        super().__init__(**kwargs)
        self.total = total

    def handle_request(self, request: httpx.Request) -> httpx.Response:
        deadline = time.monotonic() + self.total
        resp = super().handle_request(request)
        if time.monotonic() > deadline:
            resp.close()
            raise httpx.ReadTimeout(f"no reply within the total deadline of {self.total:g} s", request=request)
        return httpx.Response(resp.status_code, headers=resp.headers, request=request, extensions=resp.extensions,
                              stream=_DeadlineStream(resp.stream, deadline, self.total))


def http_client(timeout: float) -> httpx.Client:
    """The httpx client handed to an SDK: total deadline ``timeout``, a pool for 64 workers."""
    return httpx.Client(transport=DeadlineTransport(timeout, limits=httpx.Limits(max_connections=256,
                                                                              max_keepalive_connections=64)),
                        timeout=httpx.Timeout(timeout), follow_redirects=False)


def parse_body(raw) -> dict:
    """The JSON object of a 200 reply; a body that is not one (HTML, empty, not JSON, an error envelope)
    raises :class:`Transient` ``bad_response``."""
    resp = raw.http_response
    text = resp.content.decode("utf-8", "replace")
    ctype = resp.headers.get("content-type", "")
    if not text.strip():
        raise Transient("bad_response", resp.status_code, detail="empty body")
    try:
        body = json.loads(text)
    except ValueError:
        kind = "html" if "html" in ctype or text.lstrip()[:1] == "<" else "non-JSON"
        raise Transient("bad_response", resp.status_code, detail=f"{kind} body: {REDACT(text[:120])!r}") from None
    if not isinstance(body, dict):
        raise Transient("bad_response", resp.status_code, detail=f"JSON {type(body).__name__}, not an object")
    if "error" in body or body.get("type") == "error":
        err = body.get("error")
        msg = err.get("message", err) if isinstance(err, dict) else err
        if _CONTEXT_ERROR.search(str(msg)):
            raise ContextTooLong(f"the prompt is longer than the model's context: {REDACT(msg)[:300]}")
        raise Transient("bad_response", resp.status_code, detail=f"error envelope: {REDACT(msg)[:200]}")
    return body


class SDKSubject(Subject):
    """A live provider reached through its official SDK, with the forced ``choose`` tool by default.

    Subclasses name the ``provider`` (which selects the tool format and the per-model settings
    table), build the client and read their reply format; the SDK's own retries are off.
    ``answer_format`` ``json``/``text`` sends no tool and asks for the answer in the content.
    """

    paid = True
    settings_table: list[tuple[str, dict]] = []

    def __init__(self, model: str, api_key: str, base_url: str | None = None, timeout: float = 60.0,
                 settings: dict | None = None, answer_format: str = "tool"):
        super().__init__(model)
        if answer_format not in ANSWER_FORMATS:
            raise CollectionError(f"unknown answer format {answer_format!r}; expected one of {', '.join(ANSWER_FORMATS)}")
        check_base_url(base_url)
        REDACT.add(api_key)
        self.overrides = settings or None
        self.settings = merge(self.default_settings(model, settings or {}), settings)
        redact_headers(self.settings)  # registers header values with the redactor
        self.answer_format = answer_format
        self.tool = prompts.tool_spec(self.provider)
        # the protocol's forced choice, or auto for a model that rejects it (a deviation on the card; issue 20)
        self.tool_choice = prompts.tool_choice(self.provider, forced=forced_tool_choice_accepted(model))
        self.base_url = base_url
        self.timeout = timeout
        self._http = http_client(timeout)
        self._sdk, self._client = self.make_client(api_key, base_url, timeout, self._http)
        self._context: int | None = None

    def make_client(self, api_key: str, base_url: str | None, timeout: float, http: httpx.Client):
        raise NotImplementedError

    def default_settings(self, model: str, overrides: dict) -> dict:
        """The settings table's row for ``model`` (before the user's ``--settings``)."""
        return settings_for(self.settings_table, model)

    def api_version(self) -> str | None:
        """The provider's API version the requests go out under (None: the provider has none)."""
        return None

    def sampling(self) -> dict:
        """``temperature_settable`` and ``sampling`` of this request, and its tool choice (``tool_choice_forced``,
        ``tool_choice``), for the card's settings (issue 20)."""
        return {**sampling_settings(self.provider, self.model, self.settings, self.api_version()),
                **tool_choice_settings(self.model, self.answer_format)}

    def error_base(self) -> type:
        """The SDK's base exception class."""
        raise NotImplementedError

    def request_settings(self) -> dict:
        s = {"settings": redact_headers(self.settings), "system": None, "messages": "one user message"}
        if self.answer_format == "tool":
            s.update(tools=[self.tool], tool_choice=self.tool_choice)
        else:  # the format is part of the request key (tool keeps the keys of earlier ledgers)
            s.update(tools=None, tool_choice=None, answer_format=self.answer_format, suffix=self.suffix())
        return s

    def tag(self, key: str) -> str:
        return f"s{key[:8]}" if self.overrides or self.answer_format != "tool" else ""

    def suffix(self) -> str:
        return {"tool": "", "json": JSON_INSTRUCTION, "text": prompts.TEXT_FALLBACK,
                "logprobs": prompts.TEXT_FALLBACK, "completion": config.COMPLETION_CUE}[self.answer_format]

    def prompt_of(self, job: Job) -> str:
        return job.prompt + self.suffix()

    def call(self, create, **kwargs) -> dict:
        """One raw request through the SDK; returns the reply's JSON object."""
        try:
            raw = create(**kwargs)
        except self.error_base() as exc:
            raise translate(self._sdk, exc, self.model) from None
        except httpx.HTTPError as exc:  # raised outside the SDK's own wrapping
            raise Transient("connection", detail=REDACT(exc)[:300]) from None
        return parse_body(raw)

    def context_tokens(self) -> int | None:
        return self._context

    def close(self) -> None:
        self._client.close()
        self._http.close()


def context_from_entry(entry: dict) -> int | None:
    """The context window a ``/models`` entry reports (top level or under ``meta``), else None."""
    for where in (entry, entry.get("meta") or {}, entry.get("top_provider") or {}):
        if isinstance(where, dict):
            for k in _CONTEXT_KEYS:
                v = where.get(k)
                if isinstance(v, (int, float)) and v > 0:
                    return int(v)
    return None


def tokens_of(usage: dict | None, *names: str) -> int:
    usage = usage if isinstance(usage, dict) else {}
    for n in names:
        v = usage.get(n)
        if isinstance(v, (int, float)):
            return int(v)
    return 0


def reply_of(patient: int | None, body: dict, input_tokens: int, output_tokens: int, raw: str, finish: str) -> Reply:
    return Reply(patient, str(body.get("model") or ""), str(body.get("id") or ""), input_tokens, output_tokens,
                 REDACT(raw)[:200], finish)


_WARNED: set[str] = set()


def warn_once(line: str) -> None:
    """One warning line on stderr, once per process (the audit builds one subject per condition)."""
    if line not in _WARNED:
        _WARNED.add(line)
        print(f"warning: {REDACT(line)}", file=sys.stderr, flush=True)


def preflight_status(sdk, exc: Exception, what: str, model: str | None = None, where: str = "") -> None:
    """Raise the one-line error of a failed preflight request, or warn and return where the server
    lacks the route: a 404 whose body is not a model error (a gateway or proxy without ``/models``)."""
    if isinstance(exc, sdk.APIStatusError):
        status = int(exc.status_code)
        if status in (401, 403):
            raise Fatal(f"the endpoint refused the API key ({status}): {REDACT(exc)[:200]}")
        if status == 404 and model_error(exc, model):
            raise ModelNotServed(not_served_line(model or "?", REDACT(error_body(exc)[1])[:200]))
        if status in (404, 405, 501):
            warn_once(f"the preflight request GET {what} got {status} from {where or 'the endpoint'} (no models "
                      f"route?); continuing without checking the model (--no-preflight skips the request)")
            return None
        raise translate(sdk, exc, model)
    raise translate(sdk, exc, model)

