"""A local endpoint gets a timeout that fits a first long prompt, and the first timeout says which flag to raise
(issue 23: a first 80-example call took 46-191 s on llama-cpp-python's server; the default was 60 s)."""
from __future__ import annotations

import threading

import pytest

from analysis import cli, config
from analysis import collection as C
from analysis.collection.retries import Health, RetryPolicy, ask_with_retries


@pytest.mark.parametrize("url, expected", [
    (None, config.REQUEST_TIMEOUT_S), ("https://api.openai.com/v1", config.REQUEST_TIMEOUT_S),
    ("http://127.0.0.1:8080/v1", config.LOCAL_REQUEST_TIMEOUT_S),
    ("http://localhost:11434/v1", config.LOCAL_REQUEST_TIMEOUT_S)])
def test_default_timeout_by_endpoint(url, expected):
    assert C.default_timeout(url) == expected


def _timeout_seen(monkeypatch, argv) -> float:
    seen = {}

    def fake(args):
        seen["timeout"] = args.timeout
        return 0

    monkeypatch.setattr(cli, "cmd_audit", fake)
    monkeypatch.setattr(cli, "cmd_collect", fake)
    assert cli.main(argv) == 0
    return seen["timeout"]


@pytest.mark.parametrize("command", ["audit", "collect"])
def test_cli_gives_a_local_base_url_the_local_timeout(monkeypatch, command):
    base = [command, "--provider", "openai", "--model", "m", "--out", "x"]
    if command == "collect":
        base += ["--cell", "k12_LH_neutral_absent_zero"]
    assert _timeout_seen(monkeypatch, base + ["--base-url", "http://127.0.0.1:9/v1"]) == config.LOCAL_REQUEST_TIMEOUT_S
    assert _timeout_seen(monkeypatch, base) == config.REQUEST_TIMEOUT_S
    assert _timeout_seen(monkeypatch, base + ["--base-url", "http://127.0.0.1:9/v1", "--timeout", "5"]) == 5.0


class _SlowSubject:
    """Every request times out (what the SDK's APITimeoutError becomes)."""

    paid = True
    timeout = 60.0

    def ask(self, job):
        raise C.Transient("timeout", detail="Request timed out.")


def test_the_first_timeout_names_the_flag_once():
    notes = []
    health = Health(notify=notes.append)
    job = C.Job("k12_LH_neutral_absent_zero", "numeric", "factual", 0, 0, 1, 0, "prompt", "sha")
    for _ in range(2):
        out = ask_with_retries(_SlowSubject(), job, RetryPolicy(max_attempts=2, base=0.0, cap=0.0), 1, None,
                               threading.Event(), health=health)
        assert out.reply is None and "timeout" in out.error
    assert health.timeouts == 4
    assert len(notes) == 1 and "--timeout 60 s" in notes[0] and "raise --timeout" in notes[0]
