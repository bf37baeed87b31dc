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

FAULTS = ("429", "500", "529", "slow", "drop", "no_tool", "bad_patient", "bad_json", "wrong_tool", "401")


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
            self._send(200, payload)
        except OSError:  # the client gave up (timeout) before the reply
            return
        with fake._lock:
            fake.ok.append((n, payload.get("_sha", ""), fault))

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
                 latency: float = 0.0, port: int = 0, keep_bodies: bool = True):
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

    @staticmethod
    def usage(prompt: str) -> tuple[int, int]:
        return max(1, len(prompt) // 3), 20

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
        if fault == "no_tool" or (patient is None and fault is None):
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
        if fault == "no_tool" or (patient is None and fault is None):
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
