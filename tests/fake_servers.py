"""Fake model servers on 127.0.0.1 for the collection tests and the benchmark.

Two small HTTP servers built on the standard library (``http.server`` with one thread per
connection, HTTP/1.1 keep-alive):

* :class:`FakeAnthropic` answers ``POST .../v1/messages`` like the Anthropic Messages API;
* :class:`FakeOpenAI` answers ``POST .../chat/completions`` like an OpenAI-compatible endpoint.

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

FAULTS = ("429", "500", "529", "slow", "drop", "no_tool", "bad_patient", "bad_json", "wrong_tool", "401", "trickle",
          "hang", "html", "empty", "nonjson", "envelope", "context")


def prompt_of(body: dict) -> str:
    """The text of the (single) user message of a request body."""
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
        with fake._lock:
            fake.gets.append({"path": self.path, "headers": {k.lower(): v for k, v in self.headers.items()}})
        if fake.models_status:
            return self._send(fake.models_status, {"type": "error", "error": {
                "type": "authentication_error", "message": "invalid x-api-key"}})
        path = self.path.split("?")[0].rstrip("/")
        if path.endswith("/models"):
            ids = fake.models if fake.models is not None else []  # an empty list: nothing to check
            data = [{"id": m, "object": "model", **({"max_model_len": fake.context} if fake.context else {})}
                    for m in ids]
            return self._send(200, {"object": "list", "data": data})
        if "/models/" in path:
            mid = path.rsplit("/", 1)[1]
            if fake.models is not None and mid not in fake.models:
                return self._send(404, {"type": "error", "error": {"type": "not_found_error",
                                                                   "message": f"model: {mid}"}})
            return self._send(200, {"type": "model", "id": mid, "display_name": mid})
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
        if not self.path.rstrip("/").endswith(fake.endpoint):
            return self._send(404, {"error": {"type": "not_found_error", "message": f"no route {self.path}"}})
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
        payload = fake.reply(n, body, prompt, patient, fault)
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
                 models_status: int | None = None, out_tokens: int = 20, in_tokens_per_char: float = 1 / 3):
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


def _sha(prompt: str) -> str:
    import hashlib

    return hashlib.sha256(prompt.encode("utf-8")).hexdigest()


class FakeAnthropic(FakeServer):
    """Fake Anthropic Messages API (``POST /v1/messages``)."""

    endpoint = "/v1/messages"

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
    """Fake OpenAI-compatible chat-completions API (``POST /v1/chat/completions``)."""

    endpoint = "/chat/completions"

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
