"""Adaptive concurrency (issue 14): AIMD on sustained 429s, the providers' rate-limit headers, the runner hook."""
from __future__ import annotations

import sys
import threading
import time
from pathlib import Path

import httpx

sys.path.insert(0, str(Path(__file__).resolve().parent))
from fake_servers import FakeAnthropic  # noqa: E402

from analysis import collection as C  # noqa: E402
from analysis.cells import parse_cell
from analysis.collection import ratelimit as R  # noqa: E402


class Clock:
    def __init__(self):
        self.t = 0.0

    def __call__(self):
        return self.t


def test_sustained_429s_halve_the_limit_a_single_one_does_not():
    clock = Clock()
    c = R.AdaptiveConcurrency(8, sustained=3, window_s=10, clock=clock)
    c.observe("rate_limit")
    clock.t = 20  # the first 429 is out of the window: not sustained
    c.observe("rate_limit")
    c.observe("rate_limit")
    assert c.limit() == 8
    c.observe("rate_limit")
    assert c.limit() == 4 and c.n_decreases == 1
    for _ in range(3):
        c.observe("rate_limit")
    assert c.limit() == 2
    for _ in range(30):
        c.observe("rate_limit")
    assert c.limit() == 1  # never below the minimum


def test_successes_raise_the_limit_additively_up_to_the_maximum():
    c = R.AdaptiveConcurrency(6, start=2)
    for _ in range(2):
        c.observe("answer")
    assert c.limit() == 3
    for _ in range(3):
        c.observe("answer")
    assert c.limit() == 4
    for _ in range(100):
        c.observe("answer")
    assert c.limit() == 6 and c.describe() == "conc=6"
    c.observe("server")  # another fault changes nothing
    assert c.limit() == 6


def test_rate_limit_headers_cap_and_pause():
    c = R.AdaptiveConcurrency(8)
    c.observe_headers({"x-ratelimit-remaining-requests": "3", "x-ratelimit-remaining-tokens": "9000"})
    assert c.limit() == 3
    c.observe_headers({"anthropic-ratelimit-requests-remaining": "50", "anthropic-ratelimit-tokens-remaining": "1"})
    assert c.limit() == 8
    # nothing left: the workers wait for the reset (here 0.3 s) before the next request
    resp = httpx.Response(200, headers={"x-ratelimit-remaining-requests": "0", "x-ratelimit-reset-requests": "300ms"})
    c.on_response(resp)
    t0 = time.monotonic()
    c.acquire(threading.Event())
    assert 0.2 < time.monotonic() - t0 < 2.0
    stop = threading.Event()
    stop.set()
    c.observe_headers({"anthropic-ratelimit-requests-remaining": "0", "anthropic-ratelimit-requests-reset": "1m"})
    t0 = time.monotonic()
    c.acquire(stop)  # a stopped run does not wait
    assert time.monotonic() - t0 < 0.5


def test_collect_lowers_concurrency_on_a_burst_of_429s_and_still_answers_everything(tmp_path, monkeypatch):
    monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-test-ratelimit")
    jobs = C.job_list(parse_cell("k12_LH_neutral_absent_zero"))[:30]
    faults = {n: "429" for n in range(4, 12)}
    controller = R.AdaptiveConcurrency(8)
    with FakeAnthropic(faults=faults, retry_after=0.01) as srv:
        subject = C.make_subject("anthropic", "claude-sonnet-4-5", None, base_url=srv.url)
        assert R.attach(subject, controller)
        res = C.collect(parse_cell("k12_LH_neutral_absent_zero"), "anthropic", "claude-sonnet-4-5", tmp_path, jobs=jobs,
                        subject=subject, concurrency=8, progress=False, controller=controller,
                        policy=C.RetryPolicy(max_attempts=8, base=0.01, cap=0.05))
    assert res.complete and controller.n_rate_limited == 8 and controller.n_decreases >= 1
    assert controller.n_increases >= 1  # and it rose again on the answers that followed


def test_the_runner_gives_paid_subjects_an_adaptive_controller(tmp_path, monkeypatch):
    monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-test-ratelimit")
    seen = []
    orig = R.AdaptiveConcurrency.observe

    def spy(self, kind, retry_after=None):
        seen.append(kind)
        return orig(self, kind, retry_after)

    monkeypatch.setattr(R.AdaptiveConcurrency, "observe", spy)
    jobs = C.job_list(parse_cell("k12_LH_neutral_absent_zero"))[:6]
    with FakeAnthropic() as srv:
        res = C.collect(parse_cell("k12_LH_neutral_absent_zero"), "anthropic", "claude-sonnet-4-5", tmp_path, jobs=jobs,
                        base_url=srv.url, concurrency=4, progress=False)
    assert res.complete and seen.count("answer") == 6
