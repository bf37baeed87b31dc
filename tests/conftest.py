"""Shared test setup: the test folder is importable (``pythonpath`` in pyproject.toml, so helper
modules such as ``fake_servers`` import without ``sys.path`` edits), figures draw headless, and a
local file server for download tests (127.0.0.1 only; tests never reach the internet)."""
from __future__ import annotations

import functools
import http.server
import os
import threading

import pytest

os.environ.setdefault("MPLBACKEND", "Agg")


@pytest.fixture
def file_server(tmp_path):
    """Serve ``tmp_path / 'www'`` on 127.0.0.1 (a thread; stopped after the test)."""
    root = tmp_path / "www"
    root.mkdir()

    class Quiet(http.server.SimpleHTTPRequestHandler):
        def log_message(self, *args):
            pass

    srv = http.server.ThreadingHTTPServer(("127.0.0.1", 0), functools.partial(Quiet, directory=str(root)))
    t = threading.Thread(target=srv.serve_forever, daemon=True)
    t.start()
    yield root, f"http://127.0.0.1:{srv.server_address[1]}"
    srv.shutdown()
    t.join(timeout=10)
