"""Fake model servers on 127.0.0.1 for the collection tests and the benchmark.

Two small HTTP servers built on the standard library (``http.server`` with one thread per
connection, HTTP/1.1 keep-alive):

* :class:`FakeAnthropic` answers ``POST .../v1/messages`` like the Anthropic Messages API;
* :class:`FakeOpenAI` answers ``POST .../chat/completions`` like an OpenAI-compatible endpoint, and
  ``POST .../v1/completions`` (``--answer-format completion``) in llama-cpp-python's text-completion shape.

They are driven through the real ``anthropic`` and ``openai`` SDKs by pointing ``base_url`` at
:attr:`FakeServer.url`. Every request body is kept in :attr:`FakeServer.requests` so tests can
check it against the protocol. Answers come from an ``answer(prompt) -> 1 | 2 | None`` callable
(by default the simulated subject of :mod:`analysis.collection`, so live tests see realistic
answers); ``None`` produces a reply without a tool call.

Faults are injected by a ``faults(n, body) -> str | None`` callable (``n`` counts requests from 0)
or by a list/dict mapping request numbers to faults:

``"429"``          status 429 with ``retry-after`` (seconds, :attr:`retry_after`)
``"500"``          status 500
``"529"``          status 529 (Anthropic's "overloaded")
``"slow"``         a correct reply sent after :attr:`slow_seconds` (beyond the client timeout)
``"drop"``         the connection is reset without a reply
``"no_tool"``      a reply with text only ("I cannot decide.")
``"bad_patient"``  a tool call with ``patient`` 3
``"bad_json"``     a tool call whose arguments are not valid JSON (OpenAI) / not an integer (Anthropic)
``"wrong_tool"``   a call of another tool
``"401"``          status 401 whose message echoes the key received (as some real APIs do)
``"trickle"``      a correct reply whose body is sent one byte every :attr:`trickle_seconds`
``"hang"``         no reply for :attr:`hang_seconds`, then a correct one
``"html"``         status 200 with an HTML page (a proxy's or gateway's)
``"empty"``        status 200 with an empty body
``"nonjson"``      status 200 with a body that is not JSON
``"envelope"``     status 200 with a JSON error envelope ``{"error": {...}}``
``"context"``      status 400 with a context-length error message

``GET .../models`` (OpenAI) and ``GET .../v1/models/{id}`` (Anthropic) answer the preflight request:
:attr:`models` lists the served ids (None: any id), :attr:`context` adds a context window to each
entry, :attr:`models_status` replaces the reply by that status (e.g. 401). They are counted in
:attr:`gets`, not in :attr:`count`. :attr:`out_tokens` and :attr:`in_tokens_per_char` set the
usage a reply reports; answers in the content follow the request (no tools: ``--answer-format``
json or text).

``latency`` adds a fixed delay to every answer (to keep a run going long enough to kill it).

Today's APIs (issue 20). :class:`FakeAnthropic` checks the ``anthropic-version`` header the way the
API does: missing, malformed or later than :attr:`FakeAnthropic.api_version` (the newest version the
server speaks) -> 400 ``invalid_request_error``. Under ``2026-10-21`` (the version the pinned SDK
sends) and later, ``temperature``, ``top_p`` and ``top_k`` are rejected with the API's 400 body
``{"type": "error", "error": {"type": "invalid_request_error", "message": ...}, "request_id": ...}``;
an older version (pinned with the setting ``anthropic_version``) takes them: ``FakeAnthropic(
api_version="2023-06-01")`` is a server of the older behaviour. Both fakes serve the models routes
(Anthropic ``GET /v1/models`` and ``/v1/models/{id}`` with ``lifecycle``, ``retires_at``,
``max_input_tokens``; OpenAI ``GET /v1/models`` and ``/v1/models/{id}``). A model in :attr:`retired`
answers every request with the 404 ``not_found_error`` body (OpenAI: ``model_not_found``); its
models entry reads ``lifecycle: retired``. A model in :attr:`deprecated` is listed ``deprecated`` with
its ``retires_at``: that is where the SDK and the preflight read a deprecation (neither SDK reads a
deprecation response header; the anthropic SDK warns from its own table, ``anthropic._data``).
``no_models_route`` makes the models routes 404 with a body that is not a model error (a gateway).
:attr:`FakeOpenAI.rejects` names models that refuse ``temperature`` (400 ``unsupported_value``).
:attr:`FakeAnthropic.rejects_forced_tool` names models that refuse a forced ``tool_choice`` (400
``invalid_request_error``; Sonnet 5.5, Opus 5.5, Fable 5.1 by default).

Run standalone (used by the benchmark)::

    python tests/fake_servers.py {anthropic,openai} [--port N] [--answer simulated|one]
"""
from __future__ import annotations

import argparse
import json
import socket
import struct
import sys
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Callable

#: the Anthropic API version from which temperature, top_p and top_k are rejected on every model
NO_SAMPLING_FROM = "2026-10-21"
SAMPLING = ("temperature", "top_p", "top_k")
#: models that answer a forced tool choice (``tool_choice`` of type ``tool`` or ``any``) with a 400: Sonnet 5.5,
#: Opus 5.5 and Fable 5.1 (inspect_ai 0.3.285, ``rejects_forced_tool_choice``). The status and the error envelope
#: are the API's; the message text is ours (no published example of it was found)
REJECTS_FORCED_TOOL = ("claude-sonnet-5-5", "claude-opus-5-5", "claude-fable-5-1")
FAULTS = ("429", "500", "529", "slow", "drop", "no_tool", "bad_patient", "bad_json", "wrong_tool", "401", "trickle",
          "hang", "html", "empty", "nonjson", "envelope", "context")


def prompt_of(body: dict) -> str:
    """The text of the (single) user message of a request body (a completion request: its ``prompt``)."""
    if "prompt" in body and not body.get("messages"):
        return str(body["prompt"])
    msgs = body.get("messages") or []
    if not msgs:
        return ""
    content = msgs[-1].get("content", "")
    if isinstance(content, list):
        return "".join(b.get("text", "") for b in content if isinstance(b, dict))
    return str(content)


def simulated_answer(preset: str = "numeric-reader", seed: int = 0) -> Callable[[str], int | None]:
    """An answer function backed by the simulated subject of :mod:`analysis.collection`."""
    from analysis.collection import SimulatedSubject

    subject = SimulatedSubject.preset(preset, seed=seed)
    return subject.choose


class _Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    disable_nagle_algorithm = True  # headers and body go out in separate writes: avoid the 40 ms delayed ACK
    server: "_Server"

    def log_message(self, *args):  # keep test output clean
        pass

    def do_GET(self):  # noqa: N802 - http.server naming
        fake = self.server.fake
        headers = {k.lower(): v for k, v in self.headers.items()}
        with fake._lock:
            fake.gets.append({"path": self.path, "headers": headers})
        if fake.models_status:
            return self._send(fake.models_status, {"type": "error", "error": {
                "type": "authentication_error", "message": "invalid x-api-key"}})
        path = self.path.split("?")[0].rstrip("/")
        if fake.no_models_route:
            return self._send(404, {"detail": "Not Found"})
        refused = fake.check_headers(headers)
        if refused:
            return self._send(*refused)
        if path.endswith("/models"):
            return self._send(200, fake.model_list())
        if "/models/" in path:
            return self._send(*fake.model_entry(path.rsplit("/", 1)[1]))
        return self._send(404, {"error": {"message": f"no route {self.path}"}})

    def do_POST(self):  # noqa: N802 - http.server naming
        fake = self.server.fake
        length = int(self.headers.get("content-length") or 0)
        raw = self.rfile.read(length) if length else b""
        try:
            body = json.loads(raw or b"{}")
        except ValueError:
            body = {}
        n, fault = fake._register(self.path, dict(self.headers), body)
        if not fake.routed(self.path.split("?")[0].rstrip("/")):
            return self._send(404, {"error": {"type": "not_found_error", "message": f"no route {self.path}"}})
        lower = {k.lower(): v for k, v in self.headers.items()}
        refused = (fake.check_headers(lower) or fake.check_body(body, lower)
                   or fake.check_completion(self.path.split("?")[0].rstrip("/"), body))
        if refused:
            with fake._lock:
                fake.refused.append((n, refused[0], refused[1]))
            return self._send(*refused)
        if fault == "drop":
            # reset the connection: SO_LINGER with a zero timeout sends RST on close
            self.connection.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
            self.close_connection = True
            self.connection.close()
            return
        if fault in ("429", "500", "529"):
            headers = {"retry-after": f"{fake.retry_after:g}"} if fault == "429" else {}
            kind = {"429": "rate_limit_error", "500": "api_error", "529": "overloaded_error"}[fault]
            return self._send(int(fault), {"type": "error", "error": {"type": kind, "message": kind}}, headers)
        if fault == "401":
            key = self.headers.get("x-api-key") or self.headers.get("authorization", "")
            return self._send(401, {"type": "error", "error": {
                "type": "authentication_error", "message": f"Incorrect API key provided: {key}"}})
        if fault == "html":
            return self._send_raw(200, b"<html><body><h1>502 Bad Gateway</h1></body></html>", "text/html")
        if fault == "empty":
            return self._send_raw(200, b"", "application/json")
        if fault == "nonjson":
            return self._send_raw(200, b"upstream said: OK", "text/plain")
        if fault == "envelope":
            return self._send(200, {"error": {"type": "server_error", "message": "upstream overloaded"}})
        if fault == "context":
            return self._send(400, {"type": "error", "error": {"type": "invalid_request_error", "message":
                                    "This model's maximum context length is 8192 tokens; your prompt has 9001"}})
        if fault == "hang":
            time.sleep(fake.hang_seconds)
        if fault == "slow":
            time.sleep(fake.slow_seconds)
        elif fake.latency:
            time.sleep(fake.latency)
        prompt = prompt_of(body)
        patient = fake.answer(prompt) if fault not in ("no_tool", "bad_patient", "bad_json", "wrong_tool") else None
        if fault == "bad_patient":
            patient = 3
        completion = fake.is_completion(self.path.split("?")[0].rstrip("/"))
        payload = (fake.completion_reply if completion else fake.reply)(n, body, prompt, patient, fault)
        try:
            if fault == "trickle":
                self._trickle(payload, fake.trickle_seconds)
            else:
                self._send(200, payload)
        except OSError:  # the client gave up (timeout) before the reply
            return
        with fake._lock:
            fake.ok.append((n, payload.get("_sha", ""), fault))

    def _send_raw(self, status: int, data: bytes, ctype: str):
        self.send_response(status)
        self.send_header("content-type", ctype)
        self.send_header("content-length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def _trickle(self, payload: dict, gap: float):
        data = json.dumps({k: v for k, v in payload.items() if not k.startswith("_")}).encode()
        self.send_response(200)
        self.send_header("content-type", "application/json")
        self.send_header("content-length", str(len(data)))
        self.end_headers()
        self.wfile.flush()
        for k in range(len(data)):  # bounded: one byte per gap, the body's length in all
            self.wfile.write(data[k:k + 1])
            self.wfile.flush()
            time.sleep(gap)

    def _send(self, status: int, payload: dict, headers: dict | None = None):
        payload = {k: v for k, v in payload.items() if not k.startswith("_")}
        data = json.dumps(payload).encode()
        self.send_response(status)
        self.send_header("content-type", "application/json")
        self.send_header("content-length", str(len(data)))
        for k, v in (headers or {}).items():
            self.send_header(k, v)
        self.end_headers()
        self.wfile.write(data)


class _Server(ThreadingHTTPServer):
    daemon_threads = True
    allow_reuse_address = True
    request_queue_size = 128
    fake: "FakeServer"


class FakeServer:
    """Base class: a threaded HTTP server on 127.0.0.1 with recorded requests and fault injection."""

    endpoint = ""

    def __init__(self, answer: Callable[[str], int | None] | None = None, faults=None, *,
                 served_model: str | None = None, retry_after: float = 0.2, slow_seconds: float = 2.0,
                 latency: float = 0.0, port: int = 0, keep_bodies: bool = True, trickle_seconds: float = 0.05,
                 hang_seconds: float = 30.0, models: list[str] | None = None, context: int | None = None,
                 models_status: int | None = None, out_tokens: int = 20, in_tokens_per_char: float = 1 / 3,
                 retired: dict[str, str] | None = None, deprecated: dict[str, str] | None = None,
                 no_models_route: bool = False):
        self.answer = answer or simulated_answer()
        if isinstance(faults, (list, tuple)):
            plan = dict(enumerate(faults))
            faults = lambda n, body: plan.get(n)  # noqa: E731
        elif isinstance(faults, dict):
            plan = dict(faults)
            faults = lambda n, body: plan.get(n)  # noqa: E731
        self.faults = faults or (lambda n, body: None)
        self.served_model = served_model
        self.retry_after = retry_after
        self.slow_seconds = slow_seconds
        self.latency = latency
        self.keep_bodies = keep_bodies
        self.trickle_seconds, self.hang_seconds = trickle_seconds, hang_seconds
        self.models, self.context, self.models_status = models, context, models_status
        self.out_tokens, self.in_tokens_per_char = out_tokens, in_tokens_per_char
        self.retired, self.deprecated = dict(retired or {}), dict(deprecated or {})
        self.no_models_route = no_models_route
        self.refused: list[tuple[int, int, dict]] = []  # (n, status, body) of requests refused by the API rules
        self.gets: list[dict] = []
        self.requests: list[dict] = []  # {"n", "t", "path", "headers", "body", "fault"}
        self.ok: list[tuple[int, str, str | None]] = []  # (n, prompt sha, fault) of 200 replies sent
        self.count = 0
        self._lock = threading.Lock()
        self._httpd = _Server(("127.0.0.1", port), _Handler)
        self._httpd.fake = self
        self._thread: threading.Thread | None = None

    # -- lifecycle -------------------------------------------------------------------------
    @property
    def port(self) -> int:
        return self._httpd.server_address[1]

    @property
    def url(self) -> str:
        raise NotImplementedError

    def start(self) -> "FakeServer":
        self._thread = threading.Thread(target=self._httpd.serve_forever, kwargs={"poll_interval": 0.05},
                                        daemon=True)
        self._thread.start()
        return self

    def stop(self) -> None:
        self._httpd.shutdown()
        self._httpd.server_close()

    def __enter__(self) -> "FakeServer":
        return self.start()

    def __exit__(self, *exc) -> None:
        self.stop()

    # -- bookkeeping -----------------------------------------------------------------------
    def _register(self, path: str, headers: dict, body: dict) -> tuple[int, str | None]:
        with self._lock:
            n = self.count
            self.count += 1
        fault = self.faults(n, body)
        if self.keep_bodies:
            with self._lock:
                self.requests.append({"n": n, "t": time.monotonic(), "path": path,
                                      "headers": {k.lower(): v for k, v in headers.items()},
                                      "body": body, "fault": fault})
        return n, fault

    def ok_by_sha(self) -> dict[str, int]:
        """Number of 200 replies carrying a model answer, per prompt SHA-256 (faulty replies included
        when they were answers, e.g. ``no_tool``; ``slow`` replies the client abandoned excluded)."""
        out: dict[str, int] = {}
        with self._lock:
            for _, sha, fault in self.ok:
                if fault != "slow":
                    out[sha] = out.get(sha, 0) + 1
        return out

    def model_of(self, body: dict) -> str:
        return self.served_model or str(body.get("model", ""))

    def usage(self, prompt: str) -> tuple[int, int]:
        return max(1, int(len(prompt) * self.in_tokens_per_char)), self.out_tokens

    @staticmethod
    def content_answer(body: dict, patient) -> str | None:
        """The content of a reply to a request without tools (``--answer-format`` json or text)."""
        if patient is None:
            return "I cannot decide."
        prompt = prompt_of(body)
        return json.dumps({"patient": patient}) if '"patient"' in prompt[-80:] else str(patient)

    def reply(self, n: int, body: dict, prompt: str, patient, fault) -> dict:
        raise NotImplementedError

    def routed(self, path: str) -> bool:
        """Whether ``POST path`` is a route of this API."""
        return path.endswith(self.endpoint)

    def is_completion(self, path: str) -> bool:
        """Whether ``POST path`` is the text-completions route (``/v1/completions``)."""
        return False

    def check_completion(self, path: str, body: dict) -> tuple[int, dict] | None:
        """``(status, body)`` of a completion request the API refuses (a chat model), else None."""
        return None

    def completion_reply(self, n: int, body: dict, prompt: str, patient, fault) -> dict:
        raise NotImplementedError

    # -- the API's rules (issue 20) --------------------------------------------------------
    def check_headers(self, headers: dict) -> tuple[int, dict] | None:
        """``(status, body)`` of a request the API refuses for its headers, else None."""
        return None

    def check_body(self, body: dict, headers: dict) -> tuple[int, dict] | None:
        """``(status, body)`` of a request the API refuses for its body (retired model, sampling), else None."""
        return None

    def served(self, mid: str) -> bool:
        return self.models is None or mid in self.models or mid in self.retired

    def model_list(self) -> dict:
        raise NotImplementedError

    def model_entry(self, mid: str) -> tuple[int, dict]:
        raise NotImplementedError


def _sha(prompt: str) -> str:
    import hashlib

    return hashlib.sha256(prompt.encode("utf-8")).hexdigest()


class FakeAnthropic(FakeServer):
    """Fake Anthropic Messages API (``POST /v1/messages``), by default at API version ``2026-10-21``."""

    endpoint = "/v1/messages"

    def __init__(self, *args, api_version: str = NO_SAMPLING_FROM,
                 rejects_forced_tool: tuple[str, ...] = REJECTS_FORCED_TOOL, **kwargs):
        super().__init__(*args, **kwargs)
        self.api_version = api_version
        self.rejects_forced_tool = tuple(rejects_forced_tool)  # model prefixes that refuse a forced tool choice
        self.versions: list[str] = []  # the anthropic-version of every request and GET

    @staticmethod
    def error(status: int, kind: str, message: str) -> tuple[int, dict]:
        return status, {"type": "error", "error": {"type": kind, "message": message},
                        "request_id": f"req_fake{status}{len(message):04d}"}

    def check_headers(self, headers):
        v = headers.get("anthropic-version")
        with self._lock:
            self.versions.append(v or "")
        if not v:
            return self.error(400, "invalid_request_error", "anthropic-version: header is required")
        if len(v) != 10 or v[4] != "-" or v[7] != "-" or v > self.api_version:
            return self.error(400, "invalid_request_error", f"anthropic-version: unknown version {v!r}")
        return None

    def check_body(self, body, headers):
        mid = str(body.get("model", ""))
        if mid in self.retired:
            return self.error(404, "not_found_error", f"model: {mid}")
        version = headers.get("anthropic-version") or self.api_version
        choice = body.get("tool_choice") if isinstance(body.get("tool_choice"), dict) else {}
        if choice.get("type") in ("tool", "any") and mid.startswith(self.rejects_forced_tool):
            return self.error(400, "invalid_request_error",
                              f"tool_choice: forced tool use (type {choice['type']!r}) is not supported for {mid}; "
                              f"use 'auto' or 'none'")
        sent = [p for p in SAMPLING if p in body]
        if sent and version >= NO_SAMPLING_FROM:
            return self.error(400, "invalid_request_error",
                              f"{sent[0]}: this parameter is not supported by API version {version}; "
                              f"sampling is set by the model")
        return None

    def _info(self, mid: str) -> dict:
        lifecycle = "retired" if mid in self.retired else "deprecated" if mid in self.deprecated else "active"
        when = self.retired.get(mid) or self.deprecated.get(mid)
        return {"type": "model", "id": mid, "display_name": mid, "created_at": "2026-01-01T00:00:00Z",
                "lifecycle": lifecycle, "deprecated_at": "2026-06-01T00:00:00Z" if when else None,
                "retires_at": f"{when}T00:00:00Z" if when else None, "max_input_tokens": self.context,
                "max_tokens": 64_000, "capabilities": None, "line": None}

    def model_list(self):
        data = [self._info(m) for m in list(self.models or []) + list(self.retired) + list(self.deprecated)]
        return {"data": data, "has_more": False, "first_id": data[0]["id"] if data else None,
                "last_id": data[-1]["id"] if data else None}

    def model_entry(self, mid):
        if not self.served(mid) and mid not in self.deprecated:
            return self.error(404, "not_found_error", f"model: {mid}")
        return 200, self._info(mid)

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def reply(self, n, body, prompt, patient, fault):
        tool = (body.get("tools") or [{}])[0].get("name", "choose")
        if not body.get("tools") and fault is None:
            content = [{"type": "text", "text": self.content_answer(body, patient)}]
        elif fault == "no_tool" or (patient is None and fault is None):
            content = [{"type": "text", "text": "I cannot decide."}]
        elif fault == "wrong_tool":
            content = [{"type": "tool_use", "id": f"toolu_{n:08d}", "name": "other", "input": {"patient": 1}}]
        elif fault == "bad_json":
            content = [{"type": "tool_use", "id": f"toolu_{n:08d}", "name": tool, "input": {"patient": "first"}}]
        else:
            content = [{"type": "tool_use", "id": f"toolu_{n:08d}", "name": tool, "input": {"patient": patient}}]
        tin, tout = self.usage(prompt)
        return {"id": f"msg_{n:08d}", "type": "message", "role": "assistant", "model": self.model_of(body),
                "content": content, "stop_reason": "tool_use" if content[0]["type"] == "tool_use" else "end_turn",
                "stop_sequence": None, "usage": {"input_tokens": tin, "output_tokens": tout},
                "_sha": _sha(prompt)}


class FakeOpenAI(FakeServer):
    """Fake OpenAI-compatible chat-completions API (``POST /v1/chat/completions``) and text-completions API
    (``POST /v1/completions``, ``--answer-format completion``).

    A completion request is answered in llama-cpp-python's shape: ``choices[0].text`` and ``choices[0].logprobs`` =
    ``{tokens, text_offset, token_logprobs, top_logprobs: [{token: logprob}]}`` with as many top entries as the
    request's integer ``logprobs``. P(patient 1) is :attr:`p_first` (``p_first(prompt)``; by default 0.9 when the
    answer function names patient 1, else 0.1), split over the spellings ``"1"`` (80%) and ``" 1"`` (20%), with
    :attr:`outside` of the mass on other tokens; the sampled token is the argmax of 1 and 2 (temperature 0). A model
    whose id starts with one of :attr:`chat_only` (today's OpenAI chat models) gets the API's 404 "This is a chat
    model and not supported in the v1/completions endpoint".
    """

    endpoint = "/chat/completions"
    completions = "/v1/completions"

    def __init__(self, *args, rejects: tuple[str, ...] = ("gpt-5.6-terra",), chat_only: tuple[str, ...] = ("gpt-",),
                 p_first: Callable[[str], float] | None = None, outside: float = 0.1, **kwargs):
        super().__init__(*args, **kwargs)
        self.rejects = tuple(rejects)  # model prefixes that refuse a temperature (reasoning models)
        self.chat_only = tuple(chat_only)  # model prefixes refused on /v1/completions (chat models)
        self.p_first, self.outside = p_first, outside

    def routed(self, path):
        return path.endswith(self.endpoint) or self.is_completion(path)

    def is_completion(self, path):
        return path.endswith(self.completions)

    def check_completion(self, path, body):
        mid = str(body.get("model", ""))
        if self.is_completion(path) and mid.startswith(self.chat_only):
            return self.error(404, "This is a chat model and not supported in the v1/completions endpoint. Did you "
                                   "mean to use v1/chat/completions?", None, "model")
        return None

    def completion_reply(self, n, body, prompt, patient, fault):
        """A text completion of one token with its top log-probabilities (llama-cpp-python's shape)."""
        import math

        p1 = self.p_first(prompt) if self.p_first else {1: 0.9, 2: 0.1}.get(patient, 0.5)
        inside = 1 - self.outside
        top = {"1": inside * p1 * 0.8, " 1": inside * p1 * 0.2, "2": inside * (1 - p1), " The": self.outside}
        ranked = sorted(((math.log(v), k) for k, v in top.items() if v > 0), reverse=True)
        token = "1" if p1 >= 0.5 else "2"
        k = int(body.get("logprobs") or 0)
        logprobs = {"tokens": [token], "text_offset": [len(prompt)], "token_logprobs": [math.log(top[token])],
                    "top_logprobs": [{t: lp for lp, t in ranked[:k]}]} if k else None
        tin, _ = self.usage(prompt)
        return {"id": f"cmpl-{n:08d}", "object": "text_completion", "created": 1_790_000_000,
                "model": self.model_of(body),
                "choices": [{"text": token, "index": 0, "logprobs": logprobs, "finish_reason": "length"}],
                "usage": {"prompt_tokens": tin, "completion_tokens": 1, "total_tokens": tin + 1},
                "_sha": _sha(prompt)}

    @staticmethod
    def error(status: int, message: str, code: str, param: str | None = None) -> tuple[int, dict]:
        return status, {"error": {"message": message, "type": "invalid_request_error", "param": param, "code": code}}

    def check_body(self, body, headers):
        mid = str(body.get("model", ""))
        if mid in self.retired:
            return self.error(404, f"The model `{mid}` does not exist or you do not have access to it.",
                              "model_not_found")
        if "temperature" in body and mid.startswith(self.rejects):
            return self.error(400, f"Unsupported value: 'temperature' does not support {body['temperature']} with "
                                   f"this model. Only the default (1) value is supported.", "unsupported_value",
                              "temperature")
        return None

    def _entry(self, mid: str) -> dict:
        return {"id": mid, "object": "model", "created": 1_790_000_000, "owned_by": "fake",
                **({"max_model_len": self.context} if self.context else {})}

    def model_list(self):
        ids = self.models if self.models is not None else []  # an empty list: nothing to check
        return {"object": "list", "data": [self._entry(m) for m in ids]}

    def model_entry(self, mid):
        if not self.served(mid) or mid in self.retired:
            return self.error(404, f"The model `{mid}` does not exist or you do not have access to it.",
                              "model_not_found")
        return 200, self._entry(mid)

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}/v1"

    def reply(self, n, body, prompt, patient, fault):
        tools = body.get("tools") or [{}]
        name = tools[0].get("function", {}).get("name", "choose")
        message: dict = {"role": "assistant", "content": None}
        if not body.get("tools") and fault is None:
            message["content"] = self.content_answer(body, patient)
        elif fault == "no_tool" or (patient is None and fault is None):
            message["content"] = "I cannot decide."
        else:
            if fault == "wrong_tool":
                name, args = "other", json.dumps({"patient": 1})
            elif fault == "bad_json":
                args = '{"patient": 1'
            else:
                args = json.dumps({"patient": patient})
            message["tool_calls"] = [{"id": f"call_{n:08d}", "type": "function",
                                      "function": {"name": name, "arguments": args}}]
        tin, tout = self.usage(prompt)
        return {"id": f"chatcmpl-{n:08d}", "object": "chat.completion", "created": 1_790_000_000,
                "model": self.model_of(body),
                "choices": [{"index": 0, "message": message,
                             "finish_reason": "tool_calls" if "tool_calls" in message else "stop"}],
                "usage": {"prompt_tokens": tin, "completion_tokens": tout, "total_tokens": tin + tout},
                "_sha": _sha(prompt)}


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description="Run a fake model server on 127.0.0.1 until interrupted.")
    ap.add_argument("kind", choices=["anthropic", "openai"])
    ap.add_argument("--port", type=int, default=0)
    ap.add_argument("--answer", choices=["simulated", "one"], default="one")
    args = ap.parse_args(argv)
    answer = simulated_answer() if args.answer == "simulated" else (lambda prompt: 1)
    cls = FakeAnthropic if args.kind == "anthropic" else FakeOpenAI
    srv = cls(answer, keep_bodies=False, port=args.port).start()
    print(srv.url, flush=True)
    try:
        while True:
            time.sleep(3600)
    except KeyboardInterrupt:
        srv.stop()
    return 0


if __name__ == "__main__":
    sys.exit(main())


def stored_answers(out) -> int:
    """How many answers the ledger under ``out`` holds (0 where none was written)."""
    import sqlite3
    from pathlib import Path

    from analysis.collection import LEDGER_NAME

    path = Path(out) / LEDGER_NAME
    if not path.exists():
        return 0
    con = sqlite3.connect(path)
    try:
        return int(con.execute("SELECT COUNT(*) FROM answers").fetchone()[0])
    finally:
        con.close()
