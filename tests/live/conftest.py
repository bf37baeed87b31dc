"""Live tests: a real local model (SmolLM2-135M-Instruct, Q4_1 GGUF) behind llama-cpp-python's
OpenAI-compatible server on 127.0.0.1 (issue 13). Run them with ``make test-live``.

The marker ``live`` is registered here. Outside ``-m live`` (``make test``) every live test is
skipped at once, so the unit tests stay as fast as before. A live test skips with a one-line
reason when the server cannot be built (``scripts/live_build.sh`` failed or was not run); it
never fails for that reason alone. Servers are started per ``n_ctx`` once per session and
stopped at its end; every wait is bounded.
"""
from __future__ import annotations

import os
import socket
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
LIVE = Path(os.environ.get("LIVE_DIR", ROOT / ".live"))
VENV_PY = LIVE / "venv" / "bin" / "python"
GGUF = LIVE / "model" / "SmolLM2-135M-Instruct.Q4_1.gguf"
MODEL_ID = "smollm2-135m"
START_TIMEOUT_S = 240


def pytest_configure(config):
    config.addinivalue_line("markers", "live: needs the local llama-cpp-python server (make test-live)")


def pytest_collection_modifyitems(config, items):
    if "live" in (config.getoption("-m") or ""):
        return
    skip = pytest.mark.skip(reason="live test: run with `make test-live`")
    for item in items:
        if "live" in item.keywords:
            item.add_marker(skip)


def _not_built() -> str | None:
    if os.environ.get("LIVE_SKIP_REASON"):
        return os.environ["LIVE_SKIP_REASON"]
    if not (LIVE / "venv" / ".installed").exists():
        return f"the local server is not built ({LIVE}/venv; run scripts/live_build.sh or make test-live)"
    if not GGUF.exists():
        return f"the model file is missing ({GGUF}; run scripts/live_build.sh)"
    return None


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class Server:
    """One llama-cpp-python server process (stopped by :meth:`stop`, always)."""

    def __init__(self, n_ctx: int, log: Path, logits_all: bool = False):
        self.port = _free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        self.log = log
        self._fh = open(log, "wb")
        self.proc = subprocess.Popen(
            [str(VENV_PY), str(ROOT / "scripts" / "live_server.py"), "--model", str(GGUF), "--model_alias", MODEL_ID,
             "--host", "127.0.0.1", "--port", str(self.port), "--chat_format", "chatml-function-calling",
             "--n_ctx", str(n_ctx), "--n_threads", os.environ.get("LIVE_THREADS", "1"),
             "--n_threads_batch", os.environ.get("LIVE_THREADS_BATCH", str(os.cpu_count() or 2)),
             "--logits_all", str(logits_all).lower()],  # scripts/live_server.sh's flags (issue 23); true for logprobs
            stdout=self._fh, stderr=subprocess.STDOUT)

    def wait(self) -> None:
        deadline = time.monotonic() + START_TIMEOUT_S
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                raise RuntimeError(f"the server exited ({self.proc.returncode}); see {self.log}")
            try:
                urllib.request.urlopen(self.url + "/v1/models", timeout=2).read()
                return
            except OSError:
                time.sleep(0.5)
        raise RuntimeError(f"the server did not answer /v1/models within {START_TIMEOUT_S} s; see {self.log}")

    def stop(self) -> None:
        if self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(timeout=10)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait(timeout=10)
        self._fh.close()


@pytest.fixture(scope="session")
def live_server_factory(tmp_path_factory):
    """``start(n_ctx, logits_all)`` -> base URL of a server with that context and ``--logits_all`` (one of each per
    session). llama-cpp-python returns log-probabilities only with ``--logits_all true``, as ``make live-logprobs``
    serves; the audit's other formats get ``false``, as ``make live`` serves."""
    reason = _not_built()
    if reason:
        pytest.skip(reason)
    servers: dict[tuple[int, bool], Server] = {}

    def start(n_ctx: int = 8192, logits_all: bool = False) -> str:
        key = (n_ctx, logits_all)
        if key not in servers:
            log = tmp_path_factory.mktemp("server") / f"server-{n_ctx}-logits-{str(logits_all).lower()}.log"
            srv = Server(n_ctx, log, logits_all)
            servers[key] = srv
            srv.wait()
        return servers[key].url

    try:
        yield start
    finally:
        for srv in servers.values():
            srv.stop()


@pytest.fixture(scope="session")
def live_url(live_server_factory) -> str:
    """Base URL (without /v1) of the full-context server."""
    return live_server_factory(8192)


@pytest.fixture(scope="session")
def live_url_logprobs(live_server_factory) -> str:
    """Base URL of the full-context server that keeps the logits (``--logits_all true``), for log-probabilities."""
    return live_server_factory(8192, logits_all=True)


@pytest.fixture(scope="session")
def run_audit_cli():
    """``run(url, out, *extra, timeout=...)``: ``python -m analysis audit`` against a local server, as a process.

    No key is needed by the server; a placeholder travels in ``LIVE_API_KEY`` (never a real key)."""
    env = {**os.environ, "LIVE_API_KEY": "local-server-needs-no-key", "PYTHONUNBUFFERED": "1"}

    def run(url: str, out: Path, *extra: str, timeout: float = 900) -> subprocess.CompletedProcess:
        cmd = [sys.executable, "-m", "analysis", "audit", "--provider", "openai", "--base-url", url + "/v1",
               "--model", MODEL_ID, "--out", str(out), "--concurrency", "1", "--price-in", "0", "--price-out", "0",
               "--api-key-env", "LIVE_API_KEY", "--no-progress", *extra]
        return subprocess.run(cmd, cwd=ROOT, env=env, capture_output=True, text=True, timeout=timeout)

    return run
