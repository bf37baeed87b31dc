"""Fake batch APIs on 127.0.0.1 for the batch tests: Anthropic Message Batches and OpenAI Files + Batch.

One standard-library HTTP server (:class:`FakeBatchServer`) answers the routes the official SDKs
call; point ``anthropic.Anthropic(base_url=srv.url)`` or ``openai.OpenAI(base_url=srv.url + "/v1")``
at it.

Anthropic: ``POST /v1/messages/batches`` (create), ``GET /v1/messages/batches`` (list),
``GET /v1/messages/batches/{id}`` (retrieve), ``GET /v1/messages/batches/{id}/results`` (JSONL),
``POST /v1/messages/batches/{id}/cancel``.

OpenAI: ``POST /v1/files`` (multipart upload, ``purpose=batch``), ``GET /v1/files/{id}/content``,
``POST /v1/batches``, ``GET /v1/batches`` (list), ``GET /v1/batches/{id}``,
``POST /v1/batches/{id}/cancel``.

A batch ends after :attr:`polls_to_end` retrieve calls. Each request's fate is
``outcome(custom_id, n)`` (``n`` = how many times that ``custom_id`` has been submitted, from 1):
``succeeded`` (the answer comes from ``answer(prompt)``, by default the simulated subject),
``errored``, ``expired`` or ``canceled``. :attr:`submitted` counts submissions per ``custom_id``;
:attr:`live_resubmissions` lists every ``custom_id`` submitted while it was already in a live
batch (the tests require it to stay empty).

Today's APIs (issue 20): every Anthropic call must carry an ``anthropic-version`` header no later
than :attr:`FakeBatchServer.api_version` (else the API's 400 ``invalid_request_error``); under
``2026-10-21`` a request whose params hold ``temperature``, ``top_p`` or ``top_k`` ends ``errored``
with the API's ``invalid_request_error`` (as the Message Batches API validates params per request).
:attr:`sampling_errors` lists their custom ids.

Also :func:`write_vllm_output`: a ``vllm run-batch`` style output file for a request file.
"""
from __future__ import annotations

import email.parser
import itertools
import json
import threading
import time
from collections import Counter
from datetime import datetime, timezone
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Callable
from urllib.parse import urlsplit

from fake_servers import NO_SAMPLING_FROM, SAMPLING, prompt_of, simulated_answer


def _iso(t: float) -> str:
    return datetime.fromtimestamp(t, timezone.utc).isoformat().replace("+00:00", "Z")


def anthropic_message(model: str, patient: int | None, n: int) -> dict:
    content = ([{"type": "tool_use", "id": f"toolu_{n}", "name": "choose", "input": {"patient": patient}}]
               if patient is not None else [{"type": "text", "text": "I cannot decide."}])
    return {"id": f"msg_{n}", "type": "message", "role": "assistant", "model": model, "content": content,
            "stop_reason": "tool_use" if patient is not None else "end_turn", "stop_sequence": None,
            "usage": {"input_tokens": 900, "output_tokens": 30}}


def chat_completion(model: str, patient: int | None, n: int) -> dict:
    msg = ({"role": "assistant", "content": None, "tool_calls": [
        {"id": f"call_{n}", "type": "function", "function": {"name": "choose", "arguments": json.dumps({"patient": patient})}}]}
           if patient is not None else {"role": "assistant", "content": "I cannot decide."})
    return {"id": f"chatcmpl-{n}", "object": "chat.completion", "created": 0, "model": model,
            "choices": [{"index": 0, "message": msg, "finish_reason": "tool_calls" if patient else "stop"}],
            "usage": {"prompt_tokens": 800, "completion_tokens": 20, "total_tokens": 820}}


def write_vllm_output(requests_path, out_path, answer: Callable[[str], int | None] | None = None,
                      served_model: str | None = None) -> int:
    """Answer every line of an OpenAI-batch request file as ``vllm run-batch -i REQ -o OUT`` writes it."""
    answer = answer or simulated_answer()
    lines = []
    with open(requests_path, encoding="utf-8") as fh:
        for n, raw in enumerate(fh):
            req = json.loads(raw)
            body = req["body"]
            resp = chat_completion(served_model or body["model"], answer(prompt_of(body)), n)
            lines.append({"id": f"vllm-{n}", "custom_id": req["custom_id"],
                          "response": {"status_code": 200, "request_id": f"vllm-batch-{n}", "body": resp},
                          "error": None})
    with open(out_path, "w", encoding="utf-8") as fh:
        fh.writelines(json.dumps(x) + "\n" for x in lines)
    return len(lines)


class _Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    disable_nagle_algorithm = True
    server: "_Server"

    def log_message(self, *args):
        pass

    def _body(self) -> bytes:
        n = int(self.headers.get("content-length") or 0)
        return self.rfile.read(n) if n else b""

    def _send(self, status: int, payload, content_type: str = "application/json"):
        data = payload if isinstance(payload, bytes) else json.dumps(payload).encode()
        self.send_response(status)
        self.send_header("content-type", content_type)
        self.send_header("content-length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def do_GET(self):  # noqa: N802
        self._route("GET", b"")

    def do_POST(self):  # noqa: N802
        self._route("POST", self._body())

    def _route(self, method: str, body: bytes):
        fake = self.server.fake
        path = urlsplit(self.path).path.rstrip("/")
        try:
            status, payload, ctype = fake.handle(method, path, body, dict(self.headers))
        except KeyError:
            status, payload, ctype = 404, {"type": "error", "error": {"type": "not_found_error",
                                                                     "message": f"no {path}"}}, "application/json"
        self._send(status, payload, ctype)


class _Server(ThreadingHTTPServer):
    daemon_threads = True
    allow_reuse_address = True


class FakeBatchServer:
    """Both providers' batch APIs, in memory (see the module docstring)."""

    def __init__(self, answer: Callable[[str], int | None] | None = None,
                 outcome: Callable[[str, int], str] | None = None, polls_to_end: int = 2,
                 api_version: str = NO_SAMPLING_FROM):
        self.answer = answer or simulated_answer()
        self.outcome = outcome or (lambda cid, n: "succeeded")
        self.polls_to_end = polls_to_end
        self.submitted: Counter = Counter()
        self.api_version = api_version
        self.versions: list[str] = []
        self.sampling_errors: list[str] = []  # custom ids errored for a sampling parameter
        self.live_resubmissions: list[str] = []
        self.calls: Counter = Counter()
        self.batches: dict[str, dict] = {}
        self.files: dict[str, bytes] = {}
        self._ids = itertools.count(1)
        self._lock = threading.Lock()
        self._httpd = _Server(("127.0.0.1", 0), _Handler)
        self._httpd.fake = self
        self._thread: threading.Thread | None = None

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self._httpd.server_address[1]}"

    def start(self) -> "FakeBatchServer":
        self._thread = threading.Thread(target=self._httpd.serve_forever, daemon=True)
        self._thread.start()
        return self

    def stop(self) -> None:
        self._httpd.shutdown()
        self._httpd.server_close()

    def __enter__(self):
        return self.start()

    def __exit__(self, *exc):
        self.stop()

    # -- bookkeeping ----------------------------------------------------------------------------
    def _new_batch(self, api: str, requests: list[tuple[str, dict]], meta: dict) -> dict:
        live = {cid for b in self.batches.values() if not b["ended"] for cid, _ in b["requests"]}
        for cid, _ in requests:
            if cid in live:
                self.live_resubmissions.append(cid)
            self.submitted[cid] += 1
        bid = (f"msgbatch_{next(self._ids):04d}" if api == "anthropic" else f"batch_{next(self._ids):04d}")
        b = {"id": bid, "api": api, "requests": requests, "polls": 0, "ended": False, "canceled": False,
             "created": time.time(), "fates": {cid: self.outcome(cid, self.submitted[cid]) for cid, _ in requests},
             **meta}
        self.batches[bid] = b
        return b

    def _advance(self, b: dict) -> None:
        b["polls"] += 1
        if not b["ended"] and (b["polls"] >= self.polls_to_end or b["canceled"]):
            b["ended"] = True
            if b["canceled"]:
                b["fates"] = {c: ("canceled" if f == "succeeded" and b["polls"] < self.polls_to_end else f)
                              for c, f in b["fates"].items()}

    def _counts(self, b: dict) -> dict:
        if b["api"] == "anthropic":
            c = {"processing": 0, "succeeded": 0, "errored": 0, "canceled": 0, "expired": 0}
            for f in b["fates"].values():
                c[("errored" if f == "invalid" else f) if b["ended"] else "processing"] += 1
            return c
        done = sum(f == "succeeded" for f in b["fates"].values()) if b["ended"] else 0
        failed = sum(f != "succeeded" for f in b["fates"].values()) if b["ended"] else 0
        return {"total": len(b["requests"]), "completed": done, "failed": failed}

    def _anthropic_obj(self, b: dict) -> dict:
        status = "ended" if b["ended"] else ("canceling" if b["canceled"] else "in_progress")
        return {"id": b["id"], "type": "message_batch", "processing_status": status,
                "request_counts": self._counts(b), "created_at": _iso(b["created"]),
                "expires_at": _iso(b["created"] + 86400), "ended_at": _iso(time.time()) if b["ended"] else None,
                "cancel_initiated_at": None, "archived_at": None,
                "results_url": f"{self.url}/v1/messages/batches/{b['id']}/results" if b["ended"] else None}

    def _openai_status(self, b: dict) -> str:
        if not b["ended"]:
            return "cancelling" if b["canceled"] else "in_progress"
        fates = set(b["fates"].values())
        return "cancelled" if b["canceled"] or "canceled" in fates else "expired" if "expired" in fates else "completed"

    def _openai_obj(self, b: dict) -> dict:
        if b["ended"] and "output_file_id" not in b:
            self._openai_files(b)
        return {"id": b["id"], "object": "batch", "endpoint": b["endpoint"], "input_file_id": b["input_file_id"],
                "completion_window": "24h", "status": self._openai_status(b), "created_at": int(b["created"]),
                "output_file_id": b.get("output_file_id"), "error_file_id": b.get("error_file_id"),
                "request_counts": self._counts(b), "metadata": b.get("metadata") or None}

    def _openai_files(self, b: dict) -> None:
        out, err = [], []
        for n, (cid, body) in enumerate(b["requests"]):
            fate = b["fates"][cid]
            if fate == "succeeded":
                resp = chat_completion(body["model"], self.answer(prompt_of(body)), n)
                out.append({"id": f"batch_req_{n}", "custom_id": cid,
                            "response": {"status_code": 200, "request_id": f"req_{n}", "body": resp}, "error": None})
            elif fate == "errored":
                err.append({"id": f"batch_req_{n}", "custom_id": cid, "response": {
                    "status_code": 500, "request_id": f"req_{n}",
                    "body": {"error": {"message": "internal error", "type": "server_error"}}}, "error": None})
            elif fate == "expired":
                err.append({"id": f"batch_req_{n}", "custom_id": cid, "response": None,
                            "error": {"code": "batch_expired", "message": "not executed before the window expired"}})
            # canceled: no line in either file
        for name, lines in (("output_file_id", out), ("error_file_id", err)):
            if lines:
                fid = f"file-{next(self._ids):04d}"
                self.files[fid] = "".join(json.dumps(x) + "\n" for x in lines).encode()
                b[name] = fid
            else:
                b[name] = None

    # -- routes ---------------------------------------------------------------------------------
    def handle(self, method: str, path: str, body: bytes, headers: dict):
        with self._lock:
            return self._handle(method, path, body, headers)

    def _handle(self, method, path, body, headers):
        parts = path.strip("/").split("/")
        self.calls[(method, "/".join(p if not p.startswith(("msgbatch_", "batch_", "file-")) else "{id}"
                                     for p in parts))] += 1
        j = "application/json"
        if parts[:3] == ["v1", "messages", "batches"]:
            version = next((v for k, v in headers.items() if k.lower() == "anthropic-version"), "")
            self.versions.append(version)
            if not version or version > self.api_version:
                return 400, {"type": "error", "error": {"type": "invalid_request_error", "message":
                             f"anthropic-version: {'header is required' if not version else 'unknown version'}"}}, j
            if len(parts) == 3 and method == "POST":
                reqs = [(r["custom_id"], r["params"]) for r in json.loads(body)["requests"]]
                b = self._new_batch("anthropic", reqs, {"version": version})
                for cid, params in reqs:  # params are validated per request: an invalid one ends errored
                    if version >= NO_SAMPLING_FROM and any(p in params for p in SAMPLING):
                        b["fates"][cid] = "invalid"
                        self.sampling_errors.append(cid)
                return 200, self._anthropic_obj(b), j
            if len(parts) == 3:
                data = [self._anthropic_obj(b) for b in sorted(self.batches.values(), key=lambda b: -b["created"])
                        if b["api"] == "anthropic"]
                return 200, {"data": data, "has_more": False, "first_id": data[0]["id"] if data else None,
                             "last_id": data[-1]["id"] if data else None}, j
            b = self.batches[parts[3]]
            if len(parts) == 4:
                self._advance(b)
                return 200, self._anthropic_obj(b), j
            if parts[4] == "cancel":
                b["canceled"] = True
                return 200, self._anthropic_obj(b), j
            if parts[4] == "results" and b["ended"]:
                lines = []
                for n, (cid, params) in enumerate(b["requests"]):
                    fate = b["fates"][cid]
                    if fate == "succeeded":
                        res = {"type": "succeeded", "message": anthropic_message(params["model"],
                                                                                 self.answer(prompt_of(params)), n)}
                    elif fate == "errored":
                        res = {"type": "errored", "error": {"type": "error", "error": {
                            "type": "api_error", "message": "internal error"}}}
                    elif fate == "invalid":
                        param = next(p for p in SAMPLING if p in params)
                        res = {"type": "errored", "error": {"type": "error", "error": {
                            "type": "invalid_request_error",
                            "message": f"{param}: this parameter is not supported by API version {b['version']}"}}}
                    else:
                        res = {"type": fate}
                    lines.append({"custom_id": cid, "result": res})
                lines.reverse()  # results come in any order
                return 200, "".join(json.dumps(x) + "\n" for x in lines).encode(), "application/binary"
            raise KeyError(path)
        if parts[:2] == ["v1", "files"]:
            if len(parts) == 2 and method == "POST":
                data = _multipart_file(headers, body)
                fid = f"file-{next(self._ids):04d}"
                self.files[fid] = data
                return 200, {"id": fid, "object": "file", "bytes": len(data), "created_at": int(time.time()),
                             "filename": "batch.jsonl", "purpose": "batch", "status": "processed"}, j
            if len(parts) == 4 and parts[3] == "content":
                return 200, self.files[parts[2]], "application/octet-stream"
            raise KeyError(path)
        if parts[:2] == ["v1", "batches"]:
            if len(parts) == 2 and method == "POST":
                req = json.loads(body)
                reqs = []
                for raw in self.files[req["input_file_id"]].decode().splitlines():
                    line = json.loads(raw)
                    assert line["method"] == "POST" and line["url"] == req["endpoint"], line
                    reqs.append((line["custom_id"], line["body"]))
                assert len({b["model"] for _, b in reqs}) == 1, "one model per OpenAI batch file"
                b = self._new_batch("openai", reqs, {"endpoint": req["endpoint"], "input_file_id": req["input_file_id"],
                                                     "metadata": req.get("metadata")})
                return 200, self._openai_obj(b), j
            if len(parts) == 2:
                data = [self._openai_obj(b) for b in sorted(self.batches.values(), key=lambda b: -b["created"])
                        if b["api"] == "openai"]
                return 200, {"object": "list", "data": data, "has_more": False,
                             "first_id": data[0]["id"] if data else None, "last_id": data[-1]["id"] if data else None}, j
            b = self.batches[parts[2]]
            if len(parts) == 3:
                self._advance(b)
                return 200, self._openai_obj(b), j
            if parts[3] == "cancel":
                b["canceled"] = True
                return 200, self._openai_obj(b), j
        raise KeyError(path)


def _multipart_file(headers: dict, body: bytes) -> bytes:
    """The ``file`` part of a multipart/form-data upload."""
    ctype = next(v for k, v in headers.items() if k.lower() == "content-type")
    msg = email.parser.BytesParser().parsebytes(b"Content-Type: " + ctype.encode() + b"\r\n\r\n" + body)
    for part in msg.get_payload():
        if part.get_param("name", header="content-disposition") == "file":
            return part.get_payload(decode=True)
    raise KeyError("file")


